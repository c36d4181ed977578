package boltstore

import (
	"bytes"
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
	return storetest.NewRun(f.t, f.Store, f.org.ID, typ, mod)
}

func (f *fixture) updateRun(id string, change func(*store.RunRecord)) {
	f.t.Helper()
	storetest.UpdateRun(f.t, f.Store, f.org.ID, id, change)
}

func (f *fixture) storedView(orgID, id string) []byte {
	f.t.Helper()
	return storetest.StoredView(f.t, f.Store, orgID, id)
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
