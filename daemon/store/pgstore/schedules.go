package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Schedules are the organizations' agent schedules and the scheduler's
// marks (bbolt: daemon/store/schedules.go).
//
// Several daemons may run a scheduler on one database. Fire makes a fire
// time start at most one run among them: it locks the schedule's row
// (SELECT ... FOR UPDATE) in the transaction that checks the mark, stores
// and tags the run and moves the mark, so that a second daemon firing the
// same time waits for the first and then finds the time handled.
type Schedules struct{ s *Store }

// Schedules returns the agent schedules of the organizations.
func (s *Store) Schedules() store.Schedules { return &Schedules{s} }

// checkLiveAgent returns the agent's NotFoundError unless it exists in the
// organization and is not deleted.
func (s *Store) checkLiveAgent(ctx context.Context, q querier, orgID, wpid string) error {
	live, err := s.liveAgents(ctx, q, orgID, []string{wpid})
	if err != nil {
		return err
	}
	if !live[wpid] {
		return &store.NotFoundError{Record: store.RecordAgent, ID: wpid}
	}
	return nil
}

// liveAgents says which of wpids are agents of the organization that are
// not deleted.
func (s *Store) liveAgents(ctx context.Context, q querier, orgID string, wpids []string) (map[string]bool, error) {
	live := map[string]bool{}
	var ask []string
	for _, w := range wpids {
		if records.ValidID(w) && !slices.Contains(ask, w) {
			ask = append(ask, w)
		}
	}
	if len(ask) == 0 {
		return live, nil
	}
	deleted, err := s.agentsDeleted(ctx, q, orgID, ask)
	if err != nil {
		return nil, err
	}
	for _, w := range ask {
		if d, ok := deleted[w]; ok && !d {
			live[w] = true
		}
	}
	return live, nil
}

func getSchedule(ctx context.Context, q querier, orgID, id string, lock bool) (*store.ScheduleRecord, error) {
	doc, err := getDoc(ctx, q, "schedules", orgID, id, lock, store.RecordSchedule)
	if err != nil {
		return nil, err
	}
	return decodeDoc[store.ScheduleRecord](doc, store.RecordSchedule, id)
}

// getAgentSchedule returns schedule id of agent wpid: the organization's
// NotFoundError when it does not exist, the agent's when the agent does
// not exist or is deleted, the schedule's when the agent has no such
// schedule.
func (sc *Schedules) getAgentSchedule(ctx context.Context, q querier, orgID, wpid, id string, lock bool) (*store.ScheduleRecord, error) {
	if err := resOrg(ctx, q, orgID); err != nil {
		return nil, err
	}
	if err := sc.s.checkLiveAgent(ctx, q, orgID, wpid); err != nil {
		return nil, err
	}
	rec, err := getSchedule(ctx, q, orgID, id, lock)
	if err != nil {
		return nil, err
	}
	if rec.AgentID != wpid {
		return nil, &store.NotFoundError{Record: store.RecordSchedule, ID: id}
	}
	return rec, nil
}

// putSchedule writes rec (insert or replace).
func putSchedule(ctx context.Context, q querier, rec *store.ScheduleRecord) error {
	doc, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", rec.ID, err)
	}
	_, err = q.Exec(ctx, `
		INSERT INTO schedules (org_id, id, agent_id, enabled, created_at, doc) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (org_id, id) DO UPDATE SET agent_id = excluded.agent_id, enabled = excluded.enabled, doc = excluded.doc`,
		rec.OrgID, rec.ID, rec.AgentID, rec.Enabled, rec.CreatedAt.Time, doc)
	if err != nil {
		return fmt.Errorf("store: schedule %s: %w", rec.ID, err)
	}
	return nil
}

// Create stores a new schedule of agent wpid (ErrNotFound when the agent
// does not exist or is deleted).
func (sc *Schedules) Create(ctx context.Context, orgID, wpid string, in *store.ScheduleInput) (*store.ScheduleRecord, error) {
	id := sc.s.ids.Next(records.SchedulePrefix)
	now := sc.s.clock()
	rec := records.NewSchedule(id, orgID, wpid, in, now)
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if err := sc.s.checkLiveAgent(ctx, tx, orgID, wpid); err != nil {
			return err
		}
		return putSchedule(ctx, tx, rec)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Get returns schedule id of agent wpid.
func (sc *Schedules) Get(ctx context.Context, orgID, wpid, id string) (*store.ScheduleRecord, error) {
	var rec *store.ScheduleRecord
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		rec, err = sc.getAgentSchedule(ctx, tx, orgID, wpid, id, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// readSchedules decodes the rows of (id, doc).
func readSchedules(rows pgx.Rows) ([]*store.ScheduleRecord, error) {
	var out []*store.ScheduleRecord
	err := eachDoc(rows, func(id string, doc []byte) error {
		rec, err := decodeDoc[store.ScheduleRecord](doc, store.RecordSchedule, id)
		if err == nil {
			out = append(out, rec)
		}
		return err
	})
	return out, err
}

// scheduleOrder is the order of schedule lists: oldest first, ids compared
// byte by byte (bbolt: compareSchedules).
const scheduleOrder = `ORDER BY created_at, id COLLATE "C"`

// List returns the schedules of agent wpid, oldest first.
func (sc *Schedules) List(ctx context.Context, orgID, wpid string) ([]*store.ScheduleRecord, error) {
	var out []*store.ScheduleRecord
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if err := sc.s.checkLiveAgent(ctx, tx, orgID, wpid); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, doc FROM schedules WHERE org_id = $1 AND agent_id = $2 `+scheduleOrder, orgID, wpid)
		if err != nil {
			return fmt.Errorf("store: list the schedules: %w", err)
		}
		out, err = readSchedules(rows)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListAll returns a page of the organization's schedules, oldest first,
// with their agents' titles, and how many match q in all. The schedules
// of deleted agents are not listed.
func (sc *Schedules) ListAll(ctx context.Context, orgID string, q store.ScheduleQuery) ([]store.ScheduleListItem, int, error) {
	if err := resOrg(ctx, sc.s.pool, orgID); err != nil {
		return nil, 0, err
	}
	rows, err := sc.s.pool.Query(ctx, `SELECT id, doc FROM schedules WHERE org_id = $1 AND ($2::boolean IS NULL OR enabled = $2) `+scheduleOrder,
		orgID, q.Enabled)
	if err != nil {
		return nil, 0, fmt.Errorf("store: list the schedules: %w", err)
	}
	recs, err := readSchedules(rows)
	if err != nil {
		return nil, 0, err
	}
	var wpids []string
	for _, rec := range recs {
		wpids = append(wpids, rec.AgentID)
	}
	live, err := sc.s.liveAgents(ctx, sc.s.pool, orgID, wpids)
	if err != nil {
		return nil, 0, err
	}
	all, err := records.ScheduleItems(recs, q.Search, func(wpid string) (*string, error) {
		if !live[wpid] {
			return nil, nil
		}
		a, err := sc.s.Agents().Get(ctx, orgID, wpid, 0)
		switch {
		case err == nil:
			return &a.Title, nil
		case errors.Is(err, store.ErrNotFound): // deleted since: not listed
			return nil, nil
		}
		return nil, err
	})
	if err != nil {
		return nil, 0, err
	}
	offset, limit, ok := records.Offset(q.Page, q.PageSize)
	if !ok || offset >= int64(len(all)) {
		return []store.ScheduleListItem{}, len(all), nil
	}
	return all[offset:min(offset+limit, int64(len(all)))], len(all), nil
}

// Update replaces a schedule's settings. A change of its cron expression
// or time zone, or enabling it, moves its mark to in.From: fire times
// before the change are not caught up.
func (sc *Schedules) Update(ctx context.Context, orgID, wpid, id string, in *store.ScheduleInput) (*store.ScheduleRecord, error) {
	var rec *store.ScheduleRecord
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if rec, err = sc.getAgentSchedule(ctx, tx, orgID, wpid, id, true); err != nil {
			return err
		}
		records.UpdateSchedule(rec, in, sc.s.clock())
		return putSchedule(ctx, tx, rec)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// SetEnabled enables or disables a schedule. Enabling a disabled schedule
// moves its mark to from: the fire times while it was disabled are not
// caught up.
func (sc *Schedules) SetEnabled(ctx context.Context, orgID, wpid, id string, enabled bool, from time.Time) (*store.ScheduleRecord, error) {
	var rec *store.ScheduleRecord
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if rec, err = sc.getAgentSchedule(ctx, tx, orgID, wpid, id, true); err != nil {
			return err
		}
		if !records.SetScheduleEnabled(rec, enabled, from, sc.s.clock) {
			return nil
		}
		return putSchedule(ctx, tx, rec)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Delete deletes a schedule of agent wpid. The runs it started stay.
func (sc *Schedules) Delete(ctx context.Context, orgID, wpid, id string) error {
	return sc.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := sc.getAgentSchedule(ctx, tx, orgID, wpid, id, true); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM schedules WHERE org_id = $1 AND id = $2`, orgID, id)
		return err
	})
}

// Enabled returns the enabled schedules of every organization whose agent
// is not deleted: what the scheduler plans from.
func (sc *Schedules) Enabled(ctx context.Context) ([]*store.ScheduleRecord, error) {
	rows, err := sc.s.pool.Query(ctx, `SELECT id, doc FROM schedules WHERE enabled `+scheduleOrder)
	if err != nil {
		return nil, fmt.Errorf("store: list the enabled schedules: %w", err)
	}
	recs, err := readSchedules(rows)
	if err != nil {
		return nil, err
	}
	byOrg := map[string][]string{}
	for _, rec := range recs {
		byOrg[rec.OrgID] = append(byOrg[rec.OrgID], rec.AgentID)
	}
	live := map[string]map[string]bool{}
	for org, wpids := range byOrg {
		if live[org], err = sc.s.liveAgents(ctx, sc.s.pool, org, wpids); err != nil {
			return nil, err
		}
	}
	var out []*store.ScheduleRecord
	for _, rec := range recs {
		if rec.Enabled && live[rec.OrgID][rec.AgentID] {
			out = append(out, rec)
		}
	}
	return out, nil
}

// Fire records fire time at of schedule id and, unless the schedule's
// previous run is still going, stores run (a new queued run made as
// Runs.Create expects it, its ScheduleID and Trigger set by the caller)
// tagged schedule:<id>: all in one transaction, which also moves the
// schedule's mark to now (>= at). A fire time at or before the mark
// writes nothing (FireAlreadyHandled). The schedule's row is locked first,
// so that daemons firing the same time one after the other: the first
// starts the run, the others find the mark moved. missed is counted on the
// schedule in the same transaction. A schedule whose agent is deleted
// answers ErrNotFound and writes nothing.
func (sc *Schedules) Fire(ctx context.Context, orgID, id string, at, now time.Time, missed store.Missed, run *store.RunRecord) (store.FireOutcome, error) {
	if err := records.CheckFireRun(orgID, run); err != nil {
		return 0, err
	}
	at, now = records.FireTimes(at, now)
	// The run's stamps are set in the transaction; a fire that stores no
	// run leaves them as they were, as bbolt's does.
	created, modified, queued, scheduled := run.CreatedAt, run.ModifiedAt, run.QueuedAt, run.ScheduledFor
	var outcome store.FireOutcome
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		outcome = 0
		run.CreatedAt, run.ModifiedAt, run.QueuedAt, run.ScheduledFor = created, modified, queued, scheduled
		rec, err := getSchedule(ctx, tx, orgID, id, true)
		if err != nil {
			return err
		}
		if err := sc.s.checkLiveAgent(ctx, tx, orgID, rec.AgentID); err != nil {
			return err
		}
		if why, due := rec.Due(at); !due {
			outcome = why
			return nil
		}
		rec.HandledThrough = now
		rec.AddMissed(missed)
		if rec.LastRunID != "" {
			prev, err := sc.s.getRun(ctx, tx, orgID, rec.LastRunID)
			var nf *store.NotFoundError
			if err != nil && !errors.As(err, &nf) {
				return err
			}
			if prev != nil && !prev.Terminal() {
				outcome = store.FireSkipped
				rec.SkippedFires++
				rec.LastSkippedAt = &at
				return putSchedule(ctx, tx, rec)
			}
		}
		stamp := sc.s.clock()
		fireTime := client.NewTime(at)
		run.CreatedAt, run.ModifiedAt, run.QueuedAt, run.ScheduledFor = stamp, stamp, &stamp, &fireTime
		if err := sc.s.insertRun(ctx, tx, run); err != nil {
			return err
		}
		if _, err := sc.s.applyTags(ctx, tx, orgID, stamp, orgID, store.TagSubject{Kind: store.RunSubject, ID: run.ID}, store.TagChange{
			Set: []store.TagSet{{Key: store.ScheduleTagKey, Value: id}},
		}); err != nil {
			return err
		}
		rec.LastFireTime, rec.LastRunID, rec.LastError = &at, run.ID, ""
		outcome = store.FireStarted
		return putSchedule(ctx, tx, rec)
	})
	if err != nil || outcome != store.FireStarted {
		run.CreatedAt, run.ModifiedAt, run.QueuedAt, run.ScheduledFor = created, modified, queued, scheduled
	}
	return outcome, err
}

// Miss records that fire time at of schedule id started no run, and why
// (reason, for people), moving the schedule's mark to now and counting
// missed as Fire does; FireAlreadyHandled when at was handled already.
func (sc *Schedules) Miss(ctx context.Context, orgID, id string, at, now time.Time, missed store.Missed, reason string) (store.FireOutcome, error) {
	at, now = records.FireTimes(at, now)
	var outcome store.FireOutcome
	err := sc.s.tx(ctx, func(tx pgx.Tx) error {
		outcome = 0
		rec, err := getSchedule(ctx, tx, orgID, id, true)
		if err != nil {
			return err
		}
		var write bool
		if outcome, write = records.Miss(rec, at, now, missed, reason); !write {
			return nil
		}
		return putSchedule(ctx, tx, rec)
	})
	return outcome, err
}
