package engine_test

// The fleet through a real daemon: three Chromium processes as browser
// endpoints of capacities 1, 2 and 3; runs held on their pages fill them,
// more wait in the queue; one browser killed mid-run: its runs fail naming
// it, the others finish, the queued ones run elsewhere; restarted, it takes
// runs again. No run hangs and every run has its record.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/chromiumtest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
)

// holdSite serves /hold, whose answer waits until release is called or its
// client goes away, and tells arrivals about each request; /page answers at
// once.
type holdSite struct {
	*httptest.Server
	arrivals chan string
	mu       sync.Mutex
	gate     chan struct{}
}

func newHoldSite(t *testing.T) *holdSite {
	h := &holdSite{arrivals: make(chan string, 64), gate: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			fmt.Fprint(w, "<!doctype html><title>page</title><p>here</p>")
			return
		}
		if r.URL.Path != "/hold" {
			http.NotFound(w, r)
			return
		}
		h.mu.Lock()
		gate := h.gate
		h.mu.Unlock()
		h.arrivals <- r.URL.Query().Get("run")
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "<!doctype html><title>held</title><p>released</p>")
	}))
	t.Cleanup(func() { h.release(); h.Close() })
	return h
}

// heldAgent is an agent that holds its browser while the site holds it: it
// loads the site's /page (at once), then asks /hold with an http_request
// block, whose 10-minute timeout outlasts any wait of the test. (A page
// load held instead would end at the navigation's timeout, 30 s, which a
// busy machine can spend between the first arrival and the release.) A run
// whose browser goes away ends at once, failed, naming the endpoint. Its
// parameter run names the run.
func heldAgent(site *holdSite) client.WorkflowDefinition {
	return client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("run")},
		Blocks: client.Blocks{
			gotoBlock("open", site.URL+"/page?run={{ run }}"),
			&client.HTTPRequestBlock{BlockBase: base("hold"), URL: site.URL + "/hold?run={{ run }}", Timeout: 600},
		},
	}
}

// release lets the held requests answer, and holds the next ones again.
func (h *holdSite) release() {
	h.mu.Lock()
	close(h.gate)
	h.gate = make(chan struct{})
	h.mu.Unlock()
}

// waitArrivals waits for n requests, bounded.
func (h *holdSite) waitArrivals(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(3 * time.Minute) // catches a hang only
	for i := 0; i < n; i++ {
		select {
		case <-h.arrivals:
		case <-deadline:
			t.Fatalf("%d of %d runs reached the held page within 3 minutes", i, n)
		}
	}
}

// waitFleet waits, bounded, until the fleet's status satisfies ok.
func waitFleet(t *testing.T, e *engine.Engine, what string, ok func(browser.FleetStatus) bool) browser.FleetStatus {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // catches a hang only
	for {
		st, _ := e.FleetStatus()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fleet never %s: %+v", what, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func inUse(st browser.FleetStatus) map[string]int {
	m := map[string]int{}
	for _, e := range st.Endpoints {
		m[e.Name] = e.InUse
	}
	return m
}

func endpointNamed(st browser.FleetStatus, name string) browser.EndpointStatus {
	for _, e := range st.Endpoints {
		if e.Name == name {
			return e
		}
	}
	return browser.EndpointStatus{}
}

func TestDaemonFleet(t *testing.T) {
	needBrowser(t)
	members := []*chromiumtest.Member{chromiumtest.StartMember(t), chromiumtest.StartMember(t), chromiumtest.StartMember(t)}
	var endpoints []browser.Endpoint
	for i, m := range members {
		endpoints = append(endpoints, browser.Endpoint{URL: m.URL(), Name: string(rune('a' + i)), Capacity: i + 1})
	}
	site := newHoldSite(t)
	e := newEngine(t, engine.Config{BrowserEndpoints: endpoints})
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: e, Workers: 10})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Held page", WorkflowDefinition: heldAgent(site)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := func(n int) []string {
		var ids []string
		for i := 0; i < n; i++ {
			r, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID,
				Parameters: map[string]any{"run": fmt.Sprint(len(ids))}})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.RunID)
		}
		return ids
	}

	// Six runs fill the fleet by capacity; two more wait for a place.
	ids := start(6)
	site.waitArrivals(t, 6)
	if got := inUse(waitFleet(t, e, "held the six runs", func(st browser.FleetStatus) bool { return len(st.Endpoints) == 3 })); got["a"] != 1 || got["b"] != 2 || got["c"] != 3 {
		t.Fatalf("runs in progress by endpoint %v, want a 1, b 2, c 3", got)
	}
	ids = append(ids, start(2)...)
	waitFleet(t, e, "queued two runs", func(st browser.FleetStatus) bool { return st.Queued == 2 })

	// b dies: its two runs end, the others are held on.
	members[1].Browser.Kill()
	st := waitFleet(t, e, "marked b down", func(st browser.FleetStatus) bool {
		b := endpointNamed(st, "b")
		return !b.Healthy && b.InUse == 0
	})
	if b := endpointNamed(st, "b"); b.Failures < 2 {
		t.Errorf("b's failures %d, want its 2 runs at least", b.Failures)
	}
	// Let the held runs finish: the two queued runs get places on a and c.
	site.release()
	site.waitArrivals(t, 2)
	site.release()

	runs := map[string]*client.Run{}
	for _, id := range ids {
		r, err := waitRun(ctx, c, id)
		if err != nil {
			t.Fatalf("run %s did not end: %v", id, err)
		}
		runs[id] = r
	}
	completed, failed := 0, 0
	for id, r := range runs {
		switch r.Status {
		case client.RunStatusCompleted:
			completed++
		case client.RunStatusFailed:
			failed++
			if !strings.Contains(r.GetFailureReason(), `browser endpoint "b"`) {
				t.Errorf("run %s failed without naming the endpoint that died: %s", id, r.GetFailureReason())
			}
		default:
			t.Errorf("run %s ended %s: %s", id, r.Status, r.GetFailureReason())
		}
	}
	if completed != 6 || failed != 2 {
		t.Errorf("%d runs completed and %d failed, want 6 and the 2 on b", completed, failed)
	}
	list, err := c.Runs.List(ctx, &client.ListRunsOptions{PageSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(ids) {
		t.Errorf("the run list has %d runs, want %d", len(list), len(ids))
	}

	// b restarted: it is taken back, and six held runs fill the fleet again.
	members[1].Restart(t)
	waitFleet(t, e, "took b back", func(st browser.FleetStatus) bool { return endpointNamed(st, "b").Healthy })
	more := start(6)
	site.waitArrivals(t, 6)
	if got := inUse(waitFleet(t, e, "held six runs again", func(st browser.FleetStatus) bool { return st.Queued == 0 })); got["b"] != 2 {
		t.Errorf("after the restart b runs %d, want 2 (runs by endpoint %v)", got["b"], got)
	}
	site.release()
	for _, id := range more {
		r, err := waitRun(ctx, c, id)
		if err != nil || r.Status != client.RunStatusCompleted {
			t.Errorf("run %s after the restart: %v %v", id, r, err)
		}
	}
}

// waitRun waits for a run's end, at most 2 minutes: a run that does not
// end by then hangs.
func waitRun(ctx context.Context, c *client.Client, id string) (*client.Run, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return c.Runs.Wait(ctx, id, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
}

// TestFleetQueueTimeout: a run on a fleet that is down waits for the
// configured time, then fails saying why each endpoint could not take it.
func TestFleetQueueTimeout(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // its address refuses connections now
	e := newEngine(t, engine.Config{BrowserEndpoints: []browser.Endpoint{{URL: dead.URL, Name: "gone"}}, BrowserQueueTimeout: 300 * time.Millisecond})
	res := e.Execute(t.Context(), job(t, client.WorkflowDefinition{Blocks: client.Blocks{gotoBlock("open", "http://127.0.0.1:1/")}}, nil), &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, `no browser endpoint took the run within 300ms: browser endpoint "gone"`) {
		t.Errorf("%s: %s", res.Status, res.FailureReason)
	}
	if st, ok := e.FleetStatus(); !ok || st.QueueTimeouts != 1 {
		t.Errorf("fleet status %+v (%v), want one queue timeout", st, ok)
	}
}
