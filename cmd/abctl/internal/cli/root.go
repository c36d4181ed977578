package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "abctl",
		Short: "Command-line client for a browser-automation agent service",
		Long: "abctl drives a browser-automation agent service through its v1 API: an AI agent " +
			"works a real browser towards a goal on a website and returns the data it found.\n" +
			"It manages agents as files and starts and follows their runs, against the hosted " +
			"service or against a local daemon that serves the same API.",
		Args: rootArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if showVersion {
				return printVersion(cmd.OutOrStdout())
			}
			return cmd.Help()
		},
		SilenceErrors:              true,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.Flags().BoolVar(&showVersion, "version", false, "print the version of abctl and exit")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &usageError{cmdPath: cmd.CommandPath(), err: err}
	})
	root.AddCommand(newVersionCmd(), newDaemonCmd())
	return root
}

// rootArgs rejects positional arguments to the root: they can only be a mistyped
// command name.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return &usageError{cmdPath: cmd.CommandPath(), err: errors.New(msg)}
}

// noArgs is cobra.NoArgs with the error marked as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return &usageError{
			cmdPath: cmd.CommandPath(),
			err:     fmt.Errorf("%q takes no arguments, got %q", cmd.CommandPath(), args[0]),
		}
	}
	return nil
}
