package get

import (
	"fmt"
	"strconv"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// stepsListing shows a run's steps (get run ID --steps): JSON and YAML as
// the service answered them, names step/<run id>/<n>, and a table of what
// each step did, newest first. A step no model decided (a model-free
// block's navigation, click, wait, request...) has empty model and token
// cells.
func stepsListing(runID string, steps []*client.RunStep, wide bool) printer.Listing {
	l := printer.Listing{Value: steps, Headers: []string{"step", "block", "decision", "action", "model"}}
	if wide {
		l.Headers = append(l.Headers, "settle", "observe", "act", "tokens in", "tokens out", "url", "thought")
	}
	for _, s := range steps {
		l.Names = append(l.Names, fmt.Sprintf("step/%s/%d", runID, s.Number))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, s := range steps {
			action := ""
			if len(s.Actions) > 0 {
				action = s.Actions[0]
				if n := len(s.Actions) - 1; n > 0 {
					action += fmt.Sprintf(" (+%d)", n)
				}
			}
			model, in, out := "", "", ""
			if s.TimingsMS.Model > 0 || s.Tokens.Input > 0 || s.Tokens.Output > 0 {
				model, in, out = millis(s.TimingsMS.Model), fmt.Sprint(s.Tokens.Input), fmt.Sprint(s.Tokens.Output)
			}
			row := []string{fmt.Sprint(s.Number), deref(s.BlockLabel), s.Decision, action, model}
			if wide {
				row = append(row, millis(s.TimingsMS.Settle), millis(s.TimingsMS.Observe), millis(s.TimingsMS.Act),
					in, out, s.URL, s.Thought)
			}
			t.AddRow(row...)
		}
	}
	return l
}

// millis writes a time in milliseconds with the precision that matters at
// its size: "0.3ms", "812ms", "2.35s".
func millis(ms float64) string {
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + "ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
}
