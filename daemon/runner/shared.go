package runner

// Several daemons on one store. When the store implements store.Queue
// (package pgstore does; the embedded bbolt store, which one daemon owns,
// does not), the runner takes its runs from the store's queue instead of
// its own memory:
//
//   - A free worker claims the next claimable run (Queue.Claim); Submit only
//     wakes a worker, since the run is in the store for every daemon. The
//     store announces runs that become claimable (Queue.Queued), and the
//     runner looks every Poll besides, since an announcement can be missed.
//   - The daemon holds each run it claimed under a lease, which it renews
//     every third of the lease, and releases the run once it ended and its
//     webhook was sent. A daemon that dies stops renewing: once its leases
//     lapse, another daemon takes its unfinished runs over (Queue.TakeOver)
//     and ends or executes them as a restarted daemon does with its own
//     (recover in runner.go).
//   - A run that executes in a browser session is claimed only by the
//     daemon that opened the session (HoldSession), which has its browser,
//     while that daemon is alive.
//   - Only the daemon that holds a run moves it (starts it, ends it, sends
//     its webhook). A daemon asked to cancel a run it does not execute
//     claims the run when nobody holds it (Queue.ClaimRun) and ends it
//     itself; otherwise it records the request on the run
//     (RunRecord.CancelRequested), and the daemon holding the run, which
//     reads its executing runs every Poll, cancels it. A person's answer to
//     a run paused on another daemon is recorded on the run likewise, and
//     the holder's wait takes it from there (human.go).
//
// A daemon that cannot renew its leases for longer than a lease (the
// database went away) stops its executing runs: another daemon may have
// taken them over by then, and a run must not execute twice. One that
// renews and finds a run it executes no longer among its leases (it was
// stalled past its lease, and another daemon took the run over) stops
// that run; and a run's end never replaces an end recorded already.

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// DefaultLease is how long a daemon sharing its store holds a run without
// renewing it (Config.Lease): a run of a daemon that died is taken over
// that long after its last renewal, at most.
const DefaultLease = 30 * time.Second

// DefaultPoll is how often a daemon sharing its store looks for claimable
// runs that no announcement told it of, and reads its executing runs for
// requests made through other daemons (Config.Poll).
const DefaultPoll = time.Second

// errLeaseLost ends the runs of a daemon that could not renew its leases.
var errLeaseLost = errors.New("the daemon lost its lease on the run")

// sharedQueue is the runner's side of a store several daemons share.
type sharedQueue struct {
	q     store.Queue
	owner string // this daemon's id in the queue
	lease time.Duration
	poll  time.Duration
}

// newSharedQueue returns the shared queue of cfg's store, nil for a store
// that has none.
func newSharedQueue(cfg Config) *sharedQueue {
	q, ok := cfg.Store.(store.Queue)
	if !ok {
		return nil
	}
	s := &sharedQueue{q: q, owner: cfg.Owner, lease: cfg.Lease, poll: cfg.Poll}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.poll <= 0 {
		s.poll = DefaultPoll
	}
	if s.owner == "" {
		s.owner = newOwner()
	}
	return s
}

// newOwner makes a daemon's id in the queue: its host and process, which
// say in the store who holds a run, and a random part, which no other
// daemon (nor this one's next start) has.
func newOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:12])
}

// Owner returns the id under which the runner holds runs in a shared
// store's queue, "" when its store is its own.
func (r *Runner) Owner() string {
	if r.shared == nil {
		return ""
	}
	return r.shared.owner
}

// HoldSession records, in a store several daemons share, that this daemon
// holds the browser of a browser session it opened, so that the runs that
// execute in it are left to this daemon (store.Queue.HoldSession); with a
// store of its own it does nothing.
func (r *Runner) HoldSession(ctx context.Context, orgID, sessionID string) error {
	if r == nil || r.shared == nil {
		return nil
	}
	return r.shared.q.HoldSession(ctx, r.shared.owner, orgID, sessionID)
}

// startShared takes over the runs of daemons whose leases lapsed and
// starts the loops that keep the leases, hear of queued runs and read
// requests made through other daemons.
func (r *Runner) startShared(ctx context.Context) error {
	// Known alive from the start, for the browser sessions it opens.
	if _, err := r.shared.q.Renew(ctx, r.shared.owner, r.shared.lease); err != nil {
		return fmt.Errorf("runner: register with the shared store's queue: %w", err)
	}
	if err := r.takeOver(ctx); err != nil {
		return err
	}
	r.log.Info("taking runs from the shared store's queue", "owner", r.shared.owner, "lease", r.shared.lease)
	r.loops.Add(3)
	go r.keepLeases()
	go r.listenQueued()
	go r.pollShared()
	return nil
}

// takeOver takes the unfinished runs whose leases lapsed and handles each
// as a restart handles a daemon's own.
func (r *Runner) takeOver(ctx context.Context) error {
	refs, err := r.shared.q.TakeOver(ctx, r.shared.owner, r.shared.lease)
	if err != nil {
		return fmt.Errorf("runner: take over the runs of stopped daemons: %w", err)
	}
	if n, err := r.shared.q.EndLostSessions(ctx, store.SessionEndedByRestart); err != nil {
		r.log.Error("end the browser sessions of daemons gone", "error", err)
	} else if n > 0 {
		r.log.Warn("browser sessions of a daemon that stopped renewing its leases ended", "count", n)
	}
	for _, ref := range refs {
		r.log.Warn("taking over a run whose daemon stopped renewing its lease", "run_id", ref.RunID)
		if err := r.recover(ctx, ref, lostByTakeOver); err != nil {
			r.log.Error("take over a run", "run_id", ref.RunID, "error", err)
			r.release(ref)
		}
	}
	return nil
}

// keepLeases renews the daemon's leases every third of a lease and takes
// over the runs of daemons whose leases lapsed, until the runner stops.
// When renewing fails for longer than a lease, the executing runs stop.
func (r *Runner) keepLeases() {
	defer r.loops.Done()
	s := r.shared
	t := time.NewTicker(s.lease / 3)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		executing := r.executing()
		held, err := s.q.Renew(r.ctx, s.owner, s.lease)
		if err != nil {
			if r.ctx.Err() != nil {
				return
			}
			r.log.Error("renew the leases on this daemon's runs", "error", err)
			if time.Since(renewed) > s.lease {
				r.abandonRuns()
			}
			continue
		}
		renewed = time.Now()
		r.stopTaken(executing, held)
		if err := r.takeOver(r.ctx); err != nil && r.ctx.Err() == nil {
			r.log.Error("take over runs", "error", err)
		}
	}
}

// executing returns the runs the daemon executes.
func (r *Runner) executing() []store.RunRef {
	r.mu.Lock()
	defer r.mu.Unlock()
	refs := make([]store.RunRef, 0, len(r.running))
	for ref := range r.running {
		refs = append(refs, ref)
	}
	return refs
}

// stopTaken stops the runs that the daemon executed before it renewed
// its leases (executing) and no longer holds (not in held): their leases
// lapsed while the daemon was stalled, and another daemon took them over.
func (r *Runner) stopTaken(executing, held []store.RunRef) {
	for _, ref := range executing {
		if slices.Contains(held, ref) {
			continue
		}
		r.mu.Lock()
		if cancel, ok := r.running[ref]; ok {
			r.log.Error("stopping a run another daemon took over: this daemon's lease on it lapsed", "run_id", ref.RunID)
			cancel(errLeaseLost)
		}
		r.mu.Unlock()
	}
}

// abandonRuns stops the executing runs of a daemon whose leases lapsed.
func (r *Runner) abandonRuns() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.running) > 0 {
		r.log.Error("stopping the executing runs: their leases could not be renewed for longer than a lease, so other daemons may take them over",
			"runs", len(r.running))
	}
	for _, cancel := range r.running {
		cancel(errLeaseLost)
	}
}

// listenQueued wakes a worker whenever the store announces a claimable
// run, listening again after a failure.
func (r *Runner) listenQueued() {
	defer r.loops.Done()
	for {
		ch, err := r.shared.q.Queued(r.ctx)
		if err == nil {
			for range ch {
				r.wake.signal()
			}
		} else if r.ctx.Err() == nil {
			r.log.Warn("listen for queued runs (polling meanwhile)", "error", err)
		}
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(r.shared.poll):
		}
	}
}

// pollShared wakes a worker and reads the executing runs for requests made
// through other daemons, every Poll.
func (r *Runner) pollShared() {
	defer r.loops.Done()
	t := time.NewTicker(r.shared.poll)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
		}
		r.wake.signal()
		r.readRequests()
	}
}

// readRequests cancels the executing runs whose cancel was asked for
// through another daemon, and hands the answers given through another
// daemon to the runs waiting for them.
func (r *Runner) readRequests() {
	for _, ref := range r.executing() {
		rec, err := r.cfg.Store.Runs().Get(r.ctx, ref.OrgID, ref.RunID)
		if err != nil || !rec.CancelRequested {
			continue
		}
		r.mu.Lock()
		if cancel, ok := r.running[ref]; ok {
			r.log.Info("canceling a run, as asked through another daemon", "run_id", ref.RunID)
			cancel(errCanceled)
		}
		r.mu.Unlock()
	}
	for ref, w := range r.humans.pausedWaits() {
		if ans, ok := r.answeredElsewhere(r.ctx, ref); ok && r.humans.withdraw(ref, w) {
			w.answer <- ans
		}
	}
}

// claim takes the next claimable run from the shared queue, registered as
// executing. ok is false when none is claimable or the runner is stopping.
func (r *Runner) claim() (ref store.RunRef, ctx context.Context, ok bool) {
	s := r.shared
	ref, ok, err := s.q.Claim(r.ctx, s.owner, s.lease)
	if err != nil {
		if r.ctx.Err() == nil {
			r.log.Error("claim a queued run", "error", err)
		}
		return ref, nil, false
	}
	if !ok {
		return ref, nil, false
	}
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		r.release(ref)
		return ref, nil, false
	}
	var cancel context.CancelCauseFunc
	ctx, cancel = context.WithCancelCause(r.ctx)
	r.running[ref] = cancel
	r.mu.Unlock()
	r.wake.signal() // another worker may claim the next one
	return ref, ctx, true
}

// release lets a run the daemon holds go, in a shared store (nothing
// otherwise).
func (r *Runner) release(ref store.RunRef) {
	if r.shared == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), 10*time.Second)
	defer cancel()
	if err := r.shared.q.Release(ctx, r.shared.owner, ref); err != nil {
		r.log.Error("release a run", "run_id", ref.RunID, "error", err)
	}
}

// cancelShared cancels a run this daemon does not execute, in a shared
// store: a run this daemon holds without executing it yet (taken over, in
// its queue), or one nobody holds, is ended here; one another daemon holds
// gets the request, which that daemon carries out (readRequests).
func (r *Runner) cancelShared(ctx context.Context, ref store.RunRef, inQueue bool) (*store.RunRecord, error) {
	held := inQueue
	if !held {
		var err error
		if held, err = r.shared.q.ClaimRun(ctx, r.shared.owner, ref, r.shared.lease); err != nil {
			return nil, err
		}
	}
	if held {
		rec, canceled, err := r.cancelUnstarted(ctx, ref)
		if err != nil || !canceled {
			r.release(ref)
		}
		return rec, err
	}
	return r.cfg.Store.Runs().Update(ctx, ref.OrgID, ref.RunID, func(rec *store.RunRecord) error {
		if rec.Terminal() || rec.CancelRequested {
			return store.ErrUnchanged
		}
		rec.CancelRequested = true
		return nil
	})
}

// answeredElsewhere returns the answer recorded on a paused run through
// another daemon (answerElsewhere); ok is false when there is none.
func (r *Runner) answeredElsewhere(ctx context.Context, ref store.RunRef) (executor.HumanAnswer, bool) {
	rec, err := r.cfg.Store.Runs().Get(ctx, ref.OrgID, ref.RunID)
	if err != nil || rec.Human == nil || rec.Human.AnsweredAt == nil {
		return executor.HumanAnswer{}, false
	}
	h := rec.Human
	if h.State != client.HumanApproved && h.State != client.HumanRejected {
		return executor.HumanAnswer{}, false
	}
	ans := executor.HumanAnswer{Approved: h.State == client.HumanApproved, At: h.AnsweredAt.Time}
	if h.Comment != nil {
		ans.Comment = *h.Comment
	}
	return ans, true
}
