package boltstore

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/storetest"
)

// TestReadHead checks the shortcut reader against a full decode, and that
// it declines encodings it cannot read.
func TestReadHead(t *testing.T) {
	for _, s := range []*agentSummary{
		{WPID: "wpid_1", Status: "published", Search: []string{"x"}},
		{WPID: "wpid_2", Folder: "fld_9", Status: "draft", SavedTask: true, Deleted: true, Version: 3, Created: -5},
		{WPID: "wpid_3", Folder: `odd"folder`, Status: "published"},
		{WPID: "wpid_4", Status: `new\status`},
	} {
		raw, err := encodeSummary(s)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := readHead(raw)
		escaped := strings.ContainsAny(s.Folder+string(s.Status), `"\`)
		if ok == escaped {
			t.Errorf("%s: ok=%v for %s", s.WPID, ok, raw)
			continue
		}
		if ok && (string(h.folder) != s.Folder || string(h.status) != string(s.Status) || h.savedTask != s.SavedTask || h.deleted != s.Deleted) {
			t.Errorf("%s: head %q %q %v %v", s.WPID, h.folder, h.status, h.savedTask, h.deleted)
		}
		back, err := decodeSummary(raw)
		if err != nil || mustJSON(t, back) != mustJSON(t, s) {
			t.Errorf("%s: round trip %v", s.WPID, err)
		}
	}
	for _, raw := range []string{``, `{}`, `{"f":"x"`, `{"f":"x","s":"y"}`, `{"f":"x","s":"y","t":1}`, `{"f":"x","s":"y","t":true}`, `{"f":"x","s":"y","t":true,"d":0}`} {
		if _, ok := readHead([]byte(raw)); ok {
			t.Errorf("readHead(%s) ok", raw)
		}
	}
	// Odd folder and status values still list and filter correctly
	// through the full decode.
	f := newFixture(t)
	d := storetest.AgentDef("odd")
	d.FolderID = new(`fld_"q"`)
	d.Status = `draft\x`
	a := f.create(f.org.ID, d)
	if got := f.list(f.org.ID, store.AgentQuery{FolderID: `fld_"q"`, Statuses: []client.AgentStatus{`draft\x`}}); !slices.Equal(got, []string{a.WorkflowPermanentID}) {
		t.Fatalf("odd values: %v", got)
	}
}

func TestDefaultText(t *testing.T) {
	for raw, want := range map[string]string{`"abc"`: "abc", `12.5`: "12.5", `null`: "", ``: "", `{"a":1}`: `{"a":1}`, `true`: "true", `"a\"b"`: `a"b`} {
		if got := defaultText(json.RawMessage(raw)); got != want {
			t.Errorf("defaultText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestManyVersions rewrites rows spread over many pages: delete, resurrect
// and a folder delete each touch every version. It reads the raw version
// rows (deleted_at and folder_id on each); what the store answers is the
// conformance suite's Agents/ManyVersions.
func TestManyVersions(t *testing.T) {
	f := newFixture(t)
	fl := f.folder(f.org.ID, "Big")
	long := strings.Repeat("a fairly long parameter description ", 40)
	d := storetest.AgentDef("big", storetest.WorkflowParam("p", long, long))
	d.FolderID = &fl.FolderID
	a := f.create(f.org.ID, d)
	other := f.create(f.org.ID, storetest.AgentDef("neighbour"))
	const versions = 150
	for range versions - 1 {
		f.update(f.org.ID, a.WorkflowPermanentID, storetest.AgentDef("big", storetest.WorkflowParam("p", long, long)))
	}
	check := func(when string, nrows int, deleted bool, folder *string) {
		t.Helper()
		var rows []*client.Agent
		_ = f.db.View(func(tx *bolt.Tx) error {
			o, _ := openOrg(tx, f.org.ID)
			rows, _ = agentRows(o, a.WorkflowPermanentID)
			return nil
		})
		if len(rows) != nrows {
			t.Fatalf("%s: %d rows", when, len(rows))
		}
		for _, r := range rows {
			if (r.DeletedAt != nil) != deleted || (r.FolderID == nil) != (folder == nil) {
				t.Fatalf("%s: v%d deleted_at %v folder %v", when, r.Version, r.DeletedAt, r.FolderID)
			}
		}
	}
	check("updated", versions, false, &fl.FolderID)
	if err := f.Agents().Delete(ctx, f.org.ID, a.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	check("deleted", versions, true, &fl.FolderID)
	f.update(f.org.ID, a.WorkflowPermanentID, storetest.AgentDef("back"))
	check("resurrected", versions+1, false, &fl.FolderID)
	if err := f.Folders().Delete(ctx, f.org.ID, fl.FolderID, false); err != nil {
		t.Fatal(err)
	}
	check("folder deleted", versions+1, false, nil)
	if got, err := f.Agents().Get(ctx, f.org.ID, other.WorkflowPermanentID, 0); err != nil || mustJSON(t, got) != mustJSON(t, other) {
		t.Fatalf("neighbour changed: %v", err)
	}
}
