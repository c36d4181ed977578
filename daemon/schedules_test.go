package daemon_test

// Agent schedules through the client over real HTTP, on a real daemon
// (daemon.Run) and a real bbolt file: the routes and their errors, and the
// scheduler driven by a manual clock (daylight saving, overlap, catch-up
// after a restart, exactly once), and one run of a per-second schedule on
// the real clock.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/scheduler"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// scheduleBound bounds every wait of these tests for something the
// daemon does at once (a fire event after the clock moved, a run ending).
const scheduleBound = 20 * time.Second

const scheduleKey = "abk_schedules_test_key"

// schedDaemon is a daemon over a data directory, restartable, with the
// fire events of its scheduler collected in fires (across restarts).
type schedDaemon struct {
	t     *testing.T
	dir   string
	clock scheduler.Clock
	exec  *scripted.Executor
	fires chan scheduler.Fire
	addr  string
	stop  func() error
	c     *client.Client
}

func newSchedDaemon(t *testing.T, clock scheduler.Clock) *schedDaemon {
	d := &schedDaemon{t: t, dir: t.TempDir(), clock: clock, exec: &scripted.Executor{}, fires: make(chan scheduler.Fire, 1000)}
	d.start()
	return d
}

func (d *schedDaemon) start() {
	d.t.Helper()
	cfg := daemon.Config{APIKey: scheduleKey, Executor: d.exec, Workers: 2,
		ScheduleClock: d.clock, OnScheduleFire: func(f scheduler.Fire) { d.fires <- f }}
	d.addr, d.stop = daemontest.Start(d.t, d.dir, cfg)
	c, err := client.New(client.WithBaseURL("http://"+d.addr), client.WithAPIKey(scheduleKey), client.WithMaxRetries(0))
	if err != nil {
		d.t.Fatal(err)
	}
	d.c = c
}

func (d *schedDaemon) restart() {
	d.t.Helper()
	if err := d.stop(); err != nil {
		d.t.Fatal(err)
	}
	d.start()
}

// nextFire waits for the next fire event.
func (d *schedDaemon) nextFire() scheduler.Fire {
	d.t.Helper()
	select {
	case f := <-d.fires:
		return f
	case <-time.After(scheduleBound):
		d.t.Fatalf("no schedule fired within %v", scheduleBound)
	}
	return scheduler.Fire{}
}

// noFires checks that no fire event is waiting.
func (d *schedDaemon) noFires() {
	d.t.Helper()
	select {
	case f := <-d.fires:
		d.t.Errorf("unexpected fire: %+v", f)
	default:
	}
}

// scheduledRuns returns the runs carrying the schedule's tag, newest first.
func scheduledRuns(t *testing.T, c *client.Client, scheduleID string) []*client.RunListItem {
	t.Helper()
	runs, err := c.Runs.List(t.Context(), &client.ListRunsOptions{Tags: []string{client.ScheduleTag(scheduleID)}, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// agentForSchedules is agentForRuns's scripted agent with a default for
// every parameter, so that schedules without parameters can run it.
func agentForSchedules(t *testing.T, c *client.Client) *client.Agent {
	t.Helper()
	agent, err := c.Agents.Create(t.Context(), &client.AgentDefinition{
		Title: "Scripted agent",
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				{Key: scripted.ParamKey, ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString, DefaultValue: json.RawMessage(`"steps=1"`)},
				{Key: "count", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterInteger, DefaultValue: json.RawMessage(`0`)},
			},
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return agent
}

func createSchedule(t *testing.T, c *client.Client, agentID string, req *client.ScheduleRequest) *client.ScheduleResponse {
	t.Helper()
	s, err := c.Schedules.Create(t.Context(), agentID, req)
	if err != nil {
		t.Fatalf("create schedule %+v: %v", req, err)
	}
	return s
}

func utcTimes(ts []client.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.UTC().Format(time.RFC3339)
	}
	return out
}

func TestScheduleRoutes(t *testing.T) {
	clock := scheduler.NewManualClock(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	d := newSchedDaemon(t, clock)
	ctx := t.Context()
	agent := agentForSchedules(t, d.c)
	other := agentForSchedules(t, d.c)
	wpid := agent.WorkflowPermanentID

	s := createSchedule(t, d.c, wpid, &client.ScheduleRequest{
		CronExpression: "0 9 * * MON-FRI", Timezone: "Europe/Berlin", Name: client.Ptr("Weekday report"),
		Parameters: map[string]any{"count": 3},
	})
	sc := s.Schedule
	if !strings.HasPrefix(sc.WorkflowScheduleID, "wfs_") || sc.WorkflowPermanentID != wpid || !sc.Enabled ||
		sc.Timezone != "Europe/Berlin" || sc.CronExpression != "0 9 * * MON-FRI" {
		t.Errorf("created: %+v", sc)
	}
	if got, _ := json.Marshal(sc.Parameters); string(got) != `{"count":3}` {
		t.Errorf("parameters: %s", got)
	}
	// Monday 10:00 UTC is 12:00 in Berlin: next is Tuesday 09:00 CEST.
	if got := utcTimes(s.NextRuns); len(got) != 5 || got[0] != "2026-05-05T07:00:00Z" || got[3] != "2026-05-08T07:00:00Z" || got[4] != "2026-05-11T07:00:00Z" {
		t.Errorf("next runs: %v", got)
	}
	second := createSchedule(t, d.c, wpid, &client.ScheduleRequest{CronExpression: "@daily", Timezone: "UTC"})
	theirs := createSchedule(t, d.c, other.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "*/10 * * * * *", Timezone: "UTC", Name: client.Ptr("fast")})

	list, err := d.c.Schedules.List(ctx, wpid)
	if err != nil || len(list) != 2 || list[0].WorkflowScheduleID != sc.WorkflowScheduleID || list[1].WorkflowScheduleID != second.Schedule.WorkflowScheduleID {
		t.Errorf("list: %v %v", list, err)
	}
	got, err := d.c.Schedules.Get(ctx, wpid, sc.WorkflowScheduleID)
	if err != nil || got.Schedule.Name == nil || *got.Schedule.Name != "Weekday report" || len(got.NextRuns) != 5 {
		t.Errorf("get: %+v %v", got, err)
	}
	// A schedule is reached through its own agent only.
	if _, err := d.c.Schedules.Get(ctx, other.WorkflowPermanentID, sc.WorkflowScheduleID); apiStatus(err) != 404 {
		t.Errorf("a schedule through another agent: %v, want 404", err)
	}

	// Disabled: no next runs; enabled again: fire times from now on.
	off, err := d.c.Schedules.Disable(ctx, wpid, sc.WorkflowScheduleID)
	if err != nil || off.Schedule.Enabled || len(off.NextRuns) != 0 {
		t.Errorf("disable: %+v %v", off, err)
	}
	page, err := d.c.Schedules.ListAll(ctx, &client.ListSchedulesOptions{Status: client.SchedulePaused})
	if err != nil || page.TotalCount != 1 || page.Schedules[0].WorkflowScheduleID != sc.WorkflowScheduleID || page.Schedules[0].NextRun != nil {
		t.Errorf("paused schedules: %+v %v", page, err)
	}
	on, err := d.c.Schedules.Enable(ctx, wpid, sc.WorkflowScheduleID)
	if err != nil || !on.Schedule.Enabled || len(on.NextRuns) != 5 {
		t.Errorf("enable: %+v %v", on, err)
	}

	// Update replaces the settings.
	up, err := d.c.Schedules.Update(ctx, wpid, second.Schedule.WorkflowScheduleID, &client.ScheduleRequest{
		CronExpression: "30 2 * * *", Timezone: "America/New_York", Enabled: client.Ptr(false), Description: client.Ptr("nightly"),
	})
	if err != nil || up.Schedule.Enabled || up.Schedule.CronExpression != "30 2 * * *" || up.Schedule.Description == nil || up.Schedule.Parameters != nil {
		t.Errorf("update: %+v %v", up, err)
	}

	// The organization's list: paging, status, search by agent title and
	// schedule name.
	all, err := d.c.Schedules.ListAll(ctx, &client.ListSchedulesOptions{PageSize: 2})
	if err != nil || all.TotalCount != 3 || len(all.Schedules) != 2 || all.Page != 1 || all.PageSize != 2 {
		t.Fatalf("all, first page: %+v %v", all, err)
	}
	if all.Schedules[0].WorkflowTitle != "Scripted agent" || all.Schedules[0].NextRun == nil || all.Schedules[0].NextRun.UTC().Format(time.RFC3339) != "2026-05-05T07:00:00Z" {
		t.Errorf("all, first item: %+v", all.Schedules[0])
	}
	var ids []string
	for it, err := range d.c.Schedules.All(ctx, &client.ListSchedulesOptions{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.WorkflowScheduleID)
	}
	if want := []string{sc.WorkflowScheduleID, second.Schedule.WorkflowScheduleID, theirs.Schedule.WorkflowScheduleID}; !slices.Equal(ids, want) {
		t.Errorf("every page: %v, want %v", ids, want)
	}
	if found, err := d.c.Schedules.ListAll(ctx, &client.ListSchedulesOptions{Search: "FAST", Status: client.ScheduleActive}); err != nil || found.TotalCount != 1 || found.Schedules[0].WorkflowScheduleID != theirs.Schedule.WorkflowScheduleID {
		t.Errorf("search: %+v %v", found, err)
	}

	// Bad input: 422 naming the field and what is wrong.
	for _, tc := range []struct {
		req   *client.ScheduleRequest
		field string
		says  string
	}{
		{&client.ScheduleRequest{CronExpression: "61 * * * *", Timezone: "UTC"}, "cron_expression", "not a valid cron expression"},
		{&client.ScheduleRequest{CronExpression: "@every 1m", Timezone: "UTC"}, "cron_expression", "@every"},
		{&client.ScheduleRequest{CronExpression: "0 0 31 2 *", Timezone: "UTC"}, "cron_expression", "never fires"},
		{&client.ScheduleRequest{CronExpression: "0 9 * * *", Timezone: "Mars/Olympus_Mons"}, "timezone", "not a known IANA time zone"},
		{&client.ScheduleRequest{CronExpression: "0 9 * * *", Timezone: ""}, "timezone", "empty"},
		{&client.ScheduleRequest{CronExpression: "0 9 * * *", Timezone: "UTC", Parameters: map[string]any{"count": "many"}}, "parameters", "count"},
	} {
		_, err := d.c.Schedules.Create(ctx, wpid, tc.req)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.StatusCode != 422 || len(ae.Validation) == 0 {
			t.Errorf("%+v: %v, want a 422", tc.req, err)
			continue
		}
		v := ae.Validation[0]
		if len(v.Loc) != 2 || v.Loc[1] != tc.field || !strings.Contains(v.Msg, tc.says) {
			t.Errorf("%+v: %+v, want the field %s and %q", tc.req, v, tc.field, tc.says)
		}
	}
	if status, body := rawPost(t, "http://"+d.addr, scheduleKey, "/v1/agents/"+wpid+"/schedules", `{"timezone": "UTC"}`); status != 422 || !strings.Contains(string(body), "cron_expression") {
		t.Errorf("without cron_expression: %d %s", status, body)
	}
	if _, err := d.c.Schedules.Create(ctx, "wpid_404", &client.ScheduleRequest{CronExpression: "@daily", Timezone: "UTC"}); apiStatus(err) != 404 {
		t.Errorf("schedule of an unknown agent: %v, want 404", err)
	}

	// Another organization sees none of it.
	ac := admin.NewClient(admin.SocketPath(d.dir))
	acme, err := ac.CreateOrganization(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.c.Clone(client.WithAPIKey(acme.APIKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Schedules.Create(ctx, wpid, &client.ScheduleRequest{CronExpression: "@daily", Timezone: "UTC"}); apiStatus(err) != 404 {
		t.Errorf("create on another organization's agent: %v, want 404", err)
	}
	if _, err := b.Schedules.List(ctx, wpid); apiStatus(err) != 404 {
		t.Errorf("list another organization's agent's: %v, want 404", err)
	}
	for name, call := range map[string]func() error{
		"get":     func() error { _, err := b.Schedules.Get(ctx, wpid, sc.WorkflowScheduleID); return err },
		"disable": func() error { _, err := b.Schedules.Disable(ctx, wpid, sc.WorkflowScheduleID); return err },
		"delete":  func() error { return b.Schedules.Delete(ctx, wpid, sc.WorkflowScheduleID) },
	} {
		if err := call(); apiStatus(err) != 404 {
			t.Errorf("%s another organization's schedule: %v, want 404", name, err)
		}
	}
	if page, err := b.Schedules.ListAll(ctx, nil); err != nil || page.TotalCount != 0 || page.Schedules == nil {
		t.Errorf("another organization's list: %+v %v", page, err)
	}

	// Delete; then deleting the agent takes its schedules out of sight.
	if err := d.c.Schedules.Delete(ctx, wpid, second.Schedule.WorkflowScheduleID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.c.Schedules.Get(ctx, wpid, second.Schedule.WorkflowScheduleID); apiStatus(err) != 404 {
		t.Errorf("a deleted schedule: %v, want 404", err)
	}
	if err := d.c.Agents.Delete(ctx, other.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.c.Schedules.List(ctx, other.WorkflowPermanentID); apiStatus(err) != 404 {
		t.Errorf("the schedules of a deleted agent: %v, want 404", err)
	}
	if page, err := d.c.Schedules.ListAll(ctx, nil); err != nil || page.TotalCount != 1 || page.Schedules[0].WorkflowScheduleID != sc.WorkflowScheduleID {
		t.Errorf("after the deletes: %+v %v", page, err)
	}
	// Its every-ten-seconds schedule never fires: only the weekday one
	// does, on Tuesday.
	clock.Set(time.Date(2026, 5, 5, 7, 0, 0, 0, time.UTC))
	if f := d.nextFire(); f.ScheduleID != sc.WorkflowScheduleID || f.Outcome != store.FireStarted {
		t.Errorf("fire: %+v", f)
	}
	d.noFires()
}

// TestScheduledRunsAcrossDaylightSaving: on the night New York skips
// 02:00-03:00, a 02:30 schedule fires at 03:00 EDT; on the night it
// repeats 01:00-02:00, a 01:30 schedule fires once. The runs are made as
// the API makes them, tagged and marked as the schedule's.
func TestScheduledRunsAcrossDaylightSaving(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	clock := scheduler.NewManualClock(time.Date(2026, 3, 7, 12, 0, 0, 0, ny))
	d := newSchedDaemon(t, clock)
	ctx := t.Context()
	agent := agentForSchedules(t, d.c)
	skip := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{
		CronExpression: "30 2 * * *", Timezone: "America/New_York", Parameters: map[string]any{"count": 7},
	})
	if got := utcTimes(skip.NextRuns); got[0] != "2026-03-08T07:00:00Z" || got[1] != "2026-03-09T06:30:00Z" {
		t.Errorf("next runs over the skipped hour: %v", got)
	}
	id := skip.Schedule.WorkflowScheduleID

	clock.Set(time.Date(2026, 3, 8, 6, 59, 59, 0, time.UTC))
	clock.Set(time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)) // 03:00 EDT
	f := d.nextFire()
	if f.ScheduleID != id || f.Outcome != store.FireStarted || !f.At.Equal(time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)) || f.RunID == "" {
		t.Fatalf("fire over the skipped hour: %+v", f)
	}
	run := waitRun(t, d.c, f.RunID)
	if run.Status != client.RunStatusCompleted {
		t.Errorf("the scheduled run: %+v", run)
	}
	if job, ok := d.exec.Job(f.RunID); !ok || string(job.Parameters["count"]) != "7" {
		t.Errorf("the run's parameters: %+v", job.Parameters)
	}
	listed := scheduledRuns(t, d.c, id)
	if len(listed) != 1 || listed[0].RunID != f.RunID || listed[0].TriggerType == nil || *listed[0].TriggerType != client.RunTriggerScheduled {
		t.Errorf("the run list, by the schedule's tag: %+v", listed)
	}
	agentRuns, err := d.c.Agents.ListRuns(ctx, &client.ListAgentRunsOptions{AgentID: agent.WorkflowPermanentID})
	if err != nil || len(agentRuns) != 1 || agentRuns[0].WorkflowScheduleID == nil || *agentRuns[0].WorkflowScheduleID != id {
		t.Errorf("the agent's runs name the schedule: %+v %v", agentRuns, err)
	}
	got, err := d.c.Schedules.Get(ctx, agent.WorkflowPermanentID, id)
	if err != nil || got.Schedule.LastRunID == nil || *got.Schedule.LastRunID != f.RunID || got.NextRuns[0].UTC().Format(time.RFC3339) != "2026-03-09T06:30:00Z" {
		t.Errorf("the schedule after it fired: %+v %v", got, err)
	}
	if err := d.c.Schedules.Delete(ctx, agent.WorkflowPermanentID, id); err != nil {
		t.Fatal(err)
	}

	// The repeated hour. A UTC schedule at 06:30Z, created after it, is
	// handled after it in the same pass: its fire says the pass is over.
	clock.Set(time.Date(2026, 10, 31, 12, 0, 0, 0, ny))
	repeat := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "30 1 * * *", Timezone: "America/New_York"})
	if got := utcTimes(repeat.NextRuns); got[0] != "2026-11-01T05:30:00Z" || got[1] != "2026-11-02T06:30:00Z" {
		t.Errorf("next runs over the repeated hour: %v", got)
	}
	marker := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "30 6 * * *", Timezone: "UTC"})
	clock.Set(time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)) // 01:30 EDT
	if f := d.nextFire(); f.ScheduleID != repeat.Schedule.WorkflowScheduleID || f.Outcome != store.FireStarted {
		t.Fatalf("first 01:30: %+v", f)
	} else {
		waitRun(t, d.c, f.RunID)
	}
	clock.Set(time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)) // 01:30 EST, the second time
	if f := d.nextFire(); f.ScheduleID != marker.Schedule.WorkflowScheduleID {
		t.Fatalf("the repeated 01:30 fired again: %+v", f)
	}
	d.noFires()
	if runs := scheduledRuns(t, d.c, repeat.Schedule.WorkflowScheduleID); len(runs) != 1 {
		t.Errorf("runs of the 01:30 schedule over the repeated hour: %d, want 1", len(runs))
	}
}

// TestScheduleSkipsWhileItsRunIsGoing: a fire time that comes while the
// previous run has not ended starts nothing and is counted.
func TestScheduleSkipsWhileItsRunIsGoing(t *testing.T) {
	clock := scheduler.NewManualClock(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC))
	d := newSchedDaemon(t, clock)
	ctx := t.Context()
	agent := agentForSchedules(t, d.c)
	s := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{
		CronExpression: "* * * * *", Timezone: "UTC", Parameters: map[string]any{scripted.ParamKey: "block=slow", "count": 1},
	})
	id := s.Schedule.WorkflowScheduleID

	clock.Set(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
	first := d.nextFire()
	if first.Outcome != store.FireStarted {
		t.Fatalf("first fire: %+v", first)
	}
	wctx, cancel := context.WithTimeout(ctx, scheduleBound)
	defer cancel()
	if err := d.exec.WaitBlocked(wctx, "slow"); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 1, 1, 0, 2, 0, 0, time.UTC))
	if f := d.nextFire(); f.Outcome != store.FireSkipped || f.RunID != "" {
		t.Fatalf("fire while the run is going: %+v", f)
	}
	got, err := d.c.Schedules.Get(ctx, agent.WorkflowPermanentID, id)
	if err != nil || got.Schedule.SkippedFires != 1 || got.Schedule.LastSkippedAt == nil || got.Schedule.LastSkippedAt.UTC().Format(time.RFC3339) != "2026-01-01T00:02:00Z" {
		t.Errorf("the skip is recorded: %+v %v", got, err)
	}
	d.exec.Release("slow")
	waitRun(t, d.c, first.RunID)
	clock.Set(time.Date(2026, 1, 1, 0, 3, 0, 0, time.UTC))
	if f := d.nextFire(); f.Outcome != store.FireStarted {
		t.Fatalf("fire after the run ended: %+v", f)
	} else {
		waitRun(t, d.c, f.RunID)
	}
	if runs := scheduledRuns(t, d.c, id); len(runs) != 2 {
		t.Errorf("%d runs, want 2", len(runs))
	}
}

// TestScheduleCatchesUpOnceAfterARestart: a daemon stopped over many fire
// times starts one run for them when it comes back, before it serves; a
// second restart starts none.
func TestScheduleCatchesUpOnceAfterARestart(t *testing.T) {
	clock := scheduler.NewManualClock(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC))
	d := newSchedDaemon(t, clock)
	agent := agentForSchedules(t, d.c)
	every5 := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "*/5 * * * *", Timezone: "UTC"}).Schedule.WorkflowScheduleID
	daily := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "0 12 * * *", Timezone: "Asia/Tokyo"}).Schedule.WorkflowScheduleID
	paused := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "* * * * *", Timezone: "UTC", Enabled: client.Ptr(false)}).Schedule.WorkflowScheduleID

	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	// Stopped for two days and two hours: 600-odd fire times of the first,
	// two of the second (Tokyo noon, 03:00Z, on the 1st and the 2nd).
	clock.Set(time.Date(2026, 1, 3, 2, 7, 0, 0, time.UTC))
	d.start() // the catch-up happens before the daemon serves
	fired := map[string]scheduler.Fire{}
	for range 2 {
		f := d.nextFire()
		if _, twice := fired[f.ScheduleID]; twice || f.Outcome != store.FireStarted {
			t.Errorf("catch-up fire: %+v (already %v)", f, fired)
		}
		fired[f.ScheduleID] = f
	}
	d.noFires()
	if f := fired[every5]; !f.At.Equal(time.Date(2026, 1, 3, 2, 5, 0, 0, time.UTC)) {
		t.Errorf("the five-minute schedule's catch-up is for %v, want its latest missed time 02:05", f.At)
	}
	if f := fired[daily]; !f.At.Equal(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("the daily schedule's catch-up is for %v", f.At)
	}
	if _, ok := fired[paused]; ok {
		t.Error("a disabled schedule caught up")
	}
	for _, id := range []string{every5, daily} {
		runs := scheduledRuns(t, d.c, id)
		if len(runs) != 1 {
			t.Fatalf("schedule %s: %d runs after the restart, want 1", id, len(runs))
		}
		waitRun(t, d.c, runs[0].RunID)
	}
	// The fire times stepped over are counted, on the schedule and in
	// the organization's list: every five minutes from 00:05 on the 1st
	// to 02:00 on the 3rd (600), and Tokyo's noon on the 1st.
	missed := map[string]struct {
		n    int
		last time.Time
	}{
		every5: {600, time.Date(2026, 1, 3, 2, 0, 0, 0, time.UTC)},
		daily:  {1, time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)},
		paused: {0, time.Time{}},
	}
	all, err := d.c.Schedules.ListAll(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range missed {
		got, err := d.c.Schedules.Get(t.Context(), agent.WorkflowPermanentID, id)
		if err != nil {
			t.Fatal(err)
		}
		acts := []client.ScheduleActivity{got.Schedule.ScheduleActivity}
		for _, it := range all.Schedules {
			if it.WorkflowScheduleID == id {
				acts = append(acts, it.ScheduleActivity)
			}
		}
		if len(acts) != 2 {
			t.Fatalf("schedule %s is not in the organization's list", id)
		}
		for _, a := range acts {
			if a.MissedFires != want.n || (want.n > 0) != (a.LastMissedAt != nil) || (a.LastMissedAt != nil && !a.LastMissedAt.Equal(want.last)) {
				t.Errorf("schedule %s: missed_fires %d, last_missed_at %v; want %d, %v", id, a.MissedFires, a.LastMissedAt, want.n, want.last)
			}
		}
	}

	// Restarted again at the same time: nothing is due.
	d.restart()
	d.noFires()
	if runs := scheduledRuns(t, d.c, every5); len(runs) != 1 {
		t.Errorf("after a second restart: %d runs, want 1", len(runs))
	}
	// And the schedule goes on from there.
	clock.Set(time.Date(2026, 1, 3, 2, 10, 0, 0, time.UTC))
	if f := d.nextFire(); f.ScheduleID != every5 || f.Outcome != store.FireStarted || !f.At.Equal(time.Date(2026, 1, 3, 2, 10, 0, 0, time.UTC)) {
		t.Errorf("the next fire: %+v", f)
	}
}

// TestScheduleFireTimeIsRecordedWithItsRun: the store takes a fire time
// once, in the transaction that stores its run; a fire that fails stores
// nothing and leaves the time due. This is what makes a kill -9 at any
// point unable to double a run: before the commit nothing happened, after
// it both the run and the mark are there.
func TestScheduleFireTimeIsRecordedWithItsRun(t *testing.T) {
	clock := scheduler.NewManualClock(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC))
	d := newSchedDaemon(t, clock)
	agent := agentForSchedules(t, d.c)
	id := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "* * * * *", Timezone: "UTC"}).Schedule.WorkflowScheduleID
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}

	// With the daemon stopped, its store file, as the daemon opened it.
	st, err := boltstore.Open(filepath.Join(d.dir, datadir.StoreFileName), store.Options{Secret: readSecret(t, d.dir)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	org, err := st.DefaultOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	mkRun := func(runID string) *store.RunRecord {
		return &store.RunRecord{ID: runID, OrgID: org.ID, Type: client.RunTypeWorkflowRun, Status: client.RunStatusQueued,
			AgentID: agent.WorkflowPermanentID, AgentVersion: 1, Trigger: client.RunTriggerScheduled, ScheduleID: id}
	}
	// A fire whose transaction fails (its run id is taken) writes nothing.
	taken := mkRun(st.Runs().NewID(client.RunTypeWorkflowRun))
	if err := st.Runs().Create(ctx, taken); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Schedules().Fire(ctx, org.ID, id, at, at, store.Missed{}, mkRun(taken.ID)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("fire with a taken run id: %v, want a conflict", err)
	}
	rec, err := st.Schedules().Get(ctx, org.ID, agent.WorkflowPermanentID, id)
	if err != nil || !rec.HandledThrough.Before(at) || rec.LastRunID != "" {
		t.Fatalf("a failed fire moved the schedule: %+v %v", rec, err)
	}
	// The same fire time, twice (a retry, a second daemon's pass): one run.
	first := mkRun(st.Runs().NewID(client.RunTypeWorkflowRun))
	if out, err := st.Schedules().Fire(ctx, org.ID, id, at, at, store.Missed{}, first); err != nil || out != store.FireStarted {
		t.Fatalf("fire: %v %v", out, err)
	}
	if out, err := st.Schedules().Fire(ctx, org.ID, id, at, at.Add(time.Second), store.Missed{}, mkRun(st.Runs().NewID(client.RunTypeWorkflowRun))); err != nil || out != store.FireAlreadyHandled {
		t.Fatalf("the same fire time again: %v %v", out, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// The daemon restarted at that time finds it done; its run, queued by
	// a "crashed" scheduler that never handed it to the runner, runs.
	clock.Set(at.Add(30 * time.Second))
	d.start()
	d.noFires()
	waitRun(t, d.c, first.ID)
	runs := scheduledRuns(t, d.c, id)
	if len(runs) != 1 || runs[0].RunID != first.ID {
		t.Errorf("runs of the schedule: %+v, want only %s", runs, first.ID)
	}
}

func readSecret(t *testing.T, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, datadir.SecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPerSecondScheduleOnTheRealClock: a schedule every second starts runs
// on the machine's clock, each for its own second.
func TestPerSecondScheduleOnTheRealClock(t *testing.T) {
	d := newSchedDaemon(t, nil)
	agent := agentForSchedules(t, d.c)
	id := createSchedule(t, d.c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "* * * * * *", Timezone: "UTC"}).Schedule.WorkflowScheduleID
	var started []scheduler.Fire
	deadline := time.After(scheduleBound)
	for len(started) < 2 {
		select {
		case f := <-d.fires:
			if f.ScheduleID == id && f.Outcome == store.FireStarted {
				started = append(started, f)
				waitRun(t, d.c, f.RunID)
			}
		case <-deadline:
			t.Fatalf("%d runs started within %v, want 2", len(started), scheduleBound)
		}
	}
	if !started[1].At.After(started[0].At) || started[0].At.Nanosecond() != 0 {
		t.Errorf("fire times %v then %v: want whole, increasing seconds", started[0].At, started[1].At)
	}
	if err := d.c.Schedules.Delete(t.Context(), agent.WorkflowPermanentID, id); err != nil {
		t.Fatal(err)
	}
	runs := scheduledRuns(t, d.c, id)
	if len(runs) < 2 {
		t.Errorf("%d runs tagged with the schedule, want at least 2", len(runs))
	}
	for _, r := range runs {
		if r.Status != client.RunStatusCompleted && r.Status != client.RunStatusQueued && r.Status != client.RunStatusRunning {
			t.Errorf("run %s: %s", r.RunID, r.Status)
		}
	}
}
