package follow

import (
	"context"
	"fmt"
	"time"
)

// followPlain writes one line per change on stderr.
func followPlain(ctx context.Context, o Options, events <-chan event, timeout <-chan time.Time) (*Result, error) {
	w := o.IO.ErrOut
	res := &Result{}
	interrupted := ctx.Done()
	steps := true // false once the service turned out to have no steps route
	shown := 0    // the number of the newest step shown

	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return res, nil
			}
			if ev.err != nil {
				return res, fmt.Errorf("follow run %s: %w", o.RunID, ev.err)
			}
			res.Run = ev.Run
			line := changeLine(ev.RunEvent, o.Now())
			if steps && wantsLatest(ev.RunEvent) {
				step, supported := readLatest(ctx, o)
				steps = supported
				if step != nil && step.Number > shown {
					shown = step.Number
					line += "; latest: " + latestText(step)
				}
			}
			fmt.Fprintf(w, "%s %s\n", o.RunID, line)
			if paused(ev.RunEvent) {
				if q := readQuestion(ctx, o); q != nil {
					for _, l := range questionLines(q, o.RunID) {
						fmt.Fprintf(w, "%s %s\n", o.RunID, l)
					}
				}
			}
			if ev.Run.IsTerminal() {
				for _, l := range endLines(ev.Run) {
					fmt.Fprintf(w, "%s %s\n", o.RunID, l)
				}
				return res, nil
			}
		case <-timeout:
			res.Left, res.TimedOut = true, true
			fmt.Fprintf(w, "Stopped following after %s (--timeout). %s\n", o.Timeout, resumeHint(o.RunID))
			return res, nil
		case <-interrupted:
			interrupted = nil // ask once; a second Ctrl-C is not seen here
			if o.IO.CanPrompt() && askCancel(w, o.IO.In, o.RunID) {
				if err := cancelRun(ctx, o); err != nil {
					return res, fmt.Errorf("cancel run %s: %w", o.RunID, err)
				}
				res.Canceled = true
				fmt.Fprintf(w, "Canceling %s...\n", o.RunID)
				continue // follow it to its canceled end
			}
			res.Left = true
			fmt.Fprintln(w, resumeHint(o.RunID))
			return res, nil
		}
	}
}
