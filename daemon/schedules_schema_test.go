package daemon_test

import (
	"testing"

	"github.com/abctl/abctl/client"
)

// The schedule operations, checked against the upstream schema by
// TestResponsesMatchTheUpstreamSchema with the rest.
func init() {
	served = append(served,
		"POST /v1/agents/{workflow_permanent_id}/schedules",
		"GET /v1/agents/{workflow_permanent_id}/schedules",
		"GET /v1/agents/{workflow_permanent_id}/schedules/{workflow_schedule_id}",
		"PUT /v1/agents/{workflow_permanent_id}/schedules/{workflow_schedule_id}",
		"DELETE /v1/agents/{workflow_permanent_id}/schedules/{workflow_schedule_id}",
		"POST /v1/agents/{workflow_permanent_id}/schedules/{workflow_schedule_id}/enable",
		"POST /v1/agents/{workflow_permanent_id}/schedules/{workflow_schedule_id}/disable",
		"GET /v1/schedules",
	)
	moreExercises = append(moreExercises, exerciseSchedules)
}

func exerciseSchedules(t *testing.T, c *client.Client, raw func(method, path, body string) int) {
	ctx := t.Context()
	agent, err := c.Agents.Create(ctx, definition("Scheduled agent"), nil)
	if err != nil {
		t.Fatal(err)
	}
	wpid := agent.WorkflowPermanentID
	params := map[string]any{"email": "ada@example.com"}
	s, err := c.Schedules.Create(ctx, wpid, &client.ScheduleRequest{CronExpression: "0 9 * * MON-FRI", Timezone: "Europe/Berlin",
		Parameters: params, Name: client.Ptr("weekdays"), Description: client.Ptr("the morning report")})
	if err != nil {
		t.Fatalf("create schedule: %v", err)
	}
	id := s.Schedule.WorkflowScheduleID
	bare, err := c.Schedules.Create(ctx, wpid, &client.ScheduleRequest{CronExpression: "@daily", Timezone: "UTC", Parameters: params, Enabled: client.Ptr(false)})
	if err != nil {
		t.Fatalf("create a disabled schedule: %v", err)
	}
	if _, err := c.Schedules.List(ctx, wpid); err != nil {
		t.Errorf("list: %v", err)
	}
	if _, err := c.Schedules.Get(ctx, wpid, id); err != nil {
		t.Errorf("get: %v", err)
	}
	if _, err := c.Schedules.Update(ctx, wpid, id, &client.ScheduleRequest{CronExpression: "30 2 * * *", Timezone: "America/New_York", Parameters: params}); err != nil {
		t.Errorf("update: %v", err)
	}
	if _, err := c.Schedules.Disable(ctx, wpid, id); err != nil {
		t.Errorf("disable: %v", err)
	}
	if _, err := c.Schedules.Enable(ctx, wpid, id); err != nil {
		t.Errorf("enable: %v", err)
	}
	for _, o := range []*client.ListSchedulesOptions{nil, {Status: client.SchedulePaused, PageSize: 1}, {Search: "scheduled", Page: 2, PageSize: 1}} {
		if _, err := c.Schedules.ListAll(ctx, o); err != nil {
			t.Errorf("list all %+v: %v", o, err)
		}
	}
	if err := c.Schedules.Delete(ctx, wpid, bare.Schedule.WorkflowScheduleID); err != nil {
		t.Errorf("delete: %v", err)
	}

	// Failures: 422 for a bad expression, zone, status or page size; 404
	// for an unknown agent or schedule.
	base := "/v1/agents/" + wpid + "/schedules"
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"POST", base, `{"cron_expression": "99 * * * *", "timezone": "UTC"}`, 422},
		{"POST", base, `{"cron_expression": "@daily", "timezone": "Nowhere/Land"}`, 422},
		{"POST", base, `{"timezone": "UTC"}`, 422},
		{"PUT", base + "/" + id, `{"cron_expression": "@daily"}`, 422},
		{"GET", "/v1/schedules?status=sleeping", "", 422},
		{"GET", "/v1/schedules?page_size=101", "", 422},
		{"POST", "/v1/agents/wpid_404/schedules", `{"cron_expression": "@daily", "timezone": "UTC"}`, 404},
		{"GET", "/v1/agents/wpid_404/schedules", "", 404},
		{"GET", base + "/wfs_404", "", 404},
		{"POST", base + "/wfs_404/enable", "", 404},
		{"DELETE", base + "/wfs_404", "", 404},
	} {
		if got := raw(tc.method, tc.path, tc.body); got != tc.want {
			t.Errorf("%s %s %s: %d, want %d", tc.method, tc.path, tc.body, got, tc.want)
		}
	}
}
