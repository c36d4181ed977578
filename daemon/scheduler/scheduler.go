// Package scheduler starts the runs of the agents' schedules (package
// daemon/store's Schedules) at their times.
//
// A Scheduler plans from the store: it sleeps until the earliest fire time
// of the enabled schedules (or until Wake says one changed), then, for
// each schedule due, records the fire time and creates the run in one
// store transaction (store.Schedules.Fire) and hands the run to the
// runner. Runs are made as POST /v1/run/agents makes them, by the API
// server (RunMaker), with trigger "scheduled", the schedule's id
// (workflow_schedule_id) and the tag schedule:<id>.
//
// The rules, documented for users in docs/schedules.md:
//
//   - Daylight saving: see Spec.Next.
//   - Overlap: a fire time that comes while the schedule's previous run
//     has not ended starts no run; the skip is counted on the schedule
//     (skipped_fires, last_skipped_at) and logged.
//   - Catch-up: every fire time at or before a schedule's mark is done.
//     When the scheduler finds several fire times due at once (the daemon
//     was stopped over them), it starts one run, for the latest of them,
//     and moves the mark to now: at most one catch-up run per schedule,
//     never a burst. The fire times stepped over are counted on the
//     schedule (missed_fires, last_missed_at) and logged.
//   - Exactly once: the mark moves in the transaction that stores the
//     run, so a crash before the commit leaves the fire time due (and
//     the restarted daemon starts it as its catch-up), and a crash after
//     leaves it done, its run queued, which the runner resumes.
//   - A new, changed or re-enabled schedule fires from the moment it was
//     saved: the times before are not caught up.
//
// Several daemons on one database (a store that implements store.Queue)
// each run a scheduler, and every one of them plans every schedule: each
// pass reads the enabled schedules afresh from the store, so a schedule
// created, changed, disabled or deleted through another daemon is seen at
// the next pass, and a daemon that stops leaves its schedules to the
// others. Config.Sync bounds the time between passes, so that the change
// is seen soon although no fire time or Wake comes. Fire decides which of
// the daemons starts the run of a fire time; the others get
// FireAlreadyHandled, a normal outcome that is neither logged nor an
// error.
package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// RunMaker makes the record, not yet stored, of a queued run of an agent,
// validated as POST /v1/run/agents validates its runs: the daemon's API
// server (api.Server.NewTriggeredRun).
type RunMaker interface {
	NewTriggeredRun(ctx context.Context, orgID string, req *client.AgentRunRequest) (*store.RunRecord, error)
}

// Config configures a Scheduler.
type Config struct {
	Store store.Store
	Runs  RunMaker
	// Submit hands a stored, queued run to the runner.
	Submit func(orgID, runID string)
	Clock  Clock        // nil: RealClock
	Logger *slog.Logger // nil: discard
	// OnFire, when set, is called after each fire time is handled (tests
	// wait on it).
	OnFire func(Fire)
	// Sync, when above zero, is the longest time between two passes over
	// the schedules: the daemons sharing a database see each other's new,
	// changed, disabled and deleted schedules within it (SyncFor gives
	// the daemon's). 0 keeps a scheduler that learns of changes through
	// Wake, as the only daemon on its store does; it still reads the
	// schedules at least once every maxWait.
	Sync time.Duration
}

// DefaultSync is the Sync of the scheduler of a daemon that shares its
// store with other daemons.
const DefaultSync = 5 * time.Second

// SyncFor returns the Sync a scheduler over st needs: DefaultSync when
// other daemons may share st (it implements store.Queue), else 0.
func SyncFor(st store.Store) time.Duration {
	if _, shared := st.(store.Queue); shared {
		return DefaultSync
	}
	return 0
}

// Fire is what the scheduler did with one fire time of a schedule.
type Fire struct {
	OrgID, ScheduleID, AgentID string
	At                         time.Time
	Outcome                    store.FireOutcome
	RunID                      string // the run started (FireStarted)
	// Missed counts the earlier fire times this one's catch-up stepped
	// over (store.Missed).
	Missed int
	// Err says why no run started when the run could not be made (the
	// outcome is then FireSkipped), or that the store failed.
	Err error
}

// maxWait bounds one sleep of the scheduler, so that a change of the
// machine's wall clock (a suspended laptop, a corrected clock) is noticed
// within it.
const maxWait = time.Minute

// maxCatchUpSearch bounds the fire times stepped over to find the latest
// one due.
const maxCatchUpSearch = 100_000

// Scheduler starts the runs of the schedules. Start it once, Stop it once.
type Scheduler struct {
	cfg   Config
	clock Clock
	log   *slog.Logger
	wake  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	mu    sync.Mutex // one pass over the schedules at a time
	// onPass, when set (by this package's tests, before Start), is called
	// after each pass of the loop with the clock's time the pass read.
	onPass func(now time.Time)
}

// New returns a Scheduler; Start starts it.
func New(cfg Config) *Scheduler {
	s := &Scheduler{cfg: cfg, clock: cfg.Clock, log: cfg.Logger,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if s.clock == nil {
		s.clock = RealClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Now returns the scheduler clock's time.
func (s *Scheduler) Now() time.Time { return s.clock.Now() }

// Wake makes the scheduler plan again: a schedule was created, changed or
// enabled.
func (s *Scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start handles the fire times due now (the catch-up of a daemon that was
// stopped over them) before it returns, then keeps firing in the
// background until Stop.
func (s *Scheduler) Start(ctx context.Context) error {
	next, now, err := s.pass(ctx)
	if err != nil {
		return fmt.Errorf("scheduler: %w", err)
	}
	if s.onPass != nil {
		s.onPass(now)
	}
	go s.loop(next, now)
	return nil
}

// Stop stops the background loop and waits for it. A pass under way
// finishes first.
func (s *Scheduler) Stop() {
	close(s.stop)
	<-s.done
}

// loop passes over the schedules until Stop: at the earliest fire time to
// come (next), on Wake, and, with a Sync, at the latest Sync after the
// previous pass (at passed, on the scheduler's clock).
func (s *Scheduler) loop(next, passed time.Time) {
	defer close(s.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for {
		until := next
		if s.cfg.Sync > 0 {
			// An instant, not a duration from now: a clock that moves
			// on before the wait begins shortens the wait.
			if sync := passed.Add(s.cfg.Sync); until.IsZero() || sync.Before(until) {
				until = sync
			}
		}
		// Waited for as an instant (Clock.At), so that a clock moved on
		// since now was read ends the wait as it should.
		at := s.clock.Now().Add(maxWait)
		if !until.IsZero() && until.Before(at) {
			at = until
		}
		select {
		case <-s.stop:
			return
		case <-s.wake:
		case <-s.clock.At(at):
		}
		n, now, err := s.pass(ctx)
		if err != nil {
			s.log.Error("scheduler: a pass over the schedules failed; retrying", "error", err)
			n = now.Add(time.Second)
		}
		next, passed = n, now
		if s.onPass != nil {
			s.onPass(now)
		}
	}
}

// RunDue handles every fire time due at the clock's present time, and
// returns the earliest fire time to come (zero when no schedule has one).
func (s *Scheduler) RunDue(ctx context.Context) (time.Time, error) {
	next, _, err := s.pass(ctx)
	return next, err
}

// pass is RunDue, which also returns the clock's time it handled the fire
// times due at.
func (s *Scheduler) pass(ctx context.Context) (next, now time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The time is read before the schedules: a schedule saved between the
	// two has its mark at or after now, and so nothing due in this pass.
	now = s.clock.Now()
	recs, err := s.cfg.Store.Schedules().Enabled(ctx)
	if err != nil {
		return time.Time{}, now, err
	}
	for _, rec := range recs {
		spec, err := Parse(rec.Cron)
		if err == nil {
			var loc *time.Location
			if loc, err = LoadZone(rec.Timezone); err == nil {
				if at, missed := latestDue(spec, loc, rec.HandledThrough, now); !at.IsZero() {
					s.fire(ctx, rec, at, now, missed)
				}
				if n := spec.Next(loc, laterOf(rec.HandledThrough, now)); !n.IsZero() && (next.IsZero() || n.Before(next)) {
					next = n
				}
				continue
			}
		}
		// Saved schedules were checked; a time zone database that lost
		// the zone is the machine's problem, said once a pass.
		s.log.Error("scheduler: schedule cannot be planned", "schedule_id", rec.ID, "error", err)
	}
	return next, now, nil
}

// latestDue returns the latest fire time after mark and at or before now,
// zero when none is due, and the fire times due before it, which the
// catch-up steps over (missed while no scheduler ran).
func latestDue(spec *Spec, loc *time.Location, mark, now time.Time) (time.Time, store.Missed) {
	var missed store.Missed
	t := spec.Next(loc, mark)
	if t.IsZero() || t.After(now) {
		return time.Time{}, missed
	}
	for range maxCatchUpSearch {
		n := spec.Next(loc, t)
		if n.IsZero() || n.After(now) {
			break
		}
		missed.Count++
		missed.Latest = t
		t = n
	}
	return t, missed
}

// fire handles fire time at of rec.
func (s *Scheduler) fire(ctx context.Context, rec *store.ScheduleRecord, at, now time.Time, missed store.Missed) {
	ev := Fire{OrgID: rec.OrgID, ScheduleID: rec.ID, AgentID: rec.AgentID, At: at, Missed: missed.Count}
	if missed.Count > 0 {
		s.log.Warn("scheduler: fire times missed while the daemon was not running; one catch-up run for the latest",
			"schedule_id", rec.ID, "agent_id", rec.AgentID, "missed", missed.Count, "last_missed", missed.Latest, "catch_up", at)
	}
	defer func() {
		if s.cfg.OnFire != nil {
			s.cfg.OnFire(ev)
		}
	}()
	params := make(map[string]any, len(rec.Parameters))
	for k, raw := range rec.Parameters {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			ev.Err = fmt.Errorf("parameter %s: %w", k, err)
			break
		}
		params[k] = v
	}
	var run *store.RunRecord
	if ev.Err == nil {
		run, ev.Err = s.cfg.Runs.NewTriggeredRun(ctx, rec.OrgID, &client.AgentRunRequest{AgentID: rec.AgentID, Parameters: params})
	}
	if ev.Err != nil {
		reason := fmt.Sprintf("the run of %s could not be started: %v", at.Format(time.RFC3339), ev.Err)
		ev.Outcome, ev.Err = s.cfg.Store.Schedules().Miss(ctx, rec.OrgID, rec.ID, at, now, missed, reason)
		switch {
		case errors.Is(ev.Err, store.ErrNotFound):
			ev.Outcome, ev.Err = store.FireDisabled, nil // deleted since it was read
			return
		case ev.Err == nil && (ev.Outcome == store.FireAlreadyHandled || ev.Outcome == store.FireDisabled):
			// Another daemon handled the time (and said why it started
			// nothing), or the schedule was disabled since it was read.
			return
		case ev.Err == nil:
			ev.Err = errors.New(reason)
		}
		s.log.Warn("scheduler: no run started", "schedule_id", rec.ID, "agent_id", rec.AgentID, "fire_time", at, "error", ev.Err)
		return
	}
	run.Trigger, run.ScheduleID = client.RunTriggerScheduled, rec.ID
	run.KeyHash, run.BaseURL = rec.KeyHash, rec.BaseURL
	ev.Outcome, ev.Err = s.cfg.Store.Schedules().Fire(ctx, rec.OrgID, rec.ID, at, now, missed, run)
	// FireAlreadyHandled (another daemon on the same database fired the
	// time first) and FireDisabled (disabled since it was read) are
	// normal: nothing to say, nothing to submit.
	switch {
	case ev.Err != nil:
		if errors.Is(ev.Err, store.ErrNotFound) {
			ev.Err = nil // deleted (or its agent deleted) since it was read
			ev.Outcome = store.FireDisabled
			return
		}
		s.log.Error("scheduler: the fire time could not be recorded", "schedule_id", rec.ID, "fire_time", at, "error", ev.Err)
	case ev.Outcome == store.FireStarted:
		ev.RunID = run.ID
		s.log.Info("scheduled run started", "schedule_id", rec.ID, "agent_id", rec.AgentID, "run_id", run.ID, "fire_time", at)
		s.cfg.Submit(run.OrgID, run.ID)
	case ev.Outcome == store.FireSkipped:
		s.log.Warn("scheduled run skipped: the previous run has not ended", "schedule_id", rec.ID, "agent_id", rec.AgentID,
			"previous_run_id", rec.LastRunID, "fire_time", at)
	}
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
