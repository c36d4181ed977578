package daemon_test

// The routes that answer runs paused by a human_interaction block, over
// real HTTP with two organizations, and the paused run as GET shows it,
// validated against the hosted service's schema. The engine's own test
// (engine/human_test.go) runs the block itself end to end.

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
)

// asker executes agent runs as the engine runs a human_interaction block
// that is their first block: it asks, and the run ends as the answer says.
type asker struct{}

func (asker) Execute(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
	executor.Started(p)
	if job.Agent == nil {
		return executor.Result{Status: client.RunStatusCompleted}
	}
	b := job.Agent.WorkflowDefinition.Blocks[0].(*client.HumanInteractionBlock)
	ans, err := job.Human.Ask(ctx, executor.HumanQuestion{Block: b.Label, Instructions: b.Instructions,
		PositiveDescriptor: "Approve", NegativeDescriptor: "Reject", Timeout: time.Hour}, func(string) error { return nil })
	switch {
	case err != nil:
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	case !ans.Approved:
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "rejected"}
	}
	return executor.Result{Status: client.RunStatusCompleted}
}

func TestHumanInteractionRoutes(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Executor: asker{}, Workers: 1})
	ctx := t.Context()
	def := client.WorkflowDefinition{Blocks: client.Blocks{&client.HumanInteractionBlock{BlockBase: client.BlockBase{Label: "review"},
		Instructions: "Check the order", Recipients: []string{}}}}
	agent, err := e.a.Agents.Create(ctx, &client.AgentDefinition{Title: "Order check", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID})
	if err != nil {
		t.Fatal(err)
	}
	id := run.RunID
	pollFor(t, "the run to pause", func() bool { return e.record(id).Status == client.RunStatusPaused })

	// GET shows it paused, in the upstream shape.
	if path := upstreamSpecPath(t); path != "" {
		chk := &checker{t: t, up: loadUpstream(t, path), seen: map[string]map[int]int{}}
		c, err := client.New(client.WithBaseURL(e.url), client.WithAPIKey(e.keyA), client.WithMaxRetries(0), client.WithHTTPClient(&http.Client{Transport: chk}))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := c.Runs.Get(ctx, id); err != nil || got.Status != client.RunStatusPaused {
			t.Errorf("GET of the paused run: %+v %v", got, err)
		}
		for _, f := range chk.failures {
			t.Errorf("a response does not match the upstream schema: %s", f)
		}
	}
	if q, err := e.a.Runs.Interaction(ctx, id); err != nil || q.State != client.HumanWaiting || q.Instructions != "Check the order" || q.RunID != id {
		t.Errorf("the question: %+v %v", q, err)
	}

	// Another organization finds no such run.
	for name, call := range map[string]func() error{
		"question": func() error { _, err := e.b.Runs.Interaction(ctx, id); return err },
		"approve":  func() error { _, err := e.b.Runs.Approve(ctx, id, nil); return err },
		"reject":   func() error { _, err := e.b.Runs.Reject(ctx, id, nil); return err },
	} {
		if !isStatus(call(), 404, id) {
			t.Errorf("organization B's %s: %v", name, call())
		}
	}
	// Bodies that do not validate.
	long := `{"comment":"` + strings.Repeat("x", 4001) + `"}`
	for _, body := range []string{long, `{"comment":5}`, `[`} {
		req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/runs/"+id+"/approve", strings.NewReader(body))
		req.Header.Set("X-Api-Key", e.keyA)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("approve with %.40s...: %d, want 422", body, resp.StatusCode)
		}
	}
	if rec := e.record(id); rec.Status != client.RunStatusPaused {
		t.Fatalf("refused answers changed the run: %s", rec.Status)
	}

	// An answer without a body; the run goes on to its end.
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/runs/"+id+"/approve", nil)
	req.Header.Set("X-Api-Key", e.keyA)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("approve without a body: %d", resp.StatusCode)
	}
	if done := e.settled(id); done.Status != client.RunStatusCompleted {
		t.Errorf("approved run: %s %s", done.Status, done.GetFailureReason())
	}
	_, err = e.a.Runs.Reject(ctx, id, nil)
	if !isStatus(err, 409, "Run "+id+" is not waiting for a person's answer (status completed).") {
		t.Errorf("rejecting an ended run: %v", err)
	}
	if q, err := e.a.Runs.Interaction(ctx, id); err != nil || q.State != client.HumanApproved || q.Comment == nil || *q.Comment != "" {
		t.Errorf("the answered question: %+v %v", q, err)
	}

	// A run that never asked.
	task := e.task("steps=1")
	e.settled(task.RunID)
	if _, err := e.a.Runs.Interaction(ctx, task.RunID); !isStatus(err, 404, "has asked no one") {
		t.Errorf("the question of a task run: %v", err)
	}
	if _, err := e.a.Runs.Approve(ctx, task.RunID, nil); !isStatus(err, 409, "not waiting") {
		t.Errorf("approving a task run: %v", err)
	}
}
