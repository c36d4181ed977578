package pgstore_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
)

// agent creates an agent titled title.
func agent(t *testing.T, st *pgstore.Store, orgID, title string) *client.Agent {
	t.Helper()
	a, _, err := st.Agents().Create(t.Context(), orgID, &client.Agent{Title: title, Status: client.AgentStatusPublished, RunWith: "agent"}, "")
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

// TestRecordsAcrossDaemons: daemons that record one agent's script at
// once make one script: one of them creates it, the others find it; a
// changed recording from the other daemon is its version 2.
func TestRecordsAcrossDaemons(t *testing.T) {
	a, b, org := twoDaemons(t)
	ctx := t.Context()
	wpid := agent(t, a, org.ID, "Search").WorkflowPermanentID
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
	if list, err := a.Scripts().List(ctx, org.ID, 1, 10, wpid); err != nil || len(list) != 1 || list[0].Version != 2 {
		t.Errorf("list by agent %+v %v", list, err)
	}
}
