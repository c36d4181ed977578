//go:build !windows

package daemon_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// TestScheduleSurvivesKill9: a daemon process firing a per-second schedule
// is killed with SIGKILL; the next daemon on the same data directory goes
// on firing it, and no fire time ever has two runs.
func TestScheduleSurvivesKill9(t *testing.T) {
	dir := t.TempDir()
	const key = "abk_schedule_kill_test_key"
	addr, proc := startDaemonProcess(t, dir, key)
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	agent := agentForSchedules(t, c)
	id := createSchedule(t, c, agent.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "* * * * * *", Timezone: "UTC"}).Schedule.WorkflowScheduleID

	// waitRuns waits until the schedule has started at least n runs.
	waitRuns := func(c *client.Client, n int) []*client.RunListItem {
		t.Helper()
		deadline := time.Now().Add(scheduleBound)
		for {
			runs := scheduledRuns(t, c, id)
			if len(runs) >= n {
				return runs
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d runs of the schedule within %v, want %d", len(runs), scheduleBound, n)
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-t.Context().Done():
				t.Fatal(t.Context().Err())
			}
		}
	}
	before := len(waitRuns(c, 3))
	if err := proc.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = proc.Process.Wait()

	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: key, Executor: &scripted.Executor{}, Workers: 2})
	c2, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	runs := waitRuns(c2, before+2)
	if err := c2.Schedules.Delete(t.Context(), agent.WorkflowPermanentID, id); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{Secret: readSecret(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.DefaultOrganization(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Time]string{}
	for _, r := range scheduledRunsIn(t, st, org.ID, runs) {
		if r.ScheduleID != id || r.ScheduledFor == nil {
			t.Errorf("run %s: schedule %q, fire time %v", r.ID, r.ScheduleID, r.ScheduledFor)
			continue
		}
		at := r.ScheduledFor.Time
		if other, twice := seen[at]; twice {
			t.Errorf("fire time %v has two runs: %s and %s", at, other, r.ID)
		}
		seen[at] = r.ID
	}
	if len(seen) < before+2 {
		t.Errorf("%d distinct fire times, want at least %d", len(seen), before+2)
	}
}

// scheduledRunsIn reads the stored records of the listed runs.
func scheduledRunsIn(t *testing.T, st store.Store, orgID string, listed []*client.RunListItem) []*store.RunRecord {
	t.Helper()
	out := make([]*store.RunRecord, 0, len(listed))
	for _, it := range listed {
		rec, err := st.Runs().Get(t.Context(), orgID, it.RunID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}
