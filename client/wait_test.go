package client

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockedWriter lets a slog handler write into a strings.Builder shared with
// the test.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func slogTo(b *strings.Builder, mu *sync.Mutex) *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{mu, b}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// runSequence serves GET /v1/runs/wr_1 as a run that moves through states:
// each element is "status steps [screenshot]"; the last one repeats.
func runSequence(t *testing.T, states ...string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/runs/wr_1" {
			http.NotFound(w, r)
			return
		}
		i := int(n.Add(1)) - 1
		f := strings.Fields(states[min(i, len(states)-1)])
		shot := "null"
		if len(f) > 2 {
			shot = `["` + f[2] + `"]`
		}
		fmt.Fprintf(w, `{"run_id":"wr_1","status":%q,"step_count":%s,"screenshot_urls":%s,"run_type":"workflow_run","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:4%d"}`,
			f[0], f[1], shot, i%10)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestWatchYieldsChangesAndAdaptsInterval(t *testing.T) {
	srv, n := runSequence(t,
		"queued 0", "running 1", "running 1", "running 1", "running 2 s2.png", "completed 2 s2.png")
	rec := &sleepRecorder{}
	c := newTestClient(t, srv.URL, rec)

	var seen []string
	for ev, err := range c.Runs.Watch(t.Context(), "wr_1", &WaitOptions{Interval: time.Second, MaxInterval: 2 * time.Second}) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, fmt.Sprintf("%s/%d/%v/%v/%s", ev.Run.Status, ev.Run.GetStepCount(), ev.StatusChanged(), ev.StepsChanged(), ev.LatestScreenshot()))
	}
	want := []string{"queued/0/true/true/", "running/1/true/true/", "running/2/false/true/s2.png", "completed/2/true/false/s2.png"}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("events\n got %v\nwant %v", seen, want)
	}
	if n.Load() != 6 {
		t.Errorf("%d polls, want 6", n.Load())
	}
	// After each change the interval starts again at 1s; unchanged polls
	// stretch it by half, up to the 2s cap.
	wantDelays := []time.Duration{time.Second, time.Second, 1500 * time.Millisecond, 2 * time.Second, time.Second}
	if got := rec.got(); !equalDurations(got, wantDelays) {
		t.Errorf("delays %v, want %v", got, wantDelays)
	}
}

// TestWatchIgnoresResignedURLs: a signed URL of the same file changes its
// query on every read; that is not a change of the run.
func TestWatchIgnoresResignedURLs(t *testing.T) {
	srv, _ := runSequence(t,
		"running 1 s1.jpg?sig=a", "running 1 s1.jpg?sig=b", "running 1 s1.jpg?sig=c", "running 2 s2.jpg?sig=d", "completed 2 s2.jpg?sig=e")
	c := newTestClient(t, srv.URL, &sleepRecorder{})
	var seen []string
	for ev, err := range c.Runs.Watch(t.Context(), "wr_1", nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, fmt.Sprintf("%s/%d/%v", ev.Run.Status, ev.Run.GetStepCount(), ev.NewScreenshot()))
	}
	want := []string{"running/1/true", "running/2/true", "completed/2/false"}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("events\n got %v\nwant %v", seen, want)
	}
	if !SameFile("http://h/a.jpg?x=1", "http://h/a.jpg?x=2#f") || SameFile("http://h/a.jpg?x=1", "http://h/b.jpg?x=1") {
		t.Error("SameFile compares more or less than the path")
	}
}

func TestWaitReturnsTerminalRunAndFollowsUnknownStatuses(t *testing.T) {
	srv, _ := runSequence(t, "warming_up 0", "running 3", "timed_out 3")
	c := newTestClient(t, srv.URL, &sleepRecorder{})
	run, err := c.Runs.Wait(t.Context(), "wr_1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunStatusTimedOut || run.GetStepCount() != 3 {
		t.Errorf("Wait returned %s with %d steps, want timed_out with 3", run.Status, run.GetStepCount())
	}
}

func TestWaitStopsWithContextAndReturnsLastRun(t *testing.T) {
	srv, _ := runSequence(t, "running 4")
	c := newTestClient(t, srv.URL, &sleepRecorder{})
	ctx, cancel := context.WithCancel(t.Context())
	polls := 0
	c.cfg.sleep = func(ctx context.Context, d time.Duration) error {
		polls++
		if polls == 3 {
			cancel()
		}
		return ctx.Err()
	}
	run, err := c.Runs.Wait(ctx, "wr_1", nil)
	if err != context.Canceled {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if run == nil || run.Status != RunStatusRunning || run.GetStepCount() != 4 {
		t.Errorf("last run %+v, want the running run with 4 steps", run)
	}
}

func TestWatchStopsOnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		io.WriteString(w, `{"detail":"Task run not found wr_1"}`)
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, srv.URL, &sleepRecorder{})
	errs := 0
	for ev, err := range c.Runs.Watch(t.Context(), "wr_1", nil) {
		if err == nil || ev.Run != nil {
			t.Fatalf("event %+v, %v: want one error", ev, err)
		}
		errs++
	}
	if errs != 1 {
		t.Errorf("%d errors yielded, want 1", errs)
	}
}
