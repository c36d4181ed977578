package runs

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// RetryRunOptions are the inputs of `abctl runs retry`.
type RetryRunOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	// Embedded reports whether Client started the daemon inside this
	// command, which would stop a detached run as abctl exits.
	Embedded func() bool
	Watch    follow.Watcher

	// RunID is the agent run to run again, without the run/ of -o name.
	RunID  string
	Detach bool
	Follow follow.Flags
}

// NewCmdRetryRun returns `abctl runs retry`. runF, when not nil, is called
// with the validated options instead of starting the run.
func NewCmdRetryRun(f *cmdutil.Factory, runF func(*RetryRunOptions) error) *cobra.Command {
	opts := &RetryRunOptions{IO: f.IO, Client: f.Client, Embedded: f.Embedded, Watch: follow.NewWatcher(f)}
	cmd := &cobra.Command{
		Use:   "retry RUN_ID",
		Short: "Run an agent run again, with the same agent version and parameters",
		Long: "retry starts a new run of an agent run that has ended, with the same agent version,\n" +
			"parameters and settings (POST /v1/agents/runs/{id}/retry), and follows it as\n" +
			"'abctl run' does. --detach prints the new run's id and returns. A run that has not\n" +
			"ended, or a run_action run (which runs no agent), cannot be retried.",
		Example: "  abctl runs retry wr_490440779503358000\n" +
			"  NEW=$(abctl runs retry run/wr_490440779503358000 --detach)",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cmdutil.Run(cmd, opts, runF, runRetryRun)
		},
	}
	cmd.Flags().BoolVar(&opts.Detach, "detach", false, "print the new run's id and return without following it")
	opts.Follow.Add(cmd)
	cmd.MarkFlagsMutuallyExclusive("detach", "timeout")
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.EndedRun))
	return cmd
}

// Validate reads the run id.
func (o *RetryRunOptions) Validate() error {
	id, err := runID(o.RunID)
	o.RunID = id
	return err
}

func runRetryRun(ctx context.Context, opts *RetryRunOptions) error {
	c, err := cmdutil.DetachableClient(ctx, opts.Client, opts.Embedded, opts.Detach)
	if err != nil {
		return err
	}
	run, err := c.Agents.RetryRun(ctx, opts.RunID)
	if err != nil {
		return fmt.Errorf("retry run %s: %w", opts.RunID, err)
	}
	if opts.Detach {
		_, err := fmt.Fprintln(opts.IO.Out, run.RunID)
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Run %s started (%s), a retry of %s.\n", run.RunID, run.Status, opts.RunID)
	return opts.Watch(ctx, c, run.RunID, opts.Follow)
}
