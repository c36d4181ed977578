package store

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
func (s *Store) Schedules() *Schedules { return &Schedules{s} }

// schedulePrefix is the prefix of schedule ids (wfs_<number>).
const schedulePrefix = "wfs"

// ScheduleTagKey is the tag key of the runs a schedule starts: each carries
// schedule:<schedule id>, which the run list filters on and shows.
const ScheduleTagKey = "schedule"

// ScheduleRecord is a stored schedule, keyed by its id in the
// organization's schedules bucket.
type ScheduleRecord struct {
	ID          string                     `json:"workflow_schedule_id"`
	OrgID       string                     `json:"organization_id"`
	AgentID     string                     `json:"workflow_permanent_id"`
	Cron        string                     `json:"cron_expression"`
	Timezone    string                     `json:"timezone"`
	Enabled     bool                       `json:"enabled"`
	Parameters  map[string]json.RawMessage `json:"parameters,omitempty"`
	Name        *string                    `json:"name,omitempty"`
	Description *string                    `json:"description,omitempty"`
	CreatedAt   client.Time                `json:"created_at"`
	ModifiedAt  client.Time                `json:"modified_at"`

	// HandledThrough is the scheduler's mark: every fire time at or
	// before it is done (fired, skipped, or before the schedule existed
	// or was last enabled or changed). Fire moves it, in the transaction
	// that creates the run, and refuses a fire time at or before it.
	HandledThrough time.Time `json:"handled_through"`
	// LastFireTime is the fire time of the latest run started (nil when
	// none was) and LastRunID that run.
	LastFireTime *time.Time `json:"last_fire_time,omitempty"`
	LastRunID    string     `json:"last_run_id,omitempty"`
	// SkippedFires counts the fire times skipped because the previous run
	// was still going; LastSkippedAt is the latest of them.
	SkippedFires  int        `json:"skipped_fires,omitempty"`
	LastSkippedAt *time.Time `json:"last_skipped_at,omitempty"`
	// MissedFires counts the fire times that passed while no scheduler
	// ran (the daemon was stopped, the machine asleep), stepped over by a
	// catch-up that starts one run for the latest of them only;
	// LastMissedAt is the latest fire time missed.
	MissedFires  int        `json:"missed_fires,omitempty"`
	LastMissedAt *time.Time `json:"last_missed_at,omitempty"`
	// LastError says why the latest fire time started no run (the agent's
	// parameters changed, say); "" once a run started again.
	LastError string `json:"last_error,omitempty"`

	// KeyHash and BaseURL are those of the request that last saved the
	// schedule: its runs are started as if that key had started them
	// there (their webhooks are signed with it, their URLs point there).
	KeyHash []byte `json:"key_hash,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
}

// ScheduleInput is what a create or an update sets. From is the
// scheduler's present time: fire times at or before it are not run (a new,
// re-enabled or changed schedule does not catch up).
type ScheduleInput struct {
	Cron        string
	Timezone    string
	Enabled     bool
	Parameters  map[string]json.RawMessage
	Name        *string
	Description *string
	From        time.Time
	KeyHash     []byte
	BaseURL     string
}

// ScheduleQuery filters and pages the organization-wide schedule list.
type ScheduleQuery struct {
	Page, PageSize int   // 1-based page; PageSize > 0
	Enabled        *bool // nil: both
	// Search matches, case aside, the schedule's name and its agent's
	// title.
	Search string
}

// ScheduleListItem is a schedule in the organization-wide list, with its
// agent's title.
type ScheduleListItem struct {
	*ScheduleRecord
	AgentTitle string
}

// Missed is what a catch-up stepped over: the fire times due before the
// one it handles, which passed while no scheduler ran. Fire and Miss add
// them to the schedule's MissedFires in the transaction that moves its
// mark, so that a crash neither loses nor doubles them.
type Missed struct {
	Count  int       // how many; 0 for none
	Latest time.Time // the latest of them
}

// addMissed counts missed on rec.
func (rec *ScheduleRecord) addMissed(missed Missed) {
	if missed.Count <= 0 {
		return
	}
	rec.MissedFires += missed.Count
	latest := missed.Latest.UTC()
	rec.LastMissedAt = &latest
}

// FireOutcome says what Fire did.
type FireOutcome int

// Outcomes of Fire.
const (
	// FireStarted: the run was stored, tagged and recorded as the
	// schedule's latest.
	FireStarted FireOutcome = iota
	// FireAlreadyHandled: the fire time is at or before the schedule's
	// mark (a previous Fire, perhaps of a daemon that crashed before it
	// could say so, handled it): nothing was written.
	FireAlreadyHandled
	// FireSkipped: the schedule's previous run is still going; the skip
	// was recorded and no run was stored.
	FireSkipped
	// FireDisabled: the schedule is disabled: nothing was written.
	FireDisabled
)

// getSchedule returns schedule id, of whichever agent, or its
// NotFoundError.
func getSchedule(o *orgTx, id string) (*ScheduleRecord, error) {
	return getJSON[ScheduleRecord](o.schedules(), RecordSchedule, id)
}

// getAgentSchedule returns schedule id of agent wpid: the agent's
// NotFoundError when it does not exist or is deleted, the schedule's when
// the agent has no such schedule (a schedule of another agent is as
// unknown as a missing one).
func getAgentSchedule(o *orgTx, wpid, id string) (*ScheduleRecord, error) {
	if err := checkLiveAgent(o, wpid); err != nil {
		return nil, err
	}
	rec, err := getSchedule(o, id)
	if err != nil {
		return nil, err
	}
	if rec.AgentID != wpid {
		return nil, notFound(RecordSchedule, id)
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

func putSchedule(o *orgTx, rec *ScheduleRecord) error {
	return putJSON(o.schedules(), []byte(rec.ID), rec)
}

// Create stores a new schedule of agent wpid (ErrNotFound when the agent
// does not exist or is deleted).
func (sc *Schedules) Create(ctx context.Context, orgID, wpid string, in *ScheduleInput) (*ScheduleRecord, error) {
	id := sc.s.ids.Next(schedulePrefix)
	now := sc.s.clock()
	rec := &ScheduleRecord{
		ID: id, OrgID: orgID, AgentID: wpid, Cron: in.Cron, Timezone: in.Timezone, Enabled: in.Enabled,
		Parameters: in.Parameters, Name: in.Name, Description: in.Description,
		CreatedAt: now, ModifiedAt: now, HandledThrough: in.From.UTC(),
		KeyHash: in.KeyHash, BaseURL: in.BaseURL,
	}
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
func (sc *Schedules) Get(ctx context.Context, orgID, wpid, id string) (*ScheduleRecord, error) {
	var rec *ScheduleRecord
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		rec, err = getAgentSchedule(o, wpid, id)
		return err
	})
	return rec, err
}

// List returns the schedules of agent wpid, oldest first.
func (sc *Schedules) List(ctx context.Context, orgID, wpid string) ([]*ScheduleRecord, error) {
	var out []*ScheduleRecord
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		out = nil
		if err := checkLiveAgent(o, wpid); err != nil {
			return err
		}
		return eachSchedule(o, func(rec *ScheduleRecord) {
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
func (sc *Schedules) ListAll(ctx context.Context, orgID string, q ScheduleQuery) ([]ScheduleListItem, int, error) {
	var all []ScheduleListItem
	term := strings.ToLower(q.Search)
	err := sc.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		all = nil
		titles := map[string]*string{} // nil: the agent is gone
		var failed error
		err := eachSchedule(o, func(rec *ScheduleRecord) {
			if q.Enabled != nil && rec.Enabled != *q.Enabled {
				return
			}
			title, seen := titles[rec.AgentID]
			if !seen {
				if liveAgent(o, rec.AgentID) {
					if raw := latestRowBytes(o, rec.AgentID); raw != nil {
						a, err := decodeAgent(raw)
						if err != nil {
							failed = err
							return
						}
						title = &a.Title
					}
				}
				titles[rec.AgentID] = title
			}
			if title == nil {
				return
			}
			if term != "" && !strings.Contains(strings.ToLower(*title), term) &&
				(rec.Name == nil || !strings.Contains(strings.ToLower(*rec.Name), term)) {
				return
			}
			all = append(all, ScheduleListItem{ScheduleRecord: rec, AgentTitle: *title})
		})
		return cmp.Or(failed, err)
	})
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(all, func(a, b ScheduleListItem) int { return compareSchedules(a.ScheduleRecord, b.ScheduleRecord) })
	size := max(q.PageSize, 1)
	start := (max(q.Page, 1) - 1) * size
	if start >= len(all) {
		return []ScheduleListItem{}, len(all), nil
	}
	return all[start:min(start+size, len(all))], len(all), nil
}

// Update replaces a schedule's settings. A change of its cron expression
// or time zone, or enabling it, moves its mark to in.From: fire times
// before the change are not caught up.
func (sc *Schedules) Update(ctx context.Context, orgID, wpid, id string, in *ScheduleInput) (*ScheduleRecord, error) {
	var rec *ScheduleRecord
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		if rec, err = getAgentSchedule(o, wpid, id); err != nil {
			return err
		}
		if rec.Cron != in.Cron || rec.Timezone != in.Timezone || (in.Enabled && !rec.Enabled) {
			rec.HandledThrough = laterOf(rec.HandledThrough, in.From.UTC())
		}
		rec.Cron, rec.Timezone, rec.Enabled = in.Cron, in.Timezone, in.Enabled
		rec.Parameters, rec.Name, rec.Description = in.Parameters, in.Name, in.Description
		rec.KeyHash, rec.BaseURL = in.KeyHash, in.BaseURL
		rec.ModifiedAt = sc.s.clock()
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
func (sc *Schedules) SetEnabled(ctx context.Context, orgID, wpid, id string, enabled bool, from time.Time) (*ScheduleRecord, error) {
	var rec *ScheduleRecord
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		if rec, err = getAgentSchedule(o, wpid, id); err != nil {
			return err
		}
		if rec.Enabled == enabled {
			return nil
		}
		if enabled {
			rec.HandledThrough = laterOf(rec.HandledThrough, from.UTC())
		}
		rec.Enabled, rec.ModifiedAt = enabled, sc.s.clock()
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
func (sc *Schedules) Enabled(ctx context.Context) ([]*ScheduleRecord, error) {
	var out []*ScheduleRecord
	err := sc.s.view(ctx, func(tx *bolt.Tx) error {
		out = nil
		data := tx.Bucket(bucketOrgData)
		return data.ForEachBucket(func(org []byte) error {
			o, err := openOrg(tx, string(org))
			if err != nil {
				return err
			}
			return eachSchedule(o, func(rec *ScheduleRecord) {
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
func (sc *Schedules) Fire(ctx context.Context, orgID, id string, at, now time.Time, missed Missed, run *RunRecord) (FireOutcome, error) {
	if run == nil || run.OrgID != orgID || !validID(run.ID) {
		return 0, fmt.Errorf("store: Schedules.Fire: the run needs an id from NewID and organization %s", orgID)
	}
	if run.Status != client.RunStatusQueued {
		return 0, fmt.Errorf("store: Schedules.Fire: a new run is queued, not %q", run.Status)
	}
	at, now = at.UTC(), laterOf(at.UTC(), now.UTC())
	var outcome FireOutcome
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
		if why, due := rec.due(at); !due {
			outcome = why
			return nil
		}
		rec.HandledThrough = now
		rec.addMissed(missed)
		if rec.LastRunID != "" {
			prev, err := getRun(o, rec.LastRunID)
			if err != nil && !isNotFound(err) {
				return err
			}
			if prev != nil && !prev.Terminal() {
				outcome = FireSkipped
				rec.SkippedFires++
				rec.LastSkippedAt = &at
				return putSchedule(o, rec)
			}
		}
		if o.runs().Get([]byte(run.ID)) != nil {
			return &ConflictError{Record: RecordRun, ID: run.ID}
		}
		stamp := sc.s.clock()
		fireTime := client.NewTime(at)
		run.CreatedAt, run.ModifiedAt, run.QueuedAt, run.ScheduledFor = stamp, stamp, &stamp, &fireTime
		if err := sc.s.runs.putRun(tx, o, run); err != nil {
			return err
		}
		t := &tagTx{s: sc.s, o: o, now: stamp, setBy: orgID}
		if err := t.apply(TagSubject{Kind: RunSubject, ID: run.ID}, TagChange{
			Set: []TagSet{{Key: ScheduleTagKey, Value: id}},
		}); err != nil {
			return err
		}
		rec.LastFireTime, rec.LastRunID, rec.LastError = &at, run.ID, ""
		outcome = FireStarted
		return putSchedule(o, rec)
	})
	return outcome, err
}

// Miss records that fire time at of schedule id started no run, and why
// (reason, for people), moving the schedule's mark to now and counting
// missed as Fire does; FireAlreadyHandled when at was handled already.
func (sc *Schedules) Miss(ctx context.Context, orgID, id string, at, now time.Time, missed Missed, reason string) (FireOutcome, error) {
	at, now = at.UTC(), laterOf(at.UTC(), now.UTC())
	var outcome FireOutcome
	err := sc.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getSchedule(o, id)
		if err != nil {
			return err
		}
		if why, due := rec.due(at); !due {
			outcome = why
			return nil
		}
		outcome = FireSkipped
		rec.HandledThrough, rec.LastError = now, reason
		rec.addMissed(missed)
		return putSchedule(o, rec)
	})
	return outcome, err
}

// due reports whether fire time at is still to be handled; when it is not
// (the schedule is disabled, or its mark is at or after at), the outcome
// says why.
func (rec *ScheduleRecord) due(at time.Time) (FireOutcome, bool) {
	switch {
	case !rec.Enabled:
		return FireDisabled, false
	case !rec.HandledThrough.Before(at):
		return FireAlreadyHandled, false
	}
	return 0, true
}

func eachSchedule(o *orgTx, fn func(*ScheduleRecord)) error {
	return o.schedules().ForEach(func(k, v []byte) error {
		rec := new(ScheduleRecord)
		if err := json.Unmarshal(v, rec); err != nil {
			return fmt.Errorf("store: schedule %s: %w", k, err)
		}
		fn(rec)
		return nil
	})
}

func compareSchedules(a, b *ScheduleRecord) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt.Time), strings.Compare(a.ID, b.ID))
}

func sortSchedules(recs []*ScheduleRecord) { slices.SortFunc(recs, compareSchedules) }

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func isNotFound(err error) bool {
	_, ok := err.(*NotFoundError)
	return ok
}
