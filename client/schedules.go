package client

import (
	"context"
	"errors"
	"iter"
	"net/url"
)

// SchedulesService manages the schedules of agents: a cron expression in
// an IANA time zone, with the parameters of the runs it starts. The
// service (or the daemon) starts each run at its time; the runs a
// schedule starts have trigger type "scheduled" and carry its id
// (AgentRun.WorkflowScheduleID; on the daemon also the tag
// schedule:<id>).
type SchedulesService service

// Schedule is a schedule of an agent (the service's WorkflowSchedule).
type Schedule struct {
	WorkflowScheduleID  string `json:"workflow_schedule_id"`
	OrganizationID      string `json:"organization_id"`
	WorkflowPermanentID string `json:"workflow_permanent_id"`
	// CronExpression is five fields (minute hour day-of-month month
	// day-of-week); the daemon also takes six, seconds first, and the
	// descriptors @hourly, @daily, @weekly, @monthly and @yearly.
	CronExpression string `json:"cron_expression"`
	// Timezone is the IANA time zone the expression's times are read in.
	Timezone   string         `json:"timezone"`
	Enabled    bool           `json:"enabled"`
	Parameters map[string]any `json:"parameters"`
	// TemporalScheduleID is the hosted service's execution backend's id;
	// always null on the daemon.
	TemporalScheduleID *string `json:"temporal_schedule_id"`
	Name               *string `json:"name"`
	Description        *string `json:"description"`
	CreatedAt          Time    `json:"created_at"`
	ModifiedAt         Time    `json:"modified_at"`
	DeletedAt          *Time   `json:"deleted_at"`

	ScheduleActivity
}

// ScheduleActivity is the daemon's own account of what a schedule did
// (absent from the hosted service's answers): the latest run started and
// its fire time, the fire times skipped because the previous run had not
// ended, the fire times missed while the daemon was not running (a
// catch-up starts one run, for the latest of them, and counts the others
// here), and why the latest fire time started no run.
type ScheduleActivity struct {
	LastRunID     *string `json:"last_run_id,omitempty"`
	LastFireTime  *Time   `json:"last_fire_time,omitempty"`
	SkippedFires  int     `json:"skipped_fires,omitempty"`
	LastSkippedAt *Time   `json:"last_skipped_at,omitempty"`
	MissedFires   int     `json:"missed_fires,omitempty"`
	LastMissedAt  *Time   `json:"last_missed_at,omitempty"`
	LastError     *string `json:"last_error,omitempty"`
}

// ScheduleResponse is a schedule with its next fire times (the service's
// WorkflowScheduleResponse).
type ScheduleResponse struct {
	Schedule Schedule `json:"schedule"`
	// NextRuns are the next fire times, in UTC (empty while disabled).
	NextRuns []Time `json:"next_runs"`
}

// ScheduleRequest creates or replaces a schedule (the service's
// WorkflowScheduleUpsertRequest).
type ScheduleRequest struct {
	CronExpression string `json:"cron_expression"`
	Timezone       string `json:"timezone"`
	// Enabled defaults to true.
	Enabled *bool `json:"enabled,omitempty"`
	// Parameters are the runs' parameter values, checked against the
	// agent's parameters as a run's are.
	Parameters  map[string]any `json:"parameters,omitempty"`
	Name        *string        `json:"name,omitempty"`
	Description *string        `json:"description,omitempty"`
}

// OrganizationSchedule is a schedule in the organization-wide list (the
// service's OrganizationScheduleItem): with its agent's title and its
// next fire time.
type OrganizationSchedule struct {
	WorkflowScheduleID  string         `json:"workflow_schedule_id"`
	OrganizationID      string         `json:"organization_id"`
	WorkflowPermanentID string         `json:"workflow_permanent_id"`
	WorkflowTitle       string         `json:"workflow_title"`
	CronExpression      string         `json:"cron_expression"`
	Timezone            string         `json:"timezone"`
	Enabled             bool           `json:"enabled"`
	Parameters          map[string]any `json:"parameters"`
	Name                *string        `json:"name"`
	Description         *string        `json:"description"`
	NextRun             *Time          `json:"next_run"`
	CreatedAt           Time           `json:"created_at"`
	ModifiedAt          Time           `json:"modified_at"`

	// The daemon's own fields, as in Schedule.
	ScheduleActivity
}

// OrganizationScheduleList is one page of the organization-wide list.
type OrganizationScheduleList struct {
	Schedules  []*OrganizationSchedule `json:"schedules"`
	TotalCount int                     `json:"total_count"`
	Page       int                     `json:"page"`
	PageSize   int                     `json:"page_size"`
}

// ScheduleStatus filters the organization-wide list.
type ScheduleStatus string

// The statuses of a schedule.
const (
	ScheduleActive ScheduleStatus = "active" // enabled
	SchedulePaused ScheduleStatus = "paused" // disabled
)

// ListSchedulesOptions filter and page the organization-wide list.
type ListSchedulesOptions struct {
	Page     int // from 1; 0 means 1
	PageSize int // 1 to 100; 0 means the server default (10)
	Status   ScheduleStatus
	// Search matches the agent's title and the schedule's name.
	Search string
}

func checkScheduleRequest(method, agentID string, req *ScheduleRequest) error {
	if err := requireID("agent id", agentID); err != nil {
		return err
	}
	if req == nil {
		return errors.New("client: Schedules." + method + ": nil request")
	}
	return nil
}

func schedulePath(agentID, scheduleID, suffix string) string {
	if scheduleID == "" {
		return pathf("/v1/agents/%s/schedules", agentID)
	}
	return pathf("/v1/agents/%s/schedules/%s", agentID, scheduleID) + suffix
}

// Create creates a schedule of an agent (POST
// /v1/agents/{id}/schedules).
func (s *SchedulesService) Create(ctx context.Context, agentID string, req *ScheduleRequest, opts ...Option) (*ScheduleResponse, error) {
	if err := checkScheduleRequest("Create", agentID, req); err != nil {
		return nil, err
	}
	out := new(ScheduleResponse)
	_, err := s.client.do(ctx, request{method: "POST", path: schedulePath(agentID, "", ""), body: req}, out, opts)
	return nil2(out, err)
}

// List returns the schedules of an agent, oldest first (GET
// /v1/agents/{id}/schedules).
func (s *SchedulesService) List(ctx context.Context, agentID string, opts ...Option) ([]*Schedule, error) {
	if err := requireID("agent id", agentID); err != nil {
		return nil, err
	}
	var out struct {
		Schedules []*Schedule `json:"schedules"`
	}
	_, err := s.client.do(ctx, request{method: "GET", path: schedulePath(agentID, "", ""), idempotent: true}, &out, opts)
	return out.Schedules, err
}

// Get returns a schedule with its next fire times (GET
// /v1/agents/{id}/schedules/{schedule_id}).
func (s *SchedulesService) Get(ctx context.Context, agentID, scheduleID string, opts ...Option) (*ScheduleResponse, error) {
	return s.one(ctx, "GET", agentID, scheduleID, "", nil, opts)
}

// Update replaces a schedule's settings (PUT
// /v1/agents/{id}/schedules/{schedule_id}).
func (s *SchedulesService) Update(ctx context.Context, agentID, scheduleID string, req *ScheduleRequest, opts ...Option) (*ScheduleResponse, error) {
	if err := checkScheduleRequest("Update", agentID, req); err != nil {
		return nil, err
	}
	return s.one(ctx, "PUT", agentID, scheduleID, "", req, opts)
}

// Enable enables a schedule (POST …/schedules/{schedule_id}/enable). Its
// fire times while it was disabled are not caught up.
func (s *SchedulesService) Enable(ctx context.Context, agentID, scheduleID string, opts ...Option) (*ScheduleResponse, error) {
	return s.one(ctx, "POST", agentID, scheduleID, "/enable", nil, opts)
}

// Disable disables a schedule (POST …/schedules/{schedule_id}/disable).
func (s *SchedulesService) Disable(ctx context.Context, agentID, scheduleID string, opts ...Option) (*ScheduleResponse, error) {
	return s.one(ctx, "POST", agentID, scheduleID, "/disable", nil, opts)
}

// Delete deletes a schedule (DELETE
// /v1/agents/{id}/schedules/{schedule_id}). The runs it started stay.
func (s *SchedulesService) Delete(ctx context.Context, agentID, scheduleID string, opts ...Option) error {
	if err := requireID("agent id", agentID); err != nil {
		return err
	}
	if err := requireID("schedule id", scheduleID); err != nil {
		return err
	}
	_, err := s.client.do(ctx, request{method: "DELETE", path: schedulePath(agentID, scheduleID, ""), idempotent: true}, nil, opts)
	return err
}

func (s *SchedulesService) one(ctx context.Context, method, agentID, scheduleID, suffix string, body any, opts []Option) (*ScheduleResponse, error) {
	if err := requireID("agent id", agentID); err != nil {
		return nil, err
	}
	if err := requireID("schedule id", scheduleID); err != nil {
		return nil, err
	}
	out := new(ScheduleResponse)
	req := request{method: method, path: schedulePath(agentID, scheduleID, suffix), idempotent: true}
	if body != nil {
		req.body = body
	}
	_, err := s.client.do(ctx, req, out, opts)
	return nil2(out, err)
}

// ListAll returns one page of the organization's schedules, of every
// agent (GET /v1/schedules); o may be nil.
func (s *SchedulesService) ListAll(ctx context.Context, o *ListSchedulesOptions, opts ...Option) (*OrganizationScheduleList, error) {
	q := url.Values{}
	if o != nil {
		setInt(q, "page", o.Page)
		setInt(q, "page_size", o.PageSize)
		setString(q, "status", string(o.Status))
		setString(q, "search", o.Search)
	}
	out := new(OrganizationScheduleList)
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/schedules", query: q, idempotent: true}, out, opts)
	return nil2(out, err)
}

// All returns an iterator over every schedule of the organization
// matching o, page after page.
func (s *SchedulesService) All(ctx context.Context, o *ListSchedulesOptions, opts ...Option) iter.Seq2[*OrganizationSchedule, error] {
	return paginate(o, func(o *ListSchedulesOptions) ([]*OrganizationSchedule, error) {
		page, err := s.ListAll(ctx, o, opts...)
		if err != nil {
			return nil, err
		}
		return page.Schedules, nil
	})
}

func (o *ListSchedulesOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }

// ScheduleTag is the tag the daemon puts on the runs a schedule starts:
// "schedule:<id>", which run lists filter on (ListRunsOptions.Tags).
func ScheduleTag(scheduleID string) string { return "schedule:" + scheduleID }
