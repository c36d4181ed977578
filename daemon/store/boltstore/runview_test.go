package boltstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/storetest"
)

func (f *fixture) now() client.Time { return client.NewTime(f.clock.Now()) }

// closeAndOpen closes the store and opens the same file again with views,
// without checking its invariants first (for tests that change the file
// by hand).
func (f *fixture) closeAndOpen(views store.RunViews) {
	f.t.Helper()
	if err := f.Close(); err != nil {
		f.t.Fatal(err)
	}
	s, err := Open(f.path, store.Options{Now: f.clock.Now, IDs: ids.NewWithClock(44, f.clock.Now), RunViews: views})
	if err != nil {
		f.t.Fatal(err)
	}
	f.Store = s
}

func (f *fixture) newRun(typ client.RunType, mod func(*store.RunRecord)) *store.RunRecord {
	f.t.Helper()
	rec := &store.RunRecord{ID: f.Runs().NewID(typ), OrgID: f.org.ID, Type: typ, Status: client.RunStatusCreated,
		RunRequest: json.RawMessage(`{"prompt":"Find <the> price & \u00e9 \"quoted\""}`)}
	if mod != nil {
		mod(rec)
	}
	if err := f.Runs().Create(ctx, rec); err != nil {
		f.t.Fatal(err)
	}
	return rec
}

func (f *fixture) updateRun(id string, change func(*store.RunRecord)) {
	f.t.Helper()
	if _, err := f.Runs().Update(ctx, f.org.ID, id, func(r *store.RunRecord) error { change(r); return nil }); err != nil {
		f.t.Fatal(err)
	}
}

// storedView returns a copy of the view Runs.View hands out for a run, nil
// when it has none (ErrNoRunView).
func (f *fixture) storedView(orgID, id string) []byte {
	f.t.Helper()
	var view []byte
	err := f.Runs().View(ctx, orgID, id, func(v []byte) error {
		view = bytes.Clone(v)
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoRunView) {
		f.t.Fatal(err)
	}
	return view
}

// checkView asserts that the run's stored view is the one the fixture's
// views make of its stored record.
func (f *fixture) checkView(orgID, id string) {
	f.t.Helper()
	rec, err := f.Runs().Get(ctx, orgID, id)
	if err != nil {
		f.t.Fatal(err)
	}
	want, err := storetest.TestViews{}.Encode(rec)
	if err != nil {
		f.t.Fatal(err)
	}
	if got := f.storedView(orgID, id); !bytes.Equal(got, want) {
		f.t.Fatalf("run %s (%s): view %q, want %q", id, rec.Status, got, want)
	}
}

// TestRunViewMigration opens a store of schema 3 (runs without views) and
// finds every run's view made.
func TestRunViewMigration(t *testing.T) {
	f := newFixture(t)
	var runIDs []string
	for i := range 5 {
		rec := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = fmt.Sprint("run ", i) })
		f.updateRun(rec.ID, func(r *store.RunRecord) {
			r.Status = client.RunStatusCompleted
			r.Files = []store.RunFile{{ID: "a_1", Type: client.ArtifactScreenshot, Name: "s.png", CreatedAt: f.now()}}
		})
		runIDs = append(runIDs, rec.ID)
	}
	// Back to schema 3: no run_views buckets, no format fingerprint.
	err := f.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketOrgData).Bucket([]byte(f.org.ID)).DeleteBucket(bucketRunViews); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if err := meta.Delete(keyRunViewFormat); err != nil {
			return err
		}
		return meta.Put(keySchemaVersion, u64(3))
	})
	if err != nil {
		t.Fatal(err)
	}
	f.closeAndOpen(storetest.TestViews{})
	_ = f.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bucketMeta).Get(keySchemaVersion); !bytes.Equal(got, u64(SchemaVersion())) {
			t.Errorf("schema %x after reopening, want %d", got, SchemaVersion())
		}
		return nil
	})
	for _, id := range runIDs {
		f.checkView(f.org.ID, id)
	}
}
