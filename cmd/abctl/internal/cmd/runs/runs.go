// Package runs is `abctl runs`: follow, cancel and re-notify runs that
// already exist. Starting runs is `abctl run`; listing them is `abctl get
// runs`.
package runs

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmd returns `abctl runs`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Follow, cancel and re-send the webhooks of runs",
		Args:  cmdutil.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	webhook := &cobra.Command{
		Use:   "webhook",
		Short: "Re-send the webhook of a run",
		Args:  cmdutil.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	webhook.AddCommand(newRetryCmd(f))
	cmd.AddCommand(newWatchCmd(f), newCancelCmd(f), newCancelAllCmd(f), webhook, newArtifactsCmd(f))
	return cmd
}

// FollowFlags are the flags of the commands that follow a run (run, runs
// watch).
type FollowFlags struct {
	Timeout time.Duration
	NoTUI   bool
}

// Add adds the flags to cmd.
func (ff *FollowFlags) Add(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&ff.Timeout, "timeout", 0, "stop following after this long (the run goes on; exit status 8); 0: no limit")
	cmd.Flags().BoolVar(&ff.NoTUI, "no-tui", false, "print one line per change instead of the live view")
}

// Follow follows runID as the flags say, prints the run's output on stdout
// at the end, and returns the error that carries the exit status.
func (ff *FollowFlags) Follow(cmd *cobra.Command, f *cmdutil.Factory, c *client.Client, runID string) error {
	res, err := follow.Follow(cmd.Context(), follow.Options{
		IO: f.IO, Client: c, RunID: runID, Timeout: ff.Timeout,
		Plain: ff.NoTUI || f.Getenv("CI") != "", Now: f.Now,
		// Closer than the SDK's default (1 s, up to 10 s): a person is
		// watching, and an idle run still costs few requests.
		Poll: client.WaitOptions{Interval: 300 * time.Millisecond, MaxInterval: 3 * time.Second},
	})
	if err != nil {
		return err
	}
	if res.Run != nil && res.Run.IsTerminal() {
		if err := WriteOutput(f.IO.Out, res.Run); err != nil {
			return err
		}
		if s, err := f.Settings(); err == nil && f.Embedded() && (len(res.Run.ScreenshotURLs) > 0 || res.Run.GetRecordingURL() != "") {
			fmt.Fprintf(f.IO.ErrOut, "The daemon ran inside this command: the links above open while a daemon serves %s (start 'abctl daemon').\n", s.DataDir)
		}
	}
	if code := res.ExitCode(); code != cmdutil.ExitOK {
		return cmdutil.Silent(code)
	}
	return nil
}

// WriteOutput writes a finished run's output as JSON on w ("null" when it
// has none), so that `abctl run ... | jq` always gets a document.
func WriteOutput(w io.Writer, r *client.Run) error {
	out := r.Output
	if len(out) == 0 {
		out = []byte("null")
	}
	return printer.WriteJSON(w, out)
}

func newWatchCmd(f *cmdutil.Factory) *cobra.Command {
	var ff FollowFlags
	cmd := &cobra.Command{
		Use:   "watch RUN_ID",
		Short: "Follow a run until it ends, then print its output",
		Long: "watch follows a run (live view on a terminal, one line per change otherwise) and prints\n" +
			"its output as JSON on stdout when it ends. The exit status is 0 for completed, 1 for\n" +
			"failed, terminated or canceled, 3 for timed_out, and 8 when it was still going as\n" +
			"watch stopped (--timeout, or Ctrl-C and leave it running).",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := resource.Run.Arg(cmd, args[0])
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			return ff.Follow(cmd, f, c, id)
		},
	}
	ff.Add(cmd)
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.AnyRun))
	return cmd
}

func newCancelCmd(f *cmdutil.Factory) *cobra.Command {
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
			ids, err := resource.Run.Args(cmd, args)
			if err != nil {
				return err
			}
			if len(ids) > 100 {
				return cmdutil.Usagef(cmd, "at most 100 runs can be canceled at once, got %d", len(ids))
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			if len(ids) == 1 {
				if err := c.Runs.Cancel(cmd.Context(), ids[0]); err != nil {
					return fmt.Errorf("cancel %s: %w", ids[0], err)
				}
				fmt.Fprintf(f.IO.ErrOut, "Cancel requested for %s.\n", ids[0])
				return nil
			}
			return cancelMany(cmd, f, c, ids)
		},
	}
	cmd.ValidArgsFunction = completion.Runs(f, completion.ActiveRun)
	return cmd
}

func cancelMany(cmd *cobra.Command, f *cmdutil.Factory, c *client.Client, ids []string) error {
	res, err := c.Runs.CancelMany(cmd.Context(), ids)
	if err != nil {
		return err
	}
	for _, id := range res.Cancelled {
		fmt.Fprintf(f.IO.ErrOut, "Cancel requested for %s.\n", id)
	}
	for _, id := range res.Failed {
		fmt.Fprintf(f.IO.ErrOut, "Could not cancel %s (not found, or already ended).\n", id)
	}
	if len(res.Failed) > 0 {
		return cmdutil.Silent(cmdutil.ExitError)
	}
	return nil
}

func newCancelAllCmd(f *cmdutil.Factory) *cobra.Command {
	var agent string
	var yes, fromStdin bool
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
			if !yes && !f.IO.CanPrompt() {
				return cmdutil.Usagef(cmd, "cancel-all needs --yes when it cannot ask on a terminal")
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			var ids []string
			if fromStdin {
				sc := bufio.NewScanner(f.IO.In)
				for sc.Scan() {
					if line := strings.TrimSpace(sc.Text()); line != "" {
						id, err := resource.Run.Arg(cmd, line)
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
				opts := &client.ListRunsOptions{PageSize: 100, Status: []client.RunStatus{
					client.RunStatusCreated, client.RunStatusQueued, client.RunStatusRunning, client.RunStatusPaused}}
				if agent != "" {
					id, err := agentref.Resolve(cmd.Context(), c, agent)
					if err != nil {
						return err
					}
					opts.WorkflowPermanentID = []string{id}
				}
				for r, err := range c.Runs.All(cmd.Context(), opts) {
					if err != nil {
						return fmt.Errorf("list the runs: %w", err)
					}
					ids = append(ids, r.RunID)
				}
			}
			if len(ids) == 0 {
				fmt.Fprintln(f.IO.ErrOut, "No run to cancel.")
				return nil
			}
			if !yes {
				ok, err := cmdutil.Confirm(f.IO, fmt.Sprintf("Cancel %d run(s)?", len(ids)))
				if err != nil || !ok {
					return cmdutil.Silent(cmdutil.ExitError)
				}
			}
			var failed bool
			for start := 0; start < len(ids); start += 100 {
				end := min(start+100, len(ids))
				if err := cancelMany(cmd, f, c, ids[start:end]); err != nil {
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
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "only the runs of this agent (its name or wpid_...)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&fromStdin, "stdin", false, "cancel the run ids read from stdin, one per line")
	cmd.MarkFlagsMutuallyExclusive("agent", "stdin")
	return cmd
}

func newRetryCmd(f *cmdutil.Factory) *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "retry RUN_ID",
		Short: "Send a finished run's webhook again",
		Long: "retry re-sends the webhook of a finished run, to its webhook URL or to --url. The\n" +
			"receiver may see the same payload twice: run_id is its idempotency key.",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := resource.Run.Arg(cmd, args[0])
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			req := &client.RetryWebhookRequest{}
			if url != "" {
				req.WebhookURL = url
			}
			replay, err := c.Runs.RetryWebhook(cmd.Context(), id, req)
			if err != nil {
				return fmt.Errorf("retry the webhook of %s: %w", id, err)
			}
			if replay != nil && replay.StatusCode != nil {
				fmt.Fprintf(f.IO.ErrOut, "Webhook of %s sent; the receiver answered %d.\n", id, *replay.StatusCode)
				return nil
			}
			fmt.Fprintf(f.IO.ErrOut, "Webhook of %s is being sent again; its delivery is recorded on the run.\n", id)
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "send to this URL instead of the run's webhook URL")
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.EndedRun))
	return cmd
}

func newArtifactsCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "artifacts RUN_ID",
		Short: "List a run's files: screenshots, recording, downloads",
		Args:  cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			id, err := resource.Run.Arg(cmd, args[0])
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			arts, err := c.Runs.ListArtifacts(cmd.Context(), id, nil)
			if err != nil {
				return fmt.Errorf("list the artifacts of %s: %w", id, err)
			}
			l := printer.Listing{Value: arts, Headers: []string{"type", "size", "created", "url"}}
			l.Rows = func(t *printer.TablePrinter) {
				for _, a := range arts {
					size, u := "", ""
					if a.FileSize != nil {
						size = fmt.Sprint(*a.FileSize)
					}
					if a.SignedURL != nil {
						u = *a.SignedURL
					}
					t.AddRow(string(a.ArtifactType), size, t.Time(a.CreatedAt.Time), u)
				}
			}
			return l.Print(f.IO, f.Now(), format)
		},
	}
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML)
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.AnyRun))
	return cmd
}
