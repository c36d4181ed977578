package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/scheduler"
	"github.com/abctl/abctl/daemon/store"
)

// Schedules: POST/GET /v1/agents/{id}/schedules,
// GET/PUT/DELETE /v1/agents/{id}/schedules/{schedule_id}, POST …/enable and
// …/disable, and the organization-wide GET /v1/schedules. The runs are
// started by package daemon/scheduler; the rules (daylight saving,
// overlap, catch-up) are its, documented in docs/schedules.md.

// ScheduleClock is the scheduler as the schedule routes see it: its clock
// (a new or re-enabled schedule fires from its present, the next fire
// times are counted from it) and a way to make it plan again.
type ScheduleClock interface {
	Now() time.Time
	Wake()
}

// SetScheduler gives the schedule routes the daemon's scheduler. Call it
// before serving.
func (s *Server) SetScheduler(sc ScheduleClock) { s.scheduler.clock = sc }

// schedulerRef is where the schedule routes find the daemon's scheduler,
// which SetScheduler gives once the routes are built; clock is nil until
// then, and on a server without one.
type schedulerRef struct{ clock ScheduleClock }

// nextRunsShown is how many fire times a schedule's answer lists.
const nextRunsShown = 5

func (s schedulesAPI) scheduleNow() time.Time {
	if s.scheduler.clock != nil {
		return s.scheduler.clock.Now()
	}
	return time.Now()
}

func (s schedulesAPI) wakeScheduler() {
	if s.scheduler.clock != nil {
		s.scheduler.clock.Wake()
	}
}

// scheduleBody is the body of a create or an update (upstream
// WorkflowScheduleUpsertRequest).
type scheduleBody struct {
	CronExpression *string        `json:"cron_expression"`
	Timezone       *string        `json:"timezone"`
	Enabled        *bool          `json:"enabled"`
	Parameters     map[string]any `json:"parameters"`
	Name           *string        `json:"name"`
	Description    *string        `json:"description"`
}

// readSchedule reads and checks a create or update body for agent wpid
// (which must exist: 404 otherwise); every problem is reported at once.
func (s schedulesAPI) readSchedule(r *http.Request, orgID, wpid string) (*store.ScheduleInput, error) {
	var body scheduleBody
	if err := decodeJSONBody(r, &body); err != nil {
		return nil, err
	}
	var errs []client.ValidationError
	switch {
	case body.CronExpression == nil:
		errs = append(errs, missingField("body", "cron_expression"))
	default:
		if _, err := scheduler.Parse(*body.CronExpression); err != nil {
			errs = append(errs, valueError(err.Error(), *body.CronExpression, "body", "cron_expression"))
		}
	}
	switch {
	case body.Timezone == nil:
		errs = append(errs, missingField("body", "timezone"))
	default:
		if _, err := scheduler.LoadZone(*body.Timezone); err != nil {
			errs = append(errs, valueError(err.Error(), *body.Timezone, "body", "timezone"))
		}
	}
	// The expression and the zone are checked before the agent is looked
	// up, as the hosted service validates a body before its handler runs.
	if err := invalid(errs); err != nil {
		return nil, err
	}
	agent, err := s.agents.Get(r.Context(), orgID, wpid, 0)
	if err != nil {
		return nil, err
	}
	params := map[string]json.RawMessage{}
	if _, err := resolveParameters(agent, body.Parameters); err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Kind == KindInternal {
			return nil, err
		}
		errs = append(errs, valueError("the runs could not start with these parameters: "+e.Detail, nil, "body", "parameters"))
	}
	for k, v := range body.Parameters {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		params[k] = raw
	}
	if err := invalid(errs); err != nil {
		return nil, err
	}
	in := &store.ScheduleInput{
		Cron: *body.CronExpression, Timezone: *body.Timezone, Enabled: body.Enabled == nil || *body.Enabled,
		Parameters: params, Name: body.Name, Description: body.Description,
		From: s.scheduleNow(), KeyHash: keyHash(r), BaseURL: baseURL(r),
	}
	if len(in.Parameters) == 0 {
		in.Parameters = nil
	}
	return in, nil
}

// scheduleResult is a stored schedule as answers show it.
func scheduleResult(rec *store.ScheduleRecord) client.Schedule {
	out := client.Schedule{
		WorkflowScheduleID: rec.ID, OrganizationID: rec.OrgID, WorkflowPermanentID: rec.AgentID,
		CronExpression: rec.Cron, Timezone: rec.Timezone, Enabled: rec.Enabled,
		Parameters: scheduleParams(rec), Name: rec.Name, Description: rec.Description,
		CreatedAt: rec.CreatedAt, ModifiedAt: rec.ModifiedAt,
		ScheduleActivity: scheduleActivity(rec),
	}
	return out
}

// scheduleActivity is the daemon's account of what a stored schedule
// did, as answers show it.
func scheduleActivity(rec *store.ScheduleRecord) client.ScheduleActivity {
	out := client.ScheduleActivity{SkippedFires: rec.SkippedFires, MissedFires: rec.MissedFires}
	if rec.LastRunID != "" {
		out.LastRunID = client.Ptr(rec.LastRunID)
	}
	if rec.LastFireTime != nil {
		out.LastFireTime = client.Ptr(client.NewTime(*rec.LastFireTime))
	}
	if rec.LastSkippedAt != nil {
		out.LastSkippedAt = client.Ptr(client.NewTime(*rec.LastSkippedAt))
	}
	if rec.LastMissedAt != nil {
		out.LastMissedAt = client.Ptr(client.NewTime(*rec.LastMissedAt))
	}
	if rec.LastError != "" {
		out.LastError = client.Ptr(rec.LastError)
	}
	return out
}

func scheduleParams(rec *store.ScheduleRecord) map[string]any {
	if len(rec.Parameters) == 0 {
		return nil
	}
	out := make(map[string]any, len(rec.Parameters))
	for k, raw := range rec.Parameters {
		out[k] = raw
	}
	return out
}

// nextRuns returns the next n fire times of an enabled schedule, counted
// from the scheduler's present (or from its mark, when later); none for a
// disabled one.
func (s schedulesAPI) nextRuns(rec *store.ScheduleRecord, n int) []client.Time {
	out := []client.Time{}
	if !rec.Enabled {
		return out
	}
	spec, err := scheduler.Parse(rec.Cron)
	if err != nil {
		return out
	}
	loc, err := scheduler.LoadZone(rec.Timezone)
	if err != nil {
		return out
	}
	from := s.scheduleNow()
	if rec.HandledThrough.After(from) {
		from = rec.HandledThrough
	}
	for _, t := range spec.NextN(loc, from, n) {
		out = append(out, client.NewTime(t))
	}
	return out
}

func (s schedulesAPI) writeSchedule(w http.ResponseWriter, rec *store.ScheduleRecord) {
	writeJSON(w, http.StatusOK, client.ScheduleResponse{Schedule: scheduleResult(rec), NextRuns: s.nextRuns(rec, nextRunsShown)})
}

// handleCreateSchedule serves POST /v1/agents/{id}/schedules.
func (s schedulesAPI) handleCreateSchedule(w http.ResponseWriter, r *http.Request) {
	org, wpid := organization(r.Context()).ID, r.PathValue("id")
	in, err := s.readSchedule(r, org, wpid)
	if err != nil {
		s.error(w, r, err)
		return
	}
	rec, err := s.schedules.Create(r.Context(), org, wpid, in)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.wakeScheduler()
	s.writeSchedule(w, rec)
}

// handleListSchedules serves GET /v1/agents/{id}/schedules.
func (s schedulesAPI) handleListSchedules(w http.ResponseWriter, r *http.Request) {
	recs, err := s.schedules.List(r.Context(), organization(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := struct {
		Schedules []client.Schedule `json:"schedules"`
	}{Schedules: make([]client.Schedule, 0, len(recs))}
	for _, rec := range recs {
		out.Schedules = append(out.Schedules, scheduleResult(rec))
	}
	writeJSON(w, http.StatusOK, out)
}

// handleGetSchedule serves GET /v1/agents/{id}/schedules/{schedule_id}.
func (s schedulesAPI) handleGetSchedule(w http.ResponseWriter, r *http.Request) {
	rec, err := s.schedules.Get(r.Context(), organization(r.Context()).ID, r.PathValue("id"), r.PathValue("schedule_id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.writeSchedule(w, rec)
}

// handleUpdateSchedule serves PUT /v1/agents/{id}/schedules/{schedule_id}.
func (s schedulesAPI) handleUpdateSchedule(w http.ResponseWriter, r *http.Request) {
	org, wpid := organization(r.Context()).ID, r.PathValue("id")
	in, err := s.readSchedule(r, org, wpid)
	if err != nil {
		s.error(w, r, err)
		return
	}
	rec, err := s.schedules.Update(r.Context(), org, wpid, r.PathValue("schedule_id"), in)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.wakeScheduler()
	s.writeSchedule(w, rec)
}

// handleSetScheduleEnabled serves POST …/schedules/{schedule_id}/enable
// and …/disable.
func (s schedulesAPI) handleSetScheduleEnabled(enabled bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec, err := s.schedules.SetEnabled(r.Context(), organization(r.Context()).ID,
			r.PathValue("id"), r.PathValue("schedule_id"), enabled, s.scheduleNow())
		if err != nil {
			s.error(w, r, err)
			return
		}
		s.wakeScheduler()
		s.writeSchedule(w, rec)
	}
}

// handleDeleteSchedule serves DELETE /v1/agents/{id}/schedules/{schedule_id}.
func (s schedulesAPI) handleDeleteSchedule(w http.ResponseWriter, r *http.Request) {
	err := s.schedules.Delete(r.Context(), organization(r.Context()).ID, r.PathValue("id"), r.PathValue("schedule_id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

var scheduleStatuses = []string{string(client.ScheduleActive), string(client.SchedulePaused)}

// handleListAllSchedules serves GET /v1/schedules.
func (s schedulesAPI) handleListAllSchedules(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	page, size := qr.paging(10, 0, 100)
	status := qr.string("status")
	search := qr.string("search")
	err := qr.err()
	if err == nil && status != "" && !contains(scheduleStatuses, status) {
		err = invalid([]client.ValidationError{enumError(scheduleStatuses, status, "query", "status")})
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	q := store.ScheduleQuery{Page: page, PageSize: size, Search: search}
	if status != "" {
		q.Enabled = client.Ptr(status == string(client.ScheduleActive))
	}
	items, total, err := s.schedules.ListAll(r.Context(), organization(r.Context()).ID, q)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := client.OrganizationScheduleList{Schedules: make([]*client.OrganizationSchedule, 0, len(items)), TotalCount: total, Page: page, PageSize: size}
	for _, it := range items {
		rec := it.ScheduleRecord
		item := &client.OrganizationSchedule{
			WorkflowScheduleID: rec.ID, OrganizationID: rec.OrgID, WorkflowPermanentID: rec.AgentID,
			WorkflowTitle: it.AgentTitle, CronExpression: rec.Cron, Timezone: rec.Timezone, Enabled: rec.Enabled,
			Parameters: scheduleParams(rec), Name: rec.Name, Description: rec.Description,
			CreatedAt: rec.CreatedAt, ModifiedAt: rec.ModifiedAt, ScheduleActivity: scheduleActivity(rec),
		}
		if next := s.nextRuns(rec, 1); len(next) > 0 {
			item.NextRun = &next[0]
		}
		out.Schedules = append(out.Schedules, item)
	}
	writeJSON(w, http.StatusOK, out)
}
