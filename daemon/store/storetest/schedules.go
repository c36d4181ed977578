package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

func (f *fixture) schedule(orgID, wpid, cron string, from time.Time) *store.ScheduleRecord {
	f.t.Helper()
	rec, err := f.Schedules().Create(ctx, orgID, wpid, &store.ScheduleInput{Cron: cron, Timezone: "UTC", Enabled: true, From: from,
		Parameters: map[string]json.RawMessage{"url": json.RawMessage(`"https://example.com/a"`)}})
	if err != nil {
		f.t.Fatal(err)
	}
	return rec
}

func (f *fixture) scheduledRun(orgID, wpid, scheduleID string) *store.RunRecord {
	return &store.RunRecord{ID: f.Runs().NewID(client.RunTypeWorkflowRun), OrgID: orgID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, AgentID: wpid, AgentVersion: 1, Trigger: client.RunTriggerScheduled, ScheduleID: scheduleID}
}

func testSchedulesCRUDAndOrganizations(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("Invoices", WorkflowParam("url", "", "https://example.com")))
	b := f.create(f.org.ID, AgentDef("Reports"))
	from := time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.FixedZone("CET", 3600))
	s1 := f.schedule(f.org.ID, a.WorkflowPermanentID, "0 9 * * *", from)
	s2 := f.schedule(f.org.ID, b.WorkflowPermanentID, "@daily", from)

	// Times keep their nanoseconds.
	if got, err := f.Schedules().Get(ctx, f.org.ID, a.WorkflowPermanentID, s1.ID); err != nil || got.Cron != "0 9 * * *" ||
		!got.HandledThrough.Equal(from) || got.HandledThrough.Nanosecond() != 123456789 {
		t.Errorf("get: %+v %v", got, err)
	}
	// Through another agent, or another organization: not found.
	_, err := f.Schedules().Get(ctx, f.org.ID, b.WorkflowPermanentID, s1.ID)
	wantNotFound(t, "through another agent", err, store.RecordSchedule, s1.ID)
	other := f.newOrg("other")
	if _, err := f.Schedules().Get(ctx, other.ID, a.WorkflowPermanentID, s1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("from another organization: %v", err)
	}
	if _, err := f.Schedules().Create(ctx, other.ID, a.WorkflowPermanentID, &store.ScheduleInput{Cron: "@daily", Timezone: "UTC"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("on another organization's agent: %v", err)
	}
	if items, total, err := f.Schedules().ListAll(ctx, other.ID, store.ScheduleQuery{Page: 1, PageSize: 10}); err != nil || total != 0 || len(items) != 0 {
		t.Errorf("another organization's list: %v %d %v", items, total, err)
	}
	items, total, err := f.Schedules().ListAll(ctx, f.org.ID, store.ScheduleQuery{Page: 2, PageSize: 1})
	if err != nil || total != 2 || len(items) != 1 || items[0].ID != s2.ID || items[0].AgentTitle != "Reports" {
		t.Errorf("second page: %+v %d %v", items, total, err)
	}
	if items, total, _ := f.Schedules().ListAll(ctx, f.org.ID, store.ScheduleQuery{Page: 1, PageSize: 10, Search: "invo"}); total != 1 || items[0].ID != s1.ID {
		t.Errorf("search: %+v", items)
	}
	if items, total, err := f.Schedules().ListAll(ctx, f.org.ID, store.ScheduleQuery{Page: 1 << 20, PageSize: 100}); err != nil || total != 2 || items == nil || len(items) != 0 {
		t.Errorf("a page past the end: %v %d %v", items, total, err)
	}
	if list, err := f.Schedules().List(ctx, f.org.ID, a.WorkflowPermanentID); err != nil || len(list) != 1 || list[0].ID != s1.ID {
		t.Errorf("the agent's schedules: %+v %v", list, err)
	}

	// Enabling after a pause moves the mark: the pause is not caught up.
	later := from.Add(48 * time.Hour)
	if _, err := f.Schedules().SetEnabled(ctx, f.org.ID, a.WorkflowPermanentID, s1.ID, false, later); err != nil {
		t.Fatal(err)
	}
	if en, _ := f.Schedules().Enabled(ctx); len(en) != 1 || en[0].ID != s2.ID {
		t.Errorf("enabled schedules: %+v", en)
	}
	if off, _, _ := f.Schedules().ListAll(ctx, f.org.ID, store.ScheduleQuery{Page: 1, PageSize: 10, Enabled: ptr(false)}); len(off) != 1 || off[0].ID != s1.ID {
		t.Errorf("the disabled: %+v", off)
	}
	on, err := f.Schedules().SetEnabled(ctx, f.org.ID, a.WorkflowPermanentID, s1.ID, true, later)
	if err != nil || !on.HandledThrough.Equal(later) {
		t.Errorf("enabled again: %+v %v", on, err)
	}
	up, err := f.Schedules().Update(ctx, f.org.ID, a.WorkflowPermanentID, s1.ID, &store.ScheduleInput{Cron: "0 10 * * *", Timezone: "UTC", Enabled: true, From: later.Add(time.Hour)})
	if err != nil || up.Cron != "0 10 * * *" || !up.HandledThrough.Equal(later.Add(time.Hour)) {
		t.Errorf("update: %+v %v", up, err)
	}

	// A deleted agent's schedules are out of sight and never fire.
	if err := f.Agents().Delete(ctx, f.org.ID, b.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	if en, _ := f.Schedules().Enabled(ctx); len(en) != 1 || en[0].ID != s1.ID {
		t.Errorf("enabled schedules after the agent's deletion: %+v", en)
	}
	if _, total, _ := f.Schedules().ListAll(ctx, f.org.ID, store.ScheduleQuery{Page: 1, PageSize: 10}); total != 1 {
		t.Errorf("the list shows a deleted agent's schedule: %d", total)
	}
	if _, err := f.Schedules().Fire(ctx, f.org.ID, s2.ID, later, later, store.Missed{}, f.scheduledRun(f.org.ID, b.WorkflowPermanentID, s2.ID)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("fire of a deleted agent's schedule: %v", err)
	}
	if err := f.Schedules().Delete(ctx, f.org.ID, a.WorkflowPermanentID, s1.ID); err != nil {
		t.Fatal(err)
	}
	_, err = f.Schedules().Get(ctx, f.org.ID, a.WorkflowPermanentID, s1.ID)
	wantNotFound(t, "deleted", err, store.RecordSchedule, s1.ID)
	_, _, err = f.Schedules().ListAll(ctx, "o_404", store.ScheduleQuery{})
	wantNotFound(t, "an unknown organization", err, store.RecordOrganization, "o_404")
}

// testFireIsAtomicAndOnce: the run, its tag and the schedule's mark are
// written together or not at all, and a fire time is taken once.
func testFireIsAtomicAndOnce(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("Invoices"))
	wpid := a.WorkflowPermanentID
	from := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	s := f.schedule(f.org.ID, wpid, "* * * * *", from)
	at := from.Add(30 * time.Second)

	// A failing transaction (the run id is taken) leaves no trace.
	taken := f.scheduledRun(f.org.ID, wpid, s.ID)
	if err := f.Runs().Create(ctx, taken); err != nil {
		t.Fatal(err)
	}
	dup := f.scheduledRun(f.org.ID, wpid, s.ID)
	dup.ID = taken.ID
	if _, err := f.Schedules().Fire(ctx, f.org.ID, s.ID, at, at, store.Missed{Count: 1, Latest: at}, dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("fire with a taken id: %v", err)
	}
	if rec, _ := f.Schedules().Get(ctx, f.org.ID, wpid, s.ID); !rec.HandledThrough.Equal(from) || rec.LastRunID != "" || rec.MissedFires != 0 {
		t.Fatalf("a failed fire changed the schedule: %+v", rec)
	}
	if dup.QueuedAt != nil || dup.ScheduledFor != nil {
		t.Errorf("a failed fire stamped its run: %+v", dup)
	}

	run := f.scheduledRun(f.org.ID, wpid, s.ID)
	if out, err := f.Schedules().Fire(ctx, f.org.ID, s.ID, at, at.Add(time.Second), store.Missed{}, run); err != nil || out != store.FireStarted {
		t.Fatalf("fire: %v %v", out, err)
	}
	f.reopen() // what is there was committed
	rec, err := f.Schedules().Get(ctx, f.org.ID, wpid, s.ID)
	if err != nil || rec.LastRunID != run.ID || !rec.LastFireTime.Equal(at) || !rec.HandledThrough.Equal(at.Add(time.Second)) {
		t.Errorf("after the fire: %+v %v", rec, err)
	}
	stored, err := f.Runs().Get(ctx, f.org.ID, run.ID)
	if err != nil || stored.ScheduleID != s.ID || stored.Trigger != client.RunTriggerScheduled || stored.QueuedAt == nil {
		t.Errorf("the run: %+v %v", stored, err)
	}
	tags, err := f.Tags().Get(ctx, f.org.ID, store.TagSubject{Kind: store.RunSubject, ID: run.ID})
	if err != nil || len(tags) != 1 || tags[0].Key == nil || *tags[0].Key != store.ScheduleTagKey || tags[0].Value != s.ID {
		t.Errorf("the run's tags: %+v %v", tags, err)
	}

	// The same time again, or an earlier one: nothing.
	for _, when := range []time.Time{at, at.Add(-time.Minute)} {
		if out, err := f.Schedules().Fire(ctx, f.org.ID, s.ID, when, when.Add(time.Minute), store.Missed{}, f.scheduledRun(f.org.ID, wpid, s.ID)); err != nil || out != store.FireAlreadyHandled {
			t.Errorf("fire %v again: %v %v", when, out, err)
		}
	}
	// The next time, while the run is still queued: skipped and counted.
	next := at.Add(time.Minute)
	if out, err := f.Schedules().Fire(ctx, f.org.ID, s.ID, next, next, store.Missed{}, f.scheduledRun(f.org.ID, wpid, s.ID)); err != nil || out != store.FireSkipped {
		t.Errorf("fire while the run goes on: %v %v", out, err)
	}
	rec, _ = f.Schedules().Get(ctx, f.org.ID, wpid, s.ID)
	if rec.SkippedFires != 1 || !rec.LastSkippedAt.Equal(next) || rec.LastRunID != run.ID {
		t.Errorf("after the skip: %+v", rec)
	}
	// Once the run ended, the next time starts one.
	f.updateRun(run.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCompleted })
	third := next.Add(time.Minute)
	if out, err := f.Schedules().Fire(ctx, f.org.ID, s.ID, third, third, store.Missed{}, f.scheduledRun(f.org.ID, wpid, s.ID)); err != nil || out != store.FireStarted {
		t.Errorf("fire after the run ended: %v %v", out, err)
	}
	// A disabled schedule does not fire; Miss records why a time started
	// no run and moves the mark.
	fourth := third.Add(time.Minute)
	if out, err := f.Schedules().Miss(ctx, f.org.ID, s.ID, fourth, fourth, store.Missed{}, "the agent's parameters changed"); err != nil || out != store.FireSkipped {
		t.Errorf("miss: %v %v", out, err)
	}
	if rec, _ := f.Schedules().Get(ctx, f.org.ID, wpid, s.ID); rec.LastError == "" || !rec.HandledThrough.Equal(fourth) {
		t.Errorf("after the miss: %+v", rec)
	}
	if _, err := f.Schedules().SetEnabled(ctx, f.org.ID, wpid, s.ID, false, fourth); err != nil {
		t.Fatal(err)
	}
	fifth := fourth.Add(time.Minute)
	if out, err := f.Schedules().Fire(ctx, f.org.ID, s.ID, fifth, fifth, store.Missed{}, f.scheduledRun(f.org.ID, wpid, s.ID)); err != nil || out != store.FireDisabled {
		t.Errorf("fire of a disabled schedule: %v %v", out, err)
	}
}
