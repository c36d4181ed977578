package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// sleepRecorder replaces the client's sleep: it records each delay and
// returns at once, so backoff is checked without waiting.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

// scriptedServer answers the n-th request with the n-th step; the last step
// repeats.
type step func(w http.ResponseWriter, r *http.Request)

func status(code int, header ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
		if code == 200 {
			io.WriteString(w, `{"run_id":"wr_1","status":"completed","run_type":"workflow_run","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42"}`)
		} else {
			io.WriteString(w, `{"detail":"try later"}`)
		}
	}
}

func scriptedServer(t *testing.T, steps ...step) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		i := int(n.Add(1)) - 1
		steps[min(i, len(steps)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func newTestClient(t *testing.T, baseURL string, rec *sleepRecorder, opts ...Option) *Client {
	t.Helper()
	c, err := New(append([]Option{WithBaseURL(baseURL), WithAPIKey("k_secret_value")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	c.cfg.sleep = rec.sleep
	c.cfg.jitter = func() float64 { return 0 }
	c.cfg.now = func() time.Time { return time.Date(2026, 1, 31, 15, 0, 0, 0, time.UTC) }
	return c
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	cases := []struct {
		name   string
		header []string
		want   time.Duration
	}{
		{"seconds", []string{"Retry-After", "2"}, 2 * time.Second},
		{"milliseconds", []string{"Retry-After-Ms", "1500", "Retry-After", "9"}, 1500 * time.Millisecond},
		{"http date", []string{"Retry-After", "Sat, 31 Jan 2026 15:00:07 GMT"}, 7 * time.Second},
		{"unreadable falls back to backoff", []string{"Retry-After", "soon"}, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, code := range []int{429, 502, 503, 504} {
				srv, n := scriptedServer(t, status(code, tc.header...), status(200))
				rec := &sleepRecorder{}
				c := newTestClient(t, srv.URL, rec)
				run, err := c.Runs.Get(t.Context(), "wr_1")
				if err != nil || run.Status != RunStatusCompleted {
					t.Fatalf("%d: Get: %v, %v", code, run, err)
				}
				if n.Load() != 2 {
					t.Errorf("%d: %d requests, want 2", code, n.Load())
				}
				if got := rec.got(); len(got) != 1 || got[0] != tc.want {
					t.Errorf("%d: delays %v, want [%v]", code, got, tc.want)
				}
			}
		})
	}
}

// TestRetryAfterRule: the delay Error.RetryAfter holds for each header,
// as the client read them before it shared internal/retry with the model
// client. A Retry-After-Ms of zero does not count (Retry-After, or the
// backoff, decides), and what asks for no wait is zero.
func TestRetryAfterRule(t *testing.T) {
	now := time.Date(2026, 1, 31, 15, 20, 42, 0, time.UTC)
	for _, tc := range []struct {
		header []string
		want   time.Duration
	}{
		{nil, 0},
		{[]string{"Retry-After-Ms", "250"}, 250 * time.Millisecond},
		{[]string{"Retry-After-Ms", "0"}, 0},
		{[]string{"Retry-After-Ms", "0", "Retry-After", "5"}, 5 * time.Second},
		{[]string{"Retry-After-Ms", "-5", "Retry-After", "3"}, 3 * time.Second},
		{[]string{"Retry-After-Ms", "1.5"}, 1500 * time.Microsecond},
		{[]string{"Retry-After-Ms", "soon", "Retry-After", "2"}, 2 * time.Second},
		{[]string{"Retry-After", "3"}, 3 * time.Second},
		{[]string{"Retry-After", "0"}, 0},
		{[]string{"Retry-After", "-1"}, 0},
		{[]string{"Retry-After", "0.5"}, 500 * time.Millisecond},
		{[]string{"Retry-After", " 7 "}, 7 * time.Second},
		{[]string{"Retry-After", "soon"}, 0},
		{[]string{"Retry-After", "Sat, 31 Jan 2026 15:20:52 GMT"}, 10 * time.Second},
		{[]string{"Retry-After", "Sat, 31 Jan 2026 15:20:32 GMT"}, 0},
		{[]string{"Retry-After", "Sat, 31 Jan 2026 15:20:42 GMT"}, 0},
	} {
		h := http.Header{}
		for i := 0; i+1 < len(tc.header); i += 2 {
			h.Set(tc.header[i], tc.header[i+1])
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestRetryBackoffGrowsAndStops(t *testing.T) {
	srv, n := scriptedServer(t, status(503))
	rec := &sleepRecorder{}
	c := newTestClient(t, srv.URL, rec, WithMaxRetries(4), WithRetryBackoff(time.Second, 3*time.Second))
	_, err := c.Runs.Get(t.Context(), "wr_1")
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || !errors.Is(err, ErrServer) || apiErr.Detail != "try later" {
		t.Fatalf("error %v", err)
	}
	if n.Load() != 5 {
		t.Errorf("%d requests, want 5 (1 + 4 retries)", n.Load())
	}
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}
	if got := rec.got(); !equalDurations(got, want) {
		t.Errorf("delays %v, want %v", got, want)
	}
}

func TestRetryJitterShortensDelay(t *testing.T) {
	c, _ := New()
	c.cfg.jitter = func() float64 { return 0.999 }
	if d := c.cfg.backoff(0); d <= 375*time.Millisecond || d > 376*time.Millisecond {
		t.Errorf("backoff with full jitter %v, want just over 375ms (25%% off 500ms)", d)
	}
}

func TestNoRetryForOtherStatuses(t *testing.T) {
	for _, code := range []int{400, 403, 404, 409, 422, 500} {
		srv, n := scriptedServer(t, status(code), status(200))
		rec := &sleepRecorder{}
		c := newTestClient(t, srv.URL, rec)
		if _, err := c.Runs.Get(t.Context(), "wr_1"); err == nil {
			t.Errorf("%d: no error", code)
		}
		if n.Load() != 1 || len(rec.got()) != 0 {
			t.Errorf("%d: %d requests and delays %v, want 1 and none", code, n.Load(), rec.got())
		}
	}
}

func TestRetryAfterBeyondLimitIsReturned(t *testing.T) {
	srv, n := scriptedServer(t, status(429, "Retry-After", "3600"), status(200))
	rec := &sleepRecorder{}
	c := newTestClient(t, srv.URL, rec)
	_, err := c.Runs.Get(t.Context(), "wr_1")
	var apiErr *Error
	if !errors.As(err, &apiErr) || !errors.Is(err, ErrRateLimited) || apiErr.RetryAfter != time.Hour {
		t.Fatalf("error %v (RetryAfter %v)", err, apiErr)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests, want 1", n.Load())
	}
}

func TestCreateIsNotRetriedOnceSent(t *testing.T) {
	srv, n := scriptedServer(t, status(503, "Retry-After", "1"), status(200))
	rec := &sleepRecorder{}
	c := newTestClient(t, srv.URL, rec)
	_, err := c.Runs.StartTask(t.Context(), &TaskRunRequest{Prompt: "p"})
	if !errors.Is(err, ErrServer) {
		t.Fatalf("error %v, want the 503", err)
	}
	if n.Load() != 1 {
		t.Errorf("a run start was sent %d times; a reply of 503 may mean it started, so it must not be repeated", n.Load())
	}
}

func TestCreateWithIdempotencyKeyIsRetried(t *testing.T) {
	var keys []string
	var mu sync.Mutex
	srv, n := scriptedServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		status(503)(w, r)
	}, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		status(200)(w, r)
	})
	rec := &sleepRecorder{}
	c := newTestClient(t, srv.URL, rec)
	if _, err := c.Runs.StartTask(t.Context(), &TaskRunRequest{Prompt: "p"}, WithIdempotencyKey("run-42")); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || keys[0] != "run-42" || keys[1] != "run-42" {
		t.Errorf("%d requests with keys %v, want 2 with the same key", n.Load(), keys)
	}
}

// refuseOnce fails the first dial as a refused connection, then delegates
// to a real transport.
type refuseOnce struct {
	refused atomic.Bool
	next    http.RoundTripper
}

func (r *refuseOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.refused.CompareAndSwap(false, true) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	}
	return r.next.RoundTrip(req)
}

func TestCreateRetriedWhenConnectionRefused(t *testing.T) {
	srv, n := scriptedServer(t, status(200))
	rec := &sleepRecorder{}
	hc := &http.Client{Transport: &refuseOnce{next: http.DefaultTransport}}
	c := newTestClient(t, srv.URL, rec, WithHTTPClient(hc))
	if _, err := c.Runs.StartTask(t.Context(), &TaskRunRequest{Prompt: "p"}); err != nil {
		t.Fatalf("StartTask after a refused connection: %v", err)
	}
	if n.Load() != 1 || len(rec.got()) != 1 {
		t.Errorf("server saw %d requests after %d delays, want 1 after 1", n.Load(), len(rec.got()))
	}
}

func TestRealConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	rec := &sleepRecorder{}
	c := newTestClient(t, "http://"+addr, rec)
	_, err = c.Runs.StartTask(t.Context(), &TaskRunRequest{Prompt: "p"})
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("error %v, want the dial error", err)
	}
	if len(rec.got()) != DefaultMaxRetries {
		t.Errorf("%d retries, want %d (nothing was sent, so a create may be retried)", len(rec.got()), DefaultMaxRetries)
	}
	if strings.Contains(err.Error(), "k_secret_value") {
		t.Error("the API key appears in the error")
	}
}

// hangUp closes the connection after reading the request: the request was
// sent, and the outcome is unknown.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close()
	}
}

func TestSentRequestThatLostItsReply(t *testing.T) {
	t.Run("a create is not repeated", func(t *testing.T) {
		srv, n := scriptedServer(t, hangUp, status(200))
		c := newTestClient(t, srv.URL, &sleepRecorder{})
		if _, err := c.Runs.StartTask(t.Context(), &TaskRunRequest{Prompt: "p"}); err == nil {
			t.Fatal("no error")
		}
		if n.Load() != 1 {
			t.Errorf("%d requests, want 1", n.Load())
		}
	})
	t.Run("a read is repeated", func(t *testing.T) {
		srv, n := scriptedServer(t, hangUp, status(200))
		c := newTestClient(t, srv.URL, &sleepRecorder{})
		if _, err := c.Runs.Get(t.Context(), "wr_1"); err != nil {
			t.Fatal(err)
		}
		if n.Load() != 2 {
			t.Errorf("%d requests, want 2", n.Load())
		}
	})
}

func TestRequestTimeoutBoundsEachAttempt(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv, n := scriptedServer(t, func(w http.ResponseWriter, r *http.Request) {
		select { // stall until the client gives up on this attempt
		case <-r.Context().Done():
		case <-release:
		}
	}, status(200))
	c := newTestClient(t, srv.URL, &sleepRecorder{})
	run, err := c.Runs.Get(t.Context(), "wr_1", WithRequestTimeout(100*time.Millisecond))
	if err != nil || run.RunID != "wr_1" {
		t.Fatalf("Get: %v", err)
	}
	if n.Load() != 2 {
		t.Errorf("%d requests, want 2", n.Load())
	}
}

// fakeTransport answers without a network, for tests inside a synctest
// bubble where time is virtual.
type fakeTransport func(*http.Request) (*http.Response, error)

func (f fakeTransport) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestContextEndsDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		hc := &http.Client{Transport: fakeTransport(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			return &http.Response{
				StatusCode: 503, Header: http.Header{"Retry-After": {"30"}},
				Body: io.NopCloser(strings.NewReader(`{"detail":"busy"}`)), Request: r,
			}, nil
		})}
		c, err := New(WithBaseURL("http://svc.test"), WithHTTPClient(hc))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err = c.Runs.Get(ctx, "wr_1")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want the context's deadline", err)
		}
		if el := time.Since(start); el != 5*time.Second {
			t.Errorf("returned after %v of virtual time, want 5s (the context's deadline, not the 30s Retry-After)", el)
		}
		if calls.Load() != 1 {
			t.Errorf("%d calls", calls.Load())
		}
	})
}

func TestLoggerNeverSeesTheKey(t *testing.T) {
	srv, _ := scriptedServer(t, status(503), status(200))
	var buf strings.Builder
	var mu sync.Mutex
	logger := slogTo(&buf, &mu)
	c := newTestClient(t, srv.URL, &sleepRecorder{}, WithLogger(logger))
	if _, err := c.Runs.Get(t.Context(), "wr_1"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "/v1/runs/wr_1") || !strings.Contains(out, "retrying") {
		t.Errorf("log lacks the request and the retry:\n%s", out)
	}
	if strings.Contains(out, "k_secret_value") {
		t.Errorf("the API key was logged:\n%s", out)
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
