package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/definition"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/storetest"
)

var ctx = context.Background()

// testClock starts at a fixed time and moves 1ms forward at every reading,
// so that every transaction of a test has its own timestamp.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock {
	return &testClock{t: time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

type fixture struct {
	*Store
	t     *testing.T
	path  string
	clock *testClock
	gen   *ids.Generator // the store's
	org   store.Organization
	key   string
}

// newFixture opens a store in a temporary directory with one organization.
// Its runs have views (storetest.TestViews).
func newFixture(t *testing.T) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "abctl.db")
	clock := newClock()
	gen := ids.NewWithClock(42, clock.Now)
	s, err := Open(path, store.Options{Now: clock.Now, IDs: gen, RunViews: storetest.TestViews{}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{Store: s, t: t, path: path, clock: clock, gen: gen}
	t.Cleanup(func() {
		f.checkInvariants()
		f.Close()
	})
	f.org, f.key, err = s.CreateOrganization(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) newOrg(name string) store.Organization {
	f.t.Helper()
	org, _, err := f.CreateOrganization(ctx, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return org
}

// version returns a copy of def made into a new version as the API makes
// it before storing it (package definition): a workflow_id, created_at
// and the definition in the response shape.
func (f *fixture) version(def *client.Agent) *client.Agent {
	f.t.Helper()
	data, err := json.Marshal(def) // a deep copy: NewVersion changes the definition
	if err != nil {
		f.t.Fatal(err)
	}
	a, err := decodeAgent(data)
	if err != nil {
		f.t.Fatal(err)
	}
	definition.NewVersion(a, f.gen, client.NewTime(f.clock.Now()))
	return a
}

// create stores def as a new agent, as the API does.
func (f *fixture) create(orgID string, def *client.Agent) *client.Agent {
	f.t.Helper()
	a, created, err := f.Agents().Create(ctx, orgID, f.version(def), "")
	if err != nil || !created {
		f.t.Fatalf("Agents.Create: %v, created=%v", err, created)
	}
	return a
}

// update stores def as a new version of the agent, as the API does.
func (f *fixture) update(orgID, wpid string, def *client.Agent) *client.Agent {
	f.t.Helper()
	a, err := f.Agents().Update(ctx, orgID, wpid, f.version(def))
	if err != nil {
		f.t.Fatalf("Agents.Update: %v", err)
	}
	return a
}

func (f *fixture) folder(orgID, title string) *client.Folder {
	f.t.Helper()
	fl, err := f.Folders().Create(ctx, orgID, title, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return fl
}

func (f *fixture) list(orgID string, q store.AgentQuery) []string {
	f.t.Helper()
	as, err := f.Agents().List(ctx, orgID, q)
	if err != nil {
		f.t.Fatalf("Agents.List: %v", err)
	}
	return wpids(as)
}

func wpids(as []*client.Agent) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.WorkflowPermanentID)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr[T any](v T) *T { return &v }

// checkInvariants checks the fixture's store (checkInvariants).
func (f *fixture) checkInvariants() {
	f.t.Helper()
	checkInvariants(f.t, f.Store, true)
}

// checkInvariants rebuilds, for every organization, what putSummary
// maintains (summaries, order index, folder counters) from the version rows
// and compares it with what is stored; and checks that the tag buckets
// (checkTagInvariants) and the run index (checkRunIndex) agree with the
// records, and, with views, that every run has the view the store's
// RunViews make of it (checkRunViews).
func checkInvariants(t *testing.T, s *Store, views bool) {
	t.Helper()
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOrgData).ForEachBucket(func(orgID []byte) error {
			o, err := openOrg(tx, string(orgID))
			if err != nil {
				return err
			}
			checkTagInvariants(t, o)
			if views {
				checkRunViews(t, o, s.views)
			}
			checkRunIndex(t, o)
			// Group rows by wpid.
			rows := map[string][]*client.Agent{}
			err = o.agents().ForEach(func(k, v []byte) error {
				a, err := decodeAgent(v)
				if err != nil {
					return err
				}
				if !bytes.Equal(k, agentKey(a.WorkflowPermanentID, a.Version)) {
					t.Errorf("row key %q holds %s v%d", k, a.WorkflowPermanentID, a.Version)
				}
				rows[a.WorkflowPermanentID] = append(rows[a.WorkflowPermanentID], a)
				return nil
			})
			if err != nil {
				return err
			}
			wantOrder := map[string]bool{}
			wantCounts := map[string]int{}
			nsum := 0
			for wpid, rs := range rows {
				latest := rs[len(rs)-1]
				for i, r := range rs {
					if r.Version != i+1 {
						t.Errorf("%s: versions not 1..n: %d at %d", wpid, r.Version, i)
					}
					if (r.DeletedAt != nil) != (latest.DeletedAt != nil) {
						t.Errorf("%s: v%d and the latest disagree on deletion", wpid, r.Version)
					}
				}
				want, _ := encodeSummary(summaryOf(latest))
				got := o.summaries().Get([]byte(wpid))
				if !bytes.Equal(got, want) {
					t.Errorf("%s: summary\n got %s\nwant %s", wpid, got, want)
				}
				if latest.DeletedAt == nil {
					wantOrder[string(orderKey(latest.CreatedAt.UnixNano(), wpid))] = true
					if latest.FolderID != nil {
						wantCounts[*latest.FolderID]++
					}
				}
			}
			_ = o.summaries().ForEach(func(k, v []byte) error {
				nsum++
				if _, ok := rows[string(k)]; !ok {
					t.Errorf("summary %s without rows", k)
				}
				return nil
			})
			if nsum != len(rows) {
				t.Errorf("%d summaries for %d agents", nsum, len(rows))
			}
			var gotOrder []string
			_ = o.order().ForEach(func(k, v []byte) error {
				gotOrder = append(gotOrder, string(k))
				if len(k) > 8 && !bytes.Equal(v, o.summaries().Get(k[8:])) {
					t.Errorf("order entry of %s does not carry its summary", k[8:])
				}
				return nil
			})
			if len(gotOrder) != len(wantOrder) {
				t.Errorf("order index has %d entries, want %d", len(gotOrder), len(wantOrder))
			}
			for _, k := range gotOrder {
				if !wantOrder[k] {
					t.Errorf("stray order entry %q", k)
				}
			}
			gotCounts := map[string]int{}
			_ = o.counts().ForEach(func(k, v []byte) error {
				gotCounts[string(k)] = folderCount(o, string(k))
				return nil
			})
			if mustJSON(t, gotCounts) != mustJSON(t, wantCounts) {
				t.Errorf("folder counts %v, want %v", gotCounts, wantCounts)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkRunViews verifies that every run has the view that views make of
// its record (none without views), and no view is left without a run.
func checkRunViews(t *testing.T, o *orgTx, views store.RunViews) {
	t.Helper()
	_ = o.runs().ForEach(func(k, v []byte) error {
		rec := new(store.RunRecord)
		if err := json.Unmarshal(v, rec); err != nil {
			t.Errorf("run %s: %v", k, err)
			return nil
		}
		want, err := []byte(nil), errors.New("no views")
		if views != nil {
			want, err = views.Encode(rec)
		}
		if got := o.runViews().Get(k); err == nil && !bytes.Equal(got, want) || err != nil && got != nil {
			t.Errorf("run %s: stored view %q, want %q (%v)", k, got, want, err)
		}
		return nil
	})
	_ = o.runViews().ForEach(func(k, _ []byte) error {
		if o.runs().Get(k) == nil {
			t.Errorf("view %s without a run", k)
		}
		return nil
	})
}

// checkRunIndex verifies that every run has its run_order entry, under its
// creation time, holding the summary its record makes; that no entry is
// left without a run; and that run_steps holds steps of existing runs
// only, at most MaxRunSteps of each.
func checkRunIndex(t *testing.T, o *orgTx) {
	t.Helper()
	n := 0
	_ = o.runs().ForEach(func(k, v []byte) error {
		n++
		rec, err := decodeRun(k, v)
		if err != nil {
			t.Errorf("run %s: %v", k, err)
			return nil
		}
		if got, want := o.runOrder().Get(runOrderKey(rec)), encodeRunSummary(rec); !bytes.Equal(got, want) {
			t.Errorf("run %s: list entry %q, want %q", k, got, want)
		}
		return nil
	})
	if got := o.runOrder().Stats().KeyN; got != n {
		t.Errorf("%d run list entries for %d runs", got, n)
	}
	perRun := map[string]int{}
	_ = o.runSteps().ForEach(func(k, _ []byte) error {
		i := bytes.IndexByte(k, 0)
		if i < 0 || len(k) != i+5 || o.runs().Get(k[:i]) == nil {
			t.Errorf("step entry %q of no run", k)
			return nil
		}
		perRun[string(k[:i])]++
		return nil
	})
	for id, c := range perRun {
		if c > store.MaxRunSteps {
			t.Errorf("run %s keeps %d steps, more than %d", id, c, store.MaxRunSteps)
		}
	}
}
