package daemon_test

// The run list, the run timeline, and what an executor's summary and logs
// become: the client against the daemon over real HTTP, with the scripted
// executor.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// rawGet sends a GET by hand and returns the status and the body.
func rawGet(t *testing.T, base, key, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func listIDs(t *testing.T, c *client.Client, o *client.ListRunsOptions) []string {
	t.Helper()
	items, err := c.Runs.List(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range items {
		ids = append(ids, it.RunID)
	}
	return ids
}

func TestListRunsOverHTTP(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 2})
	ctx := t.Context()
	agent := agentForRuns(t, e.a, "")
	var ids []string // organization A's runs, oldest first
	for i := range 3 {
		ids = append(ids, e.task("steps=1", func(r *client.TaskRunRequest) { r.Title = fmt.Sprint("Invoice batch ", i) }).RunID)
	}
	for range 2 {
		run, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"count": 1}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.RunID)
	}
	theirs, err := e.b.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=1", Title: "Invoice batch of B"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		waitRun(t, e.a, id)
	}
	waitRun(t, e.b, theirs.RunID)
	newest := slices.Clone(ids)
	slices.Reverse(newest)

	items, err := e.a.Runs.List(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 {
		t.Fatalf("%d runs listed, want 5", len(items))
	}
	for i, it := range items {
		run, err := e.a.Runs.Get(ctx, it.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if it.RunID != newest[i] || it.TaskRunID != it.RunID || it.RunType != run.RunType || it.Status != client.RunStatusCompleted ||
			!it.CreatedAt.Equal(run.CreatedAt.Time) || it.StartedAt == nil || !it.StartedAt.Equal(run.StartedAt.Time) ||
			it.FinishedAt == nil || !it.FinishedAt.Equal(run.FinishedAt.Time) || it.TriggerType == nil || *it.TriggerType != client.RunTriggerAPI {
			t.Errorf("item %d: %+v, run %+v", i, it, run)
		}
		if run.RunType.IsWorkflow() != (it.WorkflowPermanentID != nil) || it.WorkflowDeleted {
			t.Errorf("item %d: agent %v, deleted %v", i, it.WorkflowPermanentID, it.WorkflowDeleted)
		}
	}
	if *items[0].Title != "Scripted agent" || *items[4].Title != "Invoice batch 0" {
		t.Errorf("titles %q, %q", *items[0].Title, *items[4].Title)
	}

	// Filters, paging and the iterator.
	for _, tc := range []struct {
		name string
		o    *client.ListRunsOptions
		want []string
	}{
		{"agent runs", &client.ListRunsOptions{RunType: []client.RunType{client.RunTypeWorkflowRun}}, newest[:2]},
		{"of the agent", &client.ListRunsOptions{WorkflowPermanentID: []string{agent.WorkflowPermanentID}}, newest[:2]},
		{"by title, any case", &client.ListRunsOptions{SearchKey: "INVOICE"}, newest[2:]},
		{"by id", &client.ListRunsOptions{SearchKey: ids[1]}, []string{ids[1]}},
		{"by status", &client.ListRunsOptions{Status: []client.RunStatus{client.RunStatusRunning, client.RunStatusQueued}}, nil},
		{"page 2 of 2", &client.ListRunsOptions{Page: 2, PageSize: 2}, newest[2:4]},
		{"B's run from A", &client.ListRunsOptions{SearchKey: theirs.RunID}, nil},
	} {
		if got := listIDs(t, e.a, tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	var all []string
	for it, err := range e.a.Runs.All(ctx, &client.ListRunsOptions{PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, it.RunID)
	}
	if !slices.Equal(all, newest) {
		t.Errorf("All: %v, want %v", all, newest)
	}
	if got := listIDs(t, e.b, nil); !slices.Equal(got, []string{theirs.RunID}) {
		t.Errorf("organization B lists %v", got)
	}

	// Tags of workflow runs filter the list.
	if _, err := e.a.Runs.ApplyTags(ctx, ids[3], &client.TagApplyRequest{Tags: []client.TagInput{{Key: "env", Value: "prod"}}}); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, e.a, &client.ListRunsOptions{Tags: []string{"env:prod"}}); !slices.Equal(got, []string{ids[3]}) {
		t.Errorf("tagged env:prod: %v", got)
	}
	// A deleted agent shows in its runs.
	if err := e.a.Agents.Delete(ctx, agent.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	items, err = e.a.Runs.List(ctx, &client.ListRunsOptions{RunType: []client.RunType{client.RunTypeWorkflowRun}})
	if err != nil || len(items) != 2 || !items[0].WorkflowDeleted || !items[1].WorkflowDeleted {
		t.Errorf("after deleting the agent: %+v, %v", items, err)
	}
}

// TestListRunsValidation: out-of-bounds parameters are 422s in the
// hosted service's shape, every problem at once; a bad tag filter is a
// 400.
func TestListRunsValidation(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{})
	many := url.Values{}
	for i := range 51 {
		many.Add("workflow_permanent_id", fmt.Sprint("wpid_", i))
	}
	for _, tc := range []struct {
		query string
		code  int
		want  []string
	}{
		{"page=0", 422, []string{`"type":"greater_than_equal"`, `"loc":["query","page"]`}},
		{"page=101", 422, []string{`"type":"less_than_equal"`, `"loc":["query","page"]`, `"ctx":{"le":100}`}},
		{"page_size=0", 422, []string{`"loc":["query","page_size"]`}},
		{"page_size=101", 422, []string{`"type":"less_than_equal"`, `"loc":["query","page_size"]`}},
		{"page=x", 422, []string{`"type":"int_parsing"`}},
		{"search_key=ab", 422, []string{`"type":"string_too_short"`, `"loc":["query","search_key"]`, `"ctx":{"min_length":3}`}},
		{"status=completed&status=done", 422, []string{`"type":"enum"`, `"loc":["query","status",1]`, `"input":"done"`, `'canceled'`}},
		{"run_type=task_v9", 422, []string{`"type":"enum"`, `"loc":["query","run_type",0]`}},
		{many.Encode(), 422, []string{`"type":"too_long"`, `"loc":["query","workflow_permanent_id"]`, "at most 50 items"}},
		{"page=0&page_size=500&search_key=a", 422, []string{`"loc":["query","page"]`, `"loc":["query","page_size"]`, `"loc":["query","search_key"]`}},
		{"tags=:prod", 400, []string{`"detail":"`}},
		{"page=100&page_size=100&search_key=abc&status=completed&run_type=task_v1", 200, []string{"[]"}},
	} {
		code, body := rawGet(t, e.url, e.keyA, "/v1/runs?"+tc.query)
		if code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.query, code, body, tc.code)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("%s: %s lacks %s", tc.query, body, w)
			}
		}
	}
	if code, _ := rawGet(t, e.url, "wrong-key", "/v1/runs"); code != http.StatusForbidden {
		t.Errorf("without a valid key: %d", code)
	}
}

// TestRunStepsOverHTTP: the details an executor reports are the run's
// steps, newest first, in abctl's shape; other organizations and unknown
// runs get 404.
func TestRunStepsOverHTTP(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{})
	ctx := t.Context()
	quiet := e.task("steps=2")
	run := e.task("steps=3;details")
	waitRun(t, e.a, run.RunID)
	waitRun(t, e.a, quiet.RunID)

	steps, err := e.a.Runs.Steps(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	want := scripted.StepDetails(scripted.Script{Steps: 3}, 3, false)
	if len(steps) != 3 {
		t.Fatalf("%d steps, want 3", len(steps))
	}
	for i, s := range steps {
		w := want[2-i]
		if s.Number != w.Step || s.URL != w.URL || s.Thought != w.Thought ||
			!slices.Equal(s.Actions, w.Actions) || s.Decision != w.Decision || s.BlockLabel != nil || s.WorkflowRunBlockID != "" ||
			s.TimingsMS.Model != float64(w.Model.Microseconds())/1000 || s.TimingsMS.Settle != float64(w.Settle.Microseconds())/1000 ||
			s.Tokens.Input != w.InputTokens || s.Tokens.Output != w.OutputTokens || s.CreatedAt.IsZero() {
			t.Errorf("step %d: %+v; want %+v", i, s, w)
		}
	}
	if latest := client.LatestStep(steps); latest.Summary() != `click [e3] button "Step 3": ok → complete` {
		t.Errorf("latest step: %q", latest.Summary())
	}
	// The bytes, as documented.
	_, body := rawGet(t, e.url, e.keyA, "/v1/runs/"+run.RunID+"/steps")
	for _, w := range []string{`[{"number":3,"block_label":null,"url":"http://127.0.0.1/step/3"`,
		`"actions":["click [e3] button \"Step 3\": ok"],"decision":"complete","timings_ms":{"settle":0.3,"observe":0.6,"model":3,"act":0.9},"tokens":{"input":300,"output":30},"created_at":"`} {
		if !strings.Contains(string(body), w) {
			t.Errorf("steps %s lack %s", body, w)
		}
	}
	// A run whose executor reports no details has no steps.
	if steps, err := e.a.Runs.Steps(ctx, quiet.RunID); err != nil || steps == nil || len(steps) != 0 {
		t.Errorf("a run without details: %v, %v", steps, err)
	}
	for _, tc := range []struct {
		c  *client.Client
		id string
	}{{e.b, run.RunID}, {e.a, "tsk_1"}} {
		if _, err := tc.c.Runs.Steps(ctx, tc.id); apiStatus(err) != http.StatusNotFound {
			t.Errorf("steps of %s: %v, want 404", tc.id, err)
		}
		if _, err := tc.c.Runs.Timeline(ctx, tc.id); apiStatus(err) != http.StatusNotFound {
			t.Errorf("timeline of %s: %v, want 404", tc.id, err)
		}
	}
}

// TestRunTimelineOverHTTP: an agent run's timeline is the hosted
// service's: one block entry per block execution, newest first, with the
// agent loop's decisions in it as thoughts; a task run's is one task
// block with its steps as thoughts.
func TestRunTimelineOverHTTP(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{})
	ctx := t.Context()
	def := &client.AgentDefinition{Title: "Two blocks", WorkflowDefinition: client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: scripted.ParamKey, ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString}},
		Blocks: client.Blocks{
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"},
			&client.NavigationBlock{BlockBase: client.BlockBase{Label: "sign_in"}, NavigationGoal: "Sign in."},
		},
	}}
	agent, err := e.a.Agents.Create(ctx, def, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID,
		Parameters: map[string]any{scripted.ParamKey: "steps=2;details;status=failed;reason=wrong password"}})
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, e.a, run.RunID)
	tl, err := e.a.Runs.Timeline(ctx, run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) != 2 {
		t.Fatalf("%d entries, want one per block execution: %s", len(tl), mustJSON(tl))
	}
	for i, w := range []struct {
		label, status, reason string
		step                  int
	}{{"sign_in", "failed", "wrong password", 2}, {"open", "completed", "", 1}} {
		entry := tl[i]
		b := entry.Block
		if entry.Type != client.TimelineBlockEntry || b == nil || entry.Thought != nil || !strings.HasPrefix(b.WorkflowRunBlockID, "wrb_") ||
			b.WorkflowRunID != run.RunID || b.OrganizationID != e.orgA || *b.Label != w.label || *b.Status != w.status ||
			(w.reason != "") != (b.FailureReason != nil) || b.Duration == nil || entry.CreatedAt.IsZero() {
			t.Errorf("entry %d: %s", i, mustJSON(entry))
			continue
		}
		if len(entry.Children) != 1 || entry.Children[0].Type != client.TimelineThoughtEntry || entry.Children[0].Thought == nil {
			t.Errorf("entry %d's children: %s", i, mustJSON(entry.Children))
			continue
		}
		th := entry.Children[0].Thought
		if *th.WorkflowRunBlockID != b.WorkflowRunBlockID || *th.Thought != fmt.Sprintf("Step %d of 2.", w.step) ||
			!strings.Contains(*th.Answer, fmt.Sprintf(`click [e%d] button "Step %d": ok`, w.step, w.step)) || *th.InputTokenCount != 100*w.step {
			t.Errorf("entry %d's thought: %s", i, mustJSON(th))
		}
	}
	if tl[0].Block.BlockType != client.BlockTypeNavigation || tl[1].Block.BlockType != client.BlockTypeGotoURL {
		t.Errorf("block types %s, %s", tl[0].Block.BlockType, tl[1].Block.BlockType)
	}

	// A task run: one block for the task, its steps under it, newest first.
	task := e.task("steps=2;details")
	waitRun(t, e.a, task.RunID)
	tl, err = e.a.Runs.Timeline(ctx, task.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) != 1 || tl[0].Block == nil || tl[0].Block.TaskID == nil || *tl[0].Block.TaskID != task.RunID || *tl[0].Block.Status != "completed" ||
		len(tl[0].Children) != 2 || *tl[0].Children[0].Thought.Thought != "Step 2 of 2." || *tl[0].Children[1].Thought.Thought != "Step 1 of 2." {
		t.Errorf("a task run's timeline: %s", mustJSON(tl))
	}
}

// mustJSON is v as JSON, for failure messages.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v (%v)", v, err)
	}
	return string(b)
}

// TestRunSummaryAndLogs: the executor's summary goes into the webhook's
// summary and the run's, and its log files become skyvern_log artifacts that open
// through their signed URLs.
func TestRunSummaryAndLogs(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{})
	sink := newWebhookSink(t, e.keyA)
	run := e.task("steps=2;details;log;summary=Found the price on the second page.", func(r *client.TaskRunRequest) {
		r.WebhookURL = sink.URL
	})
	e.settled(run.RunID)
	got := sink.wait(run.RunID, 1)
	if got[0].Payload.Summary != "Found the price on the second page." {
		t.Errorf("webhook summary %q", got[0].Payload.Summary)
	}
	if rec := e.record(run.RunID); rec.Summary != "Found the price on the second page." {
		t.Errorf("stored summary %q", rec.Summary)
	}
	// GET shows it too: a run that extracted nothing says what it did.
	if got, err := e.a.Runs.Get(t.Context(), run.RunID); err != nil || got.GetSummary() != "Found the price on the second page." {
		t.Errorf("the run's summary %q (%v)", got.GetSummary(), err)
	}
	logs, err := e.a.Runs.ListArtifacts(t.Context(), run.RunID, &client.ListArtifactsOptions{Types: []client.ArtifactType{client.ArtifactSkyvernLog}})
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || !strings.HasSuffix(logs[0].URI, "/"+scripted.LogName) || logs[0].SignedURL == nil {
		t.Fatalf("log artifacts %+v", logs)
	}
	var doc struct {
		Summary string            `json:"summary"`
		Steps   []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(fetch(t, *logs[0].SignedURL), &doc); err != nil || doc.Summary != got[0].Payload.Summary || len(doc.Steps) != 2 {
		t.Errorf("the log file: %+v, %v", doc, err)
	}
	// The log is not a screenshot, a recording or a download.
	answer, err := e.a.Runs.Get(t.Context(), run.RunID)
	if err != nil || len(answer.ScreenshotURLs) != 0 || answer.RecordingURL != nil || len(answer.DownloadedFiles) != 0 {
		t.Errorf("the run's answer shows the log: %+v, %v", answer, err)
	}
	if n := len(e.record(run.RunID).Files); n != 1 {
		t.Errorf("%d files recorded, want the log only", n)
	}
}
