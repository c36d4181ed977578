package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/agentid"
)

func testCreateAgentAssignsIDs(t *testing.T, o opener) {
	f := newFixture(t, o)
	def := AgentDef("Download invoices",
		WorkflowParam("url", "Portal address", "https://example.com"),
		client.Parameter{ParameterType: client.ParameterTypeCredential, Key: "login", CredentialID: "cred_1"},
		client.Parameter{ParameterType: client.ParameterTypeOutput, Key: "open_output", Description: "Output parameter for block open"},
	)
	def.Version, def.WorkflowPermanentID, def.AgentID, def.OrganizationID = 7, "wpid_forged", "wpid_forged", "o_forged" // ignored
	before := mustJSON(t, def)
	a, created, err := f.Agents().Create(ctx, f.org.ID, def, "")
	if err != nil || !created {
		t.Fatalf("Agents.Create: %v, %v", err, created)
	}
	if mustJSON(t, def) != before {
		t.Fatal("Agents.Create modified its argument")
	}
	prefix, _, ok := ids.Parse(a.WorkflowPermanentID)
	if !ok || prefix != "wpid" {
		t.Errorf("wpid %q is not a snowflake wpid", a.WorkflowPermanentID)
	}
	// def has no workflow_id nor created_at: the store makes them.
	if prefix, _, ok := ids.Parse(a.WorkflowID); !ok || prefix != "w" {
		t.Errorf("workflow_id %q", a.WorkflowID)
	}
	if a.AgentID != a.WorkflowPermanentID || a.OrganizationID != f.org.ID || a.Version != 1 {
		t.Errorf("agent_id %q, org %q, version %d", a.AgentID, a.OrganizationID, a.Version)
	}
	if a.CreatedAt.IsZero() || !a.ModifiedAt.Equal(a.CreatedAt.Time) || a.DeletedAt != nil {
		t.Errorf("timestamps %v %v %v", a.CreatedAt, a.ModifiedAt, a.DeletedAt)
	}
	// The definition is stored as given.
	if got, want := mustJSON(t, a.WorkflowDefinition), mustJSON(t, def.WorkflowDefinition); got != want {
		t.Errorf("definition\n got %s\nwant %s", got, want)
	}
	// A version made as the API makes it keeps its workflow_id and
	// created_at, which its parameter records repeat.
	v := f.version(def)
	b, _, err := f.Agents().Create(ctx, f.org.ID, v, "")
	if err != nil {
		t.Fatal(err)
	}
	if b.WorkflowID != v.WorkflowID || !b.CreatedAt.Equal(v.CreatedAt.Time) || !b.ModifiedAt.Equal(v.CreatedAt.Time) {
		t.Errorf("workflow_id %q, created_at %v, modified_at %v; made %q %v", b.WorkflowID, b.CreatedAt, b.ModifiedAt, v.WorkflowID, v.CreatedAt)
	}
	if got, want := mustJSON(t, b.WorkflowDefinition), mustJSON(t, v.WorkflowDefinition); got != want {
		t.Errorf("definition of a made version\n got %s\nwant %s", got, want)
	}
	// What Agents.Create returns is what Agents.Get reads back.
	got, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, got) != mustJSON(t, a) {
		t.Fatalf("Get:\n%s\nCreate:\n%s", mustJSON(t, got), mustJSON(t, a))
	}
	// The result is the caller's: changing it does not change the store.
	a.Title = "changed"
	a.WorkflowDefinition.Parameters[0].Key = "changed"
	again, _ := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 0)
	if again.Title != "Download invoices" || again.WorkflowDefinition.Parameters[0].Key != "url" {
		t.Fatal("the returned agent shares memory with the store")
	}
}

func testCreateAgentDefaults(t *testing.T, o opener) {
	f := newFixture(t, o)
	def := AgentDef("no status")
	def.Status = ""
	def.FolderID = new("fld_does_not_exist") // creation does not check folders
	a := f.create(f.org.ID, def)
	if a.Status != client.AgentStatusPublished {
		t.Errorf("status %q", a.Status)
	}
	if a.FolderID == nil || *a.FolderID != "fld_does_not_exist" {
		t.Errorf("folder_id %v", a.FolderID)
	}
	if _, _, err := f.Agents().Create(ctx, f.org.ID, nil, ""); err == nil {
		t.Error("nil definition accepted")
	}
	if _, _, err := f.Agents().Create(ctx, "o_404", AgentDef("x"), ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown org: %v", err)
	}
}

func testCreateAgentIdempotent(t *testing.T, o opener) {
	f := newFixture(t, o)
	first, created, err := f.Agents().Create(ctx, f.org.ID, AgentDef("First"), "key-1")
	if err != nil || !created {
		t.Fatalf("first: %v, %v", err, created)
	}
	if want := agentid.FromKey(f.org.ID, "key-1"); first.WorkflowPermanentID != want || first.AgentID != want {
		t.Fatalf("wpid %q, want %q", first.WorkflowPermanentID, want)
	}
	// A replay, even with another body, returns the stored version 1.
	replay, created, err := f.Agents().Create(ctx, f.org.ID, AgentDef("Different body"), "key-1")
	if err != nil || created {
		t.Fatalf("replay: %v, created=%v", err, created)
	}
	if mustJSON(t, replay) != mustJSON(t, first) {
		t.Fatalf("replay differs:\n%s\n%s", mustJSON(t, replay), mustJSON(t, first))
	}
	// After an update the replay still answers version 1.
	f.update(f.org.ID, first.WorkflowPermanentID, AgentDef("Second"))
	replay, created, _ = f.Agents().Create(ctx, f.org.ID, AgentDef("x"), "key-1")
	if created || replay.Version != 1 || replay.Title != "First" {
		t.Fatalf("replay after update: v%d %q created=%v", replay.Version, replay.Title, created)
	}
	// After a delete the replay returns the soft-deleted version 1.
	if err := f.Agents().Delete(ctx, f.org.ID, first.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	replay, created, err = f.Agents().Create(ctx, f.org.ID, AgentDef("x"), "key-1")
	if err != nil || created || replay.DeletedAt == nil || replay.Version != 1 {
		t.Fatalf("replay after delete: %+v, created=%v, %v", replay, created, err)
	}
	if got := f.list(f.org.ID, store.AgentQuery{}); len(got) != 0 {
		t.Fatalf("a replay resurrected the agent: %v", got)
	}
	// Another key, another agent; the same key in another org, another agent.
	other, created, _ := f.Agents().Create(ctx, f.org.ID, AgentDef("x"), "key-2")
	if !created || other.WorkflowPermanentID == first.WorkflowPermanentID {
		t.Fatal("key-2 did not create a new agent")
	}
	org2 := f.newOrg("two")
	a2, created, _ := f.Agents().Create(ctx, org2.ID, AgentDef("x"), "key-1")
	if !created || a2.WorkflowPermanentID == first.WorkflowPermanentID {
		t.Fatal("the same key in another organization did not create a new agent")
	}
}

func testCreateAgentIdempotentConcurrent(t *testing.T, o opener) {
	f := newFixture(t, o)
	const n = 16
	var wg sync.WaitGroup
	results := make([]*client.Agent, n)
	createdFlags := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], createdFlags[i], errs[i] = f.Agents().Create(ctx, f.org.ID, AgentDef(fmt.Sprint("racer ", i)), "same-key")
		}()
	}
	wg.Wait()
	createdCount := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if createdFlags[i] {
			createdCount++
		}
		if results[i].WorkflowID != results[0].WorkflowID {
			t.Fatalf("two version rows: %s and %s", results[i].WorkflowID, results[0].WorkflowID)
		}
	}
	if createdCount != 1 {
		t.Fatalf("%d creates reported created", createdCount)
	}
	if got := f.list(f.org.ID, store.AgentQuery{}); len(got) != 1 {
		t.Fatalf("list %v", got)
	}
}

func testUpdateAgent(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Ops")
	def := AgentDef("v1", WorkflowParam("url", "", nil))
	def.FolderID = &fl.FolderID
	v1 := f.create(f.org.ID, def)
	def2 := AgentDef("v2", WorkflowParam("url", "", nil), WorkflowParam("user", "", nil))
	def2.FolderID = new("fld_ignored")
	v2 := f.update(f.org.ID, v1.WorkflowPermanentID, def2)
	if v2.Version != 2 || v2.WorkflowPermanentID != v1.WorkflowPermanentID || v2.AgentID != v1.WorkflowPermanentID {
		t.Fatalf("v2: version %d wpid %s", v2.Version, v2.WorkflowPermanentID)
	}
	if v2.WorkflowID == v1.WorkflowID || !strings.HasPrefix(v2.WorkflowID, "w_") {
		t.Fatalf("workflow_id %s (v1 %s)", v2.WorkflowID, v1.WorkflowID)
	}
	if !v2.CreatedAt.After(v1.CreatedAt.Time) {
		t.Fatal("the new version's created_at is not newer")
	}
	if v2.FolderID == nil || *v2.FolderID != fl.FolderID {
		t.Fatalf("folder_id %v not inherited", v2.FolderID)
	}
	// Two workflow parameters and the output parameter of block "open".
	if p := v2.WorkflowDefinition.Parameters; len(p) != 3 || p[0].WorkflowID != v2.WorkflowID ||
		p[0].WorkflowParameterID == v1.WorkflowDefinition.Parameters[0].WorkflowParameterID {
		t.Fatalf("parameters of v2 %+v", p)
	}
	// The old version stays readable and unchanged.
	got1, err := f.Agents().Get(ctx, f.org.ID, v1.WorkflowPermanentID, 1)
	if err != nil || mustJSON(t, got1) != mustJSON(t, v1) {
		t.Fatalf("version 1 after update: %v", err)
	}
	got, _ := f.Agents().Get(ctx, f.org.ID, v1.WorkflowPermanentID, 0)
	if mustJSON(t, got) != mustJSON(t, v2) {
		t.Fatal("latest is not v2")
	}
	vs, err := f.Agents().Versions(ctx, f.org.ID, v1.WorkflowPermanentID)
	if err != nil || len(vs) != 2 || vs[0].Version != 1 || vs[1].Version != 2 {
		t.Fatalf("versions %v", err)
	}
	if n := f.count(f.org.ID, fl.FolderID); n != 1 {
		t.Fatalf("folder count %d after update", n)
	}
	_, err = f.Agents().Update(ctx, f.org.ID, "wpid_404", AgentDef("x"))
	wantErr(t, err, store.ErrNotFound, "agent wpid_404 not found")
	if _, err := f.Agents().Update(ctx, f.org.ID, v1.WorkflowPermanentID, nil); err == nil {
		t.Fatal("nil definition accepted")
	}
}

func testDeleteAndResurrect(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Ops")
	def := AgentDef("v1")
	def.FolderID = &fl.FolderID
	a := f.create(f.org.ID, def)
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("v2"))
	wpid := a.WorkflowPermanentID

	if err := f.Agents().Delete(ctx, f.org.ID, wpid); err != nil {
		t.Fatal(err)
	}
	for v := 0; v <= 2; v++ {
		if _, err := f.Agents().Get(ctx, f.org.ID, wpid, v); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("GetAgent v%d after delete: %v", v, err)
		}
	}
	if _, err := f.Agents().Versions(ctx, f.org.ID, wpid); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AgentVersions after delete: %v", err)
	}
	if _, err := f.Agents().SetFolder(ctx, f.org.ID, wpid, ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetAgentFolder after delete: %v", err)
	}
	if got := f.list(f.org.ID, store.AgentQuery{}); len(got) != 0 {
		t.Fatalf("list after delete %v", got)
	}
	if n := f.count(f.org.ID, fl.FolderID); n != 0 {
		t.Fatalf("folder count %d after delete", n)
	}
	// Deleting again, or deleting an unknown id, is fine.
	for _, id := range []string{wpid, "wpid_404", "", "bad\x00id"} {
		if err := f.Agents().Delete(ctx, f.org.ID, id); err != nil {
			t.Fatalf("DeleteAgent(%q): %v", id, err)
		}
	}

	// An update brings it back as version 3, in its folder, with its
	// history.
	v3 := f.update(f.org.ID, wpid, AgentDef("v3"))
	if v3.Version != 3 || v3.DeletedAt != nil {
		t.Fatalf("resurrected: version %d deleted_at %v", v3.Version, v3.DeletedAt)
	}
	if v3.FolderID == nil || *v3.FolderID != fl.FolderID {
		t.Fatalf("folder after resurrection %v", v3.FolderID)
	}
	vs, err := f.Agents().Versions(ctx, f.org.ID, wpid)
	if err != nil || len(vs) != 3 {
		t.Fatalf("versions after resurrection: %d, %v", len(vs), err)
	}
	for _, v := range vs {
		if v.DeletedAt != nil {
			t.Errorf("v%d still deleted", v.Version)
		}
	}
	if got := f.list(f.org.ID, store.AgentQuery{}); len(got) != 1 || got[0] != wpid {
		t.Fatalf("list after resurrection %v", got)
	}
	if n := f.count(f.org.ID, fl.FolderID); n != 1 {
		t.Fatalf("folder count %d after resurrection", n)
	}
}

func testGetAgentVersions(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("v1"))
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("v2"))
	for v, title := range map[int]string{0: "v2", 1: "v1", 2: "v2"} {
		got, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, v)
		if err != nil || got.Title != title {
			t.Fatalf("GetAgent v%d: %v %v", v, got, err)
		}
	}
	_, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 3)
	wantErr(t, err, store.ErrNotFound, "version 3 of agent "+a.WorkflowPermanentID+" not found")
	_, err = f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, -1)
	wantErr(t, err, store.ErrNotFound, a.WorkflowPermanentID)
	_, err = f.Agents().Get(ctx, f.org.ID, "wpid_404", 0)
	wantErr(t, err, store.ErrNotFound, "agent wpid_404 not found")
	_, err = f.Agents().Versions(ctx, f.org.ID, "wpid_404")
	wantErr(t, err, store.ErrNotFound, "wpid_404")
	// A wpid that is a prefix of another is a different agent.
	if _, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID[:len(a.WorkflowPermanentID)-1], 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("prefix of a wpid: %v", err)
	}
}

func testSetAgentFolder(t *testing.T, o opener) {
	f := newFixture(t, o)
	f1 := f.folder(f.org.ID, "One")
	f2 := f.folder(f.org.ID, "Two")
	a := f.create(f.org.ID, AgentDef("a"))
	b := f.create(f.org.ID, AgentDef("b"))

	moved, err := f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, f1.FolderID)
	if err != nil {
		t.Fatal(err)
	}
	if moved.FolderID == nil || *moved.FolderID != f1.FolderID || moved.Version != 1 || moved.WorkflowID != a.WorkflowID {
		t.Fatalf("moved %+v", moved)
	}
	if !moved.ModifiedAt.After(a.ModifiedAt.Time) || !moved.CreatedAt.Equal(a.CreatedAt.Time) {
		t.Fatal("modified_at not bumped or created_at changed")
	}
	if n := f.count(f.org.ID, f1.FolderID); n != 1 {
		t.Fatalf("count %d", n)
	}
	// Moving does not reorder: b (newer) stays first.
	if got := f.list(f.org.ID, store.AgentQuery{}); !slices.Equal(got, []string{b.WorkflowPermanentID, a.WorkflowPermanentID}) {
		t.Fatalf("order after move %v", got)
	}
	// Only the latest row changes.
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("a2"))
	if _, err := f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, f2.FolderID); err != nil {
		t.Fatal(err)
	}
	v1, _ := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 1)
	v2, _ := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 2)
	if *v1.FolderID != f1.FolderID || *v2.FolderID != f2.FolderID {
		t.Fatalf("v1 in %v, v2 in %v", *v1.FolderID, *v2.FolderID)
	}
	if vs, _ := f.Agents().Versions(ctx, f.org.ID, a.WorkflowPermanentID); len(vs) != 2 {
		t.Fatal("SetAgentFolder added a version")
	}
	if f.count(f.org.ID, f1.FolderID) != 0 || f.count(f.org.ID, f2.FolderID) != 1 {
		t.Fatal("counts after moving between folders")
	}
	// "" takes it out.
	out, err := f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, "")
	if err != nil || out.FolderID != nil {
		t.Fatalf("clear: %v %v", out, err)
	}
	if f.count(f.org.ID, f2.FolderID) != 0 {
		t.Fatal("count after clearing")
	}
	// Unknown and deleted folders.
	_, err = f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, "fld_404")
	wantErr(t, err, store.ErrNotFound, "folder fld_404 not found")
	if err := f.Folders().Delete(ctx, f.org.ID, f2.FolderID, false); err != nil {
		t.Fatal(err)
	}
	_, err = f.Agents().SetFolder(ctx, f.org.ID, a.WorkflowPermanentID, f2.FolderID)
	wantErr(t, err, store.ErrNotFound, "folder "+f2.FolderID+" not found")
	// Unknown agent.
	_, err = f.Agents().SetFolder(ctx, f.org.ID, "wpid_404", f1.FolderID)
	wantErr(t, err, store.ErrNotFound, "agent wpid_404 not found")
}

// testListAgentsOrderAndPaging: newest first by the latest version's
// created_at; pages of PageSize; defaults page 1 size 10.
func testListAgentsOrderAndPaging(t *testing.T, o opener) {
	f := newFixture(t, o)
	var created []string
	for i := range 25 {
		created = append(created, f.create(f.org.ID, AgentDef(fmt.Sprint("agent ", i))).WorkflowPermanentID)
	}
	newestFirst := slices.Clone(created)
	slices.Reverse(newestFirst)
	if got := f.list(f.org.ID, store.AgentQuery{}); !slices.Equal(got, newestFirst[:10]) {
		t.Fatalf("default page %v", got)
	}
	var all []string
	for page := 1; page <= 4; page++ {
		got := f.list(f.org.ID, store.AgentQuery{Page: page, PageSize: 7})
		if want := min(7, 25-(page-1)*7); len(got) != want {
			t.Fatalf("page %d has %d", page, len(got))
		}
		all = append(all, got...)
	}
	if !slices.Equal(all, newestFirst) {
		t.Fatalf("pages %v", all)
	}
	if got := f.list(f.org.ID, store.AgentQuery{Page: 5, PageSize: 7}); len(got) != 0 {
		t.Fatalf("beyond the end %v", got)
	}
	as, err := f.Agents().List(ctx, f.org.ID, store.AgentQuery{Page: 1 << 60, PageSize: 1 << 40})
	if err != nil || as == nil || len(as) != 0 {
		t.Fatalf("huge page: %v %v", as, err)
	}
	// An update moves an agent to the top, with its new version.
	f.update(f.org.ID, created[3], AgentDef("updated"))
	got, _ := f.Agents().List(ctx, f.org.ID, store.AgentQuery{PageSize: 2})
	if got[0].WorkflowPermanentID != created[3] || got[0].Version != 2 || got[0].Title != "updated" ||
		got[1].WorkflowPermanentID != created[24] {
		t.Fatalf("after update %v", wpids(got))
	}
	// Deleted agents drop out; the rest keep their order.
	_ = f.Agents().Delete(ctx, f.org.ID, created[24])
	if got := f.list(f.org.ID, store.AgentQuery{PageSize: 3}); !slices.Equal(got, []string{created[3], created[23], created[22]}) {
		t.Fatalf("after delete %v", got)
	}
}

func testListAgentsSearch(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Quarterly Finance")
	inFolder := AgentDef("plain one")
	inFolder.FolderID = &fl.FolderID
	agents := map[string]*client.Agent{
		"title":       f.create(f.org.ID, AgentDef("Download INVOICES from portal")),
		"folder":      f.create(f.org.ID, inFolder),
		"key":         f.create(f.org.ID, AgentDef("plain two", WorkflowParam("vendor_account", "", nil))),
		"description": f.create(f.org.ID, AgentDef("plain three", WorkflowParam("x", "The Vendor's Billing page", nil))),
		"default":     f.create(f.org.ID, AgentDef("plain four", WorkflowParam("u", "", "https://Billing.Example.org/login"))),
		"number":      f.create(f.org.ID, AgentDef("plain five", WorkflowParam("n", "", 987654))),
		"output": f.create(f.org.ID, AgentDef("plain six", client.Parameter{ParameterType: client.ParameterTypeOutput,
			Key: "scrape_output", Description: "Output parameter for block scrape"})),
		"credential": f.create(f.org.ID, AgentDef("plain seven", client.Parameter{ParameterType: client.ParameterTypeCredential,
			Key: "bank_login", Description: "Treasury credentials", CredentialID: "cred_1"})),
		"quote":   f.create(f.org.ID, AgentDef(`Say "hello" \ world`)),
		"unicode": f.create(f.org.ID, AgentDef("Überweisungen prüfen")),
		"html":    f.create(f.org.ID, AgentDef("a <b> & c")),
	}
	// A credential's default-like fields are not searched, nor the
	// definition's blocks.
	f.create(f.org.ID, AgentDef("plain eight", client.Parameter{ParameterType: client.ParameterTypeCredential,
		Key: "k", CredentialID: "cred_secretmatch"}))

	cases := []struct{ term, want string }{
		{"invoices", "title"},
		{"iNvOiCeS", "title"},
		{"quarterly fin", "folder"},
		{"VENDOR_acc", "key"},
		{"vendor's billing", "description"},
		{"billing.example.org", "default"},
		{"87654", "number"},
		{"scrape_out", "output"},
		{"for block scrape", "output"},
		{"bank_lo", "credential"},
		{"treasury", "credential"},
		{`"hello" \`, "quote"},
		{"überweisungen", "unicode"},
		{"ÜBERWEISUNGEN", "unicode"},
		{"<b> &", "html"},
	}
	for _, c := range cases {
		got := f.list(f.org.ID, store.AgentQuery{SearchKey: c.term})
		if want := []string{agents[c.want].WorkflowPermanentID}; !slices.Equal(got, want) {
			t.Errorf("search %q: got %v, want the %s agent %v", c.term, got, c.want, want)
		}
	}
	// The wpid, by substring.
	wpid := agents["key"].WorkflowPermanentID
	if got := f.list(f.org.ID, store.AgentQuery{SearchKey: strings.ToUpper(wpid[3:])}); !slices.Equal(got, []string{wpid}) {
		t.Errorf("search by wpid: %v", got)
	}
	for _, term := range []string{"cred_secretmatch", "open the page", "nothing matches this"} {
		if got := f.list(f.org.ID, store.AgentQuery{SearchKey: term}); len(got) != 0 {
			t.Errorf("search %q matched %v", term, got)
		}
	}
	// "plain" matches several agents (title), in list order, with paging.
	got := f.list(f.org.ID, store.AgentQuery{SearchKey: "plain", PageSize: 3, Page: 2})
	if len(got) != 3 {
		t.Fatalf("plain page 2: %v", got)
	}
	all := f.list(f.org.ID, store.AgentQuery{SearchKey: "plain", PageSize: 100})
	if len(all) != 8 || !slices.Equal(got, all[3:6]) {
		t.Fatalf("plain: %v / %v", all, got)
	}
	// A search matches the latest version only.
	f.update(f.org.ID, agents["title"].WorkflowPermanentID, AgentDef("renamed"))
	if got := f.list(f.org.ID, store.AgentQuery{SearchKey: "invoices"}); len(got) != 0 {
		t.Fatalf("old version matched: %v", got)
	}
	// Moving an agent out of the folder stops the folder-title match; a
	// deleted folder's title does not match.
	if _, err := f.Agents().SetFolder(ctx, f.org.ID, agents["folder"].WorkflowPermanentID, ""); err != nil {
		t.Fatal(err)
	}
	if got := f.list(f.org.ID, store.AgentQuery{SearchKey: "quarterly"}); len(got) != 0 {
		t.Fatalf("folder match after move: %v", got)
	}
}

func testListAgentsFilters(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "F")
	mk := func(title string, status client.AgentStatus, saved bool, folder *string) string {
		d := AgentDef(title)
		d.Status, d.IsSavedTask, d.FolderID = status, saved, folder
		return f.create(f.org.ID, d).WorkflowPermanentID
	}
	pub := mk("pub", client.AgentStatusPublished, false, nil)
	draft := mk("draft", client.AgentStatusDraft, false, &fl.FolderID)
	auto := mk("auto", client.AgentStatusAutoGenerated, true, nil)
	saved := mk("saved", client.AgentStatusPublished, true, &fl.FolderID)
	importing := mk("importing", client.AgentStatusImporting, false, nil)

	cases := []struct {
		name string
		q    store.AgentQuery
		want []string
	}{
		{"default statuses", store.AgentQuery{}, []string{saved, draft, pub}},
		{"auto_generated", store.AgentQuery{Statuses: []client.AgentStatus{client.AgentStatusAutoGenerated}}, []string{auto}},
		{"two statuses", store.AgentQuery{Statuses: []client.AgentStatus{client.AgentStatusImporting, client.AgentStatusDraft}}, []string{importing, draft}},
		{"only saved tasks", store.AgentQuery{OnlySavedTasks: true}, []string{saved}},
		{"only saved tasks, any status", store.AgentQuery{OnlySavedTasks: true,
			Statuses: []client.AgentStatus{client.AgentStatusAutoGenerated, client.AgentStatusPublished}}, []string{saved, auto}},
		{"only workflows", store.AgentQuery{OnlyWorkflows: true}, []string{draft, pub}},
		{"both flags", store.AgentQuery{OnlyWorkflows: true, OnlySavedTasks: true}, []string{}},
		{"folder", store.AgentQuery{FolderID: fl.FolderID}, []string{saved, draft}},
		{"folder and workflows", store.AgentQuery{FolderID: fl.FolderID, OnlyWorkflows: true}, []string{draft}},
		{"unknown folder", store.AgentQuery{FolderID: "fld_404"}, []string{}},
		{"filter", store.AgentQuery{Filter: func(w string) bool { return w == pub || w == saved }}, []string{saved, pub}},
		{"filter then paging", store.AgentQuery{Filter: func(w string) bool { return w != saved }, PageSize: 1, Page: 2}, []string{pub}},
		{"search and status", store.AgentQuery{SearchKey: "a", Statuses: []client.AgentStatus{client.AgentStatusAutoGenerated, client.AgentStatusDraft}}, []string{auto, draft}},
	}
	for _, c := range cases {
		if got := f.list(f.org.ID, c.q); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// testOddFolderAndStatus: folder and status values that need escaping
// in JSON list and filter as any other.
func testOddFolderAndStatus(t *testing.T, o opener) {
	// Odd folder and status values still list and filter correctly
	// through the full decode.
	f := newFixture(t, o)
	d := AgentDef("odd")
	d.FolderID = new(`fld_"q"`)
	d.Status = `draft\x`
	a := f.create(f.org.ID, d)
	if got := f.list(f.org.ID, store.AgentQuery{FolderID: `fld_"q"`, Statuses: []client.AgentStatus{`draft\x`}}); !slices.Equal(got, []string{a.WorkflowPermanentID}) {
		t.Fatalf("odd values: %v", got)
	}
}

// testOrgIsolation: every method answers another organization's ids as if
// they did not exist, and an unknown organization is ErrNotFound.
func testOrgIsolation(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.org.ID
	b := f.newOrg("other").ID
	fl := f.folder(a, "A's folder")
	d := AgentDef("A's agent", WorkflowParam("secret_param", "", nil))
	d.FolderID = &fl.FolderID
	agent := f.create(a, d)
	wpid := agent.WorkflowPermanentID
	bAgent := f.create(b, AgentDef("B's agent"))
	bFolder := f.folder(b, "B's folder")

	notFound := func(name string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s from another org: %v", name, err)
		}
	}
	_, err := f.Agents().Get(ctx, b, wpid, 0)
	notFound("GetAgent", err)
	_, err = f.Agents().Get(ctx, b, wpid, 1)
	notFound("GetAgent v1", err)
	_, err = f.Agents().Versions(ctx, b, wpid)
	notFound("AgentVersions", err)
	_, err = f.Agents().Update(ctx, b, wpid, AgentDef("hijack"))
	notFound("UpdateAgent", err)
	_, err = f.Agents().SetFolder(ctx, b, wpid, "")
	notFound("SetAgentFolder (agent)", err)
	_, err = f.Agents().SetFolder(ctx, b, bAgent.WorkflowPermanentID, fl.FolderID)
	wantErr(t, err, store.ErrNotFound, "folder "+fl.FolderID+" not found")
	_, err = f.Agents().SetFolder(ctx, a, wpid, bFolder.FolderID)
	wantErr(t, err, store.ErrNotFound, "folder "+bFolder.FolderID+" not found")
	if err := f.Agents().Delete(ctx, b, wpid); err != nil {
		t.Errorf("DeleteAgent from another org: %v", err)
	}
	_, err = f.Folders().Get(ctx, b, fl.FolderID)
	notFound("GetFolder", err)
	_, err = f.Folders().Update(ctx, b, fl.FolderID, new("x"), nil)
	notFound("UpdateFolder", err)
	notFound("DeleteFolder", f.Folders().Delete(ctx, b, fl.FolderID, true))

	if got := f.list(b, store.AgentQuery{}); !slices.Equal(got, []string{bAgent.WorkflowPermanentID}) {
		t.Errorf("B lists %v", got)
	}
	for _, term := range []string{"a's", "secret_param", wpid, "folder"} {
		if got := f.list(b, store.AgentQuery{SearchKey: term}); len(got) != 0 {
			t.Errorf("B's search %q found %v", term, got)
		}
	}
	if got := f.list(b, store.AgentQuery{FolderID: fl.FolderID}); len(got) != 0 {
		t.Errorf("B lists A's folder: %v", got)
	}
	folders, _ := f.Folders().List(ctx, b, 0, 0, "")
	if len(folders) != 1 || folders[0].FolderID != bFolder.FolderID {
		t.Errorf("B's folders %v", folders)
	}
	// A's things are untouched by all of the above.
	got, err := f.Agents().Get(ctx, a, wpid, 0)
	if err != nil || mustJSON(t, got) != mustJSON(t, agent) {
		t.Fatalf("A's agent changed: %v", err)
	}
	if fo, err := f.Folders().Get(ctx, a, fl.FolderID); err != nil || fo.Title != "A's folder" || fo.WorkflowCount != 1 {
		t.Fatalf("A's folder changed: %+v %v", fo, err)
	}

	// An unknown organization.
	const none = "o_404"
	_, _, err = f.Agents().Create(ctx, none, AgentDef("x"), "")
	notFound("CreateAgent unknown org", err)
	_, err = f.Agents().Update(ctx, none, wpid, AgentDef("x"))
	notFound("UpdateAgent unknown org", err)
	_, err = f.Agents().Get(ctx, none, wpid, 0)
	notFound("GetAgent unknown org", err)
	_, err = f.Agents().Versions(ctx, none, wpid)
	notFound("AgentVersions unknown org", err)
	notFound("DeleteAgent unknown org", f.Agents().Delete(ctx, none, wpid))
	_, err = f.Agents().SetFolder(ctx, none, wpid, "")
	notFound("SetAgentFolder unknown org", err)
	_, err = f.Agents().List(ctx, none, store.AgentQuery{})
	notFound("ListAgents unknown org", err)
	_, err = f.Folders().Create(ctx, none, "x", "")
	notFound("CreateFolder unknown org", err)
	_, err = f.Folders().Get(ctx, none, fl.FolderID)
	notFound("GetFolder unknown org", err)
	_, err = f.Folders().Update(ctx, none, fl.FolderID, nil, nil)
	notFound("UpdateFolder unknown org", err)
	notFound("DeleteFolder unknown org", f.Folders().Delete(ctx, none, fl.FolderID, false))
	_, err = f.Folders().List(ctx, none, 1, 10, "")
	notFound("ListFolders unknown org", err)
	wantErr(t, err, store.ErrNotFound, "organization o_404 not found")
}

// testManyVersions: an agent of many large versions; delete, resurrect
// and a folder delete each touch every version.
func testManyVersions(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Big")
	long := strings.Repeat("a fairly long parameter description ", 40)
	d := AgentDef("big", WorkflowParam("p", long, long))
	d.FolderID = &fl.FolderID
	a := f.create(f.org.ID, d)
	other := f.create(f.org.ID, AgentDef("neighbour"))
	const versions = 150
	for range versions - 1 {
		f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("big", WorkflowParam("p", long, long)))
	}
	check := func(when string, nrows int, deleted bool, folder *string) {
		t.Helper()
		// A deleted agent hides every version; the others answer every
		// version, each with the agent's state.
		if deleted {
			if _, err := f.Agents().Versions(ctx, f.org.ID, a.WorkflowPermanentID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("%s: Versions %v", when, err)
			}
			for v := 1; v <= nrows; v++ {
				if _, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, v); !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("%s: v%d %v", when, v, err)
				}
			}
			return
		}
		rows, err := f.Agents().Versions(ctx, f.org.ID, a.WorkflowPermanentID)
		if err != nil || len(rows) != nrows {
			t.Fatalf("%s: %d rows, %v", when, len(rows), err)
		}
		for i, r := range rows {
			if r.Version != i+1 || r.DeletedAt != nil || (r.FolderID == nil) != (folder == nil) ||
				folder != nil && *r.FolderID != *folder {
				t.Fatalf("%s: v%d deleted_at %v folder %v", when, r.Version, r.DeletedAt, r.FolderID)
			}
		}
	}
	check("updated", versions, false, &fl.FolderID)
	if err := f.Agents().Delete(ctx, f.org.ID, a.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	check("deleted", versions, true, &fl.FolderID)
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("back"))
	check("resurrected", versions+1, false, &fl.FolderID)
	if err := f.Folders().Delete(ctx, f.org.ID, fl.FolderID, false); err != nil {
		t.Fatal(err)
	}
	check("folder deleted", versions+1, false, nil)
	if got, err := f.Agents().Get(ctx, f.org.ID, other.WorkflowPermanentID, 0); err != nil || mustJSON(t, got) != mustJSON(t, other) {
		t.Fatalf("neighbour changed: %v", err)
	}
}

// testConcurrentUse runs creates, updates, moves, deletes and lists from
// several goroutines (run with -race), then checks the indexes.
func testConcurrentUse(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Shared")
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				a, _, err := f.Agents().Create(ctx, f.org.ID, AgentDef(fmt.Sprintf("w%d-%d", w, i)), "")
				if err != nil {
					errs <- err
					return
				}
				wpid := a.WorkflowPermanentID
				steps := []func() error{
					func() error { _, err := f.Agents().Update(ctx, f.org.ID, wpid, AgentDef("u")); return err },
					func() error { _, err := f.Agents().SetFolder(ctx, f.org.ID, wpid, fl.FolderID); return err },
					func() error { _, err := f.Agents().List(ctx, f.org.ID, store.AgentQuery{SearchKey: "w"}); return err },
					func() error { _, err := f.Folders().List(ctx, f.org.ID, 1, 10, ""); return err },
				}
				if i%3 == 0 {
					steps = append(steps, func() error { return f.Agents().Delete(ctx, f.org.ID, wpid) })
				}
				for _, step := range steps {
					if err := step(); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// 60 agents, 20 deleted, all the others in the folder.
	if got := f.list(f.org.ID, store.AgentQuery{PageSize: 100}); len(got) != 40 {
		t.Fatalf("%d agents listed", len(got))
	}
	if n := f.count(f.org.ID, fl.FolderID); n != 40 {
		t.Fatalf("folder counts %d", n)
	}
}

// testListAgentsSearchesOutputParameters: the output parameters that a
// version's blocks have (the API adds them, nested blocks' included) are
// parameter metadata, which search finds.
func testListAgentsSearchesOutputParameters(t *testing.T, o opener) {
	f := newFixture(t, o)
	def := AgentDef("Invoices")
	def.WorkflowDefinition.Blocks = append(def.WorkflowDefinition.Blocks, &client.ForLoopBlock{
		BlockBase: client.BlockBase{Label: "each"}, LoopOverParameterKey: "open_output",
		LoopBlocks: client.Blocks{&client.ExtractionBlock{
			BlockBase: client.BlockBase{Label: "pick"}, DataExtractionGoal: "Extract the invoice number"}},
	})
	a := f.create(f.org.ID, def)
	f.create(f.org.ID, AgentDef("Other"))
	for _, term := range []string{"Output Parameter for block PICK", "each_out"} {
		if got := f.list(f.org.ID, store.AgentQuery{SearchKey: term}); !slices.Equal(got, []string{a.WorkflowPermanentID}) {
			t.Errorf("search %q: %v", term, got)
		}
	}
}
