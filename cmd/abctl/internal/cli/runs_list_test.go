package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// durations are the duration column of run tables, which depends on how
// fast the machine ran the runs.
var durations = regexp.MustCompile(`(?m)\t\d+(\.\d+)?(ms|s)(\t|$)`)

// runTable scrubs a piped run table for golden comparison.
func runTable(s string) string { return durations.ReplaceAllString(s, "\t<duration>$3") }

// startedRuns starts, with the client, three task runs and two runs of a
// scripted agent, one at a time (so that their order is their creation
// order), waits until they end, and returns their ids, newest first, with
// the agent's id.
func startedRuns(t *testing.T, e *cliEnv) (newest []string, agentID string) {
	t.Helper()
	e.run("", "apply", "-f", e.write("scripted.yaml", scriptAgent)).expect(t, 0)
	agents, err := e.client.Agents.List(t.Context(), nil)
	if err != nil || len(agents) != 1 {
		t.Fatalf("agents %v, %v", agents, err)
	}
	agentID = agents[0].WorkflowPermanentID
	var ids []string
	for i, script := range []string{"steps=1", "steps=2;details", `steps=3;details;status=terminated;reason=no such invoice`} {
		run, err := e.client.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + script,
			Title: []string{"Invoices of March", "Invoices of April", "Receipts of May"}[i]})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.RunID)
		e.wait(run.RunID)
	}
	for range 2 {
		run, err := e.client.Runs.StartAgent(t.Context(), &client.AgentRunRequest{AgentID: agentID, Parameters: map[string]any{"script": "steps=1"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.RunID)
		e.wait(run.RunID)
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids, agentID
}

// wait waits until the run has ended.
func (e *cliEnv) wait(id string) *client.Run {
	e.t.Helper()
	run, err := e.client.Runs.Wait(e.t.Context(), id, &client.WaitOptions{Interval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond})
	if err != nil {
		e.t.Fatal(err)
	}
	return run
}

func names(ids ...string) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString("run/" + id + "\n")
	}
	return b.String()
}

// TestGetRuns: `abctl get runs` lists the daemon's runs newest first, in
// every format, with the list's filters.
func TestGetRuns(t *testing.T) {
	e := newCLIEnv(t)
	if r := e.run("", "get", "runs").expect(t, 0); r.stdout != "" {
		t.Errorf("no runs yet, but: %q", r.stdout)
	}
	ids, agentID := startedRuns(t, e)

	r := e.run("", "get", "runs").expect(t, 0)
	golden(t, "get-runs.txt", runTable(r.stdout))
	r = e.run("", "get", "runs", "-o", "wide").expect(t, 0)
	golden(t, "get-runs-wide.txt", runTable(r.stdout))

	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, names(ids...)},
		{[]string{"--type", "workflow_run"}, names(ids[:2]...)},
		{[]string{"--agent", "scripted"}, names(ids[:2]...)},
		{[]string{"--agent", agentID}, names(ids[:2]...)},
		{[]string{"--search", "INVOICES"}, names(ids[3:]...)},
		{[]string{"--status", "terminated"}, names(ids[2])},
		{[]string{"--status", "completed", "--type", "task_v1"}, names(ids[3:]...)},
		{[]string{"--limit", "2"}, names(ids[:2]...)},
		{[]string{"--limit", "0"}, names(ids...)},
		{[]string{"--tag", "env:prod"}, ""},
	} {
		r := e.run("", append([]string{"get", "runs", "-o", "name"}, tc.args...)...).expect(t, 0)
		if r.stdout != tc.want {
			t.Errorf("get runs %v:\n got %q\nwant %q", tc.args, r.stdout, tc.want)
		}
	}
	if _, err := e.client.Runs.ApplyTags(t.Context(), ids[1], &client.TagApplyRequest{Tags: []client.TagInput{{Key: "env", Value: "prod"}}}); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "get", "runs", "-o", "name", "--tag", "env:prod").expect(t, 0); r.stdout != names(ids[1]) {
		t.Errorf("--tag env:prod: %q", r.stdout)
	}

	r = e.run("", "get", "runs", "-o", "json", "--limit", "1").expect(t, 0)
	var items []client.RunListItem
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil || len(items) != 1 || items[0].RunID != ids[0] ||
		items[0].WorkflowPermanentID == nil || *items[0].WorkflowPermanentID != agentID {
		t.Errorf("-o json: %v %+v", err, items)
	}
	r = e.run("", "get", "runs", "--search", "ab").expect(t, 2)
	contains(t, "stderr", r.stderr, "at least 3 characters")
	// The service's own checks come back as errors naming the problem.
	r = e.run("", "get", "runs", "--status", "done").expect(t, 1)
	contains(t, "stderr", r.stderr, "list the runs", "422", "query.status.0")
}

// TestGetRunSteps: `abctl get run ID --steps` shows the run's steps.
func TestGetRunSteps(t *testing.T) {
	e := newCLIEnv(t)
	ids, _ := startedRuns(t, e)
	terminated := ids[2]
	r := e.run("", "get", "run", terminated, "--steps").expect(t, 0)
	golden(t, "get-run-steps.txt", r.stdout)
	r = e.run("", "get", "run", "run/"+terminated, "--steps", "-o", "wide").expect(t, 0)
	golden(t, "get-run-steps-wide.txt", r.stdout)
	r = e.run("", "get", "run", terminated, "--steps", "-o", "json").expect(t, 0)
	var steps []client.RunStep
	if err := json.Unmarshal([]byte(r.stdout), &steps); err != nil || len(steps) != 3 || steps[0].Number != 3 || steps[0].Decision != "terminate" {
		t.Errorf("--steps -o json: %v\n%s", err, r.stdout)
	}
	r = e.run("", "get", "run", terminated, "--steps", "-o", "name").expect(t, 0)
	if want := "step/" + terminated + "/3\nstep/" + terminated + "/2\nstep/" + terminated + "/1\n"; r.stdout != want {
		t.Errorf("--steps -o name: %q", r.stdout)
	}
	// A run whose executor reported no details has none to show.
	if r := e.run("", "get", "run", ids[4], "--steps").expect(t, 0); r.stdout != "" {
		t.Errorf("a run without details: %q", r.stdout)
	}
	r = e.run("", "get", "runs", ids[0], ids[1], "--steps").expect(t, 2)
	contains(t, "stderr", r.stderr, "--steps needs one run id")
	r = e.run("", "get", "run", "tsk_1", "--steps").expect(t, 1)
	contains(t, "stderr", r.stderr, "tsk_1", "not found")
}

// TestRunsCancelAll: cancel-all finds, through the run list, the runs that
// have not ended (of one agent with --agent), and cancels only those.
func TestRunsCancelAll(t *testing.T) {
	e := newCLIEnv(t)
	ids, agentID := startedRuns(t, e)
	r := e.run("", "runs", "cancel-all", "--yes").expect(t, 0)
	contains(t, "stderr", r.stderr, "No run to cancel.")

	blockedTask, err := e.client.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=1;block=never"})
	if err != nil {
		t.Fatal(err)
	}
	blockedAgent, err := e.client.Runs.StartAgent(t.Context(), &client.AgentRunRequest{AgentID: agentID, Parameters: map[string]any{"script": "block=never"}})
	if err != nil {
		t.Fatal(err)
	}
	r = e.run("", "runs", "cancel-all", "--yes", "--agent", agentID).expect(t, 0)
	contains(t, "stderr", r.stderr, "Cancel requested for "+blockedAgent.RunID)
	if strings.Contains(r.stderr, blockedTask.RunID) {
		t.Errorf("--agent canceled another run:\n%s", r.stderr)
	}
	r = e.run("", "runs", "cancel-all", "--yes").expect(t, 0)
	contains(t, "stderr", r.stderr, "Cancel requested for "+blockedTask.RunID)
	for _, id := range []string{blockedTask.RunID, blockedAgent.RunID} {
		if run := e.wait(id); run.Status != client.RunStatusCanceled {
			t.Errorf("%s is %s, want canceled", id, run.Status)
		}
	}
	for _, id := range ids {
		if run := e.wait(id); run.Status == client.RunStatusCanceled {
			t.Errorf("the ended run %s was canceled", id)
		}
	}
	r = e.run("", "runs", "cancel-all").expect(t, 2)
	contains(t, "stderr", r.stderr, "needs --yes")
}

// TestRunsRetry: `abctl runs retry` starts a new run of an agent run with
// its parameters and follows it (with --detach, prints its id); a task
// run is not an agent run.
func TestRunsRetry(t *testing.T) {
	e := newCLIEnv(t)
	ids, agentID := startedRuns(t, e)
	agentRun, taskRun := ids[0], ids[2]
	r := e.run("", "runs", "retry", "run/"+agentRun, "--no-tui").expect(t, 0)
	contains(t, "stderr", r.stderr, "a retry of "+agentRun)
	r = e.run("", "runs", "retry", agentRun, "--detach").expect(t, 0)
	newID := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(newID, "wr_") || newID == agentRun {
		t.Fatalf("--detach printed %q, want the new run's id", r.stdout)
	}
	done := e.wait(newID)
	req, err := done.AgentRequest()
	if err != nil || req.AgentID != agentID || req.Parameters["script"] != "steps=1" {
		t.Errorf("the retry's request: %+v %v", req, err)
	}
	r = e.run("", "runs", "retry", taskRun).expect(t, 1)
	contains(t, "stderr", r.stderr, "retry run "+taskRun, "404")
}
