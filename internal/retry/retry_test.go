package retry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestAfter(t *testing.T) {
	now := time.Date(2026, 1, 31, 15, 20, 42, 0, time.UTC)
	for _, c := range []struct {
		name   string
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{"none", header(), 0, false},
		{"milliseconds", header("Retry-After-Ms", "250"), 250 * time.Millisecond, true},
		{"fractional milliseconds", header("Retry-After-Ms", "1.5"), 1500 * time.Microsecond, true},
		{"zero milliseconds: retry now", header("Retry-After-Ms", "0", "Retry-After", "5"), 0, true},
		{"padded milliseconds", header("Retry-After-Ms", " 100 "), 100 * time.Millisecond, true},
		{"negative milliseconds fall back", header("Retry-After-Ms", "-5", "Retry-After", "3"), 3 * time.Second, true},
		{"unreadable milliseconds fall back", header("Retry-After-Ms", "soon", "Retry-After", "2"), 2 * time.Second, true},
		{"NaN milliseconds fall back", header("Retry-After-Ms", "NaN"), 0, false},
		{"seconds", header("Retry-After", "3"), 3 * time.Second, true},
		{"zero seconds", header("Retry-After", "0"), 0, true},
		{"fractional seconds", header("Retry-After", "0.5"), 500 * time.Millisecond, true},
		{"padded seconds", header("Retry-After", " 7 "), 7 * time.Second, true},
		{"negative seconds", header("Retry-After", "-1"), 0, false},
		{"unreadable", header("Retry-After", "soon"), 0, false},
		{"date ahead", header("Retry-After", "Sat, 31 Jan 2026 15:20:52 GMT"), 10 * time.Second, true},
		{"date passed", header("Retry-After", "Sat, 31 Jan 2026 15:20:32 GMT"), 0, true},
		{"date now", header("Retry-After", "Sat, 31 Jan 2026 15:20:42 GMT"), 0, true},
	} {
		d, ok := After(c.header, now)
		if d != c.want || ok != c.ok {
			t.Errorf("%s: After = %v, %v; want %v, %v", c.name, d, ok, c.want, c.ok)
		}
	}
}

func TestAfterParts(t *testing.T) {
	now := time.Now()
	h := header("Retry-After-Ms", "0", "Retry-After", "5")
	if d, ok := AfterMs(h); d != 0 || !ok {
		t.Errorf("AfterMs = %v, %v; want 0, true", d, ok)
	}
	if d, ok := AfterHeader(h, now); d != 5*time.Second || !ok {
		t.Errorf("AfterHeader = %v, %v; want 5s, true", d, ok)
	}
	if _, ok := AfterMs(header("Retry-After", "5")); ok {
		t.Error("AfterMs read Retry-After")
	}
	if _, ok := AfterHeader(header("Retry-After-Ms", "5"), now); ok {
		t.Error("AfterHeader read Retry-After-Ms")
	}
}

func TestBackoff(t *testing.T) {
	const base, limit = 500 * time.Millisecond, 8 * time.Second
	for _, c := range []struct {
		jitter float64
		want   []time.Duration // attempts 0, 1, 2, ...
	}{
		{0, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}},
		{0.5, []time.Duration{437500 * time.Microsecond, 875 * time.Millisecond, 1750 * time.Millisecond, 3500 * time.Millisecond, 7 * time.Second, 7 * time.Second}},
		{0.999, []time.Duration{375125 * time.Microsecond, 750250 * time.Microsecond, 1500500 * time.Microsecond, 3001 * time.Millisecond, 6002 * time.Millisecond, 6002 * time.Millisecond}},
	} {
		for attempt, want := range c.want {
			if got := Backoff(attempt, base, limit, c.jitter); got != want {
				t.Errorf("Backoff(%d, jitter %v) = %v, want %v", attempt, c.jitter, got, want)
			}
		}
	}
	// A limit that is not a power of two times the base caps the doubling.
	if got := Backoff(3, time.Second, 5*time.Second, 0); got != 5*time.Second {
		t.Errorf("Backoff past the limit = %v, want 5s", got)
	}
	// Many attempts do not overflow.
	if got := Backoff(1000, base, limit, 0); got != limit {
		t.Errorf("Backoff(1000) = %v, want %v", got, limit)
	}
}

func TestSleep(t *testing.T) {
	if err := Sleep(t.Context(), time.Millisecond); err != nil {
		t.Errorf("Sleep: %v", err)
	}
	if err := Sleep(t.Context(), 0); err != nil {
		t.Errorf("Sleep(0): %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(0) with an ended context = %v, want context.Canceled", err)
	}
	start := time.Now()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep with an ended context = %v, want context.Canceled", err)
	}
	if time.Since(start) > time.Minute { // a hang guard, not a timing expectation
		t.Error("Sleep waited although its context had ended")
	}
}
