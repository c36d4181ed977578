package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/store"
)

func scriptFile(agent, note string) []byte {
	return []byte("format: abctl.script/v1\nagent: " + agent + "\ncache_key: default\nblocks:\n  - label: search\n    mode: model\n    reason: " + note + "\n")
}

// scriptDigest is the SHA-256 of a script's content, in hex, as a
// revision names it.
func scriptDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

func scriptIDs(revs []*store.ScriptRevision) []string {
	out := []string{}
	for _, r := range revs {
		out = append(out, r.ScriptID)
	}
	return out
}

// testScriptsVersionsAndIndex: a script made for an agent is version 1
// and the one of its cache key; a deploy is a new version even when
// nothing changed; versions read back as stored; a later script of the
// same agent and cache key takes the index; the list is newest first,
// filtered by agent, in pages; another organization sees none of it.
func testScriptsVersionsAndIndex(t *testing.T, o opener) {
	f := newFixture(t, o)
	sc := f.Scripts()
	agent := f.create(f.org.ID, AgentDef("Search"))
	wpid := agent.WorkflowPermanentID

	first, err := sc.Create(ctx, f.org.ID, store.ScriptInput{WorkflowPermanentID: wpid, RunID: "wr_1", Content: scriptFile(wpid, "one")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ScriptID, "s_") || !strings.HasPrefix(first.RevisionID, "sr_") || first.Version != 1 ||
		first.CacheKey != store.DefaultCacheKey || first.WorkflowPermanentID != wpid || first.RunID != "wr_1" || first.OrgID != f.org.ID ||
		first.SHA256 != scriptDigest(scriptFile(wpid, "one")) || first.CreatedAt.IsZero() || !first.ModifiedAt.Equal(first.CreatedAt.Time) {
		t.Fatalf("created: %+v", first)
	}
	// A deploy of the same bytes is still a new version.
	second, err := sc.Deploy(ctx, f.org.ID, first.ScriptID, scriptFile(wpid, "one"), "")
	if err != nil || second.Version != 2 || second.RevisionID == first.RevisionID || second.RunID != "" {
		t.Fatalf("deploy: %+v %v", second, err)
	}
	third, err := sc.Deploy(ctx, f.org.ID, first.ScriptID, scriptFile(wpid, "three"), "wr_3")
	if err != nil || third.Version != 3 {
		t.Fatalf("deploy: %+v %v", third, err)
	}
	latest, err := sc.Get(ctx, f.org.ID, first.ScriptID)
	if err != nil || latest.Version != 3 || !bytes.Equal(latest.Content, scriptFile(wpid, "three")) || latest.RunID != "wr_3" {
		t.Fatalf("get: %+v %v", latest, err)
	}
	v1, err := sc.Version(ctx, f.org.ID, first.ScriptID, 1)
	if err != nil || !bytes.Equal(v1.Content, scriptFile(wpid, "one")) || v1.RevisionID != first.RevisionID ||
		!v1.CreatedAt.Equal(first.CreatedAt.Time) || !v1.ModifiedAt.Equal(third.CreatedAt.Time) {
		t.Fatalf("version 1: %+v %v", v1, err)
	}
	wantErr(t, func() error { _, err := sc.Version(ctx, f.org.ID, first.ScriptID, 4); return err }(), store.ErrNotFound, "version 4 of script")
	wantErr(t, func() error { _, err := sc.Get(ctx, f.org.ID, "s_404"); return err }(), store.ErrNotFound, "script s_404")
	if got, err := sc.ForAgent(ctx, f.org.ID, wpid, ""); err != nil || got.ScriptID != first.ScriptID || got.Version != 3 {
		t.Fatalf("for agent: %+v %v", got, err)
	}
	if _, err := sc.ForAgent(ctx, f.org.ID, wpid, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("for another cache key: %v", err)
	}

	// A script of no agent, and a later script of the same pair, named by
	// a version id (w_) of the agent, which takes the index.
	loose, err := sc.Create(ctx, f.org.ID, store.ScriptInput{Content: scriptFile("", "loose")})
	if err != nil || loose.WorkflowPermanentID != "" {
		t.Fatalf("a script of no agent: %+v %v", loose, err)
	}
	newer, err := sc.Create(ctx, f.org.ID, store.ScriptInput{WorkflowPermanentID: agent.WorkflowID, Content: scriptFile(wpid, "newer")})
	if err != nil || newer.WorkflowPermanentID != wpid || newer.ScriptID == first.ScriptID {
		t.Fatalf("create by version id: %+v %v", newer, err)
	}
	if got, err := sc.ForAgent(ctx, f.org.ID, wpid, store.DefaultCacheKey); err != nil || got.ScriptID != newer.ScriptID {
		t.Fatalf("the index after a second create: %+v %v", got, err)
	}
	if _, err := sc.Create(ctx, f.org.ID, store.ScriptInput{WorkflowPermanentID: "wpid_404", Content: scriptFile("", "x")}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("create for an unknown agent: %v", err)
	}
	if _, err := sc.Create(ctx, f.org.ID, store.ScriptInput{WorkflowPermanentID: "w_404", Content: scriptFile("", "x")}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("create for an unknown version id: %v", err)
	}
	if _, err := sc.Create(ctx, f.org.ID, store.ScriptInput{}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("create without content: %v", err)
	}

	// Most recently changed first; by agent; in pages.
	list, err := sc.List(ctx, f.org.ID, 1, 10, "")
	if want := []string{newer.ScriptID, loose.ScriptID, first.ScriptID}; err != nil || !slices.Equal(scriptIDs(list), want) {
		t.Fatalf("list: %v %v, want %v", scriptIDs(list), err, want)
	}
	if list[2].Version != 3 {
		t.Errorf("the list shows version %d, want the latest", list[2].Version)
	}
	if list, _ := sc.List(ctx, f.org.ID, 1, 10, wpid); !slices.Equal(scriptIDs(list), []string{newer.ScriptID, first.ScriptID}) {
		t.Errorf("list by agent: %v", scriptIDs(list))
	}
	if list, _ := sc.List(ctx, f.org.ID, 2, 2, ""); !slices.Equal(scriptIDs(list), []string{first.ScriptID}) {
		t.Errorf("page 2: %v", scriptIDs(list))
	}
	if list, err := sc.List(ctx, f.org.ID, 1<<40, 100, ""); err != nil || len(list) != 0 {
		t.Errorf("a page far past the end: %v %v", list, err)
	}

	// Another organization: nothing is found, nothing is listed.
	other := f.newOrg("other")
	if _, err := sc.Get(ctx, other.ID, first.ScriptID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization's script: %v", err)
	}
	if _, err := sc.Deploy(ctx, other.ID, first.ScriptID, scriptFile(wpid, "x"), ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deploy to another organization's script: %v", err)
	}
	if _, err := sc.Create(ctx, other.ID, store.ScriptInput{WorkflowPermanentID: wpid, Content: scriptFile(wpid, "x")}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("create for another organization's agent: %v", err)
	}
	if list, err := sc.List(ctx, other.ID, 1, 10, ""); err != nil || len(list) != 0 {
		t.Errorf("another organization's list: %v %v", list, err)
	}

	f.reopen()
	if got, err := f.Scripts().Version(ctx, f.org.ID, first.ScriptID, 2); err != nil || !bytes.Equal(got.Content, scriptFile(wpid, "one")) {
		t.Errorf("after a reopen: %+v %v", got, err)
	}
}

// testScriptRecord: a run's recording creates the script of its agent and
// cache key, adds a version when it differs from the latest, and only
// then; cache keys keep their scripts apart.
func testScriptRecord(t *testing.T, o opener) {
	f := newFixture(t, o)
	sc := f.Scripts()
	wpid := f.create(f.org.ID, AgentDef("Search")).WorkflowPermanentID

	rev, created, err := sc.Record(ctx, f.org.ID, wpid, "", "wr_1", scriptFile(wpid, "a"))
	if err != nil || !created || rev.Version != 1 || rev.RunID != "wr_1" || rev.CacheKey != store.DefaultCacheKey {
		t.Fatalf("first recording: %+v %v %v", rev, created, err)
	}
	same, created, err := sc.Record(ctx, f.org.ID, wpid, store.DefaultCacheKey, "wr_2", scriptFile(wpid, "a"))
	if err != nil || created || same.Version != 1 || same.RevisionID != rev.RevisionID || same.RunID != "wr_1" {
		t.Fatalf("the same recording: %+v %v %v", same, created, err)
	}
	changed, created, err := sc.Record(ctx, f.org.ID, wpid, "", "wr_3", scriptFile(wpid, "b"))
	if err != nil || !created || changed.Version != 2 || changed.ScriptID != rev.ScriptID || changed.RunID != "wr_3" {
		t.Fatalf("a changed recording: %+v %v %v", changed, created, err)
	}
	eu, created, err := sc.Record(ctx, f.org.ID, wpid, "eu", "wr_4", scriptFile(wpid, "b"))
	if err != nil || !created || eu.ScriptID == rev.ScriptID || eu.Version != 1 || eu.CacheKey != "eu" {
		t.Fatalf("another cache key: %+v %v %v", eu, created, err)
	}
	if got, err := sc.ForAgent(ctx, f.org.ID, wpid, "eu"); err != nil || got.ScriptID != eu.ScriptID {
		t.Errorf("for the other cache key: %+v %v", got, err)
	}
	odd, created, err := sc.Record(ctx, f.org.ID, wpid, "eu\x00odd", "wr_4", scriptFile(wpid, "b"))
	if err != nil || !created || odd.ScriptID == eu.ScriptID || odd.CacheKey != "eu\x00odd" {
		t.Fatalf("an odd cache key: %+v %v %v", odd, created, err)
	}
	if got, err := sc.ForAgent(ctx, f.org.ID, wpid, "eu\x00odd"); err != nil || got.ScriptID != odd.ScriptID {
		t.Errorf("for the odd cache key: %+v %v", got, err)
	}
	// A deploy of the agent's script is what the next recording compares
	// with.
	if _, err := sc.Deploy(ctx, f.org.ID, rev.ScriptID, scriptFile(wpid, "edited"), ""); err != nil {
		t.Fatal(err)
	}
	if got, created, err := sc.Record(ctx, f.org.ID, wpid, "", "wr_5", scriptFile(wpid, "edited")); err != nil || created || got.Version != 3 {
		t.Errorf("recording what was deployed: %+v %v %v", got, created, err)
	}
	if _, _, err := sc.Record(ctx, f.org.ID, "wpid_404", "", "wr_6", scriptFile("", "x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("recording for an unknown agent: %v", err)
	}
	other := f.newOrg("other")
	if _, _, err := sc.Record(ctx, other.ID, wpid, "", "wr_7", scriptFile(wpid, "x")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("recording for another organization's agent: %v", err)
	}
}

// testScriptsOfNoAgent: scripts that belong to no agent: made, deployed,
// read by version, listed in pages; what is not there is a NotFoundError
// that names it.
func testScriptsOfNoAgent(t *testing.T, o opener) {
	f := newFixture(t, o)
	other := f.newOrg("other")
	sc := f.Scripts()
	file := func(note string) []byte { return scriptFile("", note) }
	first, err := sc.Create(ctx, f.org.ID, store.ScriptInput{RunID: "wr_1", Content: file("one")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ScriptID, "s_") || !strings.HasPrefix(first.RevisionID, "sr_") || first.Version != 1 ||
		first.CacheKey != store.DefaultCacheKey || first.OrgID != f.org.ID || !first.ModifiedAt.Equal(first.CreatedAt.Time) {
		t.Fatalf("created %+v", first)
	}
	latest, err := sc.Deploy(ctx, f.org.ID, first.ScriptID, file("two"), "")
	if err != nil || latest.Version != 2 {
		t.Fatalf("deploy %+v %v", latest, err)
	}
	v1, err := sc.Version(ctx, f.org.ID, first.ScriptID, 1)
	if err != nil || !bytes.Equal(v1.Content, file("one")) || v1.RevisionID != first.RevisionID || v1.RunID != "wr_1" ||
		!v1.CreatedAt.Equal(first.CreatedAt.Time) || !v1.ModifiedAt.Equal(latest.CreatedAt.Time) {
		t.Fatalf("version 1 %+v %v", v1, err)
	}
	for _, v := range []int{3, -1, 1 << 40} {
		_, err := sc.Version(ctx, f.org.ID, first.ScriptID, v)
		var nf *store.NotFoundError
		if !errors.As(err, &nf) || nf.Version != v || !strings.Contains(err.Error(), fmt.Sprintf("version %d of script", v)) {
			t.Errorf("version %d: %v", v, err)
		}
	}
	_, err = sc.Get(ctx, f.org.ID, "s_404")
	wantNotFound(t, "an unknown script", err, store.RecordScript, "s_404")
	if list, err := sc.List(ctx, f.org.ID, 1, 10, "wpid_404"); err != nil || list == nil || len(list) != 0 {
		t.Errorf("list of an agent without scripts %v %v", list, err)
	}
	_, err = sc.Get(ctx, other.ID, first.ScriptID)
	wantNotFound(t, "another organization's script", err, store.RecordScript, first.ScriptID)
	_, err = sc.Deploy(ctx, other.ID, first.ScriptID, file("x"), "")
	wantNotFound(t, "deploy to another organization's", err, store.RecordScript, first.ScriptID)
	if _, err := sc.ForAgent(ctx, f.org.ID, "", ""); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "(cache key default)") {
		t.Errorf("the script of no agent: %v", err)
	}
	_, err = sc.List(ctx, "o_404", 1, 10, "")
	wantNotFound(t, "an unknown organization", err, store.RecordOrganization, "o_404")
}
