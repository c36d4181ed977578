package runner

// People's answers to human_interaction blocks. Each agent run's job
// carries a humanAsker; when a block asks, the run's status moves to
// paused and its question is kept on its record (RunRecord.Human) until
// Answer (POST /v1/runs/{id}/approve or /reject) takes the answer to the
// waiting block, the block's timeout passes, or the run is canceled. The
// status is then running again, and the run's end decides the rest.
//
// A paused run keeps its browser and its goroutine, but not its worker:
// as it pauses, the runner lends another worker to the queue, and takes
// one back (the next worker to finish a run retires) once it resumes, so
// that runs waiting for people do not hold up the others.
//
// The wait lives in memory. A daemon that stops while runs are paused
// ends them failed (Stop cancels them as any executing run); one that
// crashes finds them paused in the store at the next Start, which ends
// them failed as it ends the runs a crash interrupted (see
// endPausedByRestart).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// humanWaits are the runs waiting for a person's answer.
type humanWaits struct {
	mu      sync.Mutex
	waiting map[store.RunRef]*humanWait
	// surplus is how many workers should retire: one per paused run that
	// resumed, for the worker lent when it paused.
	surplus int
}

// humanWait is one run's wait for an answer.
type humanWait struct {
	// paused is set once the run shows paused in the store; an answer
	// before that finds the run running, not waiting.
	paused bool
	answer chan executor.HumanAnswer // buffered: Answer never blocks
}

// NotWaitingError is Answer's error for a run that is not waiting for a
// person's answer.
type NotWaitingError struct {
	RunID  string
	Status client.RunStatus
}

func (e *NotWaitingError) Error() string {
	return fmt.Sprintf("Run %s is not waiting for a person's answer (status %s).", e.RunID, e.Status)
}

// humanAsker asks for one run (executor.Job.Human).
type humanAsker struct {
	r   *Runner
	rec *store.RunRecord // the run as it started: its ids and base URL
	// flush waits for the run's progress records (Progress.flush), its
	// start among them, before the run pauses; nil: none are pending.
	flush func()
}

func (a *humanAsker) Ask(ctx context.Context, q executor.HumanQuestion, asked func(string) error) (executor.HumanAnswer, error) {
	r, ref := a.r, store.RunRef{OrgID: a.rec.OrgID, RunID: a.rec.ID}
	bg := context.WithoutCancel(ctx)
	w := &humanWait{answer: make(chan executor.HumanAnswer, 1)}
	h := &r.humans
	h.mu.Lock()
	if h.waiting == nil {
		h.waiting = map[store.RunRef]*humanWait{}
	}
	if h.waiting[ref] != nil {
		h.mu.Unlock()
		return executor.HumanAnswer{}, errors.New("the run is already waiting for an answer to another block")
	}
	h.waiting[ref] = w
	h.mu.Unlock()

	now := time.Now()
	question := &client.HumanInteraction{
		RunID: ref.RunID, BlockLabel: q.Block, Instructions: q.Instructions,
		PositiveDescriptor: q.PositiveDescriptor, NegativeDescriptor: q.NegativeDescriptor,
		Recipients: append([]string{}, q.Recipients...), State: client.HumanWaiting,
		AskedAt: client.NewTime(now), ExpiresAt: client.NewTime(now.Add(q.Timeout)),
	}
	if a.flush != nil {
		a.flush()
	}
	_, err := r.cfg.Store.Runs().Update(bg, ref.OrgID, ref.RunID, func(rec *store.RunRecord) error {
		if rec.Status != client.RunStatusRunning {
			return fmt.Errorf("the run cannot pause: its status is %s", rec.Status)
		}
		rec.Status = client.RunStatusPaused
		kept := *question
		rec.Human = &kept
		return nil
	})
	if err != nil {
		h.withdraw(ref, w)
		return executor.HumanAnswer{}, fmt.Errorf("the run could not be paused: %w", err)
	}
	h.mu.Lock()
	w.paused = true
	h.mu.Unlock()
	r.log.Info("run paused for a person's answer", "run_id", ref.RunID, "block", q.Block, "timeout", q.Timeout)
	defer a.resume(bg, ref, ctx)

	if err := asked(howToAnswer(a.rec)); err != nil {
		if h.withdraw(ref, w) {
			return executor.HumanAnswer{}, err
		}
		return <-w.answer, nil // answered while the email was on its way
	}
	r.lendWorker()
	defer h.retireOne()
	select {
	case ans := <-w.answer:
		return ans, nil
	case <-ctx.Done():
	}
	if h.withdraw(ref, w) {
		if r.shared != nil {
			// An answer given through another daemon just as the wait
			// ended wins, as one given through this one does.
			if ans, ok := r.answeredElsewhere(bg, ref); ok {
				return ans, nil
			}
		}
		return executor.HumanAnswer{}, ctx.Err()
	}
	// An answer taken just as the wait ended wins: it is on its way.
	return <-w.answer, nil
}

// pausedWaits returns the waits of the runs that show paused in the store.
func (h *humanWaits) pausedWaits() map[store.RunRef]*humanWait {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[store.RunRef]*humanWait, len(h.waiting))
	for ref, w := range h.waiting {
		if w.paused {
			out[ref] = w
		}
	}
	return out
}

// withdraw removes w from the waiting runs. It reports false when an
// answer took it first (the answer is then on w.answer, or soon will be).
func (h *humanWaits) withdraw(ref store.RunRef, w *humanWait) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiting[ref] != w {
		return false
	}
	delete(h.waiting, ref)
	return true
}

// resume moves a run that is still paused back to running once its wait
// ended without an answer (an answer moves it itself), and records that
// the question went unanswered.
func (a *humanAsker) resume(ctx context.Context, ref store.RunRef, wait context.Context) {
	r := a.r
	_, err := r.cfg.Store.Runs().Update(ctx, ref.OrgID, ref.RunID, func(rec *store.RunRecord) error {
		if rec.Status != client.RunStatusPaused {
			return store.ErrUnchanged
		}
		rec.Status = client.RunStatusRunning
		markUnanswered(rec)
		return nil
	})
	if err != nil {
		r.log.Error("resume a paused run", "run_id", ref.RunID, "error", err)
		return
	}
	if wait.Err() != nil {
		r.log.Info("run resumed without an answer", "run_id", ref.RunID, "cause", context.Cause(wait))
	}
}

// Answer answers the question a paused run of the organization waits on:
// approved or not, with an optional comment. It returns the question with
// its answer. A run of another organization, or none, is
// store.ErrNotFound; a run that is not waiting is a *NotWaitingError.
func (r *Runner) Answer(ctx context.Context, orgID, runID string, approved bool, comment string) (*client.HumanInteraction, error) {
	ref := store.RunRef{OrgID: orgID, RunID: runID}
	h := &r.humans
	h.mu.Lock()
	w := h.waiting[ref]
	ready := w != nil && w.paused
	h.mu.Unlock()
	if w != nil && !ready {
		// The run may show paused already, its wait not knowing it yet.
		rec, err := r.cfg.Store.Runs().Get(ctx, orgID, runID)
		ready = err == nil && rec.Status == client.RunStatusPaused
	}
	h.mu.Lock()
	if ready && h.waiting[ref] == w {
		delete(h.waiting, ref)
	} else {
		w = nil // not waiting, or its wait ended meanwhile
	}
	h.mu.Unlock()
	ans := executor.HumanAnswer{Approved: approved, Comment: comment, At: time.Now()}
	if w == nil {
		if r.shared != nil {
			// It may wait on another daemon.
			return r.answerElsewhere(ctx, ref, ans)
		}
		rec, err := r.cfg.Store.Runs().Get(ctx, orgID, runID)
		if err != nil {
			return nil, err
		}
		return nil, &NotWaitingError{RunID: runID, Status: rec.Status}
	}
	// The waiting block gets the answer whatever happens to the record:
	// the run must not wait for an answer that was given.
	defer func() { w.answer <- ans }()
	rec, err := r.cfg.Store.Runs().Update(context.WithoutCancel(ctx), orgID, runID, func(rec *store.RunRecord) error {
		recordAnswer(rec, ans)
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.log.Info("a person answered a paused run", "run_id", runID, "approved", ans.Approved)
	return rec.Human, nil
}

// answerElsewhere records the answer to a run that is not waiting on this
// daemon, in a store several daemons share: a run paused on another one
// takes it from its record (readRequests).
func (r *Runner) answerElsewhere(ctx context.Context, ref store.RunRef, ans executor.HumanAnswer) (*client.HumanInteraction, error) {
	rec, err := r.cfg.Store.Runs().Update(context.WithoutCancel(ctx), ref.OrgID, ref.RunID, func(rec *store.RunRecord) error {
		if rec.Status != client.RunStatusPaused || rec.Human == nil || rec.Human.State != client.HumanWaiting {
			return &NotWaitingError{RunID: rec.ID, Status: rec.Status}
		}
		recordAnswer(rec, ans)
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.log.Info("a person answered a run paused on another daemon", "run_id", ref.RunID, "approved", ans.Approved)
	return rec.Human, nil
}

// recordAnswer records a person's answer on a paused run, which runs
// again. The record's Human is replaced, not changed in place: the store's
// copy may share it.
func recordAnswer(rec *store.RunRecord, ans executor.HumanAnswer) {
	if rec.Status == client.RunStatusPaused {
		rec.Status = client.RunStatusRunning
	}
	if rec.Human != nil {
		h := *rec.Human
		h.State = client.HumanRejected
		if ans.Approved {
			h.State = client.HumanApproved
		}
		h.AnsweredAt = client.TimePtr(ans.At)
		h.Comment = &ans.Comment
		rec.Human = &h
	}
}

// lendWorker starts a worker for the one a paused run holds.
func (r *Runner) lendWorker() {
	r.mu.Lock()
	stopped := r.stopped
	if !stopped {
		r.workers.Add(1)
	}
	r.mu.Unlock()
	if !stopped {
		go r.work()
	}
}

// retireOne asks a worker to retire, for the one lent while a run was
// paused.
func (h *humanWaits) retireOne() {
	h.mu.Lock()
	h.surplus++
	h.mu.Unlock()
}

// retireWorker reports whether the worker asking, which has just finished
// a run, should stop: a worker was lent while a run was paused, and that
// run resumed.
func (h *humanWaits) retireWorker() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.surplus == 0 {
		return false
	}
	h.surplus--
	return true
}

// howToAnswer tells a person how to answer a paused run: the CLI commands
// and the API routes, at the address the run was started through.
func howToAnswer(rec *store.RunRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  abctl runs approve %s [--comment TEXT]\n", rec.ID)
	fmt.Fprintf(&b, "  abctl runs reject %s [--comment TEXT]\n\n", rec.ID)
	base := strings.TrimSuffix(rec.BaseURL, "/")
	fmt.Fprintf(&b, "or through the API, with an API key of the organization in the x-api-key header:\n\n")
	fmt.Fprintf(&b, "  POST %s/v1/runs/%s/approve\n", base, rec.ID)
	fmt.Fprintf(&b, "  POST %s/v1/runs/%s/reject\n\n", base, rec.ID)
	b.WriteString(`with an optional body {"comment": "..."}. GET ` + base + "/v1/runs/" + rec.ID + "/interaction shows the question.")
	return b.String()
}

// endPausedByRestart ends a run a previous daemon left paused: its browser
// and the block waiting in it are gone, as for a run that was executing.
// why starts its failure reason.
func (r *Runner) endPausedByRestart(rec *store.RunRecord, why string) {
	block := ""
	if rec.Human != nil {
		block = fmt.Sprintf(" (block %q)", rec.Human.BlockLabel)
	}
	moved := false
	final, err := r.cfg.Store.Runs().Update(r.ctx, rec.OrgID, rec.ID, func(rec *store.RunRecord) error {
		if rec.Status != client.RunStatusPaused {
			return store.ErrUnchanged
		}
		rec.Status, moved = client.RunStatusFailed, true
		rec.FailureReason = why + block + "; its browser session was lost, so it did not finish."
		markUnanswered(rec)
		return nil
	})
	if err != nil {
		r.log.Error("end a run left paused", "run_id", rec.ID, "error", err)
		return
	}
	if moved {
		r.finishAsync(final)
	} else {
		r.release(store.RunRef{OrgID: rec.OrgID, RunID: rec.ID})
	}
}

// markUnanswered marks the question of rec, when it still waits, as never
// answered. The record's Human is replaced, not changed in place: the
// store's copy may share it.
func markUnanswered(rec *store.RunRecord) {
	if rec.Human != nil && rec.Human.State == client.HumanWaiting {
		h := *rec.Human
		h.State = client.HumanUnanswered
		rec.Human = &h
	}
}
