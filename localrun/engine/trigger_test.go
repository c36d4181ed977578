package engine_test

// workflow_trigger blocks end to end: a daemon with the engine, agents of
// model-free blocks whose child runs call an HTTP server the test starts
// on loopback.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/engine"
)

// greeter is an HTTP server on loopback that answers {"greeting": "hello
// NAME"} to a POST of {"name": NAME} and keeps the names it was sent.
type greeter struct {
	url   string
	mu    sync.Mutex
	names []string
}

func startGreeter(t *testing.T) *greeter {
	t.Helper()
	g := &greeter{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Name string `json:"name"`
		}
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		g.mu.Lock()
		g.names = append(g.names, body.Name)
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"greeting": "hello " + body.Name})
	}))
	t.Cleanup(srv.Close)
	g.url = srv.URL
	return g
}

func (g *greeter) received() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.names...)
}

// triggerEnv is a daemon with the engine, its data directory (for the
// admin routes) and a client of its default organization.
type triggerEnv struct {
	t   *testing.T
	c   *client.Client
	dir string
}

func startTriggerDaemon(t *testing.T) *triggerEnv {
	t.Helper()
	needBrowser(t)
	e := newEngine(t, engine.Config{})
	dir := t.TempDir()
	addr, _ := daemontest.Start(t, dir, daemon.Config{APIKey: testKey, Executor: e, Workers: 2})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return &triggerEnv{t: t, c: c, dir: dir}
}

// createAgent creates an agent with c and returns its permanent id.
func (e *triggerEnv) createAgent(c *client.Client, title string, def client.WorkflowDefinition) string {
	e.t.Helper()
	a, err := c.Agents.Create(e.t.Context(), &client.AgentDefinition{Title: title, WorkflowDefinition: def}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return a.WorkflowPermanentID
}

// run starts a run of agent and waits for its end.
func (e *triggerEnv) run(agent string, params map[string]any) *client.Run {
	e.t.Helper()
	run, err := e.c.Runs.StartAgent(e.t.Context(), &client.AgentRunRequest{AgentID: agent, Parameters: params})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.wait(run.RunID)
}

func (e *triggerEnv) wait(runID string) *client.Run {
	e.t.Helper()
	done, err := e.c.Runs.Wait(e.t.Context(), runID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: 500 * time.Millisecond})
	if err != nil {
		e.t.Fatal(err)
	}
	return done
}

// greeterAgent is an agent with a required parameter name that posts it to
// the greeter.
func greeterAgent(url string) client.WorkflowDefinition {
	return client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("name")},
		Blocks: client.Blocks{&client.HTTPRequestBlock{
			BlockBase: base("greet"), Method: "POST", URL: url, Body: json.RawMessage(`{"name": "{{ name }}"}`),
		}},
	}
}

// triggerOutput is the output of a workflow_trigger block.
type triggerOutput struct {
	WorkflowRunID       string          `json:"workflow_run_id"`
	WorkflowPermanentID string          `json:"workflow_permanent_id"`
	Status              string          `json:"status"`
	Output              json.RawMessage `json:"output"`
	FailureReason       *string         `json:"failure_reason"`
}

// blockOutput decodes the output of block label from a run's output.
func blockOutput(t *testing.T, run *client.Run, label string) triggerOutput {
	t.Helper()
	var out map[string]json.RawMessage
	if err := json.Unmarshal(run.Output, &out); err != nil {
		t.Fatalf("output %s: %v", run.Output, err)
	}
	var to triggerOutput
	raw, ok := out[label+"_output"]
	if !ok {
		t.Fatalf("output lacks %s_output: %s", label, run.Output)
	}
	if err := json.Unmarshal(raw, &to); err != nil {
		t.Fatalf("%s_output %s: %v", label, raw, err)
	}
	return to
}

func trigger(label, agent, payload string, wait bool) *client.WorkflowTriggerBlock {
	b := &client.WorkflowTriggerBlock{BlockBase: base(label), WorkflowPermanentID: agent, WaitForCompletion: &wait}
	if payload != "" {
		b.Payload = json.RawMessage(payload)
	}
	return b
}

// TestTriggerWaitsForTheChild: the parent's payload, rendered with its
// parameters, is the child's parameters; the parent waits, and its block's
// output holds the child's run id, status and output; the child records
// its parent.
func TestTriggerWaitsForTheChild(t *testing.T) {
	e := startTriggerDaemon(t)
	g := startGreeter(t)
	child := e.createAgent(e.c, "Greeter", greeterAgent(g.url))
	parent := e.createAgent(e.c, "Parent", client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("who"), stringParam("child")},
		Blocks: client.Blocks{
			trigger("call_child", "{{ child }}", `{"name": "{{ who }} the great"}`, true),
			// The child's output is the parent's to use.
			&client.HTTPRequestBlock{BlockBase: base("echo"), Method: "POST", URL: g.url,
				Body: json.RawMessage(`{"name": "{{ call_child_output.output.greet_output.body.greeting }}"}`)},
		},
	})
	done := e.run(parent, map[string]any{"who": "Ada", "child": child})
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	if got := g.received(); len(got) != 2 || got[0] != "Ada the great" || got[1] != "hello Ada the great" {
		t.Fatalf("the greeter received %q", got)
	}
	out := blockOutput(t, done, "call_child")
	if out.Status != "completed" || out.WorkflowPermanentID != child || !strings.HasPrefix(out.WorkflowRunID, "wr_") || out.FailureReason != nil {
		t.Fatalf("call_child_output %+v", out)
	}
	if !strings.Contains(string(out.Output), `"greeting":"hello Ada the great"`) {
		t.Errorf("the child's output in the block's: %s", out.Output)
	}
	childRun, err := e.c.Runs.Get(t.Context(), out.WorkflowRunID)
	if err != nil {
		t.Fatal(err)
	}
	if childRun.Status != client.RunStatusCompleted {
		t.Errorf("the child run is %s", childRun.Status)
	}
	runs, err := e.c.Agents.ListRuns(t.Context(), &client.ListAgentRunsOptions{AgentID: child})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].WorkflowRunID != out.WorkflowRunID || runs[0].ParentWorkflowRunID == nil || *runs[0].ParentWorkflowRunID != done.RunID {
		t.Fatalf("the child's runs %+v", runs)
	}
}

// TestTriggerWithoutWaiting: the block puts out the queued run at once;
// the child then runs on its own.
func TestTriggerWithoutWaiting(t *testing.T) {
	e := startTriggerDaemon(t)
	g := startGreeter(t)
	child := e.createAgent(e.c, "Greeter", greeterAgent(g.url))
	parent := e.createAgent(e.c, "Parent", client.WorkflowDefinition{
		Blocks: client.Blocks{trigger("fire", child, `{"name": "Grace"}`, false)},
	})
	done := e.run(parent, nil)
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	out := blockOutput(t, done, "fire")
	if out.Status != "queued" || out.WorkflowRunID == "" || string(out.Output) != "null" {
		t.Fatalf("fire_output %+v", out)
	}
	childRun := e.wait(out.WorkflowRunID)
	if childRun.Status != client.RunStatusCompleted {
		t.Fatalf("child %s: %s", childRun.Status, childRun.GetFailureReason())
	}
	if got := g.received(); len(got) != 1 || got[0] != "Grace" {
		t.Fatalf("the greeter received %q", got)
	}
}

// TestTriggerFailures: an agent of another organization is as unknown as
// one that does not exist; a payload without a required parameter fails as
// the run route refuses it; a child that fails fails its parent, naming the
// child's run and reason, unless continue_on_failure.
func TestTriggerFailures(t *testing.T) {
	e := startTriggerDaemon(t)
	g := startGreeter(t)
	st, err := admin.ReadState(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	ac := admin.NewClient(admin.SocketPath(e.dir))
	other, err := ac.CreateOrganization(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	oc, err := client.New(client.WithBaseURL("http://"+st.Addr), client.WithAPIKey(other.APIKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	foreign := e.createAgent(oc, "Theirs", greeterAgent(g.url))
	child := e.createAgent(e.c, "Greeter", greeterAgent(g.url))
	broken := e.createAgent(e.c, "Broken", greeterAgent(closedURL(t)))

	for _, tc := range []struct {
		name     string
		block    *client.WorkflowTriggerBlock
		want     []string
		childRun bool // the failure names a child run that did run
	}{
		{"other organization", trigger("call", foreign, `{"name": "x"}`, true),
			[]string{`Block "call" (workflow_trigger) failed`, "no agent " + foreign + " in this organization"}, false},
		{"no such agent", trigger("call", "wpid_000000000000000000", `{"name": "x"}`, true),
			[]string{`Block "call" (workflow_trigger) failed`, "no agent wpid_000000000000000000 in this organization"}, false},
		{"missing parameter", trigger("call", child, `{"nom": "x"}`, true),
			[]string{`Block "call" (workflow_trigger) failed`, "missing required parameters without a default: name (string)"}, false},
		{"child fails", trigger("call", broken, `{"name": "x"}`, true),
			[]string{`Block "call" (workflow_trigger) failed: the triggered run wr_`, "of agent " + broken + " ended failed", `Block "greet" (http_request) failed`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := e.createAgent(e.c, "Parent", client.WorkflowDefinition{Blocks: client.Blocks{tc.block}})
			done := e.run(parent, nil)
			if done.Status != client.RunStatusFailed {
				t.Fatalf("status %s, output %s", done.Status, done.Output)
			}
			t.Logf("failure_reason: %s", done.GetFailureReason())
			for _, w := range tc.want {
				if !strings.Contains(done.GetFailureReason(), w) {
					t.Errorf("failure_reason %q lacks %q", done.GetFailureReason(), w)
				}
			}
			if tc.childRun {
				out := blockOutput(t, done, "call")
				if out.Status != "failed" || out.FailureReason == nil || !strings.Contains(done.GetFailureReason(), out.WorkflowRunID) {
					t.Errorf("call_output %+v", out)
				}
			}
		})
	}
	if got := g.received(); len(got) != 0 {
		t.Errorf("the greeter received %q", got)
	}

	// continue_on_failure: the parent completes, the child's failure in
	// the block's output.
	b := trigger("call", broken, `{"name": "x"}`, true)
	b.ContinueOnFailure = true
	parent := e.createAgent(e.c, "Tolerant", client.WorkflowDefinition{Blocks: client.Blocks{b}})
	done := e.run(parent, nil)
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	if out := blockOutput(t, done, "call"); out.Status != "failed" || out.FailureReason == nil || !strings.Contains(*out.FailureReason, "http_request") {
		t.Errorf("call_output %+v", out)
	}
}

// TestTriggerRecursionIsBounded: an agent that triggers itself and waits
// runs MaxTriggerDepth levels below the first run, all waiting at once on
// a daemon of two workers, and the deepest one's refusal fails the chain.
func TestTriggerRecursionIsBounded(t *testing.T) {
	e := startTriggerDaemon(t)
	self := e.createAgent(e.c, "Ouroboros", client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("self")},
		Blocks:     client.Blocks{trigger("again", "{{ self }}", `{"self": "{{ self }}"}`, true)},
	})
	done := e.run(self, map[string]any{"self": self})
	if done.Status != client.RunStatusFailed {
		t.Fatalf("status %s", done.Status)
	}
	reason := done.GetFailureReason()
	t.Logf("failure_reason: %s", reason)
	if !strings.Contains(reason, "already 5 levels down a chain of runs started by workflow_trigger blocks, the most allowed (5)") {
		t.Errorf("failure_reason %q", reason)
	}
	runs, err := e.c.Agents.ListRuns(t.Context(), &client.ListAgentRunsOptions{AgentID: self, PageSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs, want the first and 5 triggered", len(runs))
	}
	parents := map[string]string{}
	for _, r := range runs {
		if r.Status != client.RunStatusFailed {
			t.Errorf("run %s is %s", r.WorkflowRunID, r.Status)
		}
		if r.ParentWorkflowRunID != nil {
			parents[r.WorkflowRunID] = *r.ParentWorkflowRunID
		}
	}
	// One chain from the first run.
	depth := 0
	for id := done.RunID; ; depth++ {
		var next string
		for c, p := range parents {
			if p == id {
				next = c
			}
		}
		if next == "" {
			break
		}
		id = next
	}
	if depth != 5 || len(parents) != 5 {
		t.Errorf("chain of %d below the first run, %d parents: %v", depth, len(parents), parents)
	}
}

// staller is an HTTP server on loopback whose requests wait until their
// client goes away; arrived receives a token as each one comes in.
type staller struct {
	url     string
	arrived chan struct{}
}

func startStaller(t *testing.T) *staller {
	t.Helper()
	s := &staller{arrived: make(chan struct{}, 8)}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before Close, which waits for the handlers
	s.url = srv.URL
	return s
}

// TestTriggerCancellation: canceling a parent that waits cancels its
// child; canceling the child fails the parent's block, naming the child.
func TestTriggerCancellation(t *testing.T) {
	e := startTriggerDaemon(t)
	s := startStaller(t)
	child := e.createAgent(e.c, "Staller", client.WorkflowDefinition{
		Blocks: client.Blocks{&client.HTTPRequestBlock{BlockBase: base("stall"), URL: s.url, Timeout: 600}},
	})
	parent := e.createAgent(e.c, "Parent", client.WorkflowDefinition{
		Blocks: client.Blocks{trigger("call", child, "", true)},
	})
	childRuns := func() []*client.AgentRun {
		runs, err := e.c.Agents.ListRuns(t.Context(), &client.ListAgentRunsOptions{AgentID: child})
		if err != nil {
			t.Fatal(err)
		}
		return runs
	}
	start := func() (parentID, childID string) {
		t.Helper()
		run, err := e.c.Runs.StartAgent(t.Context(), &client.AgentRunRequest{AgentID: parent})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.arrived:
		case <-time.After(3 * time.Minute): // catches a hang only
			t.Fatal("the child's request never came")
		}
		for _, r := range childRuns() {
			if r.ParentWorkflowRunID != nil && *r.ParentWorkflowRunID == run.RunID {
				return run.RunID, r.WorkflowRunID
			}
		}
		t.Fatalf("no child run of %s", run.RunID)
		return "", ""
	}

	parentID, childID := start()
	if err := e.c.Runs.Cancel(t.Context(), parentID); err != nil {
		t.Fatal(err)
	}
	if done := e.wait(parentID); done.Status != client.RunStatusCanceled {
		t.Errorf("the parent is %s", done.Status)
	}
	if done := e.wait(childID); done.Status != client.RunStatusCanceled {
		t.Errorf("the child of a canceled parent is %s", done.Status)
	}

	parentID, childID = start()
	if err := e.c.Runs.Cancel(t.Context(), childID); err != nil {
		t.Fatal(err)
	}
	if done := e.wait(childID); done.Status != client.RunStatusCanceled {
		t.Errorf("the canceled child is %s", done.Status)
	}
	done := e.wait(parentID)
	if done.Status != client.RunStatusFailed || !strings.Contains(done.GetFailureReason(), "the triggered run "+childID+" of agent "+child+" ended canceled") {
		t.Errorf("the parent of a canceled child: %s: %s", done.Status, done.GetFailureReason())
	}
}

// TestTriggerInTheParentsBrowserSession: a child that would run in the
// browser session its waiting parent holds is refused (it could never
// start); one that does not wait for it runs there once the parent ends.
func TestTriggerInTheParentsBrowserSession(t *testing.T) {
	e := startTriggerDaemon(t)
	g := startGreeter(t)
	bs, err := e.c.BrowserSessions.Create(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	child := e.createAgent(e.c, "Greeter", greeterAgent(g.url))
	inSession := func(wait bool) string {
		b := trigger("call", child, `{"name": "Linus"}`, wait)
		b.UseParentBrowserSession = true
		return e.createAgent(e.c, "Parent", client.WorkflowDefinition{Blocks: client.Blocks{b}})
	}
	startIn := func(agent string) *client.Run {
		run, err := e.c.Runs.StartAgent(t.Context(), &client.AgentRunRequest{AgentID: agent, BrowserSessionID: bs.BrowserSessionID})
		if err != nil {
			t.Fatal(err)
		}
		return e.wait(run.RunID)
	}

	done := startIn(inSession(true))
	want := "the run would execute in browser session " + bs.BrowserSessionID + ", which this run holds while it waits for it"
	if done.Status != client.RunStatusFailed || !strings.Contains(done.GetFailureReason(), want) {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}

	done = startIn(inSession(false))
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", done.Status, done.GetFailureReason())
	}
	out := blockOutput(t, done, "call")
	if childRun := e.wait(out.WorkflowRunID); childRun.Status != client.RunStatusCompleted {
		t.Fatalf("child %s: %s", childRun.Status, childRun.GetFailureReason())
	}
	runs, err := e.c.Agents.ListRuns(t.Context(), &client.ListAgentRunsOptions{AgentID: child})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].BrowserSessionID == nil || *runs[0].BrowserSessionID != bs.BrowserSessionID {
		t.Fatalf("the child's runs %+v", runs)
	}
	if got := g.received(); len(got) != 1 || got[0] != "Linus" {
		t.Errorf("the greeter received %q", got)
	}
}
