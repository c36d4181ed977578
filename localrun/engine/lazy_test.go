package engine_test

// When a run has a browser: it opens when the first block that needs one
// starts, and a run that never needs one opens none (no placement, no
// recording, no browser state); a run waiting for its browser is queued,
// and starts when it gets one; a run whose browser goes away ends at
// once, whatever it was doing.

import (
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
	"github.com/abctl/abctl/localrun/executor"
)

// startProgress is a progress that counts the run's starts and tells
// each block execution that begins.
type startProgress struct {
	progress
	mu      sync.Mutex
	started int
	begun   chan string // the label of each block execution that begins (buffered)
}

func newStartProgress() *startProgress { return &startProgress{begun: make(chan string, 64)} }

func (p *startProgress) Started() {
	p.mu.Lock()
	p.started++
	p.mu.Unlock()
}

func (p *startProgress) starts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

func (p *startProgress) Block(b executor.BlockInfo) {
	if b.Status == executor.BlockRunning {
		p.begun <- b.Label
	}
}

// conditionalAgent is an agent of conditional blocks only: the first
// jumps over the second when n is 1; the third sends n 3 back to the
// second (never here).
func conditionalAgent() client.WorkflowDefinition {
	branch := func(expr, next string) client.BranchCondition {
		return client.BranchCondition{Criteria: []byte(fmt.Sprintf(`{"criteria_type":"jinja2_template","expression":%q}`, expr)), NextBlockLabel: next}
	}
	cond := func(label string, bs ...client.BranchCondition) *client.ConditionalBlock {
		return &client.ConditionalBlock{BlockBase: base(label), BranchConditions: bs}
	}
	return client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("n")},
		Blocks: client.Blocks{
			cond("first", branch("{{ n == '1' }}", "third"), client.BranchCondition{IsDefault: true}),
			cond("second", client.BranchCondition{IsDefault: true}),
			cond("third", branch("{{ n == '3' }}", "second"), client.BranchCondition{IsDefault: true}),
		},
	}
}

// TestRunWithoutBrowserBlocksOpensNone: an agent of conditional blocks runs
// on an engine whose only browser cannot be had (a fleet endpoint that
// refuses connections): it completes, started, with nothing placed, no
// screenshot, and no browser state (the one it started from stays the one
// to keep). A run whose first block needs the browser fails on that block,
// never started.
func TestRunWithoutBrowserBlocksOpensNone(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	e := newEngine(t, engine.Config{BrowserEndpoints: []browser.Endpoint{{URL: dead.URL, Name: "gone"}}, BrowserQueueTimeout: 200 * time.Millisecond})

	j := job(t, conditionalAgent(), map[string]any{"n": "1"})
	j.KeepBrowserState = true
	j.BrowserState = []byte(`{"cookies":[{"name":"kept","value":"1","domain":"127.0.0.1","path":"/"}]}`)
	p := newStartProgress()
	res := e.Execute(t.Context(), j, p)
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	if p.starts() != 1 {
		t.Errorf("the run reported %d starts, want 1", p.starts())
	}
	if res.BrowserState != nil || res.Recording != "" || len(res.Screenshots) != 0 || len(p.screenshots()) != 0 {
		t.Errorf("a run without a browser kept state %s, recording %q, screenshots %v %v", res.BrowserState, res.Recording, res.Screenshots, p.screenshots())
	}
	st, _ := e.FleetStatus()
	if st.QueueWaits != 0 || st.QueueTimeouts != 0 || endpointNamed(st, "gone").Placed != 0 {
		t.Errorf("a run without a browser used the fleet: %+v", st)
	}

	j = job(t, client.WorkflowDefinition{Blocks: client.Blocks{gotoBlock("open", "http://127.0.0.1:1/")}}, nil)
	p = newStartProgress()
	res = e.Execute(t.Context(), j, p)
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, `Block "open" (goto_url) failed: the browser session could not be opened`) {
		t.Errorf("%s: %s", res.Status, res.FailureReason)
	}
	if p.starts() != 0 {
		t.Errorf("a run whose browser never came reported %d starts, want none", p.starts())
	}
}

// TestQueuedUntilItHasABrowser: on a fleet of one browser of capacity 1,
// a run holds it on a page; a second run waits for it, queued, with no
// started_at, and a third is canceled while it waits. Once the first
// run's page is released, the second starts (after the release) and
// completes; the third ended canceled without ever starting.
func TestQueuedUntilItHasABrowser(t *testing.T) {
	needBrowser(t)
	m := chromiumtest.StartMember(t)
	site := newHoldSite(t)
	e := newEngine(t, engine.Config{BrowserEndpoints: []browser.Endpoint{{URL: m.URL(), Name: "one", Capacity: 1}}})
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: e, Workers: 4})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Held page", WorkflowDefinition: heldAgent(site)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := func(i int) string {
		r, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID,
			Parameters: map[string]any{"run": fmt.Sprint(i)}})
		if err != nil {
			t.Fatal(err)
		}
		return r.RunID
	}
	first := start(0)
	site.waitArrivals(t, 1)
	second, third := start(1), start(2)
	waitFleet(t, e, "queued two runs", func(st browser.FleetStatus) bool { return st.Queued == 2 })

	get := func(id string) *client.Run {
		r, err := c.Runs.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := get(first); r.Status != client.RunStatusRunning || r.StartedAt == nil {
		t.Errorf("the run holding the browser is %s, started_at %v; want running, started", r.Status, r.StartedAt)
	}
	for _, id := range []string{second, third} {
		if r := get(id); r.Status != client.RunStatusQueued || r.StartedAt != nil {
			t.Errorf("a run waiting for the browser is %s, started_at %v; want queued, not started", r.Status, r.StartedAt)
		}
	}
	if err := c.Runs.Cancel(ctx, third); err != nil {
		t.Fatal(err)
	}
	if r, err := waitRun(ctx, c, third); err != nil || r.Status != client.RunStatusCanceled || r.StartedAt != nil {
		t.Errorf("the run canceled while it waited: %+v, %v; want canceled, never started", r, err)
	}

	released := time.Now().Truncate(time.Microsecond)
	site.release()
	site.waitArrivals(t, 1)
	site.release()
	r1, err := waitRun(ctx, c, first)
	if err != nil || r1.Status != client.RunStatusCompleted {
		t.Fatalf("first run: %+v, %v", r1, err)
	}
	r2, err := waitRun(ctx, c, second)
	if err != nil || r2.Status != client.RunStatusCompleted {
		t.Fatalf("second run: %+v, %v", r2, err)
	}
	if r2.StartedAt == nil || r2.StartedAt.Before(released) || r2.QueuedAt == nil || !r2.StartedAt.After(r2.QueuedAt.Time) {
		t.Errorf("the second run started at %v, queued at %v; want after the first run's page was released (%v)", r2.StartedAt, r2.QueuedAt, released)
	}
}

// TestBrowserLostEndsTheRun: the browser of a run in a long wait block
// (five minutes) is killed: the run ends at once, failed, saying its
// browser went away and naming the endpoint; the wait never completed.
func TestBrowserLostEndsTheRun(t *testing.T) {
	needBrowser(t)
	m := chromiumtest.StartMember(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>page</title><p>here</p>")
	}))
	t.Cleanup(site.Close)
	e := newEngine(t, engine.Config{BrowserEndpoints: []browser.Endpoint{{URL: m.URL(), Name: "doomed", Capacity: 1}}})
	j := job(t, client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("open", site.URL),
		&client.WaitBlock{BlockBase: base("pause"), WaitSec: engine.MaxWaitSec},
	}}, nil)
	p := newStartProgress()
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		for label := range p.begun {
			if label == "pause" {
				m.Browser.Kill()
				return
			}
		}
	}()
	res := e.Execute(t.Context(), j, p)
	close(p.begun) // the run is over: no block begins any more
	<-killed
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "The run's browser went away: ") ||
		!strings.Contains(res.FailureReason, `browser endpoint "doomed"`) || !strings.Contains(res.FailureReason, `block "pause" (wait) was running`) {
		t.Errorf("%s: %s", res.Status, res.FailureReason)
	}
	if strings.Contains(string(res.Output), "pause_output") {
		t.Errorf("the wait block completed: %s", res.Output)
	}
}
