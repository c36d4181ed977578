// Package follow shows a run while it runs, for `abctl run` and `abctl runs
// watch`: a live view on a terminal, plain lines otherwise, and the exit
// code its end deserves. Those two commands share its flags (Flags:
// --timeout, --no-tui) and the whole of following as a command does it
// (Watcher: follow, then print the run's output).
//
// The live view (bubbletea, on stderr) is a pane of a few lines, each cut
// to the terminal's width: the run's id, status, elapsed time and step
// count, the latest action when the service reports one, and the newest
// screenshot by its file name (a link to it where the terminal has colour).
// Each change of status or step, each new screenshot (its whole URL) and
// each new step's action is printed above the pane, below what the command
// printed before (agent/NAME created, Run ID started), so the scrollback
// keeps the history. When the run ends the pane goes, and the run's id,
// its end and its links (recording, last screenshot) are printed plainly,
// each whole on its own line for the terminal to wrap. The view is used
// when stdin and stderr are terminals, unless --no-tui or CI is set;
// otherwise one line per change goes to stderr, each starting with the
// run's id, without colour or cursor movement, ending in "; latest:
// <action>" when a newer step's action is known.
//
// The latest action comes from the run's steps
// (client.RunsService.Steps), read once per change of the step count
// and once more when the run ends, with a short timeout; a failed read
// shows nothing new, and a service without the steps route is not asked again.
// A step's details are recorded when it is done, so while step n runs the
// newest one shown is usually step n-1.
//
// Ctrl-C does not simply abandon the run. On a terminal it asks whether to
// cancel the run or leave it running (and says how to resume watching);
// elsewhere the run is left running and the same instructions are printed.
// Both the poll loop and the question use their own contexts, so that the
// cancel request still goes out after the interrupt.
package follow

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// Options say which run to follow and how.
type Options struct {
	IO     *iostreams.IOStreams
	Client *client.Client
	RunID  string
	// Timeout ends the following (not the run) after this long; 0 means
	// no limit.
	Timeout time.Duration
	// Plain forces plain lines (--no-tui, or CI set).
	Plain bool
	// Poll sets how the run is polled; the zero value polls every second,
	// slowing to 10 s while nothing changes.
	Poll client.WaitOptions
	Now  func() time.Time
}

// Result is how the following ended.
type Result struct {
	// Run is the run as last read.
	Run *client.Run
	// Left is true when the run was still going as abctl stopped
	// following it: the user chose to leave it running, or --timeout
	// expired (TimedOut).
	Left     bool
	TimedOut bool
	// Canceled is true when the user asked to cancel the run.
	Canceled bool
}

// ExitCode is the exit status for the result: 0 completed, 3 timed_out, 8
// still running, 1 for any other end (failed, terminated, canceled).
func (r *Result) ExitCode() int {
	if r.Left || r.Run == nil || !r.Run.IsTerminal() {
		return cmdutil.ExitPending
	}
	switch r.Run.Status {
	case client.RunStatusCompleted:
		return cmdutil.ExitOK
	case client.RunStatusTimedOut:
		return cmdutil.ExitTimedOut
	}
	return cmdutil.ExitError
}

// Follow shows the run until it ends, the timeout expires, or the user
// leaves it, and returns how it ended. Errors are failures to read the run.
func Follow(ctx context.Context, o Options) (*Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	// The poll loop stops at the timeout or when Follow returns, not when
	// ctx (the command's, which Ctrl-C cancels) ends: an interrupt is a
	// question to the user, not an abandonment.
	pollCtx, stopPolling := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPolling()
	var timeout <-chan time.Time
	if o.Timeout > 0 {
		t := time.NewTimer(o.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	events := watch(pollCtx, o)
	if !o.Plain && o.IO.IsStderrTTY() && o.IO.IsStdinTTY() {
		return followTUI(ctx, o, events, timeout)
	}
	return followPlain(ctx, o, events, timeout)
}

// event is one read of the run, or the error that ended the reading.
type event struct {
	client.RunEvent
	err error
}

// watch feeds the run's changes into a channel until ctx ends or the run
// does; the channel is closed after the last event.
func watch(ctx context.Context, o Options) <-chan event {
	ch := make(chan event, 16)
	go func() {
		defer close(ch)
		for ev, err := range o.Client.Runs.Watch(ctx, o.RunID, &o.Poll) {
			select {
			case ch <- event{RunEvent: ev, err: err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// cancelRun asks the service to cancel the run, outside the command's
// (interrupted) context.
func cancelRun(ctx context.Context, o Options) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return o.Client.Runs.Cancel(ctx, o.RunID)
}

// resumeHint tells how to pick the run up again.
func resumeHint(id string) string {
	return fmt.Sprintf("The run %s goes on. Follow it with 'abctl runs watch %s', cancel it with 'abctl runs cancel %s'.", id, id, id)
}

// elapsed is how long the run has been going (or went).
func elapsed(r *client.Run, now time.Time) time.Duration {
	if r == nil {
		return 0
	}
	start := r.CreatedAt.Time
	if r.StartedAt != nil {
		start = r.StartedAt.Time
	}
	end := now
	if r.FinishedAt != nil {
		end = r.FinishedAt.Time
	}
	if start.IsZero() || end.Before(start) {
		return 0
	}
	return end.Sub(start)
}

// formatDuration writes d as "4s", "1m05s" or "2h03m".
func formatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// stepsText is "1 step" or "n steps".
func stepsText(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}

// statusText is where the run stands: "running, 3 steps, 4s".
func statusText(r *client.Run, now time.Time) string {
	parts := []string{string(r.Status)}
	if n := r.GetStepCount(); n > 0 || r.Status == client.RunStatusRunning {
		parts = append(parts, stepsText(n))
	}
	parts = append(parts, formatDuration(elapsed(r, now)))
	return strings.Join(parts, ", ")
}

// changeLine describes an event in one line: what changed and where the run
// stands, with a new screenshot's whole link.
func changeLine(ev client.RunEvent, now time.Time) string {
	return changeLineWith(ev, now, wholeLink)
}

// changeLineWith is changeLine with the new screenshot shown by link
// (its URL): whole in plain lines, by its file's name in the live view.
func changeLineWith(ev client.RunEvent, now time.Time, link func(string) string) string {
	line := statusText(ev.Run, now)
	if ev.NewScreenshot() {
		line += "; screenshot " + link(ev.LatestScreenshot())
	}
	return line
}

// wholeLink shows a link as it is.
func wholeLink(u string) string { return u }

// endLines describe a finished run: the failure reason, what a run that
// extracted nothing did, the recording and the last screenshot with their
// whole links.
func endLines(r *client.Run) []string {
	return endLinesWith(r, wholeLink)
}

// endLinesWith is endLines with the links shown by link.
func endLinesWith(r *client.Run, link func(string) string) []string {
	var lines []string
	if fr := r.GetFailureReason(); fr != "" && r.Status != client.RunStatusCompleted {
		lines = append(lines, "reason: "+fr)
	}
	if s := r.GetSummary(); s != "" && r.Status == client.RunStatusCompleted && noOutput(r.Output) {
		lines = append(lines, "done: "+s)
	}
	if l := scriptLine(r); l != "" {
		lines = append(lines, l)
	}
	if u := r.GetRecordingURL(); u != "" {
		lines = append(lines, "recording: "+link(u))
	}
	if len(r.ScreenshotURLs) > 0 {
		lines = append(lines, "last screenshot: "+link(r.ScreenshotURLs[0]))
	}
	return lines
}

// noOutput reports whether a run's output holds nothing (absent or null).
func noOutput(out json.RawMessage) bool {
	t := bytes.TrimSpace(out)
	return len(t) == 0 || string(t) == "null"
}

// scriptLine says which script a run replayed or recorded, and whether
// the model had to take over; "" for a run without one.
func scriptLine(r *client.Run) string {
	sr := r.ScriptRun
	if sr == nil || sr.ScriptID == nil {
		return ""
	}
	line := "script: " + *sr.ScriptID
	switch {
	case sr.AIFallbackTriggered && r.Status == client.RunStatusCompleted:
		line += " (the model took over what could not be replayed, and a new version was recorded)"
	case sr.AIFallbackTriggered:
		line += " (the model took over what could not be replayed)"
	}
	return line + "; abctl scripts get " + *sr.ScriptID + " shows it"
}

// askCancel asks on the terminal whether to cancel the run, reading one
// line from in. Anything but y/yes leaves it running.
func askCancel(w io.Writer, in io.Reader, id string) bool {
	fmt.Fprintf(w, "\nCancel the run %s? [y/N] ", id)
	var answer string
	_, err := fmt.Fscanln(in, &answer)
	if err != nil {
		return false
	}
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}
