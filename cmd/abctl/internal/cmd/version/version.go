// Package version is `abctl version`, and what the root's --version prints:
// the version of abctl and how it was built.
package version

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

// NewCmdVersion returns `abctl version`.
func NewCmdVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of abctl",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Print(cmd.OutOrStdout())
		},
	}
}

// Print writes "abctl <version> (commit <commit>, built <date>)".
func Print(w io.Writer) error {
	_, err := fmt.Fprintf(w, "abctl %s\n", buildinfo.Get())
	return err
}
