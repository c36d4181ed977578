package follow

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// syncBuffer is a bytes.Buffer safe for the live view's writes and the
// test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type env struct {
	c    *client.Client
	exec *scripted.Executor
}

func newEnv(t *testing.T) *env {
	t.Helper()
	exec := &scripted.Executor{}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: "follow-test-key", Executor: exec})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey("follow-test-key"))
	if err != nil {
		t.Fatal(err)
	}
	return &env{c: c, exec: exec}
}

func (e *env) start(t *testing.T, script string) string {
	t.Helper()
	run, err := e.c.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + script})
	if err != nil {
		t.Fatal(err)
	}
	return run.RunID
}

// tui follows runID in the live view, with keys typed into a pipe, and
// returns the result and what the view wrote.
func (e *env) tui(t *testing.T, ctx context.Context, runID string, keys func(w io.Writer, out *syncBuffer)) (*Result, string) {
	t.Helper()
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	ios := iostreams.New(inR, io.Discard, out, func(string) string { return "" })
	ios.SetTTY(true, true, true)
	ios.SetWidth(120)
	done := make(chan struct{})
	var res *Result
	var err error
	go func() {
		defer close(done)
		res, err = Follow(ctx, Options{IO: ios, Client: e.c, RunID: runID, Poll: client.WaitOptions{Interval: 20 * time.Millisecond, MaxInterval: 50 * time.Millisecond}})
	}()
	if keys != nil {
		keys(inW, out)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the live view did not end; it shows:\n%s", out.String())
	}
	inW.Close()
	if err != nil {
		t.Fatalf("Follow: %v\n%s", err, out.String())
	}
	return res, out.String()
}

// waitFor waits until the view shows want.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the view never showed %q:\n%s", want, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestTUICompletes(t *testing.T) {
	e := newEnv(t)
	id := e.start(t, `steps=3;sleep=30ms;screenshots=1;output={"a":1}`)
	res, view := e.tui(t, t.Context(), id, nil)
	if res.Run.Status != client.RunStatusCompleted || res.ExitCode() != cmdutil.ExitOK || res.Left {
		t.Errorf("result %+v (status %s)", res, res.Run.Status)
	}
	for _, want := range []string{id, "✓ Run " + id + " completed, 3 steps", "last screenshot: screenshot_001.png", "whole links: abctl runs artifacts " + id} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
}

// TestTUICtrlCLeave: Ctrl-C asks; "n" leaves the run running (exit 8).
func TestTUICtrlCLeave(t *testing.T) {
	e := newEnv(t)
	id := e.start(t, "steps=1;block")
	res, view := e.tui(t, t.Context(), id, func(w io.Writer, out *syncBuffer) {
		waitFor(t, out, "running")
		w.Write([]byte{0x03}) // Ctrl-C
		waitFor(t, out, "Cancel the run?")
		w.Write([]byte("n"))
	})
	if !res.Left || res.ExitCode() != cmdutil.ExitPending {
		t.Errorf("result %+v, want left running (exit 8)", res)
	}
	if !strings.Contains(view, "abctl runs watch "+id) {
		t.Errorf("no resume hint:\n%s", view)
	}
	run, err := e.c.Runs.Get(t.Context(), id)
	if err != nil || run.IsTerminal() {
		t.Errorf("the run ended after leaving it: %v %v", err, run.Status)
	}
	e.exec.Release(id)
}

// TestTUICtrlCCancel: Ctrl-C then "y" cancels the run and follows it to its
// canceled end (exit 1).
func TestTUICtrlCCancel(t *testing.T) {
	e := newEnv(t)
	id := e.start(t, "steps=1;block")
	res, view := e.tui(t, t.Context(), id, func(w io.Writer, out *syncBuffer) {
		waitFor(t, out, "running")
		w.Write([]byte{0x03})
		waitFor(t, out, "Cancel the run?")
		w.Write([]byte("y"))
	})
	if !res.Canceled || res.Run.Status != client.RunStatusCanceled || res.ExitCode() != cmdutil.ExitError {
		t.Errorf("result %+v (status %v), want canceled", res, res.Run.Status)
	}
	if !strings.Contains(view, "canceled") {
		t.Errorf("the view does not say canceled:\n%s", view)
	}
}

// TestTUIInterruptSignal: an interrupt that reaches the context (SIGINT from
// outside the terminal) asks the same question; esc goes back to watching.
func TestTUIInterruptSignal(t *testing.T) {
	e := newEnv(t)
	id := e.start(t, "steps=1;block")
	ctx, cancel := context.WithCancel(t.Context())
	res, _ := e.tui(t, ctx, id, func(w io.Writer, out *syncBuffer) {
		waitFor(t, out, "running")
		cancel()
		waitFor(t, out, "Cancel the run?")
		w.Write([]byte{0x1b}) // esc: keep watching
		time.Sleep(100 * time.Millisecond)
		e.exec.Release(id)
	})
	if res.Left || res.Run.Status != client.RunStatusCompleted {
		t.Errorf("result %+v, want followed to completion", res)
	}
}

// TestPlainInterrupt: without a terminal, an interrupt leaves the run
// running and says how to resume.
func TestPlainInterrupt(t *testing.T) {
	e := newEnv(t)
	id := e.start(t, "steps=1;block")
	errOut := &syncBuffer{}
	ios := iostreams.New(strings.NewReader(""), io.Discard, errOut, func(string) string { return "" })
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for !strings.Contains(errOut.String(), "running") {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res, err := Follow(ctx, Options{IO: ios, Client: e.c, RunID: id, Poll: client.WaitOptions{Interval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Left || res.ExitCode() != cmdutil.ExitPending {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(errOut.String(), "abctl runs watch "+id) {
		t.Errorf("stderr:\n%s", errOut.String())
	}
	e.exec.Release(id)
}

// TestTUIShowsLatestAction: the live view shows the newest step's action,
// read from the run's steps, and the scrollback keeps each step's.
func TestTUIShowsLatestAction(t *testing.T) {
	e := newEnv(t)
	id := e.start(t, "steps=2;details;block")
	res, view := e.tui(t, t.Context(), id, func(w io.Writer, out *syncBuffer) {
		// While the run waits at its gate, its second step is counted and
		// at least its first step's details are recorded.
		waitFor(t, out, `latest: click [e`)
		e.exec.Release(id)
	})
	if res.Run.Status != client.RunStatusCompleted {
		t.Fatalf("result %+v", res)
	}
	// The last step, printed once its details were read (at the latest
	// when the run ended).
	if want := `step 2: click [e2] button "Step 2": ok → complete`; !strings.Contains(view, want) {
		t.Errorf("the view lacks %q:\n%s", want, view)
	}
}

// plainFollow follows runID with plain lines and returns what they said.
func plainFollow(t *testing.T, c *client.Client, runID string) (*Result, string) {
	t.Helper()
	errOut := &syncBuffer{}
	ios := iostreams.New(strings.NewReader(""), io.Discard, errOut, func(string) string { return "" })
	res, err := Follow(t.Context(), Options{IO: ios, Client: c, RunID: runID, Poll: client.WaitOptions{Interval: 20 * time.Millisecond}})
	if err != nil {
		t.Fatalf("Follow: %v\n%s", err, errOut)
	}
	return res, errOut.String()
}

// TestPlainShowsLatestAction: a plain line ends with the newest step's
// action when it is newer than the last shown; the run's last one is shown
// by the end.
func TestPlainShowsLatestAction(t *testing.T) {
	e := newEnv(t)
	id := e.start(t, "steps=3;sleep=20ms;details")
	res, out := plainFollow(t, e.c, id)
	if res.Run.Status != client.RunStatusCompleted {
		t.Fatalf("result %+v\n%s", res, out)
	}
	if want := `; latest: click [e3] button "Step 3": ok → complete`; !strings.Contains(out, want) {
		t.Errorf("the lines lack %q:\n%s", want, out)
	}
	// No step is shown twice.
	for i := 1; i <= 3; i++ {
		if n := strings.Count(out, fmt.Sprintf(`button "Step %d"`, i)); n > 1 {
			t.Errorf("step %d shown %d times:\n%s", i, n, out)
		}
	}
}

// TestPlainWithoutSteps: against a service without the steps route (the
// hosted service; here the daemon behind a proxy that answers it FastAPI's
// 404), runs are followed as before, with no latest action and a single
// steps request.
func TestPlainWithoutSteps(t *testing.T) {
	e := newEnv(t)
	target, err := url.Parse(e.c.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	asked := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/steps") {
			mu.Lock()
			asked++
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"detail":"Not Found"}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("follow-test-key"))
	if err != nil {
		t.Fatal(err)
	}
	id := e.start(t, "steps=3;sleep=20ms;details")
	res, out := plainFollow(t, c, id)
	if res.Run.Status != client.RunStatusCompleted || !strings.Contains(out, "completed, 3 steps") {
		t.Fatalf("result %+v\n%s", res, out)
	}
	if strings.Contains(out, "latest:") {
		t.Errorf("a latest action without the steps route:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Errorf("the steps were asked for %d times, want once", asked)
	}
}
