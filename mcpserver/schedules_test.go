package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

// TestSchedules: the tools create, list, disable, enable and delete a
// schedule of an agent, and pass the service's 422 on.
func TestSchedules(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		agent, err := e.c.Agents.Create(t.Context(), &client.AgentDefinition{
			Title: "Nightly check",
			WorkflowDefinition: client.WorkflowDefinition{
				Parameters: []client.Parameter{{Key: "url", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString}},
				Blocks:     client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
			},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wpid := agent.WorkflowPermanentID
		created := call[mcpserver.ScheduleInfo](t, s, "skyvern_schedule_create", map[string]any{
			"workflow_id": wpid, "cron_expression": "30 2 * * *", "timezone": "Europe/Berlin",
			"parameters": map[string]any{"url": "https://example.com/status"}, "name": "nightly",
		})
		if !strings.HasPrefix(created.WorkflowScheduleID, "wfs_") || !created.Enabled || len(created.NextRuns) != 5 || created.Parameters["url"] != "https://example.com/status" {
			t.Fatalf("created: %+v", created)
		}
		ids := map[string]any{"workflow_id": wpid, "workflow_schedule_id": created.WorkflowScheduleID}
		if off := call[mcpserver.ScheduleInfo](t, s, "skyvern_schedule_disable", ids); off.Enabled || len(off.NextRuns) != 0 {
			t.Errorf("disabled: %+v", off)
		}
		if l := call[mcpserver.ScheduleList](t, s, "skyvern_schedule_list", map[string]any{"status": "paused"}); l.TotalCount != 1 || l.Schedules[0].WorkflowTitle != "Nightly check" {
			t.Errorf("paused list: %+v", l)
		}
		if on := call[mcpserver.ScheduleInfo](t, s, "skyvern_schedule_enable", ids); !on.Enabled {
			t.Errorf("enabled: %+v", on)
		}
		if l := call[mcpserver.ScheduleList](t, s, "skyvern_schedule_list", map[string]any{"workflow_id": wpid}); l.TotalCount != 1 || l.Schedules[0].Name != "nightly" {
			t.Errorf("the agent's list: %+v", l)
		}
		msg := callError(t, s, "skyvern_schedule_create", map[string]any{"workflow_id": wpid, "cron_expression": "every night", "timezone": "UTC",
			"parameters": map[string]any{"url": "x"}})
		if !strings.Contains(msg, "422") || !strings.Contains(msg, "cron") {
			t.Errorf("a bad expression: %s", msg)
		}
		if d := call[mcpserver.ScheduleDeleteResult](t, s, "skyvern_schedule_delete", ids); !d.Deleted {
			t.Errorf("delete: %+v", d)
		}
		if msg := callError(t, s, "skyvern_schedule_enable", ids); !strings.Contains(msg, "404") {
			t.Errorf("enable a deleted schedule: %s", msg)
		}
	})
}
