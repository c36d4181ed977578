package follow

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// Flags are the flags of the commands that follow a run (run, runs watch).
type Flags struct {
	Timeout time.Duration
	NoTUI   bool
}

// Add adds --timeout and --no-tui to cmd.
func (fl *Flags) Add(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&fl.Timeout, "timeout", 0, "stop following after this long (the run goes on; exit status 8); 0: no limit")
	cmd.Flags().BoolVar(&fl.NoTUI, "no-tui", false, "print one line per change instead of the live view")
}

// Watcher follows a run as a command does: live or in plain lines as fl
// and the environment say, then the run's output on stdout when it ended.
// Its error carries the exit status the end deserves (a Silent error
// when the run did not complete).
type Watcher func(ctx context.Context, c *client.Client, runID string, fl Flags) error

// NewWatcher returns the Watcher of f's streams, clock and environment (CI
// set means plain lines).
func NewWatcher(f *cmdutil.Factory) Watcher {
	return func(ctx context.Context, c *client.Client, runID string, fl Flags) error {
		res, err := Follow(ctx, Options{
			IO: f.IO, Client: c, RunID: runID, Timeout: fl.Timeout,
			Plain: fl.NoTUI || f.Getenv("CI") != "", Now: f.Now,
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
				if base, _ := f.Target(); config.SameBaseURL(base, s.LocalBaseURL) {
					fmt.Fprintf(f.IO.ErrOut, "The daemon ran inside this command: the links above open while a daemon serves %s (start 'abctl daemon').\n", s.DataDir)
				} else {
					// A port of the command's own: no daemon will serve
					// these links again.
					fmt.Fprintf(f.IO.ErrOut, "The daemon ran inside this command on a port of its own (%s): the links above stopped working as it ended; "+
						"'abctl get run %s -o json' gives them again once a daemon serves %s.\n", base, res.Run.RunID, s.DataDir)
				}
			}
		}
		if code := res.ExitCode(); code != cmdutil.ExitOK {
			return cmdutil.Silent(code)
		}
		return nil
	}
}

// WriteOutput writes a finished run's output as JSON on w. A completed run
// always writes a document ("null" when it extracted nothing), so that
// `abctl run ... | jq` gets one; a run that did not complete writes what
// it extracted before it ended, and nothing at all when that is nothing:
// stdout holds data only, and the exit status and stderr say how it ended.
func WriteOutput(w io.Writer, r *client.Run) error {
	out := r.Output
	if noOutput(out) {
		if r.Status != client.RunStatusCompleted {
			return nil
		}
		out = []byte("null")
	}
	return printer.WriteJSON(w, out)
}
