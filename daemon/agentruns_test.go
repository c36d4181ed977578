package daemon_test

// The agent run lists (GET /v1/agents/runs, GET /v1/agents/{id}/runs) and
// the retry of an agent run, through the client over real HTTP with the
// scripted executor.

import (
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

func agentRunIDs(t *testing.T, c *client.Client, o *client.ListAgentRunsOptions) []string {
	t.Helper()
	var ids []string
	for run, err := range c.Agents.AllRuns(t.Context(), o) {
		if err != nil {
			t.Fatalf("AllRuns(%+v): %v", o, err)
		}
		ids = append(ids, run.WorkflowRunID)
	}
	return ids
}

func TestAgentRunLists(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 2})
	ctx := t.Context()
	first, second := agentForRuns(t, e.a, ""), agentForRuns(t, e.a, "")
	start := func(agent *client.Agent, script string, count int, headers map[string]string) string {
		t.Helper()
		run, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{
			AgentID: agent.WorkflowPermanentID, ExtraHTTPHeaders: headers,
			Parameters: map[string]any{scripted.ParamKey: script, "count": count},
		})
		if err != nil {
			t.Fatal(err)
		}
		waitRun(t, e.a, run.RunID)
		return run.RunID
	}
	ok1 := start(first, "steps=1", 7, nil)
	failed := start(first, `steps=1;status=failed;reason=login refused;errors=[{"error_code":"LOGIN_FAILED"}]`, 8, map[string]string{"X-Tenant": "acme-prod"})
	ok2 := start(second, "steps=1", 9, nil)
	// A task run and another organization's agent run are never listed.
	e.task("steps=1")
	theirs := agentForRuns(t, e.b, "")
	if _, err := e.b.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: theirs.WorkflowPermanentID, Parameters: map[string]any{"count": 1}}); err != nil {
		t.Fatal(err)
	}

	if got, want := agentRunIDs(t, e.a, nil), []string{ok2, failed, ok1}; !slices.Equal(got, want) {
		t.Errorf("GET /v1/agents/runs: %v, want newest first %v", got, want)
	}
	if got, want := agentRunIDs(t, e.a, &client.ListAgentRunsOptions{AgentID: first.WorkflowPermanentID, PageSize: 1}), []string{failed, ok1}; !slices.Equal(got, want) {
		t.Errorf("the first agent's runs, a page of one at a time: %v, want %v", got, want)
	}
	for _, tc := range []struct {
		name string
		o    client.ListAgentRunsOptions
		want []string
	}{
		{"status", client.ListAgentRunsOptions{Status: []client.RunStatus{client.RunStatusFailed}}, []string{failed}},
		{"two statuses", client.ListAgentRunsOptions{Status: []client.RunStatus{client.RunStatusFailed, client.RunStatusCompleted}}, []string{ok2, failed, ok1}},
		{"error code", client.ListAgentRunsOptions{ErrorCode: "LOGIN_FAILED"}, []string{failed}},
		{"error code is exact", client.ListAgentRunsOptions{ErrorCode: "LOGIN"}, nil},
		{"search: a parameter value", client.ListAgentRunsOptions{SearchKey: "STATUS=FAILED"}, []string{failed}},
		{"search: a header", client.ListAgentRunsOptions{SearchKey: "acme-PROD"}, []string{failed}},
		{"search: a parameter key", client.ListAgentRunsOptions{SearchKey: "coun"}, []string{ok2, failed, ok1}},
		{"search: the run id", client.ListAgentRunsOptions{SearchKey: ok1[len(ok1)-6:]}, []string{ok1}},
		{"search and status", client.ListAgentRunsOptions{SearchKey: "steps", Status: []client.RunStatus{client.RunStatusCompleted}}, []string{ok2, ok1}},
	} {
		if got := agentRunIDs(t, e.a, &tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}

	runs, err := e.a.Agents.ListRuns(ctx, &client.ListAgentRunsOptions{AgentID: first.WorkflowPermanentID, Status: []client.RunStatus{client.RunStatusFailed}})
	if err != nil || len(runs) != 1 {
		t.Fatalf("ListRuns: %v %v", runs, err)
	}
	r := runs[0]
	if r.WorkflowRunID != failed || r.WorkflowPermanentID != first.WorkflowPermanentID || r.WorkflowID != first.WorkflowID ||
		r.OrganizationID != e.orgA || r.Status != client.RunStatusFailed || r.GetFailureReason() != "login refused" ||
		r.ExtraHTTPHeaders["X-Tenant"] != "acme-prod" || r.WorkflowTitle == nil || *r.WorkflowTitle != first.Title ||
		r.StartedAt == nil || r.FinishedAt == nil || r.TriggerType == nil || *r.TriggerType != client.RunTriggerAPI {
		t.Errorf("the failed run as listed: %+v", r)
	}

	// Bad filters are 422s naming the parameter.
	for path, want := range map[string]string{
		"/v1/agents/runs?status=finished":                                         `"loc":["query","status",0]`,
		"/v1/agents/runs?page=0":                                                  `"loc":["query","page"]`,
		"/v1/agents/runs?search_key=" + strings.Repeat("x", 501):                  `"loc":["query","search_key"]`,
		"/v1/agents/" + first.WorkflowPermanentID + "/runs?created_at_start=soon": `"loc":["query","created_at_start"]`,
	} {
		if status, body := rawGet(t, e.url, e.keyA, path); status != 422 || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %s, want 422 with %s", path, status, body, want)
		}
	}
}

func TestRetryAgentRun(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	agent := agentForRuns(t, e.a, "")
	orig, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{
		AgentID: agent.WorkflowPermanentID, Title: "Monthly invoices",
		Parameters: map[string]any{scripted.ParamKey: "steps=1;status=failed;reason=site down", "count": 3},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A run that has not ended is not retryable.
	blocked, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{scripted.ParamKey: "block", "count": 1}})
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, e.a, orig.RunID)
	if err := e.exec.WaitBlocked(ctx, blocked.RunID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.a.Agents.RetryRun(ctx, blocked.RunID); apiStatus(err) != 400 || !strings.Contains(err.Error(), "not retryable") {
		t.Errorf("retrying a running run: %v, want 400 not retryable", err)
	}
	e.exec.Release(blocked.RunID)

	retried, err := e.a.Agents.RetryRun(ctx, orig.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if retried.RunID == orig.RunID || !strings.HasPrefix(retried.RunID, "wr_") {
		t.Fatalf("the retry is a new run: %s (original %s)", retried.RunID, orig.RunID)
	}
	done := waitRun(t, e.a, retried.RunID)
	req, err := done.AgentRequest()
	if err != nil || req.AgentID != agent.WorkflowPermanentID || req.Title != "Monthly invoices" {
		t.Errorf("the retry's request: %+v %v", req, err)
	}
	if done.Status != client.RunStatusFailed || done.GetFailureReason() != "site down" {
		t.Errorf("the retry ran the original parameters: %s %q", done.Status, done.GetFailureReason())
	}
	job, ok := e.exec.Job(retried.RunID)
	if !ok || string(job.Parameters["count"]) != "3" || job.Agent == nil || job.Agent.Version != agent.Version {
		t.Errorf("the retry's job: %+v", job)
	}

	// Unknown runs and task runs are 404s.
	task := e.task("steps=1")
	waitRun(t, e.a, task.RunID)
	for _, id := range []string{"wr_404", task.RunID} {
		if _, err := e.a.Agents.RetryRun(ctx, id); apiStatus(err) != 404 {
			t.Errorf("retrying %s: %v, want 404", id, err)
		}
	}
	// Another organization cannot retry it.
	if _, err := e.b.Agents.RetryRun(ctx, orig.RunID); apiStatus(err) != 404 {
		t.Errorf("another organization retrying: %v, want 404", err)
	}
}
