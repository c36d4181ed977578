package store

import (
	"encoding/json"
	"time"

	"github.com/abctl/abctl/client"
)

// ScheduleTagKey is the tag key of the runs a schedule starts: each carries
// schedule:<schedule id>, which the run list filters on and shows.
const ScheduleTagKey = "schedule"

// ScheduleRecord is a stored schedule, found by its id within its
// organization.
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

// AddMissed counts missed on rec (Fire and Miss, in the transaction that
// moves the mark).
func (rec *ScheduleRecord) AddMissed(missed Missed) {
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

// Due reports whether fire time at is still to be handled; when it is not
// (the schedule is disabled, or its mark is at or after at), the outcome
// says why.
func (rec *ScheduleRecord) Due(at time.Time) (FireOutcome, bool) {
	switch {
	case !rec.Enabled:
		return FireDisabled, false
	case !rec.HandledThrough.Before(at):
		return FireAlreadyHandled, false
	}
	return 0, true
}
