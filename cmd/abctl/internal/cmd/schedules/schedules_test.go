package schedules

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
)

const testKey = "abk_schedules_cli_test_key"

// daemonFactory starts a real daemon and returns a Factory whose client
// talks to it, and that client.
func daemonFactory(t *testing.T) (*cmdutil.Factory, *cmdtest.Streams, *client.Client) {
	t.Helper()
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	f, streams := cmdtest.NewFactory(t, map[string]string{"ABCTL_BASE_URL": "http://" + addr, "ABCTL_API_KEY": testKey})
	return f, streams, c
}

func TestSchedulesCommandsAgainstADaemon(t *testing.T) {
	f, streams, c := daemonFactory(t)
	agent, err := c.Agents.Create(t.Context(), &client.AgentDefinition{
		Title: "Invoices",
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{{Key: "month", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString}},
			Blocks:     client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wpid := agent.WorkflowPermanentID

	if err := cmdtest.Exec(NewCmdCreate(f, nil), wpid, "--cron", "0 9 * * MON-FRI", "--timezone", "Europe/Berlin",
		"-p", "month=current", "--name", "weekdays", "-o", "json"); err != nil {
		t.Fatalf("create: %v", err)
	}
	var created client.ScheduleResponse
	if err := json.Unmarshal(streams.Out.Bytes(), &created); err != nil {
		t.Fatalf("create -o json: %v\n%s", err, streams.Out)
	}
	id := created.Schedule.WorkflowScheduleID
	if !strings.HasPrefix(id, "wfs_") || len(created.NextRuns) == 0 || created.Schedule.Parameters["month"] != "current" {
		t.Errorf("created: %+v", created)
	}

	// The service's 422 reaches the user with the field and the reason.
	err = cmdtest.Exec(NewCmdCreate(f, nil), wpid, "--cron", "0 25 * * *", "--timezone", "UTC", "-p", "month=x")
	if err == nil || !strings.Contains(err.Error(), "cron_expression") {
		t.Errorf("a bad expression: %v", err)
	}
	err = cmdtest.Exec(NewCmdCreate(f, nil), wpid, "--cron", "@daily", "--timezone", "Moon/Base", "-p", "month=x")
	if err == nil || !strings.Contains(err.Error(), "timezone") {
		t.Errorf("a bad zone: %v", err)
	}

	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdList(f, nil)); err != nil {
		t.Fatal(err)
	}
	if out := streams.Out.String(); !strings.Contains(out, id) || !strings.Contains(out, "Invoices") || !strings.Contains(out, "Europe/Berlin") {
		t.Errorf("list:\n%s", out)
	}
	// The list of one agent, and one schedule's get, show the same row
	// as the organization's list: the agent's title, the next run, the
	// fire times skipped and missed.
	orgRow := rowOf(t, streams.Out.String(), id)
	for _, args := range [][]string{{wpid}, {wpid, id}} {
		streams.Out.Reset()
		cmd := NewCmdList(f, nil)
		if len(args) == 2 {
			cmd = NewCmdGet(f, nil)
		}
		if err := cmdtest.Exec(cmd, args...); err != nil {
			t.Fatal(err)
		}
		if row := rowOf(t, streams.Out.String(), id); row != orgRow {
			t.Errorf("%v shows\n%s\nthe organization's list\n%s", args, row, orgRow)
		}
	}
	// id, agent, cron, timezone, enabled, next run, not run, name
	if c := strings.Split(orgRow, "\t"); len(c) != 8 || !strings.HasSuffix(c[1], " (Invoices)") || !strings.HasPrefix(c[5], "20") || c[6] != "" {
		t.Errorf("the row has no title, next run or fires not run: %q", orgRow)
	}

	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdSetEnabled(f, false, nil), wpid, "schedule/"+id, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var off client.ScheduleResponse
	if err := json.Unmarshal(streams.Out.Bytes(), &off); err != nil || off.Schedule.Enabled {
		t.Errorf("disable: %+v %v", off, err)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdList(f, nil), "--status", "paused", "-o", "name"); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(streams.Out.String()); got != "schedule/"+id {
		t.Errorf("paused, by name: %q", got)
	}
	if err := cmdtest.Exec(NewCmdSetEnabled(f, true, nil), wpid, id); err != nil {
		t.Fatal(err)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdGet(f, nil), wpid, id, "-o", "yaml"); err != nil {
		t.Fatal(err)
	}
	if out := streams.Out.String(); !strings.Contains(out, "enabled: true") || !strings.Contains(out, "next_runs:") {
		t.Errorf("get -o yaml:\n%s", out)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdList(f, nil), wpid, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var ofAgent []client.Schedule
	if err := json.Unmarshal(streams.Out.Bytes(), &ofAgent); err != nil || len(ofAgent) != 1 {
		t.Errorf("list AGENT -o json: %v\n%s", err, streams.Out)
	}

	// Deleting asks, and needs --yes without a terminal.
	if err := cmdtest.Exec(NewCmdDelete(f, nil), wpid, id); !cmdtest.IsUsage(err) {
		t.Errorf("delete without --yes: %v", err)
	}
	if err := cmdtest.Exec(NewCmdDelete(f, nil), wpid, id, "--yes"); err != nil {
		t.Fatal(err)
	}
	if err := cmdtest.Exec(NewCmdGet(f, nil), wpid, id); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("get after delete: %v", err)
	}
}

func TestSchedulesCommandsCheckTheirInput(t *testing.T) {
	// Every problem here is found before the service is asked: the base
	// URL is a port where nothing listens.
	f, _ := cmdtest.NewFactory(t, map[string]string{"ABCTL_BASE_URL": "http://127.0.0.1:1", "ABCTL_API_KEY": testKey})
	for _, args := range [][]string{
		{"wpid_1", "--timezone", "UTC"},
		{"wpid_1", "--cron", "@daily"},
		{"wpid_1", "--cron", "@daily", "--timezone", "UTC", "-p", "novalue"},
	} {
		if err := cmdtest.Exec(NewCmdCreate(f, nil), args...); !cmdtest.IsUsage(err) {
			t.Errorf("create %v: %v, want a usage error", args, err)
		}
	}
	if err := cmdtest.Exec(NewCmdList(f, nil), "--status", "sleeping"); !cmdtest.IsUsage(err) {
		t.Errorf("list --status sleeping: %v", err)
	}
	if err := cmdtest.Exec(NewCmdList(f, nil), "wpid_1", "--search", "x"); !cmdtest.IsUsage(err) {
		t.Errorf("list AGENT --search: %v", err)
	}
	if err := cmdtest.Exec(NewCmdGet(f, nil), "wpid_1", "a b"); !cmdtest.IsUsage(err) {
		t.Errorf("get with a bad id: %v", err)
	}
}

// rowOf is the line of a table (tab-separated, as printed to a pipe) that
// starts with id.
func rowOf(t *testing.T, table, id string) string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, id+"\t") {
			return line
		}
	}
	t.Errorf("no row of %s in\n%s", id, table)
	return ""
}

func TestNotRun(t *testing.T) {
	for _, c := range []struct {
		a    client.ScheduleActivity
		want string
	}{
		{client.ScheduleActivity{}, ""},
		{client.ScheduleActivity{MissedFires: 600}, "600 missed"},
		{client.ScheduleActivity{SkippedFires: 1}, "1 skipped"},
		{client.ScheduleActivity{MissedFires: 2, SkippedFires: 3}, "2 missed, 3 skipped"},
	} {
		if got := notRun(c.a); got != c.want {
			t.Errorf("notRun(%+v) = %q, want %q", c.a, got, c.want)
		}
	}
}
