package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

func folderIDs(fs []*client.Folder) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.FolderID)
	}
	return out
}

func testFolderCRUD(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl, err := f.Folders().Create(ctx, f.org.ID, "Finance", "")
	if err != nil {
		t.Fatal(err)
	}
	if prefix, _, ok := ids.Parse(fl.FolderID); !ok || prefix != "fld" {
		t.Fatalf("folder id %q", fl.FolderID)
	}
	if fl.Title != "Finance" || fl.Description != nil || fl.OrganizationID != f.org.ID || fl.WorkflowCount != 0 ||
		fl.CreatedAt.IsZero() || !fl.ModifiedAt.Equal(fl.CreatedAt.Time) {
		t.Fatalf("created %+v", fl)
	}
	if !strings.Contains(mustJSON(t, fl), `"description":null`) {
		t.Fatalf("empty description not null: %s", mustJSON(t, fl))
	}
	withDesc, _ := f.Folders().Create(ctx, f.org.ID, "Ops", "Daily jobs")
	if withDesc.Description == nil || *withDesc.Description != "Daily jobs" {
		t.Fatalf("description %v", withDesc.Description)
	}
	got, err := f.Folders().Get(ctx, f.org.ID, fl.FolderID)
	if err != nil || mustJSON(t, got) != mustJSON(t, fl) {
		t.Fatalf("GetFolder %v %v", got, err)
	}
	_, err = f.Folders().Get(ctx, f.org.ID, "fld_404")
	wantErr(t, err, store.ErrNotFound, "folder fld_404 not found")

	// nil leaves a field alone; modified_at moves even for an empty update.
	up, err := f.Folders().Update(ctx, f.org.ID, withDesc.FolderID, nil, nil)
	if err != nil || up.Title != "Ops" || *up.Description != "Daily jobs" || !up.ModifiedAt.After(withDesc.ModifiedAt.Time) ||
		!up.CreatedAt.Equal(withDesc.CreatedAt.Time) {
		t.Fatalf("empty update %+v %v", up, err)
	}
	up2, err := f.Folders().Update(ctx, f.org.ID, withDesc.FolderID, new("Operations"), nil)
	if err != nil || up2.Title != "Operations" || *up2.Description != "Daily jobs" || !up2.ModifiedAt.After(up.ModifiedAt.Time) {
		t.Fatalf("title update %+v %v", up2, err)
	}
	up3, err := f.Folders().Update(ctx, f.org.ID, withDesc.FolderID, nil, new(""))
	if err != nil || up3.Title != "Operations" || up3.Description == nil || *up3.Description != "" {
		t.Fatalf("description update %+v %v", up3, err)
	}
	if got, _ := f.Folders().Get(ctx, f.org.ID, withDesc.FolderID); mustJSON(t, got) != mustJSON(t, up3) {
		t.Fatal("update not stored")
	}
	_, err = f.Folders().Update(ctx, f.org.ID, "fld_404", new("x"), nil)
	wantErr(t, err, store.ErrNotFound, "folder fld_404 not found")

	// Delete: gone for every method; a second delete is ErrNotFound.
	if err := f.Folders().Delete(ctx, f.org.ID, fl.FolderID, false); err != nil {
		t.Fatal(err)
	}
	_, err = f.Folders().Get(ctx, f.org.ID, fl.FolderID)
	wantErr(t, err, store.ErrNotFound, fl.FolderID)
	_, err = f.Folders().Update(ctx, f.org.ID, fl.FolderID, new("x"), nil)
	wantErr(t, err, store.ErrNotFound, fl.FolderID)
	wantErr(t, f.Folders().Delete(ctx, f.org.ID, fl.FolderID, false), store.ErrNotFound, fl.FolderID)
	wantErr(t, f.Folders().Delete(ctx, f.org.ID, "fld_404", true), store.ErrNotFound, "folder fld_404 not found")
	if fs, _ := f.Folders().List(ctx, f.org.ID, 1, 10, ""); !slices.Equal(folderIDs(fs), []string{withDesc.FolderID}) {
		t.Fatalf("list after delete %v", folderIDs(fs))
	}
}

func testListFolders(t *testing.T, o opener) {
	f := newFixture(t, o)
	a, _ := f.Folders().Create(ctx, f.org.ID, "Alpha Reports", "")
	b, _ := f.Folders().Create(ctx, f.org.ID, "Beta", "holds the REPORTS of beta")
	c, _ := f.Folders().Create(ctx, f.org.ID, "Gamma", "nothing")
	list := func(page, size int, search string) []string {
		t.Helper()
		fs, err := f.Folders().List(ctx, f.org.ID, page, size, search)
		if err != nil {
			t.Fatal(err)
		}
		return folderIDs(fs)
	}
	if got := list(0, 0, ""); !slices.Equal(got, []string{c.FolderID, b.FolderID, a.FolderID}) {
		t.Fatalf("order %v", got)
	}
	// Updating a folder moves it to the top (modified_at desc).
	if _, err := f.Folders().Update(ctx, f.org.ID, a.FolderID, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := list(1, 10, ""); !slices.Equal(got, []string{a.FolderID, c.FolderID, b.FolderID}) {
		t.Fatalf("order after update %v", got)
	}
	if got := list(1, 2, ""); !slices.Equal(got, []string{a.FolderID, c.FolderID}) {
		t.Fatalf("page 1 %v", got)
	}
	if got := list(2, 2, ""); !slices.Equal(got, []string{b.FolderID}) {
		t.Fatalf("page 2 %v", got)
	}
	if got := list(3, 2, ""); len(got) != 0 {
		t.Fatalf("page 3 %v", got)
	}
	if got := list(1<<62, 1<<62, ""); len(got) != 0 {
		t.Fatalf("huge page %v", got)
	}
	// Search: title or description, any case.
	if got := list(1, 10, "reports"); !slices.Equal(got, []string{a.FolderID, b.FolderID}) {
		t.Fatalf("search reports %v", got)
	}
	if got := list(1, 10, "GAMMA"); !slices.Equal(got, []string{c.FolderID}) {
		t.Fatalf("search GAMMA %v", got)
	}
	if got := list(1, 10, "nothing"); !slices.Equal(got, []string{c.FolderID}) {
		t.Fatalf("search description %v", got)
	}
	if got := list(1, 10, "zzz"); len(got) != 0 {
		t.Fatalf("search zzz %v", got)
	}
}

// testFolderCounts follows workflow_count through every kind of change.
func testFolderCounts(t *testing.T, o opener) {
	f := newFixture(t, o)
	f1 := f.folder(f.org.ID, "One")
	f2 := f.folder(f.org.ID, "Two")
	counts := func(want1, want2 int, when string) {
		t.Helper()
		if n := f.count(f.org.ID, f1.FolderID); n != want1 {
			t.Errorf("%s: folder one counts %d, want %d", when, n, want1)
		}
		if n := f.count(f.org.ID, f2.FolderID); n != want2 {
			t.Errorf("%s: folder two counts %d, want %d", when, n, want2)
		}
		fs, _ := f.Folders().List(ctx, f.org.ID, 1, 10, "")
		for _, fl := range fs {
			want := map[string]int{f1.FolderID: want1, f2.FolderID: want2}[fl.FolderID]
			if fl.WorkflowCount != want {
				t.Errorf("%s: ListFolders counts %d for %s, want %d", when, fl.WorkflowCount, fl.Title, want)
			}
		}
		// The counters agree with the agents listed in each folder.
		for id, want := range map[string]int{f1.FolderID: want1, f2.FolderID: want2} {
			if got := f.list(f.org.ID, store.AgentQuery{FolderID: id, PageSize: 100}); len(got) != want {
				t.Errorf("%s: %d agents listed in %s, want %d", when, len(got), id, want)
			}
		}
	}
	inFolder := func(title string, folder *client.Folder) *client.Agent {
		d := AgentDef(title)
		d.FolderID = &folder.FolderID
		return f.create(f.org.ID, d)
	}
	counts(0, 0, "empty")
	a := inFolder("a", f1)
	b := inFolder("b", f1)
	f.create(f.org.ID, AgentDef("no folder"))
	counts(2, 0, "create")
	// Idempotent replay of an agent in a folder does not count twice.
	d := AgentDef("c")
	d.FolderID = &f2.FolderID
	f.Agents().Create(ctx, f.org.ID, d, "k")
	f.Agents().Create(ctx, f.org.ID, d, "k")
	counts(2, 1, "idempotent create")
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("a2"))
	counts(2, 1, "update (inherits)")
	f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, f2.FolderID)
	counts(1, 2, "move")
	f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, f2.FolderID)
	counts(1, 2, "move to the same folder")
	f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, "")
	counts(1, 1, "clear")
	f.Agents().Delete(ctx, f.org.ID, b.WorkflowPermanentID)
	counts(0, 1, "delete")
	f.Agents().Delete(ctx, f.org.ID, b.WorkflowPermanentID)
	counts(0, 1, "delete again")
	f.update(f.org.ID, b.WorkflowPermanentID, AgentDef("b2"))
	counts(1, 1, "resurrect")
	// An agent with an older version in f2 but the latest elsewhere does
	// not count for f2.
	f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, f2.FolderID)
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("a3"))
	f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, f1.FolderID)
	counts(2, 1, "older version elsewhere")
	f.reopen()
	counts(2, 1, "after reopen")
}

// testDeleteFolderKeepAgents: the agents move out of the folder, on every
// version row, and stay.
func testDeleteFolderKeepAgents(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Doomed")
	other := f.folder(f.org.ID, "Other")
	mk := func(title string, folder string) *client.Agent {
		d := AgentDef(title)
		d.FolderID = &folder
		return f.create(f.org.ID, d)
	}
	a := mk("a", fl.FolderID)
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("a2")) // v1 and v2 in the folder
	// b's first version is in the folder, its latest elsewhere.
	b := mk("b", fl.FolderID)
	f.update(f.org.ID, b.WorkflowPermanentID, AgentDef("b2"))
	f.Agents().SetFolder(ctx, f.org.ID, b.WorkflowPermanentID, other.FolderID)
	c := mk("c", other.FolderID)
	// A deleted agent in the folder is moved out as well.
	dead := mk("dead", fl.FolderID)
	f.Agents().Delete(ctx, f.org.ID, dead.WorkflowPermanentID)
	before, _ := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 2)

	if err := f.Folders().Delete(ctx, f.org.ID, fl.FolderID, false); err != nil {
		t.Fatal(err)
	}
	for _, wpid := range []string{a.WorkflowPermanentID, b.WorkflowPermanentID} {
		vs, err := f.Agents().Versions(ctx, f.org.ID, wpid)
		if err != nil {
			t.Fatalf("%s gone: %v", wpid, err)
		}
		for _, v := range vs {
			if v.FolderID != nil && *v.FolderID == fl.FolderID {
				t.Errorf("%s v%d still in the deleted folder", wpid, v.Version)
			}
		}
	}
	after, _ := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 2)
	if after.FolderID != nil || !after.ModifiedAt.After(before.ModifiedAt.Time) || after.Version != 2 {
		t.Fatalf("a after folder delete: folder %v modified %v (before %v)", after.FolderID, after.ModifiedAt, before.ModifiedAt)
	}
	if bl, _ := f.Agents().Get(ctx, f.org.ID, b.WorkflowPermanentID, 0); *bl.FolderID != other.FolderID {
		t.Fatal("b's latest version lost its other folder")
	}
	if cl, _ := f.Agents().Get(ctx, f.org.ID, c.WorkflowPermanentID, 0); !cl.ModifiedAt.Equal(c.ModifiedAt.Time) {
		t.Fatal("an agent of another folder was touched")
	}
	if got := f.list(f.org.ID, store.AgentQuery{}); len(got) != 3 {
		t.Fatalf("agents after folder delete %v", got)
	}
	if n := f.count(f.org.ID, other.FolderID); n != 2 {
		t.Fatalf("other folder counts %d", n)
	}
	// The dead agent comes back outside any folder.
	if back := f.update(f.org.ID, dead.WorkflowPermanentID, AgentDef("back")); back.FolderID != nil {
		t.Fatalf("resurrected into %v", *back.FolderID)
	}
}

// testDeleteFolderWithAgents: the agents whose latest version is in the
// folder are deleted; the others stay.
func testDeleteFolderWithAgents(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Doomed")
	other := f.folder(f.org.ID, "Other")
	mk := func(title string, folder string) *client.Agent {
		d := AgentDef(title)
		d.FolderID = &folder
		return f.create(f.org.ID, d)
	}
	a := mk("a", fl.FolderID)
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("a2"))
	b := mk("b", fl.FolderID)
	f.Agents().SetFolder(ctx, f.org.ID, b.WorkflowPermanentID, other.FolderID) // latest elsewhere
	// b has one version: its only row moved. Give it a version in the
	// folder that is not the latest.
	f.Agents().SetFolder(ctx, f.org.ID, b.WorkflowPermanentID, fl.FolderID)
	f.update(f.org.ID, b.WorkflowPermanentID, AgentDef("b2"))
	f.Agents().SetFolder(ctx, f.org.ID, b.WorkflowPermanentID, other.FolderID)
	free := f.create(f.org.ID, AgentDef("free"))
	keyed := AgentDef("keyed")
	keyed.FolderID = &fl.FolderID
	if _, _, err := f.Agents().Create(ctx, f.org.ID, keyed, "key"); err != nil {
		t.Fatal(err)
	}

	if err := f.Folders().Delete(ctx, f.org.ID, fl.FolderID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("agent in the folder survived: %v", err)
	}
	if _, err := f.Folders().Get(ctx, f.org.ID, fl.FolderID); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("folder survived")
	}
	got := f.list(f.org.ID, store.AgentQuery{})
	if !slices.Equal(sorted(got), sorted([]string{b.WorkflowPermanentID, free.WorkflowPermanentID})) {
		t.Fatalf("left %v", got)
	}
	// A deleted agent keeps its folder_id, as an idempotent replay shows.
	replay, created, err := f.Agents().Create(ctx, f.org.ID, AgentDef("x"), "key")
	if err != nil || created || replay.DeletedAt == nil || replay.FolderID == nil || *replay.FolderID != fl.FolderID {
		t.Fatalf("replay of a deleted agent: %+v, %v, %v", replay, created, err)
	}
	// So does the surviving agent's older row, and the latest is untouched.
	b1, _ := f.Agents().Get(ctx, f.org.ID, b.WorkflowPermanentID, 1)
	if b1.FolderID == nil || *b1.FolderID != fl.FolderID {
		t.Fatal("b's older row lost its folder id")
	}
	if n := f.count(f.org.ID, other.FolderID); n != 1 {
		t.Fatalf("other folder counts %d", n)
	}
}
