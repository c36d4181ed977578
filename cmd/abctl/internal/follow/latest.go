package follow

import (
	"context"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
)

// latestTimeout bounds one read of the run's steps: the latest action is
// a nicety, and a slow answer must not hold up the view.
const latestTimeout = 3 * time.Second

// readLatest reads the newest of the run's steps (once per change of the
// step count, and once at the end). step is nil when there is none yet or
// the read failed, which only means nothing new is shown; supported is
// false when the service has no steps route (the hosted service: the
// client answers nil and no error), after which the caller stops asking.
func readLatest(ctx context.Context, o Options) (step *client.RunStep, supported bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), latestTimeout)
	defer cancel()
	steps, err := o.Client.Runs.Steps(ctx, o.RunID, client.WithMaxRetries(0))
	if err != nil {
		return nil, true
	}
	if steps == nil {
		return nil, false
	}
	return client.LatestStep(steps), true
}

// wantsLatest reports whether an event calls for reading the steps: the
// step count changed, or the run ended (its last step's details arrive
// after the step was counted).
func wantsLatest(ev client.RunEvent) bool {
	return ev.StepsChanged() || ev.Run.IsTerminal()
}

// latestText is a step in one line: its number and summary, with line
// breaks a page's text may carry turned into spaces.
func latestText(s *client.RunStep) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s.Summary())
}
