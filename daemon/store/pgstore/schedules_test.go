package pgstore_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
)

// skipUntilMerged skips a test that needs the functions pg1 and pg2 write
// (agents, runs, tags) while this package still has their stubs: err is
// the stub's. Once merged the stubs are gone and the test runs.
func skipUntilMerged(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), "stub: provided by") {
		t.Skip("needs pg1 and pg2's functions: the merge enables it")
	}
}

// agent creates an agent titled title.
func agent(t *testing.T, st *pgstore.Store, orgID, title string) *client.Agent {
	t.Helper()
	a, _, err := st.Agents().Create(t.Context(), orgID, &client.Agent{Title: title, Status: client.AgentStatusPublished, RunWith: "agent"}, "")
	skipUntilMerged(t, err)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func newSchedule(t *testing.T, st *pgstore.Store, orgID, wpid, cron string, from time.Time) *store.ScheduleRecord {
	t.Helper()
	rec, err := st.Schedules().Create(t.Context(), orgID, wpid, &store.ScheduleInput{Cron: cron, Timezone: "UTC", Enabled: true, From: from,
		Parameters: map[string]json.RawMessage{"url": json.RawMessage(`"https://example.com/a"`)}})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

var runIDs = ids.New(7)

func scheduledRun(orgID, wpid, scheduleID string) *store.RunRecord {
	return &store.RunRecord{ID: runIDs.Next(ids.PrefixWorkflowRun), OrgID: orgID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, AgentID: wpid, AgentVersion: 1, Trigger: client.RunTriggerScheduled, ScheduleID: scheduleID}
}

// TestSchedules: as storetest's SchedulesCRUDAndOrganizations, through two
// daemons.
func TestSchedules(t *testing.T) {
	st, b, org := twoDaemons(t)
	ctx := t.Context()
	a := agent(t, st, org.ID, "Invoices")
	r := agent(t, st, org.ID, "Reports")
	from := time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.FixedZone("CET", 3600))
	s1 := newSchedule(t, st, org.ID, a.WorkflowPermanentID, "0 9 * * *", from)
	s2 := newSchedule(t, b, org.ID, r.WorkflowPermanentID, "@daily", from)

	// Times keep their nanoseconds (they are read from the JSON).
	if got, err := b.Schedules().Get(ctx, org.ID, a.WorkflowPermanentID, s1.ID); err != nil || got.Cron != "0 9 * * *" ||
		!got.HandledThrough.Equal(from) || got.HandledThrough.Nanosecond() != 123456789 {
		t.Errorf("get %+v %v", got, err)
	}
	wantNotFound(t, "through another agent", func() error {
		_, err := st.Schedules().Get(ctx, org.ID, r.WorkflowPermanentID, s1.ID)
		return err
	}(), store.RecordSchedule, s1.ID)
	other, _, _ := st.CreateOrganization(ctx, "other")
	if _, err := st.Schedules().Get(ctx, other.ID, a.WorkflowPermanentID, s1.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("from another organization: %v", err)
	}
	if _, err := st.Schedules().Create(ctx, other.ID, a.WorkflowPermanentID, &store.ScheduleInput{Cron: "@daily", Timezone: "UTC"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("on another organization's agent: %v", err)
	}
	if items, total, err := st.Schedules().ListAll(ctx, other.ID, store.ScheduleQuery{Page: 1, PageSize: 10}); err != nil || total != 0 || len(items) != 0 {
		t.Errorf("another organization's list %v %d %v", items, total, err)
	}
	items, total, err := st.Schedules().ListAll(ctx, org.ID, store.ScheduleQuery{Page: 2, PageSize: 1})
	if err != nil || total != 2 || len(items) != 1 || items[0].ID != s2.ID || items[0].AgentTitle != "Reports" {
		t.Errorf("second page %+v %d %v", items, total, err)
	}
	if items, total, _ := st.Schedules().ListAll(ctx, org.ID, store.ScheduleQuery{Page: 1, PageSize: 10, Search: "invo"}); total != 1 || items[0].ID != s1.ID {
		t.Errorf("search %+v", items)
	}
	if items, total, err := st.Schedules().ListAll(ctx, org.ID, store.ScheduleQuery{Page: 1 << 60, PageSize: 1 << 40}); err != nil || total != 2 || items == nil || len(items) != 0 {
		t.Errorf("a page past the end %v %d %v", items, total, err)
	}
	if list, err := st.Schedules().List(ctx, org.ID, a.WorkflowPermanentID); err != nil || len(list) != 1 || list[0].ID != s1.ID {
		t.Errorf("the agent's schedules %+v %v", list, err)
	}

	later := from.Add(48 * time.Hour)
	if _, err := st.Schedules().SetEnabled(ctx, org.ID, a.WorkflowPermanentID, s1.ID, false, later); err != nil {
		t.Fatal(err)
	}
	if en, _ := b.Schedules().Enabled(ctx); len(en) != 1 || en[0].ID != s2.ID {
		t.Errorf("enabled %+v", en)
	}
	if off, _, _ := st.Schedules().ListAll(ctx, org.ID, store.ScheduleQuery{Page: 1, PageSize: 10, Enabled: ptr(false)}); len(off) != 1 || off[0].ID != s1.ID {
		t.Errorf("the disabled %+v", off)
	}
	on, err := st.Schedules().SetEnabled(ctx, org.ID, a.WorkflowPermanentID, s1.ID, true, later)
	if err != nil || !on.HandledThrough.Equal(later) {
		t.Errorf("enabled again %+v %v", on, err)
	}
	up, err := st.Schedules().Update(ctx, org.ID, a.WorkflowPermanentID, s1.ID, &store.ScheduleInput{Cron: "0 10 * * *", Timezone: "UTC", Enabled: true, From: later.Add(time.Hour)})
	if err != nil || up.Cron != "0 10 * * *" || !up.HandledThrough.Equal(later.Add(time.Hour)) {
		t.Errorf("update %+v %v", up, err)
	}

	if err := st.Agents().Delete(ctx, org.ID, r.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	if en, _ := st.Schedules().Enabled(ctx); len(en) != 1 || en[0].ID != s1.ID {
		t.Errorf("enabled after the agent's deletion %+v", en)
	}
	if _, total, _ := st.Schedules().ListAll(ctx, org.ID, store.ScheduleQuery{Page: 1, PageSize: 10}); total != 1 {
		t.Errorf("the list shows a deleted agent's schedule: %d", total)
	}
	if _, err := st.Schedules().Fire(ctx, org.ID, s2.ID, later, later, store.Missed{}, scheduledRun(org.ID, r.WorkflowPermanentID, s2.ID)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("fire of a deleted agent's schedule: %v", err)
	}
	if err := st.Schedules().Delete(ctx, org.ID, a.WorkflowPermanentID, s1.ID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "deleted", func() error {
		_, err := st.Schedules().Get(ctx, org.ID, a.WorkflowPermanentID, s1.ID)
		return err
	}(), store.RecordSchedule, s1.ID)
	wantNotFound(t, "an unknown organization", func() error {
		_, _, err := st.Schedules().ListAll(ctx, "o_404", store.ScheduleQuery{})
		return err
	}(), store.RecordOrganization, "o_404")
}

// TestFireOnceAcrossDaemons: daemons that fire the same time of one
// schedule at the same moment start exactly one run: the schedule's row is
// locked while one of them checks and moves the mark, and the others then
// find the time handled.
func TestFireOnceAcrossDaemons(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	wpid := agent(t, a, org.ID, "Invoices").WorkflowPermanentID
	from := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	s := newSchedule(t, a, org.ID, wpid, "* * * * *", from)
	at := from.Add(30 * time.Second)

	const fires = 8
	outcomes := make([]store.FireOutcome, fires)
	errs := make([]error, fires)
	runs := make([]*store.RunRecord, fires)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range fires {
		st := a
		if i%2 == 1 {
			st = b
		}
		runs[i] = scheduledRun(org.ID, wpid, s.ID)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			outcomes[i], errs[i] = st.Schedules().Fire(ctx, org.ID, s.ID, at, at.Add(time.Second), store.Missed{Count: 2, Latest: at.Add(-time.Minute)}, runs[i])
		}()
	}
	close(start)
	wg.Wait()
	started := -1
	for i := range fires {
		skipUntilMerged(t, errs[i])
		switch {
		case errs[i] != nil:
			t.Errorf("fire %d: %v", i, errs[i])
		case outcomes[i] == store.FireStarted:
			if started >= 0 {
				t.Errorf("fires %d and %d both started a run", started, i)
			}
			started = i
		case outcomes[i] != store.FireAlreadyHandled:
			t.Errorf("fire %d: outcome %v", i, outcomes[i])
		}
	}
	if started < 0 {
		t.Fatal("no fire started a run")
	}
	var n int
	if err := a.Pool().QueryRow(ctx, `SELECT count(*) FROM runs WHERE org_id = $1`, org.ID).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d runs stored (%v), want 1", n, err)
	}
	rec, err := b.Schedules().Get(ctx, org.ID, wpid, s.ID)
	if err != nil || rec.LastRunID != runs[started].ID || !rec.LastFireTime.Equal(at) || !rec.HandledThrough.Equal(at.Add(time.Second)) ||
		rec.MissedFires != 2 {
		t.Errorf("the schedule after the fires %+v %v", rec, err)
	}
	for i, run := range runs {
		if i != started && (run.QueuedAt != nil || run.ScheduledFor != nil) {
			t.Errorf("fire %d stored no run but stamped it: %+v", i, run)
		}
	}
	if runs[started].ScheduledFor == nil || !runs[started].ScheduledFor.Equal(at) {
		t.Errorf("the run's scheduled_for %v", runs[started].ScheduledFor)
	}

	// Miss, from either daemon, moves the mark once too.
	next := at.Add(time.Minute)
	missA, errA := a.Schedules().Miss(ctx, org.ID, s.ID, next, next, store.Missed{}, "the agent's parameters changed")
	missB, errB := b.Schedules().Miss(ctx, org.ID, s.ID, next, next, store.Missed{}, "the agent's parameters changed")
	if errA != nil || errB != nil || missA != store.FireSkipped || missB != store.FireAlreadyHandled {
		t.Errorf("misses: %v %v, %v %v", missA, errA, missB, errB)
	}
}

// TestScriptsOfAgents: as storetest's ScriptsVersionsAndIndex and
// ScriptRecord for the scripts of agents, and daemons that record one
// agent's script at once make one script.
func TestScriptsOfAgents(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	ag := agent(t, a, org.ID, "Search")
	wpid := ag.WorkflowPermanentID
	file := func(note string) []byte {
		return []byte("format: abctl.script/v1\nagent: " + wpid + "\nnote: " + note + "\n")
	}

	const records = 8
	revs := make([]*store.ScriptRevision, records)
	created := make([]bool, records)
	errs := make([]error, records)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range records {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			revs[i], created[i], errs[i] = st.Scripts().Record(ctx, org.ID, wpid, "", "wr_1", file("same"))
		}()
	}
	close(start)
	wg.Wait()
	made := 0
	for i := range records {
		if errs[i] != nil {
			t.Fatalf("record %d: %v", i, errs[i])
		}
		if created[i] {
			made++
		}
		if revs[i].ScriptID != revs[0].ScriptID || revs[i].Version != 1 {
			t.Errorf("record %d: %+v", i, revs[i])
		}
	}
	if made != 1 {
		t.Errorf("%d records created a script, want 1", made)
	}
	changed, ok, err := b.Scripts().Record(ctx, org.ID, wpid, store.DefaultCacheKey, "wr_2", file("changed"))
	if err != nil || !ok || changed.Version != 2 || changed.ScriptID != revs[0].ScriptID {
		t.Errorf("a changed recording %+v %v %v", changed, ok, err)
	}
	eu, ok, err := a.Scripts().Record(ctx, org.ID, wpid, "eu\x00odd", "wr_3", file("eu"))
	if err != nil || !ok || eu.ScriptID == revs[0].ScriptID || eu.CacheKey != "eu\x00odd" {
		t.Errorf("another cache key %+v %v %v", eu, ok, err)
	}
	if got, err := b.Scripts().ForAgent(ctx, org.ID, wpid, "eu\x00odd"); err != nil || got.ScriptID != eu.ScriptID {
		t.Errorf("for the other cache key %+v %v", got, err)
	}
	byVersion, err := a.Scripts().Create(ctx, org.ID, store.ScriptInput{WorkflowPermanentID: ag.WorkflowID, Content: file("newer")})
	if err != nil || byVersion.WorkflowPermanentID != wpid {
		t.Fatalf("create by version id %+v %v", byVersion, err)
	}
	if got, err := a.Scripts().ForAgent(ctx, org.ID, wpid, ""); err != nil || got.ScriptID != byVersion.ScriptID {
		t.Errorf("the index after a create %+v %v", got, err)
	}
	for _, id := range []string{"wpid_404", "w_404"} {
		if _, err := a.Scripts().Create(ctx, org.ID, store.ScriptInput{WorkflowPermanentID: id, Content: file("x")}); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("create for %s: %v", id, err)
		}
	}
	other, _, _ := a.CreateOrganization(ctx, "other")
	if _, _, err := a.Scripts().Record(ctx, other.ID, wpid, "", "wr_7", file("x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("recording for another organization's agent: %v", err)
	}
	if list, err := a.Scripts().List(ctx, org.ID, 1, 10, wpid); err != nil || len(list) != 3 || list[0].ScriptID != byVersion.ScriptID {
		t.Errorf("list by agent %+v %v", list, err)
	}
}

// TestFireConflictLeavesNoTrace: a fire whose run id is taken fails with
// ErrConflict and leaves the schedule as it was (no mark moved, no tag).
func TestFireConflictLeavesNoTrace(t *testing.T) {
	st, _, org := twoDaemons(t)
	ctx := t.Context()
	wpid := agent(t, st, org.ID, "Invoices").WorkflowPermanentID
	from := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	first := newSchedule(t, st, org.ID, wpid, "* * * * *", from)
	second := newSchedule(t, st, org.ID, wpid, "* * * * *", from)
	at := from.Add(30 * time.Second)
	run := scheduledRun(org.ID, wpid, first.ID)
	out, err := st.Schedules().Fire(ctx, org.ID, first.ID, at, at, store.Missed{}, run)
	skipUntilMerged(t, err)
	if err != nil || out != store.FireStarted {
		t.Fatalf("fire: %v %v", out, err)
	}
	dup := scheduledRun(org.ID, wpid, second.ID)
	dup.ID = run.ID
	if _, err := st.Schedules().Fire(ctx, org.ID, second.ID, at, at, store.Missed{Count: 1, Latest: at}, dup); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("fire with a taken id: %v", err)
	}
	rec, err := st.Schedules().Get(ctx, org.ID, wpid, second.ID)
	if err != nil || !rec.HandledThrough.Equal(from) || rec.LastRunID != "" || rec.MissedFires != 0 {
		t.Errorf("a failed fire changed the schedule: %+v %v", rec, err)
	}
	if dup.QueuedAt != nil {
		t.Errorf("a failed fire stamped its run: %+v", dup)
	}
}
