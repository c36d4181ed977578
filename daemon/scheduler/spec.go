package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Spec is a parsed cron expression. Its fire times are wall-clock times of
// a time zone (Next).
//
// Accepted syntax (package robfig/cron's standard fields):
//
//   - five fields: minute hour day-of-month month day-of-week
//     ("30 2 * * *", "*/15 9-17 * * MON-FRI");
//   - six fields, a seconds field first ("*/10 * * * * *"): fire times to
//     the second;
//   - the descriptors @yearly (@annually), @monthly, @weekly, @daily
//     (@midnight) and @hourly.
//
// Refused: @every (an interval, not a time of day), a TZ= or CRON_TZ=
// prefix (the time zone is the schedule's own field), and expressions that
// never fire (February 30th).
type Spec struct {
	expr  string
	sched *cron.SpecSchedule
}

var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// maxSearch bounds the fire times Next steps over in one call (those of
// a repeated hour that it does not fire twice); far more than any hour
// holds at one per second.
const maxSearch = 10_000

// Parse parses a cron expression. Its errors say what is wrong, for the
// person who wrote it.
func Parse(expr string) (*Spec, error) {
	e := strings.TrimSpace(expr)
	switch {
	case e == "":
		return nil, errors.New("the cron expression is empty; give five fields (minute hour day-of-month month day-of-week), e.g. \"0 9 * * 1-5\"")
	case strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ="):
		return nil, errors.New("the cron expression may not name a time zone (TZ=...); set the schedule's timezone field instead")
	case strings.HasPrefix(e, "@every"):
		return nil, errors.New("@every intervals are not accepted; write the times as cron fields (\"*/5 * * * *\" for every five minutes)")
	}
	s, err := parser.Parse(e)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid cron expression: %v; give five fields (minute hour day-of-month month day-of-week), six with seconds first, or @hourly, @daily, @weekly, @monthly, @yearly", e, err)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fmt.Errorf("%q is not a cron expression of times of day", e)
	}
	spec.Location = time.UTC // Next works on wall-clock times written as UTC
	p := &Spec{expr: e, sched: spec}
	if p.sched.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("%q never fires (no date matches it)", e)
	}
	return p, nil
}

// LoadZone loads an IANA time zone ("Europe/Berlin", "UTC"). Its errors
// say what is wrong.
func LoadZone(name string) (*time.Location, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("the timezone is empty; give an IANA time zone name such as \"UTC\" or \"America/New_York\"")
	}
	if name == "Local" {
		return nil, errors.New("\"Local\" is not accepted: give the IANA name of the time zone (\"Europe/Berlin\"), so that the schedule does not change with the daemon's machine")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not a known IANA time zone name (such as \"UTC\" or \"America/New_York\")", name)
	}
	return loc, nil
}

// String returns the expression as parsed.
func (s *Spec) String() string { return s.expr }

// Next returns the first fire time of the expression in loc strictly after
// the instant after; zero when there is none within five years.
//
// Fire times are wall-clock times of loc. Where daylight saving makes
// them ambiguous:
//
//   - a time the clocks skip (02:30 on the night they go from 02:00 to
//     03:00) fires at the first instant after the skip (03:00 of the new
//     offset); all the skipped times of the night fire there once;
//   - a time the clocks repeat (01:30 on the night they go back from 02:00
//     to 01:00) fires once, at its first occurrence.
func (s *Spec) Next(loc *time.Location, after time.Time) time.Time {
	w := wall(after.In(loc))
	for range maxSearch {
		nw := s.sched.Next(w)
		if nw.IsZero() {
			return time.Time{}
		}
		if t := resolve(nw, loc); t.After(after) {
			return t
		}
		w = nw
	}
	return time.Time{}
}

// NextN returns the next n fire times after the instant after, in loc.
func (s *Spec) NextN(loc *time.Location, after time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for len(out) < n {
		t := s.Next(loc, after)
		if t.IsZero() {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

// wall returns t's wall-clock reading written as a UTC time.
func wall(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return time.Date(y, mo, d, h, mi, sec, t.Nanosecond(), time.UTC)
}

// resolve returns the instant at which loc's clocks read w (a wall-clock
// time written as UTC): the earlier one when they read it twice, the end
// of the skip when they never do.
func resolve(w time.Time, loc *time.Location) time.Time {
	var found time.Time
	var beforeOff int
	// The offsets in force a day either side of w cover both sides of any
	// transition near it.
	for i, probe := range []time.Time{w.Add(-26 * time.Hour), w.Add(26 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		if i == 0 {
			beforeOff = off
		}
		c := w.Add(-time.Duration(off) * time.Second)
		if wall(c.In(loc)).Equal(w) && (found.IsZero() || c.Before(found)) {
			found = c
		}
	}
	if !found.IsZero() {
		return found
	}
	// In a skip: read with the offset before it, w is an instant after
	// the transition, whose zone starts where the skip ends.
	start, _ := w.Add(-time.Duration(beforeOff) * time.Second).In(loc).ZoneBounds()
	if start.IsZero() {
		return w.Add(-time.Duration(beforeOff) * time.Second)
	}
	return start
}
