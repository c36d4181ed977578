package client

import (
	"context"
	"iter"
	"strings"
	"time"
)

// WaitOptions controls how Wait and Watch poll a run. The zero value polls
// after 1 s, then 1.5 times longer each time nothing changed, up to 10 s;
// any change brings the interval back to the start, so a busy run is
// followed closely and an idle one costs few requests.
type WaitOptions struct {
	Interval    time.Duration // first interval; 0 means 1 s
	MaxInterval time.Duration // longest interval; 0 means 10 s
}

func (o *WaitOptions) intervals() (first, longest time.Duration) {
	first, longest = time.Second, 10*time.Second
	if o != nil {
		if o.Interval > 0 {
			first = o.Interval
		}
		if o.MaxInterval > 0 {
			longest = o.MaxInterval
		}
	}
	return first, max(first, longest)
}

// RunEvent is one observed change of a followed run.
type RunEvent struct {
	Run      *Run // the run as just read
	Previous *Run // the run as read before this change; nil on the first event
}

// StatusChanged reports whether the status differs from the previous event
// (always true for the first event).
func (e RunEvent) StatusChanged() bool {
	return e.Previous == nil || e.Previous.Status != e.Run.Status
}

// StepsChanged reports whether the step count differs from the previous
// event (always true for the first event).
func (e RunEvent) StepsChanged() bool {
	return e.Previous == nil || e.Previous.GetStepCount() != e.Run.GetStepCount()
}

// NewScreenshot reports whether the newest screenshot differs from the
// previous event's (always true for the first event that has one).
func (e RunEvent) NewScreenshot() bool {
	s := e.LatestScreenshot()
	return s != "" && (e.Previous == nil || !SameFile(firstOrEmpty(e.Previous.ScreenshotURLs), s))
}

// LatestScreenshot returns the newest screenshot URL, or "".
func (e RunEvent) LatestScreenshot() string {
	if len(e.Run.ScreenshotURLs) == 0 {
		return ""
	}
	return e.Run.ScreenshotURLs[0]
}

// Watch returns an iterator that polls a run and yields an event for its
// first state and for every change of status, step count, newest
// screenshot, failure reason or recording, ending after the event that
// shows a terminal status; o may be nil. It is what a live view of a run
// consumes:
//
//	for ev, err := range c.Runs.Watch(ctx, runID, nil) {
//		if err != nil { return err }
//		fmt.Printf("%s, %d steps\n", ev.Run.Status, ev.Run.GetStepCount())
//	}
//
// An error (a failed read after the client's retries, or ctx ending) is
// yielded once and ends the iteration. Unknown statuses count as not
// terminal, so a run in a state newer than this package is followed on.
func (s *RunsService) Watch(ctx context.Context, runID string, o *WaitOptions, opts ...Option) iter.Seq2[RunEvent, error] {
	first, maxInterval := o.intervals()
	return func(yield func(RunEvent, error) bool) {
		var prev *Run
		interval := first
		for {
			run, err := s.Get(ctx, runID, opts...)
			if err != nil {
				yield(RunEvent{Previous: prev}, err)
				return
			}
			if prev == nil || runChanged(prev, run) {
				if !yield(RunEvent{Run: run, Previous: prev}, nil) {
					return
				}
				if prev != nil {
					interval = first
				}
				prev = run
			}
			if run.Status.IsTerminal() {
				return
			}
			if err := s.client.cfg.sleep(ctx, interval); err != nil {
				yield(RunEvent{Previous: prev}, err)
				return
			}
			interval = min(interval*3/2, maxInterval)
		}
	}
}

// Wait polls a run until it reaches a terminal status and returns it; o may
// be nil. If ctx ends first, Wait returns the run as last read (nil if it
// was never read) together with ctx's error, so a caller can report how far
// the run got. A run that ended in failure is not an error: check its
// Status.
func (s *RunsService) Wait(ctx context.Context, runID string, o *WaitOptions, opts ...Option) (*Run, error) {
	var last *Run
	for ev, err := range s.Watch(ctx, runID, o, opts...) {
		if err != nil {
			return ev.Previous, err
		}
		last = ev.Run
	}
	return last, nil
}

// runChanged reports whether b differs from a in what a person following
// the run would notice. File URLs are compared without their query: signed
// URLs (presigned by the hosted service, signed by the daemon) carry an
// expiry and a signature that change on every read of the same file.
func runChanged(a, b *Run) bool {
	if a.Status != b.Status || a.GetStepCount() != b.GetStepCount() ||
		a.GetFailureReason() != b.GetFailureReason() || !SameFile(a.GetRecordingURL(), b.GetRecordingURL()) {
		return true
	}
	return !SameFile(firstOrEmpty(a.ScreenshotURLs), firstOrEmpty(b.ScreenshotURLs))
}

func firstOrEmpty(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// SameFile reports whether two file URLs name the same file: equal but for
// their query strings (which carry the signature and expiry of a signed
// URL) and fragments.
func SameFile(a, b string) bool {
	return stripQuery(a) == stripQuery(b)
}

func stripQuery(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return u[:i]
	}
	return u
}
