package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
)

// Run ends the RunE of a command built as NewCmdX(f, runF): the flags and
// arguments are in opts, which Run validates when they have a Validate
// method; then it hands them to runF, a test's hook, when it is not nil,
// and otherwise runs them with run in the command's context.
func Run[O any](cmd *cobra.Command, opts *O, runF func(*O) error, run func(context.Context, *O) error) error {
	if v, ok := any(opts).(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return err
		}
	}
	if runF != nil {
		return runF(opts)
	}
	return run(cmd.Context(), opts)
}
