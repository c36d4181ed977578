package daemon_test

// Tests of POST /v1/sdk/run_action with a scripted Actions: the request's
// validation, the workflow run it creates or continues, the mapping of the
// engine's errors, and the run's end when its session closes. The engine
// itself is tested end to end in package engine.

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor"
)

// fakeActions is an Actions that keeps a "session" per run and answers
// what the test scripts.
type fakeActions struct {
	mu       sync.Mutex
	open     map[string]*fakeSession
	next     error // the error of the next call, once
	calls    []*client.RunActionRequest
	runIDs   []string
	endedAll int
}

type fakeSession struct {
	job      *executor.Job
	progress executor.Progress
	end      func(executor.Result)
	shots    int
}

func (f *fakeActions) RunAction(ctx context.Context, job *executor.Job, req *client.RunActionRequest, p executor.Progress, end func(executor.Result)) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req)
	f.runIDs = append(f.runIDs, job.RunID)
	if err := f.next; err != nil {
		f.next = nil
		return nil, err
	}
	s := f.open[job.RunID]
	if req.WorkflowRunID == "" {
		s = &fakeSession{job: job, progress: p, end: end}
		f.open[job.RunID] = s
	} else if s == nil {
		return nil, &executor.ActionError{Kind: executor.ActionInvalid, Msg: "The browser session of workflow run " + job.RunID + " has ended"}
	}
	s.shots++
	name := "shot-" + string(rune('0'+s.shots)) + ".jpg"
	if err := os.WriteFile(filepath.Join(s.job.Dir, name), []byte{0xFF, 0xD8, 0xFF, 0xE0}, 0o600); err != nil {
		return nil, err
	}
	s.progress.Screenshot(name)
	s.progress.Step(s.shots)
	return json.Marshal(req.Action.Selector)
}

func (f *fakeActions) ActionRunOpen(runID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open[runID] != nil
}

func (f *fakeActions) EndActionRuns(ctx context.Context) {
	f.mu.Lock()
	f.endedAll++
	all := f.open
	f.open = map[string]*fakeSession{}
	f.mu.Unlock()
	for _, s := range all {
		s.end(executor.Result{Status: client.RunStatusCompleted, StepCount: s.shots})
	}
}

func (f *fakeActions) EndActionRun(ctx context.Context, runID string, status client.RunStatus, reason string) {
	f.mu.Lock()
	s := f.open[runID]
	delete(f.open, runID)
	f.mu.Unlock()
	if s != nil {
		s.end(executor.Result{Status: status, FailureReason: reason, StepCount: s.shots})
	}
}

// close ends one session as the idle period would, with a recording.
func (f *fakeActions) close(t *testing.T, runID string, status client.RunStatus, reason string) {
	t.Helper()
	f.mu.Lock()
	s := f.open[runID]
	delete(f.open, runID)
	f.mu.Unlock()
	if s == nil {
		t.Fatalf("no session for %s", runID)
	}
	if err := os.WriteFile(filepath.Join(s.job.Dir, "recording.webm"), []byte{0x1A, 0x45, 0xDF, 0xA3}, 0o600); err != nil {
		t.Fatal(err)
	}
	s.end(executor.Result{Status: status, FailureReason: reason, StepCount: s.shots, Recording: "recording.webm",
		Screenshots: []string{"shot-1.jpg"}})
}

func startActionsDaemon(t *testing.T, dir string, acts executor.Actions) (*client.Client, string, func() error) {
	t.Helper()
	const key = "abk_actions_test_key"
	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: key, Actions: acts})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c, "http://" + addr, stop
}

func TestRunActionValidation(t *testing.T) {
	f := &fakeActions{open: map[string]*fakeSession{}}
	_, base, _ := startActionsDaemon(t, t.TempDir(), f)
	const key = "abk_actions_test_key"
	for _, tc := range []struct {
		body, loc, typ string
	}{
		{`{"action":{"type":"ai_click","selector":"a"}}`, `["body","url"]`, "missing"},
		{`{"url":"http://x"}`, `["body","action"]`, "missing"},
		{`{"url":"http://x","action":{}}`, `["body","action"]`, "union_tag_not_found"},
		{`{"url":"http://x","action":{"type":"ai_dance"}}`, `["body","action"]`, "union_tag_invalid"},
		{`{"url":"http://x","action":{"type":"ai_click","selector":"a","timeout":-1}}`, `["body","action","ai_click","timeout"]`, "greater_than_equal"},
		{`{"url":"http://x","action":{"type":"validate"}}`, `["body","action","validate","prompt"]`, "missing"},
		{`{"url":"http://x","action":{"type":"ai_click","timeout":"soon"}}`, `["body","action","timeout"]`, "float_type"},
	} {
		status, body := rawPost(t, base, key, "/v1/sdk/run_action", tc.body)
		var got struct {
			Detail []struct {
				Type string          `json:"type"`
				Loc  json.RawMessage `json:"loc"`
			} `json:"detail"`
		}
		if status != http.StatusUnprocessableEntity || json.Unmarshal(body, &got) != nil || len(got.Detail) == 0 ||
			got.Detail[0].Type != tc.typ || string(got.Detail[0].Loc) != tc.loc {
			t.Errorf("%s: %d %s", tc.body, status, body)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("invalid requests reached the engine: %d", len(f.calls))
	}
	status, body := rawPost(t, base, key, "/v1/sdk/run_action", `{"url":"http://x","browser_session_id":"pbs_1","action":{"type":"ai_click","selector":"a"}}`)
	if status != http.StatusNotFound || !strings.Contains(string(body), "pbs_1") {
		t.Errorf("browser_session_id: %d %s", status, body)
	}
}

func TestRunActionRunsAndSessions(t *testing.T) {
	f := &fakeActions{open: map[string]*fakeSession{}}
	dir := t.TempDir()
	c, _, stop := startActionsDaemon(t, dir, f)
	ctx := t.Context()

	first, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: "example.test/form", Action: client.Action{Type: client.ActionClick, Selector: "#go"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.WorkflowRunID, "wr_") || string(first.Result) != `"#go"` {
		t.Fatalf("%+v %s", first, first.Result)
	}
	if got := f.calls[0].URL; got != "https://example.test/form" {
		t.Errorf("the engine got url %q", got)
	}
	wr := first.WorkflowRunID
	if _, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://example.test/form", WorkflowRunID: wr, Action: client.Action{Type: client.ActionClick, Selector: "#next"}}); err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.Get(ctx, wr)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusRunning || run.RunType != client.RunTypeWorkflowRun || run.StepCount == nil || *run.StepCount != 2 ||
		len(run.ScreenshotURLs) != 2 || !strings.Contains(string(run.RunRequest), "example.test/form") {
		t.Errorf("open run: %s %s %v %d %s", run.Status, run.RunType, run.StepCount, len(run.ScreenshotURLs), run.RunRequest)
	}
	if b := fetch(t, run.ScreenshotURLs[0]); len(b) != 4 {
		t.Errorf("screenshot %x", b)
	}

	// The engine's errors: the detail is its message, the status its own.
	f.next = &executor.ActionError{Kind: executor.ActionFailed, Msg: "No element matches the selector \"#x\" within 300 ms"}
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://example.test/form", WorkflowRunID: wr, Action: client.Action{Type: client.ActionClick, Selector: "#x"}})
	if ae, ok := err.(*client.Error); !ok || ae.StatusCode != 422 || ae.Detail != "No element matches the selector \"#x\" within 300 ms" {
		t.Errorf("422: %v", err)
	}
	// A failed first action without a session fails its new run.
	f.next = &executor.ActionError{Kind: executor.ActionInvalid, Msg: "Could not load https://nowhere.test/: net::ERR_NAME_NOT_RESOLVED"}
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://nowhere.test/", Action: client.Action{Type: client.ActionClick, Selector: "#x"}})
	if apiStatus(err) != 400 {
		t.Errorf("400: %v", err)
	}
	failed, err := c.Runs.Get(ctx, f.runIDs[len(f.runIDs)-1])
	if err != nil || failed.Status != client.RunStatusFailed || !strings.Contains(failed.GetFailureReason(), "ERR_NAME_NOT_RESOLVED") {
		t.Errorf("the run of a failed first action: %+v %v", failed, err)
	}
	// Unknown and foreign runs.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://example.test/", WorkflowRunID: "wr_42", Action: client.Action{Type: client.ActionClick, Selector: "#x"}})
	if ae, ok := err.(*client.Error); !ok || ae.StatusCode != 404 || ae.Detail != "Workflow run wr_42 not found" {
		t.Errorf("404: %v", err)
	}

	// The session closes (idle): the run completes with its files.
	f.close(t, wr, client.RunStatusCompleted, "")
	run, err = c.Runs.Get(ctx, wr)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != client.RunStatusCompleted || run.RecordingURL == nil || len(run.ScreenshotURLs) != 2 || run.FinishedAt == nil {
		t.Errorf("closed run: %s recording %v shots %d", run.Status, run.RecordingURL, len(run.ScreenshotURLs))
	}
	if b := fetch(t, *run.RecordingURL); len(b) != 4 {
		t.Errorf("recording %x", b)
	}
	// A follow-up on an ended run.
	_, err = c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://example.test/", WorkflowRunID: wr, Action: client.Action{Type: client.ActionClick, Selector: "#x"}})
	if ae, ok := err.(*client.Error); !ok || ae.StatusCode != 400 || !strings.Contains(ae.Detail, "has ended") {
		t.Errorf("ended: %v", err)
	}

	// A session whose browser went away fails its run.
	second, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://example.test/", Action: client.Action{Type: client.ActionClick, Selector: "#go"}})
	if err != nil {
		t.Fatal(err)
	}
	f.close(t, second.WorkflowRunID, client.RunStatusFailed, "The browser session ended: crashed")
	if run, _ = c.Runs.Get(ctx, second.WorkflowRunID); run.Status != client.RunStatusFailed || run.GetFailureReason() != "The browser session ended: crashed" {
		t.Errorf("browser gone: %s %q", run.Status, run.GetFailureReason())
	}

	// At shutdown the open sessions end and their runs are recorded.
	third, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://example.test/", Action: client.Action{Type: client.ActionClick, Selector: "#go"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if f.endedAll != 1 {
		t.Errorf("EndActionRuns called %d times", f.endedAll)
	}
	c, _, _ = startActionsDaemon(t, dir, &fakeActions{open: map[string]*fakeSession{}})
	if run, err = c.Runs.Get(ctx, third.WorkflowRunID); err != nil || run.Status != client.RunStatusCompleted {
		t.Errorf("the run open at shutdown: %+v %v", run, err)
	}
}

// TestRunActionWithoutEngine: a daemon without a browser engine says so.
func TestRunActionWithoutEngine(t *testing.T) {
	c, _, _ := startActionsDaemon(t, t.TempDir(), nil)
	_, err := c.Actions.Run(t.Context(), &client.RunActionRequest{URL: "https://example.test/", Action: client.Action{Type: client.ActionClick, Selector: "#go"}})
	if ae, ok := err.(*client.Error); !ok || ae.StatusCode != 503 || !strings.Contains(ae.Detail, "no browser engine") {
		t.Errorf("%v", err)
	}
}
