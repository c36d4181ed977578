package scheduler

import (
	"strings"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func mustParse(t *testing.T, expr string) *Spec {
	t.Helper()
	s, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseAcceptsFiveAndSixFieldsAndDescriptors(t *testing.T) {
	utc := time.UTC
	from := time.Date(2026, 5, 4, 10, 0, 0, 0, utc) // a Monday
	for expr, want := range map[string]time.Time{
		"30 2 * * *":       time.Date(2026, 5, 5, 2, 30, 0, 0, utc),
		"*/10 * * * * *":   time.Date(2026, 5, 4, 10, 0, 10, 0, utc),
		"0 9 * * MON-FRI":  time.Date(2026, 5, 5, 9, 0, 0, 0, utc),
		"@daily":           time.Date(2026, 5, 5, 0, 0, 0, 0, utc),
		"@hourly":          time.Date(2026, 5, 4, 11, 0, 0, 0, utc),
		"  0 0 1 * *  ":    time.Date(2026, 6, 1, 0, 0, 0, 0, utc),
		"15 10 4 5 *":      time.Date(2026, 5, 4, 10, 15, 0, 0, utc),
		"0 0 12 29 2 *":    time.Date(2028, 2, 29, 12, 0, 0, 0, utc),
		"5 4 * * sun":      time.Date(2026, 5, 10, 4, 5, 0, 0, utc),
		"0 30 10 * * 1":    time.Date(2026, 5, 4, 10, 30, 0, 0, utc),
		"@weekly":          time.Date(2026, 5, 10, 0, 0, 0, 0, utc),
		"0 0 1 1 *":        time.Date(2027, 1, 1, 0, 0, 0, 0, utc),
		"59 23 31 12 *":    time.Date(2026, 12, 31, 23, 59, 0, 0, utc),
		"*/15 9-17 * * *":  time.Date(2026, 5, 4, 10, 15, 0, 0, utc),
		"0 0 * * 0,6":      time.Date(2026, 5, 9, 0, 0, 0, 0, utc),
		"@monthly":         time.Date(2026, 6, 1, 0, 0, 0, 0, utc),
		"@yearly":          time.Date(2027, 1, 1, 0, 0, 0, 0, utc),
		"0 12 * JAN,JUL *": time.Date(2026, 7, 1, 12, 0, 0, 0, utc),
	} {
		if got := mustParse(t, expr).Next(utc, from); !got.Equal(want) {
			t.Errorf("%q: next after %v = %v, want %v", expr, from, got, want)
		}
	}
}

func TestParseRefusesWithAReason(t *testing.T) {
	for expr, says := range map[string]string{
		"":                   "empty",
		"61 * * * *":         "not a valid cron expression",
		"* * *":              "not a valid cron expression",
		"@every 5m":          "@every",
		"TZ=UTC 0 * * * *":   "time zone",
		"0 0 30 2 *":         "never fires",
		"1 2 3 4 5 6 7":      "not a valid cron expression",
		"every day at noon":  "not a valid cron expression",
		"CRON_TZ=UTC @daily": "time zone",
	} {
		_, err := Parse(expr)
		if err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("Parse(%q) = %v, want an error saying %q", expr, err, says)
		}
	}
	for _, name := range []string{"", "Mars/Olympus", "Local", "america/new york"} {
		if _, err := LoadZone(name); err == nil {
			t.Errorf("LoadZone(%q) accepted", name)
		}
	}
}

// 2026-03-08 in New York: the clocks go from 02:00 EST straight to 03:00
// EDT. A 02:30 schedule fires at 03:00 EDT that night, then at 02:30 EDT.
func TestATimeTheClocksSkipFiresAtTheEndOfTheSkip(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	spec := mustParse(t, "30 2 * * *")
	got := spec.NextN(ny, time.Date(2026, 3, 7, 12, 0, 0, 0, ny), 3)
	assertTimes(t, got, []time.Time{
		time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC),   // 03:00 EDT: the end of the skip
		time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC),  // 02:30 EDT
		time.Date(2026, 3, 10, 6, 30, 0, 0, time.UTC), // 02:30 EDT
	})

	// Every quarter hour: 02:00, 02:15, 02:30 and 02:45 do not exist;
	// they fire once, at 03:00 EDT, which is also a fire time of its own.
	got = mustParse(t, "*/15 * * * *").NextN(ny, time.Date(2026, 3, 8, 1, 40, 0, 0, ny), 4)
	assertTimes(t, got, []time.Time{
		time.Date(2026, 3, 8, 6, 45, 0, 0, time.UTC), // 01:45 EST
		time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC),  // 03:00 EDT
		time.Date(2026, 3, 8, 7, 15, 0, 0, time.UTC), // 03:15 EDT
		time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC), // 03:30 EDT
	})

	// Berlin, 2026-03-29: 02:00 CET -> 03:00 CEST.
	berlin := mustZone(t, "Europe/Berlin")
	got = spec.NextN(berlin, time.Date(2026, 3, 28, 12, 0, 0, 0, berlin), 2)
	assertTimes(t, got, []time.Time{
		time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC),  // 03:00 CEST
		time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC), // 02:30 CEST
	})
}

// 2026-11-01 in New York: the clocks go back from 02:00 EDT to 01:00 EST,
// so 01:00-01:59 happen twice. A 01:30 schedule fires once, at the first.
func TestATimeTheClocksRepeatFiresOnce(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	got := mustParse(t, "30 1 * * *").NextN(ny, time.Date(2026, 10, 31, 12, 0, 0, 0, ny), 2)
	assertTimes(t, got, []time.Time{
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), // 01:30 EDT
		time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC), // 01:30 EST the next day
	})

	// Every 20 minutes through the night: the repeated hour's second pass
	// (01:00-01:59 EST) fires nothing; 02:00 EST comes next.
	got = mustParse(t, "*/20 * * * *").NextN(ny, time.Date(2026, 11, 1, 0, 50, 0, 0, ny), 5)
	assertTimes(t, got, []time.Time{
		time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC),  // 01:00 EDT
		time.Date(2026, 11, 1, 5, 20, 0, 0, time.UTC), // 01:20 EDT
		time.Date(2026, 11, 1, 5, 40, 0, 0, time.UTC), // 01:40 EDT
		time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC),  // 02:00 EST
		time.Date(2026, 11, 1, 7, 20, 0, 0, time.UTC), // 02:20 EST
	})

	// Asked from inside the second pass, the next fire time is after it.
	inSecondPass := time.Date(2026, 11, 1, 6, 10, 0, 0, time.UTC) // 01:10 EST
	if got := mustParse(t, "30 1 * * *").Next(ny, inSecondPass); !got.Equal(time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC)) {
		t.Errorf("next 01:30 after 01:10 EST (second pass) = %v, want 01:30 EST the next day", got.In(ny))
	}
}

func TestLatestDueIsOneFireTimeHoweverManyWereMissed(t *testing.T) {
	spec := mustParse(t, "*/5 * * * *")
	mark := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := mark.Add(3*time.Hour + 2*time.Minute)
	got, missed := latestDue(spec, time.UTC, mark, now)
	if !got.Equal(mark.Add(3 * time.Hour)) {
		t.Errorf("latest due = %v, want %v", got, mark.Add(3*time.Hour))
	}
	// 00:05 to 02:55 were stepped over: 35 fire times, the latest 02:55.
	if missed.Count != 35 || !missed.Latest.Equal(mark.Add(2*time.Hour+55*time.Minute)) {
		t.Errorf("missed = %+v, want 35, the latest 02:55", missed)
	}
	if got, missed := latestDue(spec, time.UTC, mark, mark.Add(4*time.Minute)); !got.IsZero() || missed.Count != 0 {
		t.Errorf("latest due before the first fire time = %v (missed %+v), want none", got, missed)
	}
	if _, missed := latestDue(spec, time.UTC, mark, mark.Add(5*time.Minute)); missed.Count != 0 {
		t.Errorf("one fire time due: missed %+v, want none", missed)
	}
}

func TestManualClockWakesWaitersWhenItReachesThem(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewManualClock(start)
	soon, later := c.At(start.Add(time.Minute)), c.At(start.Add(time.Hour))
	// A wait for an instant the clock has reached already ends at once.
	select {
	case <-c.At(start):
	default:
		t.Fatal("a wait for the present did not end at once")
	}
	c.Advance(59 * time.Second)
	select {
	case <-soon:
		t.Fatal("woke before its time")
	default:
	}
	c.Advance(time.Second)
	select {
	case <-soon:
	default:
		t.Fatal("did not wake at its time")
	}
	select {
	case <-later:
		t.Fatal("the later waiter woke")
	default:
	}
}

func assertTimes(t *testing.T, got, want []time.Time) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d times %v, want %v", len(got), got, want)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("time %d = %v, want %v", i, got[i].UTC(), want[i])
		}
	}
}
