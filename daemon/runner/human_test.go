package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// humanExecutor asks the question of an agent run's first block, a
// human_interaction block, through the job's asker, as the engine does,
// and ends the run with the answer; task runs go to the scripted
// executor. It records the agent runs it executed in executed.
func humanExecutor(e *env, executed *sync.Map) executor.Executor {
	return executorFunc(func(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
		if job.RunType != client.RunTypeWorkflowRun {
			return e.exec.Execute(ctx, job, p)
		}
		executed.Store(job.RunID, true)
		b := job.Agent.WorkflowDefinition.Blocks[0].(*client.HumanInteractionBlock)
		ctx, cancel := context.WithTimeout(ctx, time.Duration(b.TimeoutSeconds)*time.Second)
		defer cancel()
		var how string
		ans, err := job.Human.Ask(ctx, executor.HumanQuestion{Block: b.Label, Instructions: b.Instructions,
			PositiveDescriptor: "Approve", NegativeDescriptor: "Reject", Timeout: time.Duration(b.TimeoutSeconds) * time.Second},
			func(h string) error { how = h; return nil })
		switch {
		case err != nil:
			return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
		case !ans.Approved:
			return executor.Result{Status: client.RunStatusFailed, FailureReason: "rejected: " + ans.Comment}
		}
		return executor.Result{Status: client.RunStatusCompleted, Summary: how}
	})
}

// humanRun stores a queued agent run whose one block asks a person.
func (e *env) humanRun(orgID string, timeoutSeconds int) string {
	e.t.Helper()
	def := &client.WorkflowDefinition{Blocks: client.Blocks{&client.HumanInteractionBlock{
		BlockBase: client.BlockBase{Label: "review"}, Instructions: "Check the invoice", TimeoutSeconds: timeoutSeconds}}}
	rec := &store.RunRecord{ID: e.st.Runs().NewID(client.RunTypeWorkflowRun), OrgID: orgID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, Definition: def, BaseURL: "http://127.0.0.1:8088"}
	if err := e.st.Runs().Create(e.t.Context(), rec); err != nil {
		e.t.Fatal(err)
	}
	return rec.ID
}

func (e *env) paused(orgID, id string) *store.RunRecord {
	e.t.Helper()
	var rec *store.RunRecord
	until(e.t, "run "+id+" to pause", func() bool {
		rec = e.get(orgID, id)
		return rec.Status == client.RunStatusPaused
	})
	return rec
}

// TestHumanAnswers: a run that asks is paused with its question on its
// record, and does not hold its worker: with one worker, another run
// executes meanwhile. An approval resumes it and the block gets the
// answer; the question records it. Answers to a run that is not waiting,
// or of another organization, are refused.
func TestHumanAnswers(t *testing.T) {
	e := newEnv(t, 1)
	var executed sync.Map
	e.cfg.Executor = humanExecutor(e, &executed)
	r := e.start()
	org, other := e.org("a"), e.org("b")
	ctx := t.Context()

	id := e.humanRun(org, 3600)
	r.Submit(org, id)
	rec := e.paused(org, id)
	h := rec.Human
	if h == nil || h.BlockLabel != "review" || h.Instructions != "Check the invoice" || h.State != client.HumanWaiting ||
		h.ExpiresAt.Sub(h.AskedAt.Time) != time.Hour {
		t.Fatalf("question %+v", h)
	}
	if task := e.submit(org, "steps=1"); e.ended(org, task).Status != client.RunStatusCompleted {
		t.Error("a run queued behind a paused one did not execute")
	}

	if _, err := r.Answer(ctx, other, id, true, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization's answer: %v", err)
	}
	got, err := r.Answer(ctx, org, id, true, "looks right")
	if err != nil || got.State != client.HumanApproved || got.Comment == nil || *got.Comment != "looks right" || got.AnsweredAt == nil {
		t.Fatalf("approve: %+v %v", got, err)
	}
	rec = e.ended(org, id)
	if rec.Status != client.RunStatusCompleted || rec.Human.State != client.HumanApproved {
		t.Errorf("approved run: %s %q %+v", rec.Status, rec.FailureReason, rec.Human)
	}
	if !strings.Contains(rec.Summary, "abctl runs approve "+id) || !strings.Contains(rec.Summary, "POST http://127.0.0.1:8088/v1/runs/"+id+"/reject") {
		t.Errorf("how to answer:\n%s", rec.Summary)
	}
	var nw *runner.NotWaitingError
	if _, err := r.Answer(ctx, org, id, false, ""); !errors.As(err, &nw) || nw.Status != client.RunStatusCompleted {
		t.Errorf("answering an ended run: %v", err)
	}

	// Rejected, with a comment the block receives.
	id = e.humanRun(org, 3600)
	r.Submit(org, id)
	e.paused(org, id)
	if _, err := r.Answer(ctx, org, id, false, "wrong amount"); err != nil {
		t.Fatal(err)
	}
	if rec := e.ended(org, id); rec.Status != client.RunStatusFailed || rec.FailureReason != "rejected: wrong amount" || rec.Human.State != client.HumanRejected {
		t.Errorf("rejected run: %s %q %+v", rec.Status, rec.FailureReason, rec.Human)
	}

	// The lent worker retired: one worker again, so a second blocked run
	// waits for the first.
	first, second := e.submit(org, "block=g1"), e.submit(org, "block=g2")
	e.blocked("g1")
	if st := e.get(org, second).Status; st != client.RunStatusQueued {
		t.Errorf("with one worker, a second run is %s while the first is blocked", st)
	}
	e.exec.Release("g1")
	e.blocked("g2")
	e.exec.Release("g2")
	e.ended(org, first)
	e.ended(org, second)
}

// TestHumanWaitEnds: a run canceled while paused ends canceled and its
// question unanswered; a run left paused by a crash ends failed at the
// next start, saying why, as a run left running does.
func TestHumanWaitEnds(t *testing.T) {
	e := newEnv(t, 1)
	var executed sync.Map
	e.cfg.Executor = humanExecutor(e, &executed)
	r := e.start()
	org := e.org("a")
	ctx := t.Context()

	id := e.humanRun(org, 3600)
	r.Submit(org, id)
	e.paused(org, id)
	if _, err := r.Cancel(ctx, org, id); err != nil {
		t.Fatal(err)
	}
	if rec := e.ended(org, id); rec.Status != client.RunStatusCanceled || rec.Human.State != client.HumanUnanswered {
		t.Errorf("canceled while paused: %s %+v", rec.Status, rec.Human)
	}

	// The block's timeout ends the wait as its context ends.
	id = e.humanRun(org, 1)
	r.Submit(org, id)
	if rec := e.ended(org, id); rec.Status != client.RunStatusFailed || rec.FailureReason != context.DeadlineExceeded.Error() || rec.Human.State != client.HumanUnanswered {
		t.Errorf("timed out: %s %q %+v", rec.Status, rec.FailureReason, rec.Human)
	}

	// A crash: the record says paused, nothing waits.
	r.Stop()
	e.r = nil
	left := e.humanRun(org, 3600)
	if _, err := e.st.Runs().Update(ctx, org, left, func(rec *store.RunRecord) error {
		rec.Status = client.RunStatusPaused
		rec.Human = &client.HumanInteraction{RunID: left, BlockLabel: "review", State: client.HumanWaiting}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	e.start()
	rec := e.ended(org, left)
	if rec.Status != client.RunStatusFailed || rec.Human.State != client.HumanUnanswered ||
		rec.FailureReason != `The daemon restarted while this run was waiting for a person's answer (block "review"); its browser session was lost, so it did not finish.` {
		t.Errorf("left paused: %s %q %+v", rec.Status, rec.FailureReason, rec.Human)
	}
	if _, ok := executed.Load(left); ok {
		t.Error("the run left paused was executed again")
	}
}
