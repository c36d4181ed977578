package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

func (f *fixture) now() client.Time { return client.NewTime(f.clock.Now()) }

// reopenViews closes the store and opens the same database again with
// views (nil: none) and another id worker; checkView then expects the
// views views makes, when they are TestViews.
func (f *fixture) reopenViews(views store.RunViews) {
	f.t.Helper()
	f.reopenWith(store.Options{Now: f.clock.Now, IDs: ids.NewWithClock(44, f.clock.Now), RunViews: views})
	if tv, ok := views.(TestViews); ok {
		f.views = tv
	}
}

// NewRun creates a run of typ in the organization (status created, a
// request with characters JSON escapes), changed by mod first when mod is
// not nil, and fails t on error.
func NewRun(t testing.TB, st store.Store, orgID string, typ client.RunType, mod func(*store.RunRecord)) *store.RunRecord {
	t.Helper()
	rec := &store.RunRecord{ID: st.Runs().NewID(typ), OrgID: orgID, Type: typ, Status: client.RunStatusCreated,
		RunRequest: json.RawMessage(`{"prompt":"Find <the> price & \u00e9 \"quoted\""}`)}
	if mod != nil {
		mod(rec)
	}
	if err := st.Runs().Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// UpdateRun applies change to a run and fails t on error.
func UpdateRun(t testing.TB, st store.Store, orgID, id string, change func(*store.RunRecord)) {
	t.Helper()
	if _, err := st.Runs().Update(ctx, orgID, id, func(r *store.RunRecord) error { change(r); return nil }); err != nil {
		t.Fatal(err)
	}
}

// StoredView returns a copy of the view Runs.View hands out for a run, nil
// when it has none (ErrNoRunView).
func StoredView(t testing.TB, st store.Store, orgID, id string) []byte {
	t.Helper()
	var view []byte
	err := st.Runs().View(ctx, orgID, id, func(v []byte) error {
		view = bytes.Clone(v)
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrNoRunView) {
		t.Fatal(err)
	}
	return view
}

func (f *fixture) newRun(typ client.RunType, mod func(*store.RunRecord)) *store.RunRecord {
	f.t.Helper()
	return NewRun(f.t, f.Backend, f.org.ID, typ, mod)
}

func (f *fixture) updateRun(id string, change func(*store.RunRecord)) {
	f.t.Helper()
	UpdateRun(f.t, f.Backend, f.org.ID, id, change)
}

func (f *fixture) storedView(orgID, id string) []byte {
	f.t.Helper()
	return StoredView(f.t, f.Backend, orgID, id)
}

// checkView asserts that the run's stored view is the one the views the
// store was last opened with make of its stored record.
func (f *fixture) checkView(orgID, id string) {
	f.t.Helper()
	rec, err := f.Runs().Get(ctx, orgID, id)
	if err != nil {
		f.t.Fatal(err)
	}
	want, err := f.views.Encode(rec)
	if err != nil {
		f.t.Fatal(err)
	}
	if got := f.storedView(orgID, id); !bytes.Equal(got, want) {
		f.t.Fatalf("run %s (%s): view %q, want %q", id, rec.Status, got, want)
	}
}

// testRunViewWrittenWithRecord: every write of a run writes the view its
// views make of the record as written.
func testRunViewWrittenWithRecord(t *testing.T, o opener) {
	f := newFixture(t, o)
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

// testRunViewNone: a run whose view cannot be made has none (its stale
// view is removed), until a write whose view can be made.
func testRunViewNone(t *testing.T, o opener) {
	f := newFixture(t, o)
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

func testRunViewNotFound(t *testing.T, o opener) {
	f := newFixture(t, o)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	other := f.newOrg("other")
	for _, c := range []struct{ org, id string }{
		{f.org.ID, "tsk_1"}, {f.org.ID, ""}, {f.org.ID, "tsk\x00"}, {other.ID, rec.ID}, {"o_missing", rec.ID},
	} {
		err := f.Runs().View(ctx, c.org, c.id, func([]byte) error { t.Fatal("called"); return nil })
		want := store.NotFoundError{Record: store.RecordRun, ID: c.id}
		if c.org == "o_missing" {
			want = store.NotFoundError{Record: store.RecordOrganization, ID: c.org}
		}
		wantNotFoundError(t, "View", err, want)
	}
}

// testRunViewCallbackError: the error of the reader's function comes back
// as it is.
func testRunViewCallbackError(t *testing.T, o opener) {
	f := newFixture(t, o)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	mine := errors.New("mine")
	if err := f.Runs().View(ctx, f.org.ID, rec.ID, func([]byte) error { return mine }); err != mine {
		t.Fatalf("View: %v, want the function's error", err)
	}
}

// testRunViewWithoutRunViews: a store opened without RunViews writes runs
// without views, removing the stale ones; the file's format is left as it
// is, so that a store with views opened next does not make them again: the
// runs written meanwhile have none until their next write.
func testRunViewWithoutRunViews(t *testing.T, o opener) {
	f := newFixture(t, o)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	kept := f.newRun(client.RunTypeTaskV1, nil)
	f.reopenViews(nil)
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusQueued })
	if v := f.storedView(f.org.ID, rec.ID); v != nil {
		t.Fatalf("view written without RunViews: %q", v)
	}
	f.reopenViews(TestViews{})
	if v := f.storedView(f.org.ID, rec.ID); v != nil {
		t.Fatalf("view made again under the same format: %q", v)
	}
	f.checkView(f.org.ID, kept.ID)
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	f.checkView(f.org.ID, rec.ID)
}

// testRunViewFormatChange: views made by RunViews of another Format are
// made again, of every organization, when the store opens; under the same
// Format they are left alone, even by RunViews that would make other
// views.
func testRunViewFormatChange(t *testing.T, o opener) {
	f := newFixture(t, o)
	rec := f.newRun(client.RunTypeWorkflowRun, nil)
	other := f.newOrg("other")
	theirs := &store.RunRecord{ID: f.Runs().NewID(client.RunTypeTaskV1), OrgID: other.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusCreated}
	if err := f.Runs().Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	made := f.storedView(f.org.ID, rec.ID)
	f.reopenViews(TestViews{mark: " (remade)"})
	if view := f.storedView(f.org.ID, rec.ID); !bytes.Equal(view, made) {
		t.Fatalf("a view under the current format was made again: %q, was %q", view, made)
	}
	f.reopenViews(TestViews{format: "2"})
	f.checkView(f.org.ID, rec.ID)
	f.checkView(other.ID, theirs.ID) // every organization's
	// Back to the fixture's views, whose format differs again.
	f.reopenViews(TestViews{})
	f.checkView(f.org.ID, rec.ID)
}
