// Package runner owns the life of the daemon's runs once they are stored:
// it queues them, executes a bounded number at once through an
// executor.Executor, persists every move (queued, running, the terminal
// state with what the run produced), cancels them, sends the webhook of
// each run that ends (through a Notifier: the daemon's is Webhooks, which
// also serves the API's webhook retries), and, when the daemon starts,
// resumes or ends the runs a previous daemon left unfinished.
//
// The queue is FIFO within an organization and round-robin across
// organizations, so that one organization submitting a thousand runs does
// not starve another's single run. It lives in memory; the store's
// runs_pending bucket is what survives a crash, and Start rebuilds the
// queue from it. A store that several daemons share keeps the queue
// itself (store.Queue), and the runner takes its runs from there
// (shared.go).
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/localrun/executor"
)

// Files gives runs their directories and records the files they produce;
// the daemon's is an *artifacts.Store.
type Files interface {
	// RunDir returns the run's directory, creating it.
	RunDir(orgID, runID string) (string, error)
	// Record describes a file the executor wrote in the run's directory.
	Record(orgID, runID, name string, typ client.ArtifactType) (store.RunFile, error)
}

// Notifier sends the webhook of a run that reached a terminal state.
type Notifier interface {
	// Notify sends rec's webhook and reports the delivery, or returns nil
	// when the run has no webhook to send. It returns within the delivery
	// timeout.
	Notify(ctx context.Context, rec *store.RunRecord) *store.WebhookDelivery
}

// Config is what New needs.
type Config struct {
	Store    store.Store
	Executor executor.Executor
	Files    Files
	Notifier Notifier // nil: no webhooks
	// Workers is how many runs execute at once; 0 means one per CPU core
	// (browser-driving runs gain nothing from more on this kind of load).
	Workers int
	Logger  *slog.Logger // nil: discard
	// Minute is how long a minute of max_elapsed_time_minutes lasts; 0
	// means time.Minute. Tests shorten it to exercise time limits.
	Minute time.Duration
	// LocalFiles opens the files the daemon's own signed URLs name, for
	// the runs given such a URL (executor.Job.LocalFiles); nil: none.
	LocalFiles executor.LocalFiles

	// With a store that several daemons share (one that implements
	// store.Queue; see shared.go): Owner is this daemon's id in the
	// store's queue ("" makes one of the host, the process and a random
	// part, never the same twice); Lease is how long it holds a run
	// without renewing it (0: DefaultLease); Poll is how often it looks
	// for runs no announcement told it of and for requests made through
	// other daemons (0: DefaultPoll).
	Owner string
	Lease time.Duration
	Poll  time.Duration
}

// Causes of a run's context ending, which decide the status it ends in.
var (
	errCanceled  = errors.New("the run was canceled")
	errTimeLimit = errors.New("the run exceeded its time limit")
	errShutdown  = errors.New("the daemon shut down")
)

// lostRun says why a run was left unfinished by the daemon that executed
// it, for the runs a daemon recovers (recover).
type lostRun struct {
	executing string // the failure reason of a run that was executing
	paused    string // ... of one waiting for a person's answer (then the block)
}

var (
	// lostByRestart: the daemon's own runs, at its start.
	lostByRestart = lostRun{
		executing: "The daemon restarted while this run was executing; its browser session was lost, so it did not finish.",
		paused:    "The daemon restarted while this run was waiting for a person's answer",
	}
	// lostByTakeOver: another daemon's, whose lease on the run lapsed.
	lostByTakeOver = lostRun{
		executing: "The daemon executing this run stopped (it no longer renewed its lease on the run); its browser session was lost, so it did not finish.",
		paused:    "The daemon executing this run stopped (it no longer renewed its lease on the run) while the run was waiting for a person's answer",
	}
)

// Runner schedules and executes runs. Its methods are safe for concurrent
// use.
type Runner struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	queue   runQueue                                 // the runs waiting for a worker (queue.go)
	running map[store.RunRef]context.CancelCauseFunc // executing runs, by organization and id
	wake    wakeup                                   // a token when the queue may have work
	quit    chan struct{}                            // closed by Stop: every waiting worker returns
	stopped bool
	// agentRuns makes the runs of workflow_trigger blocks (trigger.go);
	// nil until SetAgentRuns.
	agentRuns AgentRuns

	workers sync.WaitGroup // the worker goroutines
	loops   sync.WaitGroup // a shared store's loops (shared.go)
	tasks   sync.WaitGroup // webhooks sent outside the workers
	stop    context.CancelFunc
	ctx     context.Context // the runner's life; done on Stop

	humans humanWaits // runs paused for a person's answer (human.go)
	// shared is the queue of a store several daemons share; nil when the
	// store is the daemon's own (the queue is then in memory).
	shared *sharedQueue
}

// New returns a runner; Start sets it going.
func New(cfg Config) *Runner {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.Minute <= 0 {
		cfg.Minute = time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{
		cfg: cfg, log: log,
		running: map[store.RunRef]context.CancelCauseFunc{},
		wake:    make(wakeup, 1),
		quit:    make(chan struct{}),
		shared:  newSharedQueue(cfg),
	}
}

// Start resumes what a previous daemon left unfinished (runs that were
// executing end failed, since their browser is gone; runs that had not
// started are queued again; runs that ended without their webhook sent
// send it) and starts the workers. It returns once that
// is done; the runner then works until Stop.
//
// With a store several daemons share, what is unfinished is what the
// daemons whose leases lapsed left, this one's previous life among them
// once its leases lapse (shared.go): the other daemons' runs are theirs.
func (r *Runner) Start(ctx context.Context) error {
	r.ctx, r.stop = context.WithCancel(context.WithoutCancel(ctx))
	if r.shared != nil {
		if err := r.startShared(ctx); err != nil {
			return err
		}
	} else {
		pending, err := r.cfg.Store.Runs().Pending(ctx)
		if err != nil {
			return fmt.Errorf("runner: read unfinished runs: %w", err)
		}
		for _, ref := range pending {
			if err := r.recover(ctx, ref, lostByRestart); err != nil {
				return err
			}
		}
	}
	for range r.cfg.Workers {
		r.workers.Add(1)
		go r.work()
	}
	return nil
}

// recover handles a run its daemon left unfinished: one that ended without
// its webhook sent sends it; one that was executing, or waiting for a
// person's answer, ends failed (its browser is gone), saying why (lost);
// one that had not started is queued again.
func (r *Runner) recover(ctx context.Context, ref store.RunRef, lost lostRun) error {
	rec, err := r.cfg.Store.Runs().Get(ctx, ref.OrgID, ref.RunID)
	if err != nil {
		return fmt.Errorf("runner: read unfinished run %s: %w", ref.RunID, err)
	}
	switch {
	case rec.Terminal():
		// It ended, but its daemon stopped before its webhook was sent.
		r.log.Warn("sending the webhook of a run whose daemon stopped before sending it", "run_id", rec.ID)
		r.finishAsync(rec)
	case rec.Status == client.RunStatusPaused:
		r.log.Warn("run waiting for a person's answer left by its daemon", "run_id", rec.ID)
		r.endPausedByRestart(rec, lost.paused)
	case rec.Status == client.RunStatusRunning:
		r.log.Warn("run left executing by its daemon", "run_id", rec.ID)
		r.endUnstarted(ref, client.RunStatusRunning, client.RunStatusFailed, lost.executing)
	default:
		// Queued again: in memory, or, with a shared store, in this
		// daemon's own queue, since it holds the run now.
		r.mu.Lock()
		r.queue.push(ref.OrgID, ref.RunID)
		r.mu.Unlock()
		r.wake.signal()
	}
	return nil
}

// Stop stops taking runs, ends the executing ones (failed, with a reason
// saying the daemon shut down, and their webhooks sent) and waits for the
// workers and webhooks. Queued runs stay queued in the store and resume at
// the next Start.
func (r *Runner) Stop() {
	r.mu.Lock()
	if !r.stopped {
		r.stopped = true
		close(r.quit)
	}
	for _, cancel := range r.running {
		cancel(errShutdown)
	}
	r.mu.Unlock()
	r.workers.Wait()
	r.tasks.Wait()
	if r.shared != nil {
		// The runs it holds without having started them are the other
		// daemons' to take.
		r.mu.Lock()
		var held []store.RunRef
		for ref, ok := r.queue.pop(); ok; ref, ok = r.queue.pop() {
			held = append(held, ref)
		}
		r.mu.Unlock()
		for _, ref := range held {
			r.release(ref)
		}
	}
	if r.stop != nil {
		r.stop()
	}
	r.loops.Wait()
}

// Submit queues a stored run (status queued) for execution. With a store
// several daemons share, the run is in the store's queue already, for
// every daemon: Submit wakes a worker of this one to claim it.
func (r *Runner) Submit(orgID, runID string) {
	if r.shared != nil {
		r.wake.signal()
		return
	}
	r.mu.Lock()
	r.queue.push(orgID, runID)
	r.mu.Unlock()
	r.wake.signal()
}

// take removes the next run from the queue, round-robin across
// organizations, and registers it as executing with its cancel function.
// ok is false when the runner is stopping.
func (r *Runner) take() (ref store.RunRef, ctx context.Context, ok bool) {
	for {
		r.mu.Lock()
		if r.stopped {
			r.mu.Unlock()
			return ref, nil, false
		}
		if ref, ok = r.queue.pop(); ok {
			var cancel context.CancelCauseFunc
			ctx, cancel = context.WithCancelCause(r.ctx)
			r.running[ref] = cancel
			more := r.queue.len() > 0 || r.shared != nil
			r.mu.Unlock()
			if more {
				r.wake.signal() // let another worker take the next one
			}
			return ref, ctx, true
		}
		r.mu.Unlock()
		if r.shared != nil {
			if ref, ctx, ok = r.claim(); ok {
				return ref, ctx, true
			}
		}
		select {
		case <-r.wake:
		case <-r.quit:
			return ref, nil, false
		}
	}
}

// done unregisters a run that ended (its webhook sent), and releases it
// in a shared store.
func (r *Runner) done(ref store.RunRef) {
	r.mu.Lock()
	if cancel, ok := r.running[ref]; ok {
		cancel(nil)
		delete(r.running, ref)
	}
	r.mu.Unlock()
	r.release(ref)
}

func (r *Runner) work() {
	defer r.workers.Done()
	for {
		ref, ctx, ok := r.take()
		if !ok {
			return
		}
		r.execute(ctx, ref)
		r.done(ref)
		if r.humans.retireWorker() {
			return // it was lent while a run was paused (human.go)
		}
	}
}

// Cancel cancels a run: a queued run ends canceled at once; an executing
// one has its context canceled and ends canceled as soon as its executor
// returns, keeping what it produced. A run that already ended is left as
// it is (not an error). It returns the run as it is after the call.
func (r *Runner) Cancel(ctx context.Context, orgID, runID string) (*store.RunRecord, error) {
	r.mu.Lock()
	// Keyed by organization too: another organization's id must not reach
	// the run.
	if cancel, ok := r.running[store.RunRef{OrgID: orgID, RunID: runID}]; ok {
		cancel(errCanceled)
		r.mu.Unlock()
		return r.cfg.Store.Runs().Get(ctx, orgID, runID)
	}
	inQueue := r.queue.remove(orgID, runID)
	if r.shared != nil {
		r.mu.Unlock()
		return r.cancelShared(ctx, store.RunRef{OrgID: orgID, RunID: runID}, inQueue)
	}
	// Still holding r.mu: no worker can take the run before it is
	// recorded canceled (a worker takes a queued run without changing its
	// status, which stays queued until the run starts), and one that takes
	// it later (submitted again) finds it canceled.
	rec, _, err := r.cancelUnstarted(ctx, store.RunRef{OrgID: orgID, RunID: runID})
	r.mu.Unlock()
	return rec, err
}

// cancelUnstarted ends a run that is created or queued, and that no worker
// executes, canceled, and sends its webhook; a run in another status is
// left as it is (canceled is then false).
func (r *Runner) cancelUnstarted(ctx context.Context, ref store.RunRef) (rec *store.RunRecord, canceled bool, err error) {
	rec, err = r.cfg.Store.Runs().Update(ctx, ref.OrgID, ref.RunID, func(rec *store.RunRecord) error {
		if rec.Status != client.RunStatusCreated && rec.Status != client.RunStatusQueued {
			return store.ErrUnchanged
		}
		rec.Status, canceled = client.RunStatusCanceled, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if canceled {
		r.finishAsync(rec)
	}
	return rec, canceled, nil
}

// endUnstarted moves a run from status from to status to with a failure
// reason, outside any worker, and sends its webhook.
func (r *Runner) endUnstarted(ref store.RunRef, from, to client.RunStatus, reason string) {
	moved := false
	rec, err := r.cfg.Store.Runs().Update(r.ctx, ref.OrgID, ref.RunID, func(rec *store.RunRecord) error {
		if rec.Status != from {
			return store.ErrUnchanged
		}
		rec.Status, rec.FailureReason, moved = to, reason, true
		return nil
	})
	if err != nil {
		r.log.Error("end run", "run_id", ref.RunID, "error", err)
		return
	}
	if moved {
		r.finishAsync(rec)
	} else {
		r.release(ref)
	}
}

// finishAsync sends the webhook of a run that ended outside a worker, then
// releases the run in a shared store.
func (r *Runner) finishAsync(rec *store.RunRecord) {
	r.tasks.Add(1)
	go func() {
		defer r.tasks.Done()
		r.finish(rec)
		r.release(store.RunRef{OrgID: rec.OrgID, RunID: rec.ID})
	}()
}

// finish sends the webhook of a run that reached a terminal state, records
// the delivery on the run, and returns the run as it then is: the status
// and failure_reason the API reports from now on. It returns rec itself
// when there is no webhook to send, or when the delivery could not be
// recorded (the store still holds rec then, and the next Start sends the
// webhook again).
//
// A failed delivery is logged and recorded in the run's
// WebhookFailureReason. It changes the run's status only when the run had
// completed: a completed run whose receiver never heard of it turns failed,
// keeping its output, with a failure_reason that says so ("failed" is the
// status of a run that may succeed when tried again, as one whose receiver
// was down may). A run that ended
// failed, terminated, timed_out or canceled keeps its status and its own
// failure_reason, which say what went wrong with the run itself; a
// receiver being down must not hide that.
func (r *Runner) finish(rec *store.RunRecord) *store.RunRecord {
	if r.cfg.Notifier == nil {
		return rec
	}
	d := r.cfg.Notifier.Notify(r.ctx, rec)
	if d == nil {
		return rec
	}
	final, err := r.cfg.Store.Runs().Update(context.WithoutCancel(r.ctx), rec.OrgID, rec.ID, func(rec *store.RunRecord) error {
		rec.Webhook = d
		rec.WebhookFailureReason = ""
		if d.Error == "" {
			return nil
		}
		rec.WebhookFailureReason = WebhookFailureReason(d)
		if rec.Status == client.RunStatusCompleted {
			rec.Status = client.RunStatusFailed
			rec.FailureReason = rec.WebhookFailureReason
		}
		return nil
	})
	if err != nil {
		r.log.Error("record webhook delivery", "run_id", rec.ID, "error", err)
		final = rec
	}
	if d.Error != "" {
		// The host only: the rest of a webhook URL may hold the
		// receiver's secret (see webhooks.LogHost).
		r.log.Warn("webhook delivery failed", "run_id", rec.ID, "run_status", final.Status,
			"webhook_host", webhooks.LogHost(d.URL), "status_code", d.StatusCode,
			"error", webhooks.LogError(d.URL, d.Error))
	}
	return final
}

// WebhookFailureReason is the webhook_failure_reason of a run whose
// terminal webhook could not be delivered, and the failure_reason of a
// completed run that turned failed for that reason. It names the whole URL:
// it is shown to the run's owner, who configured it, never logged.
func WebhookFailureReason(d *store.WebhookDelivery) string {
	return fmt.Sprintf("The run's webhook could not be sent to %s: %s", d.URL, d.Error)
}
