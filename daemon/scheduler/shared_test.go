package scheduler

// Schedulers of several daemons on one PostgreSQL database: each over its
// own pgstore handle, all on one manual clock. Every fire time starts one
// run in total, whichever daemon saved the schedule, and a schedule
// disabled or deleted through one daemon stops firing in all of them.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// sharedBound bounds every wait for something the schedulers do at once
// after the clock moved; a loaded machine may be slow, never this slow.
const sharedBound = 30 * time.Second

var sharedSecret = bytes.Repeat([]byte{7}, store.SecretSize)

// testRuns makes the runs of the fire times as the API server would, with
// no more than the store needs.
type testRuns struct{ st store.Store }

func (m testRuns) NewTriggeredRun(_ context.Context, orgID string, req *client.AgentRunRequest) (*store.RunRecord, error) {
	return &store.RunRecord{ID: m.st.Runs().NewID(client.RunTypeWorkflowRun), OrgID: orgID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, AgentID: req.AgentID, AgentVersion: 1}, nil
}

// cluster is n schedulers on one database and one clock, with what they
// did.
type cluster struct {
	t      *testing.T
	clock  *ManualClock
	org    string
	wpid   string
	stores []*pgstore.Store
	scheds []*Scheduler

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced at every event
	stopped   []bool
	passed    []time.Time    // the clock's time of each scheduler's latest pass
	fires     []Fire         // every scheduler's fire events
	submitted map[string]int // run id: how many times Submit was given it
	errs      []error        // of the Submit callbacks
}

// newCluster opens n handles on a new database, makes an organization and
// an agent, and lets before save schedules before the schedulers start.
func newCluster(t *testing.T, n int, start time.Time, sync time.Duration, before func(c *cluster)) *cluster {
	t.Helper()
	url := pgtest.Shared(t).NewDatabase(t)
	c := &cluster{t: t, clock: NewManualClock(start), changed: make(chan struct{}),
		stopped: make([]bool, n), passed: make([]time.Time, n), submitted: map[string]int{}}
	for range n {
		st, err := pgstore.Open(t.Context(), url, store.Options{Secret: sharedSecret, Now: c.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		c.stores = append(c.stores, st)
	}
	org, _, err := c.stores[0].CreateOrganization(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := c.stores[0].Agents().Create(t.Context(), org.ID, &client.Agent{Title: "Invoices", Status: client.AgentStatusPublished, RunWith: "agent"}, "")
	if err != nil {
		t.Fatal(err)
	}
	c.org, c.wpid = org.ID, a.WorkflowPermanentID
	if before != nil {
		before(c)
	}
	for i, st := range c.stores {
		s := New(Config{Store: st, Runs: testRuns{st}, Clock: c.clock, Sync: sync,
			Submit: func(orgID, runID string) {
				// The run ends at once, so that the next fire time is not
				// skipped for overlap.
				_, err := st.Runs().Update(context.Background(), orgID, runID, func(rec *store.RunRecord) error {
					rec.Status = client.RunStatusCompleted
					return nil
				})
				c.event(func() {
					c.submitted[runID]++
					if err != nil {
						c.errs = append(c.errs, fmt.Errorf("end run %s: %w", runID, err))
					}
				})
			},
			OnFire: func(f Fire) { c.event(func() { c.fires = append(c.fires, f) }) },
		})
		s.onPass = func(now time.Time) { c.event(func() { c.passed[i] = now }) }
		if err := s.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		c.scheds = append(c.scheds, s)
		t.Cleanup(func() { c.stop(i) })
	}
	return c
}

// event records something a scheduler did and wakes the waits.
func (c *cluster) event(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitFor waits until cond (called with c.mu held) holds.
func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	timeout := time.After(sharedBound)
	for {
		c.mu.Lock()
		ok, changed := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			c.t.Fatalf("waited %v for %s", sharedBound, what)
		}
	}
}

// waitPassed waits until every running scheduler has passed over the
// schedules at at or later.
func (c *cluster) waitPassed(at time.Time) {
	c.t.Helper()
	c.waitFor("every scheduler to pass at "+at.Format(time.TimeOnly), func() bool {
		for i, p := range c.passed {
			if !c.stopped[i] && p.Before(at) {
				return false
			}
		}
		return true
	})
}

// waitSubmitted waits until n runs were submitted in all.
func (c *cluster) waitSubmitted(n int) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("%d runs", n), func() bool { return len(c.submitted) >= n })
}

func (c *cluster) stop(i int) {
	c.mu.Lock()
	stopped := c.stopped[i]
	c.stopped[i] = true
	c.mu.Unlock()
	if !stopped {
		c.scheds[i].Stop()
	}
}

func (c *cluster) schedule(st store.Store, cron string) *store.ScheduleRecord {
	c.t.Helper()
	rec, err := st.Schedules().Create(c.t.Context(), c.org, c.wpid, &store.ScheduleInput{Cron: cron, Timezone: "UTC", Enabled: true,
		From: c.clock.Now(), Parameters: map[string]json.RawMessage{"url": json.RawMessage(`"https://example.com/a"`)}})
	if err != nil {
		c.t.Fatal(err)
	}
	return rec
}

// fireTimes returns, per schedule, the fire times of the runs stored,
// oldest first.
func (c *cluster) fireTimes() map[string][]time.Time {
	c.t.Helper()
	runs, err := c.stores[0].Runs().Records(c.t.Context(), c.org, store.RunQuery{PageSize: 1000, AgentIDs: []string{c.wpid}}, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string][]time.Time{}
	for _, r := range runs {
		if r.ScheduledFor == nil || r.Trigger != client.RunTriggerScheduled {
			c.t.Errorf("run %s is not a scheduled run: %+v", r.ID, r)
			continue
		}
		out[r.ScheduleID] = append(out[r.ScheduleID], r.ScheduledFor.UTC())
	}
	for _, ts := range out {
		slices.SortFunc(ts, time.Time.Compare)
	}
	return out
}

// check checks the fire events and the Submit calls: each run submitted
// once, one FireStarted per run, every other event a quiet
// FireAlreadyHandled (another daemon fired the time) or FireDisabled.
func (c *cluster) check() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, err := range c.errs {
		c.t.Error(err)
	}
	for id, n := range c.submitted {
		if n != 1 {
			c.t.Errorf("run %s submitted %d times", id, n)
		}
	}
	started := 0
	for _, f := range c.fires {
		switch {
		case f.Err != nil || f.Missed != 0:
			c.t.Errorf("fire event %+v", f)
		case f.Outcome == store.FireStarted:
			started++
			if c.submitted[f.RunID] != 1 {
				c.t.Errorf("started run %s was not submitted", f.RunID)
			}
		case f.Outcome != store.FireAlreadyHandled && f.Outcome != store.FireDisabled:
			c.t.Errorf("fire event %+v", f)
		}
	}
	c.t.Logf("%d fire events, %d runs started", len(c.fires), started)
	if started != len(c.submitted) {
		c.t.Errorf("%d runs started, %d submitted", started, len(c.submitted))
	}
}

func seconds(from time.Time, first, last int) []time.Time {
	var out []time.Time
	for i := first; i <= last; i++ {
		out = append(out, from.Add(time.Duration(i)*time.Second))
	}
	return out
}

// TestSharedScheduleFiresOncePerSecond: a schedule firing every second
// fires once per second in total across three daemons for 20 s, also after
// the daemon that saved it stops; the others learn of it by their Sync.
func TestSharedScheduleFiresOncePerSecond(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := newCluster(t, 3, start, DefaultSync, nil)
	s := c.schedule(c.stores[0], "* * * * * *")
	c.scheds[0].Wake() // as daemon 0's API does; the others are not told
	for i := 1; i <= 20; i++ {
		if i == 11 {
			c.stop(0)
		}
		c.clock.Set(start.Add(time.Duration(i) * time.Second))
		c.waitSubmitted(i)
	}
	for i := range c.scheds {
		c.stop(i)
	}
	c.check()
	got := c.fireTimes()
	if want := seconds(start, 1, 20); !slices.Equal(got[s.ID], want) || len(got) != 1 {
		t.Errorf("fire times of the runs: %v, want one run a second: %v", got, want)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 1; i < 3; i++ {
		if c.passed[i].Before(start.Add(20 * time.Second)) {
			t.Errorf("scheduler %d's last pass was at %v: it did not plan the schedule saved through another daemon", i, c.passed[i])
		}
	}
}

// TestSharedScheduleSavedElsewhereFires: a schedule saved through the
// store after the schedulers started, with no Wake, is seen within the
// Sync and its fire time starts one run in all.
func TestSharedScheduleSavedElsewhereFires(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)
	c := newCluster(t, 3, start, DefaultSync, nil)
	s := c.schedule(c.stores[2], "* * * * *")
	// The schedulers' only wait without Sync would be maxWait, past the
	// fire time at 00:01:00.
	c.clock.Set(start.Add(DefaultSync))
	c.waitPassed(start.Add(DefaultSync))
	at := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	c.clock.Set(at)
	c.waitSubmitted(1)
	c.waitPassed(at)
	c.check()
	if got := c.fireTimes(); !slices.Equal(got[s.ID], []time.Time{at}) || len(got) != 1 {
		t.Errorf("fire times of the runs: %v, want one at %v", got, at)
	}
}

// TestSharedScheduleDisabledOrDeletedStops: a schedule disabled or deleted
// through one daemon (no Wake anywhere) fires in none from its next fire
// time; enabled again, it fires once a time again.
func TestSharedScheduleDisabledOrDeletedStops(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var keep, off, gone *store.ScheduleRecord
	c := newCluster(t, 3, start, DefaultSync, func(c *cluster) {
		keep = c.schedule(c.stores[0], "* * * * * *")
		off = c.schedule(c.stores[0], "* * * * * *")
		gone = c.schedule(c.stores[0], "* * * * * *")
	})
	ctx := t.Context()
	step := func(i int) {
		t.Helper()
		at := start.Add(time.Duration(i) * time.Second)
		c.clock.Set(at)
		c.waitFor("the run of "+at.Format(time.TimeOnly), func() bool {
			return slices.ContainsFunc(c.fires, func(f Fire) bool {
				return f.ScheduleID == keep.ID && f.At.Equal(at) && f.Outcome == store.FireStarted
			})
		})
		c.waitPassed(at)
	}
	step(1)
	c.waitSubmitted(3)
	if _, err := c.stores[2].Schedules().SetEnabled(ctx, c.org, c.wpid, off.ID, false, c.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if err := c.stores[2].Schedules().Delete(ctx, c.org, c.wpid, gone.ID); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 7; i++ { // past a Sync
		step(i)
	}
	if _, err := c.stores[1].Schedules().SetEnabled(ctx, c.org, c.wpid, off.ID, true, c.clock.Now()); err != nil {
		t.Fatal(err)
	}
	for i := 8; i <= 9; i++ {
		step(i)
	}
	c.waitSubmitted(1 + 9 + 1 + 2)
	for i := range c.scheds {
		c.stop(i)
	}
	c.check()
	got := c.fireTimes()
	if want := seconds(start, 1, 9); !slices.Equal(got[keep.ID], want) {
		t.Errorf("fire times of the schedule kept: %v, want %v", got[keep.ID], want)
	}
	if want := append(seconds(start, 1, 1), seconds(start, 8, 9)...); !slices.Equal(got[off.ID], want) {
		t.Errorf("fire times of the schedule disabled at 00:00:01 and enabled at 00:00:07: %v, want %v", got[off.ID], want)
	}
	if want := seconds(start, 1, 1); !slices.Equal(got[gone.ID], want) {
		t.Errorf("fire times of the schedule deleted at 00:00:01: %v, want %v", got[gone.ID], want)
	}
}

// TestSyncFor: only a store that other daemons may share gets a Sync.
func TestSyncFor(t *testing.T) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "abctl.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	if got := SyncFor(bolt); got != 0 {
		t.Errorf("SyncFor(bbolt) = %v, want 0", got)
	}
	pg, err := pgstore.Open(t.Context(), pgtest.Shared(t).NewDatabase(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if got := SyncFor(pg); got != DefaultSync {
		t.Errorf("SyncFor(PostgreSQL) = %v, want %v", got, DefaultSync)
	}
}
