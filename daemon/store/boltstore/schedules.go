package boltstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Schedules are the organizations' agent schedules: a cron expression in a
// time zone, the parameters of the runs it starts, and the scheduler's
// bookkeeping (what it has fired). Get it with Store.Schedules.
//
// The store does not read cron expressions: package daemon/scheduler
// computes the fire times, and Fire records one, with the run it starts,
// in one transaction, so that a crash can never make a fire time start two
// runs (see Fire).
type Schedules struct{ s *Store }

// Schedules returns the agent schedules of the organizations.
func (s *Store) Schedules() store.Schedules { return &Schedules{s} }

// getSchedule returns schedule id, of whichever agent, or its
// NotFoundError.
func getSchedule(o *orgTx, id string) (*store.ScheduleRecord, error) {
	return getJSON[store.ScheduleRecord](o.schedules(), store.RecordSchedule, id)
}

// getAgentSchedule returns schedule id of agent wpid: the agent's
// NotFoundError when it does not exist or is deleted, the schedule's when
// the agent has no such schedule (a schedule of another agent is as
// unknown as a missing one).
func getAgentSchedule(o *orgTx, wpid, id string) (*store.ScheduleRecord, error) {
	if err := checkLiveAgent(o, wpid); err != nil {
		return nil, err
	}
	rec, err := getSchedule(o, id)
	if err != nil {
		return nil, err
	}
	if rec.AgentID != wpid {
		return nil, notFound(store.RecordSchedule, id)
	}
	return rec, nil
}

// checkLiveAgent returns the agent's NotFoundError unless it exists and is
// not deleted.
func checkLiveAgent(o *orgTx, wpid string) error {
	if !liveAgent(o, wpid) {
		return agentNotFound(wpid)
	}
	return nil
}

func putSchedule(o *orgTx, rec *store.ScheduleRecord) error {
	return putJSON(o.schedules(), []byte(rec.ID), rec)
}

// Create stores a new schedule of agent wpid (ErrNotFound when the agent
// does not exist or is deleted).
func (sc *Schedules) Create(ctx context.Context, orgID, wpid string, in *store.ScheduleInput) (*store.ScheduleRecord, error) {
	id := sc.s.ids.Next(records.SchedulePrefix)
	now := sc.s.clock()
	rec := records.NewSchedule(id, orgID, wpid, in, now)
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if err := checkLiveAgent(o, wpid); err != nil {
			return err
		}
		return putSchedule(o, rec)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Get returns schedule id of agent wpid.
func (sc *Schedules) Get(ctx context.Context, orgID, wpid, id string) (*store.ScheduleRecord, error) {
	var rec *store.ScheduleRecord
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		rec, err = getAgentSchedule(o, wpid, id)
		return err
	})
	return rec, err
}

// List returns the schedules of agent wpid, oldest first.
func (sc *Schedules) List(ctx context.Context, orgID, wpid string) ([]*store.ScheduleRecord, error) {
	var out []*store.ScheduleRecord
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		out = nil
		if err := checkLiveAgent(o, wpid); err != nil {
			return err
		}
		return eachSchedule(o, func(rec *store.ScheduleRecord) {
			if rec.AgentID == wpid {
				out = append(out, rec)
			}
		})
	})
	if err != nil {
		return nil, err
	}
	sortSchedules(out)
	return out, nil
}

// ListAll returns a page of the organization's schedules, oldest first,
// with their agents' titles, and how many match q in all. The schedules
// of deleted agents are not listed.
func (sc *Schedules) ListAll(ctx context.Context, orgID string, q store.ScheduleQuery) ([]store.ScheduleListItem, int, error) {
	var all []store.ScheduleListItem
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var recs []*store.ScheduleRecord
		err := eachSchedule(o, func(rec *store.ScheduleRecord) {
			if q.Enabled == nil || rec.Enabled == *q.Enabled {
				recs = append(recs, rec)
			}
		})
		if err != nil {
			return err
		}
		sortSchedules(recs)
		all, err = records.ScheduleItems(recs, q.Search, func(wpid string) (*string, error) {
			if !liveAgent(o, wpid) {
				return nil, nil
			}
			raw := latestRowBytes(o, wpid)
			if raw == nil {
				return nil, nil
			}
			a, err := decodeAgent(raw)
			if err != nil {
				return nil, err
			}
			return &a.Title, nil
		})
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	start, end := records.Window(len(all), q.Page, q.PageSize)
	return append([]store.ScheduleListItem{}, all[start:end]...), len(all), nil
}

// Update replaces a schedule's settings. A change of its cron expression
// or time zone, or enabling it, moves its mark to in.From: fire times
// before the change are not caught up.
func (sc *Schedules) Update(ctx context.Context, orgID, wpid, id string, in *store.ScheduleInput) (*store.ScheduleRecord, error) {
	var rec *store.ScheduleRecord
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		if rec, err = getAgentSchedule(o, wpid, id); err != nil {
			return err
		}
		records.UpdateSchedule(rec, in, sc.s.clock())
		return putSchedule(o, rec)
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
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		if rec, err = getAgentSchedule(o, wpid, id); err != nil {
			return err
		}
		if !records.SetScheduleEnabled(rec, enabled, from, sc.s.clock) {
			return nil
		}
		return putSchedule(o, rec)
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Delete deletes a schedule of agent wpid. The runs it started stay.
func (sc *Schedules) Delete(ctx context.Context, orgID, wpid, id string) error {
	return sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if _, err := getAgentSchedule(o, wpid, id); err != nil {
			return err
		}
		return o.schedules().Delete([]byte(id))
	})
}

// Enabled returns the enabled schedules of every organization whose agent
// is not deleted: what the scheduler plans from.
func (sc *Schedules) Enabled(ctx context.Context) ([]*store.ScheduleRecord, error) {
	var out []*store.ScheduleRecord
	err := sc.s.view(ctx, func(tx *bolt.Tx) error {
		out = nil
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			o, err := openOrg(tx, string(org))
			if err != nil {
				return err
			}
			return eachSchedule(o, func(rec *store.ScheduleRecord) {
				if rec.Enabled && liveAgent(o, rec.AgentID) {
					out = append(out, rec)
				}
			})
		})
	})
	if err != nil {
		return nil, err
	}
	sortSchedules(out)
	return out, nil
}

// Fire records fire time at of schedule id and, unless the schedule's
// previous run is still going, stores run (a new queued run made as
// Runs.Create expects it, its ScheduleID and Trigger set by the caller)
// tagged schedule:<id>: all in one transaction, which also moves the
// schedule's mark to now (>= at). A fire time at or before the mark
// writes nothing (FireAlreadyHandled): a fire time starts at most one run
// whatever crashes and retries happen around it. missed, the fire times a
// catch-up stepped over to reach at, is counted on the schedule in the
// same transaction. A schedule whose agent is deleted answers ErrNotFound
// and writes nothing.
func (sc *Schedules) Fire(ctx context.Context, orgID, id string, at, now time.Time, missed store.Missed, run *store.RunRecord) (store.FireOutcome, error) {
	if err := records.CheckFireRun(orgID, run); err != nil {
		return 0, err
	}
	at, now = records.FireTimes(at, now)
	var outcome store.FireOutcome
	err := sc.s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		rec, err := getSchedule(o, id)
		if err != nil {
			return err
		}
		if err := checkLiveAgent(o, rec.AgentID); err != nil {
			return err
		}
		if why, due := rec.Due(at); !due {
			outcome = why
			return nil
		}
		rec.HandledThrough = now
		rec.AddMissed(missed)
		if rec.LastRunID != "" {
			prev, err := getRun(o, rec.LastRunID)
			if err != nil && !isNotFound(err) {
				return err
			}
			if prev != nil && !prev.Terminal() {
				outcome = store.FireSkipped
				rec.SkippedFires++
				rec.LastSkippedAt = &at
				return putSchedule(o, rec)
			}
		}
		if o.runs().Get([]byte(run.ID)) != nil {
			return &store.ConflictError{Record: store.RecordRun, ID: run.ID}
		}
		stamp := sc.s.clock()
		fireTime := client.NewTime(at)
		run.CreatedAt, run.ModifiedAt, run.QueuedAt, run.ScheduledFor = stamp, stamp, &stamp, &fireTime
		if err := sc.s.runs.putRun(tx, o, run); err != nil {
			return err
		}
		t := &tagTx{s: sc.s, o: o, now: stamp, setBy: orgID}
		if err := t.apply(store.TagSubject{Kind: store.RunSubject, ID: run.ID}, store.TagChange{
			Set: []store.TagSet{{Key: store.ScheduleTagKey, Value: id}},
		}); err != nil {
			return err
		}
		rec.LastFireTime, rec.LastRunID, rec.LastError = &at, run.ID, ""
		outcome = store.FireStarted
		return putSchedule(o, rec)
	})
	return outcome, err
}

// Miss records that fire time at of schedule id started no run, and why
// (reason, for people), moving the schedule's mark to now and counting
// missed as Fire does; FireAlreadyHandled when at was handled already.
func (sc *Schedules) Miss(ctx context.Context, orgID, id string, at, now time.Time, missed store.Missed, reason string) (store.FireOutcome, error) {
	at, now = records.FireTimes(at, now)
	var outcome store.FireOutcome
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getSchedule(o, id)
		if err != nil {
			return err
		}
		var write bool
		if outcome, write = records.Miss(rec, at, now, missed, reason); !write {
			return nil
		}
		return putSchedule(o, rec)
	})
	return outcome, err
}

func eachSchedule(o *orgTx, fn func(*store.ScheduleRecord)) error {
	return o.schedules().ForEach(func(k, v []byte) error {
		rec := new(store.ScheduleRecord)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("store: schedule %s: %w", k, err)
		}
		fn(rec)
		return nil
	})
}

func compareSchedules(a, b *store.ScheduleRecord) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt.Time), strings.Compare(a.ID, b.ID))
}

func sortSchedules(recs []*store.ScheduleRecord) { slices.SortFunc(recs, compareSchedules) }

func isNotFound(err error) bool {
	_, ok := err.(*store.NotFoundError)
	return ok
}
