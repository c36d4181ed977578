package follow

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor"
)

// askingExecutor asks the question of an agent run's first block, a
// human_interaction block, as the engine does, and ends the run with the
// answer.
type askingExecutor struct{}

func (askingExecutor) Execute(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
	executor.Started(p)
	b := job.Agent.WorkflowDefinition.Blocks[0].(*client.HumanInteractionBlock)
	ans, err := job.Human.Ask(ctx, executor.HumanQuestion{Block: b.Label, Instructions: b.Instructions,
		PositiveDescriptor: b.PositiveDescriptor, NegativeDescriptor: "Reject", Timeout: time.Hour}, func(string) error { return nil })
	switch {
	case err != nil:
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	case !ans.Approved:
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "rejected"}
	}
	return executor.Result{Status: client.RunStatusCompleted}
}

// startAsking starts an agent run that pauses for a person.
func startAsking(t *testing.T) (*env, string) {
	t.Helper()
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: "follow-test-key", Executor: askingExecutor{}})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey("follow-test-key"))
	if err != nil {
		t.Fatal(err)
	}
	def := client.WorkflowDefinition{Blocks: client.Blocks{&client.HumanInteractionBlock{BlockBase: client.BlockBase{Label: "review"},
		Instructions: "Pay 120 EUR to ACME?\nThe invoice is attached.", PositiveDescriptor: "Pay", Recipients: []string{}}}}
	a, err := c.Agents.Create(t.Context(), &client.AgentDefinition{Title: "Pay", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(t.Context(), &client.AgentRunRequest{AgentID: a.WorkflowPermanentID})
	if err != nil {
		t.Fatal(err)
	}
	return &env{c: c}, run.RunID
}

// TestTUIAnswersAPausedRun: the live view prints what a paused run asks
// and how to answer; a, then y, approves it, and the run goes on to its
// end.
func TestTUIAnswersAPausedRun(t *testing.T) {
	e, id := startAsking(t)
	res, view := e.tui(t, t.Context(), id, func(w io.Writer, out *syncBuffer) {
		waitFor(t, out, "a: Pay · r: Reject")
		w.Write([]byte("a"))
		waitFor(t, out, `Answer "Pay"?`)
		w.Write([]byte("y"))
	})
	if res.Run.Status != client.RunStatusCompleted {
		t.Errorf("result %+v (status %s), want completed", res, res.Run.Status)
	}
	for _, want := range []string{`block "review" waits for a person's answer`, "Pay 120 EUR to ACME?", "The invoice is attached.",
		"Pay: abctl runs approve " + id, "Reject: abctl runs reject " + id} {
		if !strings.Contains(view, want) {
			t.Errorf("the view lacks %q:\n%s", want, view)
		}
	}
	if q, err := e.c.Runs.Interaction(t.Context(), id); err != nil || q.State != client.HumanApproved {
		t.Errorf("the question after the answer: %+v %v", q, err)
	}
}

// TestPlainShowsTheQuestion: without a terminal, the question and the
// commands that answer it are printed as lines of the run.
func TestPlainShowsTheQuestion(t *testing.T) {
	e, id := startAsking(t)
	errOut := &syncBuffer{}
	ios := iostreams.New(strings.NewReader(""), io.Discard, errOut, func(string) string { return "" })
	done := make(chan *Result, 1)
	go func() {
		res, err := Follow(t.Context(), Options{IO: ios, Client: e.c, RunID: id, Poll: client.WaitOptions{Interval: 20 * time.Millisecond, MaxInterval: 50 * time.Millisecond}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitFor(t, errOut, "Reject: abctl runs reject "+id)
	if _, err := e.c.Runs.Reject(t.Context(), id, nil); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res == nil || res.Run.Status != client.RunStatusFailed {
		t.Fatalf("result %+v", res)
	}
	out := errOut.String()
	for _, want := range []string{id + " paused", id + ` block "review" waits for a person's answer, until `, id + "   Pay 120 EUR to ACME?",
		id + "   Pay: abctl runs approve " + id + " [--comment TEXT]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the lines lack %q:\n%s", want, out)
		}
	}
}
