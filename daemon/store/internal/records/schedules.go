package records

import (
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// SchedulePrefix is the prefix of schedule ids (wfs_<number>).
const SchedulePrefix = "wfs"

// NewSchedule is a new schedule id of agent wpid made at now from in; its
// mark starts at in.From.
func NewSchedule(id, orgID, wpid string, in *store.ScheduleInput, now client.Time) *store.ScheduleRecord {
	return &store.ScheduleRecord{
		ID: id, OrgID: orgID, AgentID: wpid, Cron: in.Cron, Timezone: in.Timezone, Enabled: in.Enabled,
		Parameters: in.Parameters, Name: in.Name, Description: in.Description,
		CreatedAt: now, ModifiedAt: now, HandledThrough: in.From.UTC(),
		KeyHash: in.KeyHash, BaseURL: in.BaseURL,
	}
}

// UpdateSchedule replaces rec's settings with in's at now. A change of its
// cron expression or time zone, or enabling it, moves its mark to in.From:
// fire times before the change are not caught up.
func UpdateSchedule(rec *store.ScheduleRecord, in *store.ScheduleInput, now client.Time) {
	if rec.Cron != in.Cron || rec.Timezone != in.Timezone || (in.Enabled && !rec.Enabled) {
		rec.HandledThrough = LaterOf(rec.HandledThrough, in.From.UTC())
	}
	rec.Cron, rec.Timezone, rec.Enabled = in.Cron, in.Timezone, in.Enabled
	rec.Parameters, rec.Name, rec.Description = in.Parameters, in.Name, in.Description
	rec.KeyHash, rec.BaseURL = in.KeyHash, in.BaseURL
	rec.ModifiedAt = now
}

// SetScheduleEnabled enables or disables rec at the time clock tells, and
// reports whether that changed it (when not, rec is as it was and nothing
// is to be written). Enabling a disabled schedule moves its mark to from:
// the fire times while it was disabled are not caught up.
func SetScheduleEnabled(rec *store.ScheduleRecord, enabled bool, from time.Time, clock func() client.Time) bool {
	if rec.Enabled == enabled {
		return false
	}
	if enabled {
		rec.HandledThrough = LaterOf(rec.HandledThrough, from.UTC())
	}
	rec.Enabled, rec.ModifiedAt = enabled, clock()
	return true
}

// FireTimes are the times Fire and Miss work with: at in UTC, and now in
// UTC and not before at (a schedule's mark never moves back).
func FireTimes(at, now time.Time) (time.Time, time.Time) {
	return at.UTC(), LaterOf(at.UTC(), now.UTC())
}

// CheckFireRun checks the run Fire is to store for schedules of orgID: a
// new queued run with an id from NewID.
func CheckFireRun(orgID string, run *store.RunRecord) error {
	if run == nil || run.OrgID != orgID || !ValidID(run.ID) {
		return fmt.Errorf("store: Schedules.Fire: the run needs an id from NewID and organization %s", orgID)
	}
	if run.Status != client.RunStatusQueued {
		return fmt.Errorf("store: Schedules.Fire: a new run is queued, not %q", run.Status)
	}
	return nil
}

// Miss marks fire time at of rec as handled at now without a run, for
// reason, counting missed; the outcome, and whether there is anything to
// write (not when at was handled already or rec is disabled).
func Miss(rec *store.ScheduleRecord, at, now time.Time, missed store.Missed, reason string) (store.FireOutcome, bool) {
	if why, due := rec.Due(at); !due {
		return why, false
	}
	rec.HandledThrough, rec.LastError = now, reason
	rec.AddMissed(missed)
	return store.FireSkipped, true
}

// LaterOf is the later of a and b.
func LaterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// ScheduleMatches reports whether a schedule of the agent titled title
// matches term (lowercased; "" matches all): in the agent's title or the
// schedule's name.
func ScheduleMatches(rec *store.ScheduleRecord, title, term string) bool {
	return term == "" || strings.Contains(strings.ToLower(title), term) ||
		rec.Name != nil && strings.Contains(strings.ToLower(*rec.Name), term)
}

// ScheduleItems lists recs, in their order, with the titles of their
// agents, keeping those whose agent is live (titleOf answers nil for an
// agent that is gone; it is asked once per agent) and that match search
// (ScheduleMatches, without regard to case).
func ScheduleItems(recs []*store.ScheduleRecord, search string, titleOf func(wpid string) (*string, error)) ([]store.ScheduleListItem, error) {
	term := strings.ToLower(search)
	titles := map[string]*string{} // nil: the agent is gone
	var all []store.ScheduleListItem
	for _, rec := range recs {
		title, seen := titles[rec.AgentID]
		if !seen {
			var err error
			if title, err = titleOf(rec.AgentID); err != nil {
				return nil, err
			}
			titles[rec.AgentID] = title
		}
		if title != nil && ScheduleMatches(rec, *title, term) {
			all = append(all, store.ScheduleListItem{ScheduleRecord: rec, AgentTitle: *title})
		}
	}
	return all, nil
}
