package mcpserver

import (
	"context"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The schedule tools list, create, enable, disable and delete the
// schedules that start an agent's runs at cron times.

// ScheduleListInput is the input of skyvern_schedule_list.
type ScheduleListInput struct {
	WorkflowID string `json:"workflow_id,omitempty" jsonschema:"only the schedules of this agent (wpid_...); empty lists the organization's"`
	Status     string `json:"status,omitempty" jsonschema:"only active (enabled) or paused (disabled) schedules, in the organization's list"`
	Page       int    `json:"page,omitempty" jsonschema:"page number, from 1 (the organization's list)"`
	PageSize   int    `json:"page_size,omitempty" jsonschema:"schedules per page (the organization's list)"`
}

// ScheduleList is the answer of skyvern_schedule_list.
type ScheduleList struct {
	Schedules  []ScheduleInfo `json:"schedules" jsonschema:"the schedules, oldest first"`
	TotalCount int            `json:"total_count" jsonschema:"how many schedules match in all"`
}

// ScheduleInfo is a schedule as the tools answer it.
type ScheduleInfo struct {
	WorkflowScheduleID string         `json:"workflow_schedule_id" jsonschema:"the schedule's id (wfs_...)"`
	WorkflowID         string         `json:"workflow_id" jsonschema:"the agent it runs (wpid_...)"`
	WorkflowTitle      string         `json:"workflow_title,omitempty"`
	CronExpression     string         `json:"cron_expression"`
	Timezone           string         `json:"timezone" jsonschema:"the IANA time zone the expression is read in"`
	Enabled            bool           `json:"enabled"`
	Parameters         map[string]any `json:"parameters,omitempty" jsonschema:"the parameters of the runs it starts"`
	Name               string         `json:"name,omitempty"`
	NextRuns           []string       `json:"next_runs,omitempty" jsonschema:"the next fire times (RFC 3339, UTC)"`
}

// ScheduleCreateInput is the input of skyvern_schedule_create.
type ScheduleCreateInput struct {
	WorkflowID     string         `json:"workflow_id" jsonschema:"the agent to run (wpid_...)"`
	CronExpression string         `json:"cron_expression" jsonschema:"five cron fields (minute hour day-of-month month day-of-week), e.g. '0 9 * * MON-FRI', or @hourly, @daily, @weekly, @monthly"`
	Timezone       string         `json:"timezone" jsonschema:"the IANA time zone of the times, e.g. UTC, Europe/Berlin, America/New_York"`
	Parameters     map[string]any `json:"parameters,omitempty" jsonschema:"the agent's parameter values for every run"`
	Name           string         `json:"name,omitempty" jsonschema:"a name for the schedule"`
	Enabled        *bool          `json:"enabled,omitempty" jsonschema:"false creates it disabled; default true"`
}

// ScheduleIDInput names one schedule of an agent.
type ScheduleIDInput struct {
	WorkflowID         string `json:"workflow_id" jsonschema:"the schedule's agent (wpid_...)"`
	WorkflowScheduleID string `json:"workflow_schedule_id" jsonschema:"the schedule's id (wfs_...)"`
}

// ScheduleDeleteResult reports a schedule deletion.
type ScheduleDeleteResult struct {
	WorkflowScheduleID string `json:"workflow_schedule_id"`
	Deleted            bool   `json:"deleted"`
}

// scheduleTools list, create, enable, disable and delete schedules.
type scheduleTools struct {
	schedules *client.SchedulesService
}

func (t *scheduleTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_schedule_list",
		title: "List schedules",
		description: "List the schedules that start agents' runs at cron times: of one agent (workflow_id), or of the whole " +
			"organization, a page at a time, with their next fire time.",
		annotations: readOnly(),
		refine: func(p map[string]*jsonschema.Schema) {
			enum(p["status"], "active", "paused")
			bounds(p["page"], 1, 0)
			bounds(p["page_size"], 1, 100)
		},
	}, t.scheduleList)
	addTool(s, spec{
		name:  "skyvern_schedule_create",
		title: "Schedule an agent",
		description: "Create a schedule that runs an agent at the times of a cron expression in a time zone, with the given " +
			"parameters. The first run is at the first of those times after now. Answers the schedule with its next fire times.",
		annotations: writes(false),
		refine:      nonEmptyArgs("workflow_id", "cron_expression", "timezone"),
	}, t.scheduleCreate)
	for _, enabled := range []bool{true, false} {
		name, title, desc := "skyvern_schedule_disable", "Disable a schedule", "Stop a schedule from starting runs, keeping it to enable later."
		if enabled {
			name, title, desc = "skyvern_schedule_enable", "Enable a schedule", "Let a disabled schedule start runs again, from now on: the times it missed are not run."
		}
		addTool(s, spec{
			name: name, title: title, description: desc, annotations: writes(true),
			refine: nonEmptyArgs("workflow_id", "workflow_schedule_id"),
		}, func(ctx context.Context, in ScheduleIDInput) (*ScheduleInfo, error) {
			if enabled {
				return answerWith(scheduleInfo)(t.schedules.Enable(ctx, in.WorkflowID, in.WorkflowScheduleID))
			}
			return answerWith(scheduleInfo)(t.schedules.Disable(ctx, in.WorkflowID, in.WorkflowScheduleID))
		})
	}
	addTool(s, spec{
		name:        "skyvern_schedule_delete",
		title:       "Delete a schedule",
		description: "Delete a schedule for good; the runs it started stay. Confirm with the user first, or disable it instead.",
		annotations: destroys(true),
		refine:      nonEmptyArgs("workflow_id", "workflow_schedule_id"),
	}, t.scheduleDelete)
}

func (t *scheduleTools) scheduleList(ctx context.Context, in ScheduleListInput) (*ScheduleList, error) {
	if in.WorkflowID != "" {
		list, err := t.schedules.List(ctx, in.WorkflowID)
		if err != nil {
			return nil, err
		}
		return &ScheduleList{Schedules: shapeAll(list, agentScheduleInfo), TotalCount: len(list)}, nil
	}
	page, err := t.schedules.ListAll(ctx, &client.ListSchedulesOptions{Page: in.Page, PageSize: in.PageSize, Status: client.ScheduleStatus(in.Status)})
	if err != nil {
		return nil, err
	}
	return &ScheduleList{Schedules: shapeAll(page.Schedules, orgScheduleInfo), TotalCount: page.TotalCount}, nil
}

func (t *scheduleTools) scheduleCreate(ctx context.Context, in ScheduleCreateInput) (*ScheduleInfo, error) {
	req := &client.ScheduleRequest{CronExpression: in.CronExpression, Timezone: in.Timezone, Parameters: in.Parameters, Enabled: in.Enabled}
	if in.Name != "" {
		req.Name = &in.Name
	}
	return answerWith(scheduleInfo)(t.schedules.Create(ctx, in.WorkflowID, req))
}

func (t *scheduleTools) scheduleDelete(ctx context.Context, in ScheduleIDInput) (*ScheduleDeleteResult, error) {
	return deleted(t.schedules.Delete(ctx, in.WorkflowID, in.WorkflowScheduleID),
		&ScheduleDeleteResult{WorkflowScheduleID: in.WorkflowScheduleID, Deleted: true})
}

// scheduleInfo describes a schedule with its next fire times.
func scheduleInfo(r *client.ScheduleResponse) ScheduleInfo {
	s := r.Schedule
	info := ScheduleInfo{
		WorkflowScheduleID: s.WorkflowScheduleID, WorkflowID: s.WorkflowPermanentID, CronExpression: s.CronExpression,
		Timezone: s.Timezone, Enabled: s.Enabled, Parameters: s.Parameters, Name: ptr.Value(s.Name),
	}
	for _, n := range r.NextRuns {
		info.NextRuns = append(info.NextRuns, n.UTC().Format(time.RFC3339))
	}
	return info
}

// agentScheduleInfo describes a schedule of an agent's list, which gives
// no fire times.
func agentScheduleInfo(s *client.Schedule) ScheduleInfo {
	return scheduleInfo(&client.ScheduleResponse{Schedule: *s})
}

// orgScheduleInfo describes a schedule of the organization's list, with
// its agent's title and next fire time.
func orgScheduleInfo(s *client.OrganizationSchedule) ScheduleInfo {
	info := ScheduleInfo{
		WorkflowScheduleID: s.WorkflowScheduleID, WorkflowID: s.WorkflowPermanentID, WorkflowTitle: s.WorkflowTitle,
		CronExpression: s.CronExpression, Timezone: s.Timezone, Enabled: s.Enabled, Parameters: s.Parameters,
		Name: ptr.Value(s.Name),
	}
	if s.NextRun != nil {
		info.NextRuns = []string{s.NextRun.UTC().Format(time.RFC3339)}
	}
	return info
}
