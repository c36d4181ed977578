// Package runs is `abctl runs`: follow, cancel, retry and re-notify runs
// that already exist, answer the ones paused for a person, and list and
// read their files. Starting
// runs is `abctl run`; listing them is `abctl get runs`.
package runs

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmdRuns returns `abctl runs`.
func NewCmdRuns(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Follow, cancel, retry and answer runs, and re-send their webhooks",
		Args:  cmdutil.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	webhook := &cobra.Command{
		Use:   "webhook",
		Short: "Re-send the webhook of a run",
		Args:  cmdutil.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	webhook.AddCommand(NewCmdRetry(f, nil))
	cmd.AddCommand(NewCmdWatch(f, nil), NewCmdCancel(f, nil), NewCmdCancelAll(f, nil), NewCmdRetryRun(f, nil), webhook, NewCmdArtifacts(f, nil),
		NewCmdApprove(f, nil), NewCmdReject(f, nil), NewCmdQuestion(f, nil), NewCmdArtifact(f, nil), NewCmdFrame(f, nil))
	return cmd
}

// WatchOptions are the inputs of `abctl runs watch`.
type WatchOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Watch  follow.Watcher

	// RunID is the run to follow, without the run/ of -o name.
	RunID  string
	Follow follow.Flags
}

// NewCmdWatch returns `abctl runs watch`. runF, when not nil, is called
// with the validated options instead of following the run.
func NewCmdWatch(f *cmdutil.Factory, runF func(*WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{IO: f.IO, Client: f.Client, Watch: follow.NewWatcher(f)}
	cmd := &cobra.Command{
		Use:   "watch RUN_ID",
		Short: "Follow a run until it ends, then print its output",
		Long: "watch follows a run (live view on a terminal, one line per change otherwise) and prints\n" +
			"its output as JSON on stdout when it ends. The exit status is 0 for completed, 1 for\n" +
			"failed, terminated or canceled, 3 for timed_out, and 8 when it was still going as\n" +
			"watch stopped (--timeout, or Ctrl-C and leave it running).",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cmdutil.Run(cmd, opts, runF, runWatch)
		},
	}
	opts.Follow.Add(cmd)
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.AnyRun))
	return cmd
}

// Validate reads the run id (run/ID as -o name prints it, or the id).
func (o *WatchOptions) Validate() error {
	id, err := runID(o.RunID)
	o.RunID = id
	return err
}

func runWatch(ctx context.Context, opts *WatchOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	return opts.Watch(ctx, c, opts.RunID, opts.Follow)
}

// runID is the id of the run arg names, a usage error when it names
// something else.
func runID(arg string) (string, error) {
	id, err := resource.Run.ID(arg)
	if err != nil {
		return "", cmdutil.UsageErrorf("%v", err)
	}
	return id, nil
}

// CancelOptions are the inputs of `abctl runs cancel`.
type CancelOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// RunIDs are the runs to cancel, without the run/ of -o name.
	RunIDs []string
}

// NewCmdCancel returns `abctl runs cancel`. runF, when not nil, is called
// with the validated options instead of canceling.
func NewCmdCancel(f *cmdutil.Factory, runF func(*CancelOptions) error) *cobra.Command {
	opts := &CancelOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "cancel RUN_ID...",
		Short: "Cancel runs",
		Long: "cancel stops runs: a queued run at once, a running one within seconds, keeping what it\n" +
			"produced. Canceling a run that already ended changes nothing. With more than one id\n" +
			"the runs are canceled in one request (at most 100).",
		Example: "  abctl runs cancel wr_490440779503358000\n" +
			"  abctl get runs --status running -o name | xargs abctl runs cancel",
		Args: cmdutil.MinArgs(1, "one or more run ids"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunIDs = args
			return cmdutil.Run(cmd, opts, runF, runCancel)
		},
	}
	cmd.ValidArgsFunction = completion.Runs(f, completion.ActiveRun)
	return cmd
}

// Validate reads the run ids; at most 100 can be canceled at once.
func (o *CancelOptions) Validate() error {
	ids := make([]string, 0, len(o.RunIDs))
	for _, arg := range o.RunIDs {
		id, err := runID(arg)
		if err != nil {
			return err
		}
		ids = append(ids, id)
	}
	o.RunIDs = ids
	if len(ids) > 100 {
		return cmdutil.UsageErrorf("at most 100 runs can be canceled at once, got %d", len(ids))
	}
	return nil
}

func runCancel(ctx context.Context, opts *CancelOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if len(opts.RunIDs) == 1 {
		id := opts.RunIDs[0]
		if err := c.Runs.Cancel(ctx, id); err != nil {
			return fmt.Errorf("cancel %s: %w", id, err)
		}
		fmt.Fprintf(opts.IO.ErrOut, "Cancel requested for %s.\n", id)
		return nil
	}
	return cancelMany(ctx, opts.IO, c, opts.RunIDs)
}

// cancelMany cancels ids in one request and says how each went; a run
// that could not be canceled makes it fail silently (exit status 1).
func cancelMany(ctx context.Context, io *iostreams.IOStreams, c *client.Client, ids []string) error {
	res, err := c.Runs.CancelMany(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range res.Cancelled {
		fmt.Fprintf(io.ErrOut, "Cancel requested for %s.\n", id)
	}
	for _, id := range res.Failed {
		fmt.Fprintf(io.ErrOut, "Could not cancel %s (not found, or already ended).\n", id)
	}
	if len(res.Failed) > 0 {
		return cmdutil.Silent(cmdutil.ExitError)
	}
	return nil
}

// CancelAllOptions are the inputs of `abctl runs cancel-all`.
type CancelAllOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// Agent keeps the runs of one agent (a name or id).
	Agent string
	Yes   bool
	// Stdin cancels the run ids read from stdin instead of the runs that
	// have not ended.
	Stdin bool
}

// NewCmdCancelAll returns `abctl runs cancel-all`. runF, when not nil, is
// called with the validated options instead of canceling.
func NewCmdCancelAll(f *cmdutil.Factory, runF func(*CancelAllOptions) error) *cobra.Command {
	opts := &CancelAllOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "cancel-all",
		Short: "Cancel every run that has not ended (or the ids read from stdin)",
		Long: "cancel-all cancels the runs that are created, queued, running or paused, optionally\n" +
			"only those of one agent, in requests of at most 100 ids. It asks first on a terminal;\n" +
			"elsewhere it needs --yes. With --stdin it cancels the ids read from stdin instead,\n" +
			"one per line.",
		Example: "  abctl runs cancel-all --agent contact-form --yes\n  abctl get runs -o name | abctl runs cancel-all --stdin --yes",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd, opts, runF, runCancelAll)
		},
	}
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "only the runs of this agent (its name or wpid_...)")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&opts.Stdin, "stdin", false, "cancel the run ids read from stdin, one per line")
	cmd.MarkFlagsMutuallyExclusive("agent", "stdin")
	return cmd
}

// Validate checks that the command may go without asking: --yes, or a
// terminal to ask on.
func (o *CancelAllOptions) Validate() error {
	if !o.Yes && !o.IO.CanPrompt() {
		return cmdutil.UsageErrorf("cancel-all needs --yes when it cannot ask on a terminal")
	}
	return nil
}

func runCancelAll(ctx context.Context, opts *CancelAllOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	var ids []string
	if opts.Stdin {
		sc := bufio.NewScanner(opts.IO.In)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				id, err := runID(line)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read run ids from stdin: %w", err)
		}
	} else {
		lo := &client.ListRunsOptions{PageSize: 100, Status: []client.RunStatus{
			client.RunStatusCreated, client.RunStatusQueued, client.RunStatusRunning, client.RunStatusPaused}}
		if opts.Agent != "" {
			id, err := agentref.Resolve(ctx, c, opts.Agent)
			if err != nil {
				return err
			}
			lo.WorkflowPermanentID = []string{id}
		}
		for r, err := range c.Runs.All(ctx, lo) {
			if err != nil {
				return fmt.Errorf("list the runs: %w", err)
			}
			ids = append(ids, r.RunID)
		}
	}
	if len(ids) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "No run to cancel.")
		return nil
	}
	if !opts.Yes {
		if err := cmdutil.ConfirmOrStop(opts.IO, fmt.Sprintf("Cancel %d run(s)?", len(ids))); err != nil {
			return err
		}
	}
	var failed bool
	for start := 0; start < len(ids); start += 100 {
		end := min(start+100, len(ids))
		if err := cancelMany(ctx, opts.IO, c, ids[start:end]); err != nil {
			if _, silent := err.(*cmdutil.CodeError); !silent {
				return err
			}
			failed = true
		}
	}
	if failed {
		return cmdutil.Silent(cmdutil.ExitError)
	}
	return nil
}

// RetryOptions are the inputs of `abctl runs webhook retry`.
type RetryOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// RunID is the run whose webhook to send again.
	RunID string
	// URL sends it there instead of to the run's webhook URL.
	URL string
}

// NewCmdRetry returns `abctl runs webhook retry`. runF, when not nil, is
// called with the validated options instead of sending.
func NewCmdRetry(f *cmdutil.Factory, runF func(*RetryOptions) error) *cobra.Command {
	opts := &RetryOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "retry RUN_ID",
		Short: "Send a finished run's webhook again",
		Long: "retry re-sends the webhook of a finished run, to its webhook URL or to --url. The\n" +
			"receiver may see the same payload twice: run_id is its idempotency key.",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cmdutil.Run(cmd, opts, runF, runRetry)
		},
	}
	cmd.Flags().StringVar(&opts.URL, "url", "", "send to this URL instead of the run's webhook URL")
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.EndedRun))
	return cmd
}

// Validate reads the run id.
func (o *RetryOptions) Validate() error {
	id, err := runID(o.RunID)
	o.RunID = id
	return err
}

func runRetry(ctx context.Context, opts *RetryOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	id := opts.RunID
	req := &client.RetryWebhookRequest{}
	if opts.URL != "" {
		req.WebhookURL = opts.URL
	}
	replay, err := c.Runs.RetryWebhook(ctx, id, req)
	if err != nil {
		return fmt.Errorf("retry the webhook of %s: %w", id, err)
	}
	if replay != nil && replay.StatusCode != nil {
		fmt.Fprintf(opts.IO.ErrOut, "Webhook of %s sent; the receiver answered %d.\n", id, *replay.StatusCode)
		return nil
	}
	fmt.Fprintf(opts.IO.ErrOut, "Webhook of %s is being sent again; its delivery is recorded on the run.\n", id)
	return nil
}

// ArtifactsOptions are the inputs of `abctl runs artifacts`.
type ArtifactsOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// RunID is the run whose files to list.
	RunID  string
	Format printer.Format
}

// NewCmdArtifacts returns `abctl runs artifacts`. runF, when not nil, is
// called with the validated options instead of listing.
func NewCmdArtifacts(f *cmdutil.Factory, runF func(*ArtifactsOptions) error) *cobra.Command {
	opts := &ArtifactsOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "artifacts RUN_ID",
		Short: "List a run's files: screenshots, recording, downloads",
		Args:  cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cmdutil.Run(cmd, opts, runF, runArtifacts)
		},
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML)
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.AnyRun))
	return cmd
}

// Validate reads the run id.
func (o *ArtifactsOptions) Validate() error {
	id, err := runID(o.RunID)
	o.RunID = id
	return err
}

func runArtifacts(ctx context.Context, opts *ArtifactsOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	arts, err := c.Runs.ListArtifacts(ctx, opts.RunID, nil)
	if err != nil {
		return fmt.Errorf("list the artifacts of %s: %w", opts.RunID, err)
	}
	// The file's name and its link are never cut on a terminal (the table
	// keeps "file" and "url" whole): cut, neither could be opened. The
	// link comes last, so that a terminal too narrow for it wraps it
	// alone.
	l := printer.Listing{Value: arts, Headers: []string{"id", "type", "file", "size", "created", "url"}}
	l.Rows = func(t *printer.TablePrinter) {
		for _, a := range arts {
			size, u := "", ""
			if a.FileSize != nil {
				size = fmt.Sprint(*a.FileSize)
			}
			if a.SignedURL != nil {
				u = *a.SignedURL
			}
			t.AddRow(a.ArtifactID, string(a.ArtifactType), artifactFileName(a.URI), size, t.Time(a.CreatedAt.Time), u)
		}
	}
	return l.Print(opts.IO, opts.Now(), opts.Format)
}

// artifactFileName is the name of an artifact's file: the last segment of
// its URI (abctl://artifacts/RUN/NAME, s3://bucket/.../NAME), unescaped;
// "" when the URI has none.
func artifactFileName(uri string) string {
	i := strings.LastIndex(uri, "/")
	if i < 0 || i == len(uri)-1 || !strings.Contains(uri, "://") {
		return ""
	}
	name := uri[i+1:]
	if u, err := url.PathUnescape(name); err == nil {
		name = u
	}
	return name
}
