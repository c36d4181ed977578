package cli

import (
	"fmt"
	"io"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"

	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of abctl",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout())
		},
	}
}

// printVersion writes "abctl <version> (commit <commit>, built <date>)".
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "abctl %s\n", buildinfo.Get())
	return err
}
