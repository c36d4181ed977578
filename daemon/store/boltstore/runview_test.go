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
)

func (f *fixture) now() client.Time { return client.NewTime(f.clock.Now()) }

// closeAndOpen closes the store and opens the same file again with views,
// without the invariant checks of reopen (for tests that damage the file).
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
	want, err := testViews{}.Encode(rec)
	if err != nil {
		f.t.Fatal(err)
	}
	if got := f.storedView(orgID, id); !bytes.Equal(got, want) {
		f.t.Fatalf("run %s (%s): view %q, want %q", id, rec.Status, got, want)
	}
}

// TestRunViewWrittenWithRecord: every write of a run writes the view its
// views make of the record as written.
func TestRunViewWrittenWithRecord(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	f.checkView(f.org.ID, rec.ID)
	for _, move := range []func(*store.RunRecord){
		func(r *store.RunRecord) { r.Status = client.RunStatusQueued },
		func(r *store.RunRecord) { r.Status = client.RunStatusRunning },
		func(r *store.RunRecord) {
			r.Files = append(r.Files, store.RunFile{ID: "a_1", Type: client.ArtifactScreenshot, Name: "s.jpg", CreatedAt: f.now()})
		},
		func(r *store.RunRecord) { r.Status = client.RunStatusCompleted },
	} {
		f.updateRun(rec.ID, move)
		f.checkView(f.org.ID, rec.ID)
	}
}

// TestRunViewNone: a run whose view cannot be made has none (its stale
// view is removed), until a write whose view can be made.
func TestRunViewNone(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	f.checkView(f.org.ID, rec.ID)
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Title = noViewTitle })
	err := f.Runs().View(ctx, f.org.ID, rec.ID, func([]byte) error { t.Fatal("called without a view"); return nil })
	if !errors.Is(err, store.ErrNoRunView) {
		t.Fatalf("View of a run without a view: %v", err)
	}
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Title = "" })
	f.checkView(f.org.ID, rec.ID)
}

func TestRunViewNotFound(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	other := f.newOrg("other")
	for _, c := range []struct{ org, id string }{
		{f.org.ID, "tsk_1"}, {f.org.ID, ""}, {f.org.ID, "tsk\x00"}, {other.ID, rec.ID}, {"o_missing", rec.ID},
	} {
		err := f.Runs().View(ctx, c.org, c.id, func([]byte) error { t.Fatal("called"); return nil })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("View(%q, %q): %v, want ErrNotFound", c.org, c.id, err)
		}
	}
}

// TestRunViewCallbackError: the error of the reader's function comes back
// as it is.
func TestRunViewCallbackError(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	mine := errors.New("mine")
	if err := f.Runs().View(ctx, f.org.ID, rec.ID, func([]byte) error { return mine }); err != mine {
		t.Fatalf("View: %v, want the function's error", err)
	}
}

// TestRunViewWithoutRunViews: a store opened without RunViews writes runs
// without views, removing the stale ones; the file's format is left as it
// is, so that a store with views opened next does not make them again: the
// runs written meanwhile have none until their next write.
func TestRunViewWithoutRunViews(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	kept := f.newRun(client.RunTypeTaskV1, nil)
	f.closeAndOpen(nil)
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusQueued })
	if v := f.storedView(f.org.ID, rec.ID); v != nil {
		t.Fatalf("view written without RunViews: %q", v)
	}
	f.closeAndOpen(testViews{})
	if v := f.storedView(f.org.ID, rec.ID); v != nil {
		t.Fatalf("view made again under the same format: %q", v)
	}
	f.checkView(f.org.ID, kept.ID)
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	f.checkView(f.org.ID, rec.ID)
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
	f.closeAndOpen(testViews{})
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

// TestRunViewFormatChange: views made by RunViews of another Format are
// made again when the store opens; under the same Format they are left
// alone.
func TestRunViewFormatChange(t *testing.T) {
	f := newFixture(t)
	rec := f.newRun(client.RunTypeWorkflowRun, nil)
	damage := func() {
		err := f.db.Update(func(tx *bolt.Tx) error {
			o, _ := openOrg(tx, f.org.ID)
			return o.runViews().Put([]byte(rec.ID), []byte("damaged"))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	damage()
	f.closeAndOpen(testViews{})
	if view := f.storedView(f.org.ID, rec.ID); string(view) != "damaged" {
		t.Fatalf("a view under the current format was made again: %q", view)
	}
	f.closeAndOpen(testViews{format: "2"})
	f.checkView(f.org.ID, rec.ID)
	_ = f.db.View(func(tx *bolt.Tx) error {
		if got := tx.Bucket(bucketMeta).Get(keyRunViewFormat); string(got) != "test views 2" {
			t.Errorf("format %q after the views were made again", got)
		}
		return nil
	})
	// Back to the fixture's views, whose format differs again.
	f.closeAndOpen(testViews{})
	f.checkView(f.org.ID, rec.ID)
}
