package applier

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
)

// TestPlanAndApply walks one agent file through the decisions: a new
// agent, the same file again, a change of definition, a change of tags
// only, a dry run, and tags the file does not mention.
func TestPlanAndApply(t *testing.T) {
	s := startService(t, nil)
	ctx := t.Context()
	fa := parseAgent(t, "agents/contact-form.yaml", contactForm)

	// New: Plan says created and shows no service side.
	ap := s.newApplier()
	action, have, want, err := ap.Plan(t.Context(), fa)
	if err != nil || action != Created || have != nil {
		t.Fatalf("plan of a new agent: %s, have %q, %v", action, have, err)
	}
	if !strings.HasPrefix(string(want), "# tag abctl.name: contact-form\n# tag team: web\n") {
		t.Errorf("want does not start with the tags:\n%s", want)
	}
	// A dry run writes nothing.
	reqs, _ := s.rec.count(func() {
		if res := ap.Apply(ctx, fa, true); res.Err != nil || res.Action != Created || res.Agent != nil {
			t.Errorf("dry run: %+v", res)
		}
	})
	if writes := writesOf(reqs); len(writes) != 0 {
		t.Errorf("a dry run wrote: %s", writes)
	}
	res := ap.Apply(ctx, fa, false)
	if res.Err != nil || res.Action != Created {
		t.Fatalf("apply of a new agent: %+v", res)
	}
	id := agentfile.AgentID(res.Agent.OrganizationID, "contact-form")
	if res.ID != id || res.Agent.WorkflowPermanentID != id {
		t.Errorf("created %s, want the id the name maps to, %s", res.ID, id)
	}
	if tags := s.tagsOf(id); tags["abctl.name"] != "contact-form" || tags["team"] != "web" {
		t.Errorf("tags of the new agent: %v", tags)
	}
	// The same Applier now knows it: unchanged, without a read.
	reqs, _ = s.rec.count(func() {
		if res := ap.Apply(ctx, fa, false); res.Err != nil || res.Action != Unchanged {
			t.Errorf("second apply with the same Applier: %+v", res)
		}
	})
	if len(reqs) != 0 {
		t.Errorf("an agent the Applier wrote was read again: %s", reqs)
	}

	// Unchanged, from a new Applier: no write, no new version.
	reqs, _ = s.rec.count(func() {
		ap := s.newApplier()
		if action, have, want, err := ap.Plan(t.Context(), fa); err != nil || action != Unchanged || string(have) != string(want) {
			t.Errorf("plan of the unchanged file: %s, %v\n%s\n%s", action, err, have, want)
		}
		if res := ap.Apply(ctx, fa, false); res.Err != nil || res.Action != Unchanged || res.Agent == nil || res.ID != id {
			t.Errorf("apply of the unchanged file: %+v", res)
		}
	})
	if writes := writesOf(reqs); len(writes) != 0 {
		t.Errorf("an unchanged file was written: %s", writes)
	}
	if a := s.get(id); a.Version != 1 {
		t.Errorf("version %d after unchanged applies, want 1", a.Version)
	}

	// Tags the file does not mention are left alone and do not count.
	if _, err := s.plain.Agents.ApplyTags(ctx, id, &client.TagApplyRequest{Tags: []client.TagInput{{Key: "owner", Value: "ada"}}}); err != nil {
		t.Fatal(err)
	}
	if action, _, _, err := s.newApplier().Plan(t.Context(), fa); err != nil || action != Unchanged {
		t.Errorf("an extra tag made the agent %s (%v)", action, err)
	}

	// A tag of the file changed: configured, tags only, no new version.
	retagged := parseAgent(t, "agents/contact-form.yaml", strings.Replace(contactForm, "team: web", "team: sales", 1))
	action, have, want, err = s.newApplier().Plan(t.Context(), retagged)
	if err != nil || action != Configured || !strings.Contains(string(have), "# tag team: web\n") || !strings.Contains(string(want), "# tag team: sales\n") {
		t.Errorf("plan of a tag change: %s, %v\n%s\n%s", action, err, have, want)
	}
	reqs, _ = s.rec.count(func() {
		if res := s.newApplier().Apply(ctx, retagged, false); res.Err != nil || res.Action != Configured {
			t.Errorf("apply of a tag change: %+v", res)
		}
	})
	if writes := writesOf(reqs); !slices.Equal(writes, []string{"POST /v1/agents/{id}/tags"}) {
		t.Errorf("a tag change wrote %s, want the tags only", writes)
	}
	if a, tags := s.get(id), s.tagsOf(id); a.Version != 1 || tags["team"] != "sales" || tags["owner"] != "ada" {
		t.Errorf("after a tag change: version %d, tags %v", a.Version, tags)
	}

	// The definition changed: a new version, the tags untouched.
	changed := parseAgent(t, "agents/contact-form.yaml", strings.Replace(
		strings.Replace(contactForm, "team: web", "team: sales", 1), "wait_sec: 1", "wait_sec: 3", 1))
	action, have, want, err = s.newApplier().Plan(t.Context(), changed)
	if err != nil || action != Configured || !strings.Contains(string(have), "wait_sec: 1") || !strings.Contains(string(want), "wait_sec: 3") {
		t.Errorf("plan of a change: %s, %v\n%s\n%s", action, err, have, want)
	}
	reqs, _ = s.rec.count(func() {
		if res := s.newApplier().Apply(ctx, changed, false); res.Err != nil || res.Action != Configured || res.Agent.Version != 2 {
			t.Errorf("apply of a change: %+v", res)
		}
	})
	if writes := writesOf(reqs); !slices.Equal(writes, []string{"POST /v1/agents/{id}"}) {
		t.Errorf("a change of definition wrote %s, want the update only", writes)
	}
}

// writesOf returns the requests of reqs that are not reads.
func writesOf(reqs []string) []string {
	var w []string
	for _, r := range reqs {
		if !strings.HasPrefix(r, "GET ") {
			w = append(w, r)
		}
	}
	return w
}

// TestDeletedAgentComesBack: applying the file of a deleted agent revives
// it under its id, whether its definition changed or not.
func TestDeletedAgentComesBack(t *testing.T) {
	s := startService(t, nil)
	ctx := t.Context()
	fa := parseAgent(t, "agents/contact-form.yaml", contactForm)
	first := applyOnce(t, s.plain, fa)
	// Another agent, so that the organization is not empty.
	if _, err := s.plain.Agents.CreateYAML(ctx, editorAgent, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.plain.Agents.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if action, have, _, err := s.newApplier().Plan(t.Context(), fa); err != nil || action != Created || have != nil {
		t.Errorf("plan of a deleted agent's file: %s %q %v", action, have, err)
	}
	res := applyOnce(t, s.counted, fa)
	if res.Action != Configured || res.ID != first.ID || res.Agent.DeletedAt != nil {
		t.Errorf("apply of a deleted agent's file: %+v", res)
	}
	if a := s.get(first.ID); a == nil || a.Version != 2 {
		t.Errorf("the revived agent: %+v", a)
	}
	if res := applyOnce(t, s.counted, fa); res.Action != Unchanged {
		t.Errorf("apply after the revival: %s", res.Action)
	}
}

// TestAdoptByID: a file with the id of an agent made elsewhere updates that
// agent; an id that names no agent is never created. The file `abctl get
// -o yaml` writes of such an agent (its id, no name) applies as unchanged
// and leaves the agent nameless, not named after the file; a file that
// adds a name gives it that name.
func TestAdoptByID(t *testing.T) {
	s := startService(t, nil)
	ctx := t.Context()
	made, err := s.plain.Agents.CreateYAML(ctx, editorAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	exported, err := agentfile.Render(made, "", nil, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	byID := parseAgent(t, "agents/exported.yaml", string(exported))
	action, have, want, err := s.newApplier().Plan(t.Context(), byID)
	if err != nil || action != Unchanged || strings.Contains(string(want), "abctl.name") {
		t.Errorf("plan of the exported file: %s, %v\n%s\n%s", action, err, have, want)
	}
	if res := applyOnce(t, s.counted, byID); res.Err != nil || res.Action != Unchanged || res.Name != made.WorkflowPermanentID {
		t.Errorf("apply of the exported file: %+v", res)
	}
	if tags, err := s.plain.Agents.GetTags(ctx, made.WorkflowPermanentID); err != nil || len(tags.Tags) != 0 {
		t.Errorf("the agent was tagged %+v (%v): it is named after the file", tags, err)
	}

	fa := parseAgent(t, "agents/x.yaml", "name: editor-agent\nid: "+made.WorkflowPermanentID+"\n"+editorAgent)
	// The same definition; the abctl.name tag is new.
	action, have, want, err = s.newApplier().Plan(t.Context(), fa)
	if err != nil || action != Configured || !strings.Contains(string(have), "# tag abctl.name: (none)\n") ||
		!strings.Contains(string(want), "# tag abctl.name: editor-agent\n") {
		t.Errorf("plan of an adopted agent: %s, %v\n%s\n%s", action, err, have, want)
	}
	if res := applyOnce(t, s.counted, fa); res.Action != Configured || res.ID != made.WorkflowPermanentID || res.Agent.Version != 1 {
		t.Errorf("first apply: %+v", res)
	}
	if res := applyOnce(t, s.counted, fa); res.Action != Unchanged {
		t.Errorf("second apply: %s", res.Action)
	}
	changed := parseAgent(t, "agents/x.yaml", "name: editor-agent\nid: "+made.WorkflowPermanentID+"\n"+strings.Replace(editorAgent, "wait_sec: 1", "wait_sec: 2", 1))
	if res := applyOnce(t, s.counted, changed); res.Action != Configured || res.Agent.Version != 2 || res.ID != made.WorkflowPermanentID {
		t.Errorf("apply of a change: %+v", res)
	}
	if agents, _ := s.plain.Agents.List(ctx, nil); len(agents) != 1 {
		t.Errorf("%d agents: the adopted one was not updated in place", len(agents))
	}

	ghost := parseAgent(t, "ghost.yaml", "id: wpid_1\n"+editorAgent)
	ap := s.newApplier()
	if action, have, _, err := ap.Plan(t.Context(), ghost); err != nil || action != Configured || have != nil {
		t.Errorf("plan of an id that names no agent: %s %q %v", action, have, err)
	}
	res := ap.Apply(ctx, ghost, false)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "wpid_1 names no agent") {
		t.Errorf("apply of an id that names no agent: %+v", res)
	}
}

// TestEmptyOrganization: when New lists no agent, the agents of names are
// created without being looked up, and what the first create tells (the
// organization) serves the next files.
func TestEmptyOrganization(t *testing.T) {
	s := startService(t, nil)
	ctx := t.Context()
	ap := s.newApplier()
	if ap.OrganizationID() != "" {
		t.Fatalf("organization %q before any agent", ap.OrganizationID())
	}
	one := parseAgent(t, "one.yaml", contactForm)
	two := parseAgent(t, "two.yaml", contactForm)
	var results []Result
	reqs, _ := s.rec.count(func() {
		results = append(results, ap.Apply(ctx, one, false), ap.Apply(ctx, two, false))
	})
	for _, res := range results {
		if res.Err != nil || res.Action != Created {
			t.Errorf("%s: %+v", res.Name, res)
		}
	}
	want := []string{"POST /v1/agents", "POST /v1/agents/{id}/tags", "POST /v1/agents", "POST /v1/agents/{id}/tags"}
	if !slices.Equal(reqs, want) {
		t.Errorf("requests %s, want %s", reqs, want)
	}
	if org := ap.OrganizationID(); org == "" || results[1].ID != agentfile.AgentID(org, "two") {
		t.Errorf("organization %q, second agent %s", org, results[1].ID)
	}
}

// TestTagsRefused: against a service that refuses tags (403 on every tag
// route), definitions are applied, TagsRefused is set, and tags take no
// part in the comparison.
func TestTagsRefused(t *testing.T) {
	s := startService(t, refuseTags)
	ctx := t.Context()
	fa := parseAgent(t, "agents/contact-form.yaml", contactForm)
	ap := s.newApplier()
	if res := ap.Apply(ctx, fa, false); res.Err != nil || res.Action != Created {
		t.Fatalf("first apply: %+v", res)
	}
	if !ap.TagsRefused {
		t.Error("TagsRefused not set after a refused tag write")
	}
	for _, opts := range [][]Option{nil, {ReadAll()}, {Prefetch([]*agentfile.Agent{fa})}} {
		ap := s.newApplier(opts...)
		if res := ap.Apply(ctx, fa, false); res.Err != nil || res.Action != Unchanged {
			t.Errorf("apply again (%d options): %+v", len(opts), res)
		}
		if !ap.TagsRefused {
			t.Errorf("TagsRefused not set after a refused tag read (%d options)", len(opts))
		}
		if action, have, want, err := ap.Plan(t.Context(), fa); err != nil || action != Unchanged || string(have) != string(want) {
			t.Errorf("plan (%d options): %s %v", len(opts), action, err)
		}
		if orphans, err := ap.Orphans(t.Context(), map[string]bool{}); err != nil || len(orphans) != 0 {
			t.Errorf("orphans without tags: %+v %v", orphans, err)
		}
	}
}

// TestReadErrors: a read that fails (not a 404) is the file's error, from
// Plan and Apply, and nothing is written.
func TestReadErrors(t *testing.T) {
	failTags := false
	s := startService(t, func(w http.ResponseWriter, r *http.Request) bool {
		fail := r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/agents/wpid_") ||
			failTags && strings.HasSuffix(r.URL.Path, "/workflow-tags")
		if fail {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"detail":"the store is unavailable"}`)
		}
		return fail
	})
	ctx := t.Context()
	fa := parseAgent(t, "agents/contact-form.yaml", contactForm)
	if _, err := s.plain.Agents.CreateYAML(ctx, editorAgent, nil); err != nil {
		t.Fatal(err)
	}
	ap := s.newApplier()
	if _, _, _, err := ap.Plan(t.Context(), fa); err == nil || !strings.Contains(err.Error(), "read the agent") || !errors.Is(err, client.ErrServer) {
		t.Errorf("plan: %v", err)
	}
	reqs, _ := s.rec.count(func() {
		if res := ap.Apply(ctx, fa, false); res.Err == nil || !strings.Contains(res.Err.Error(), "500") {
			t.Errorf("apply: %+v", res)
		}
	})
	if writes := writesOf(reqs); len(writes) != 0 {
		t.Errorf("a failed read was followed by writes: %s", writes)
	}
	if _, err := New(ctx, s.counted, Prefetch([]*agentfile.Agent{fa})); err == nil {
		t.Error("New with Prefetch: no error from failed reads")
	}
	failTags = true
	if _, err := New(ctx, s.counted, ReadAll()); err == nil || !strings.Contains(err.Error(), "read the agents' tags") {
		t.Errorf("New with ReadAll: %v", err)
	}
}

// TestPrune: Orphans finds the applied agents whose names are not given,
// from the listing New made (ReadAll) or one made when asked, never an
// agent made elsewhere; Prune deletes them.
func TestPrune(t *testing.T) {
	s := startService(t, nil)
	ctx := t.Context()
	var files []*agentfile.Agent
	for _, name := range []string{"alpha", "beta", "gamma"} {
		fa := parseAgent(t, "agents/"+name+".yaml", contactForm)
		files = append(files, fa)
		applyOnce(t, s.plain, fa)
	}
	if _, err := s.plain.Agents.CreateYAML(ctx, editorAgent, nil); err != nil {
		t.Fatal(err)
	}
	keep := map[string]bool{"alpha": true}

	all := s.newApplier(ReadAll())
	lazy := s.newApplier()
	for _, ap := range []*Applier{all, lazy} {
		if res := ap.Apply(ctx, files[0], false); res.Err != nil || res.Action != Unchanged {
			t.Errorf("apply of alpha: %+v", res)
		}
	}
	// A file applied in this run is not an orphan, even when new.
	delta := parseAgent(t, "agents/delta.yaml", contactForm)
	if res := lazy.Apply(ctx, delta, false); res.Err != nil || res.Action != Created {
		t.Fatalf("apply of delta: %+v", res)
	}
	keepLazy := map[string]bool{"alpha": true, "delta": true}

	var fromAll, fromLazy []Result
	var err error
	reqs, _ := s.rec.count(func() { fromAll, err = all.Orphans(ctx, keep) })
	if err != nil || len(reqs) != 0 {
		t.Errorf("Orphans after ReadAll read again: %s (%v)", reqs, err)
	}
	fromLazy, err = lazy.Orphans(ctx, keepLazy)
	if err != nil {
		t.Fatal(err)
	}
	names := func(rs []Result) (n []string) {
		for _, r := range rs {
			if r.Err != nil || r.Action != Pruned || r.Agent == nil || r.ID != agentfile.AgentID(r.Agent.OrganizationID, r.Name) {
				t.Errorf("orphan %+v", r)
			}
			n = append(n, r.Name)
		}
		return n
	}
	if got := names(fromAll); !slices.Equal(got, []string{"beta", "gamma"}) {
		t.Errorf("orphans (ReadAll): %v", got)
	}
	if got := names(fromLazy); !slices.Equal(got, []string{"beta", "gamma"}) {
		t.Errorf("orphans (listed when asked): %v", got)
	}
	for _, o := range fromAll {
		if r := all.Prune(ctx, o); r.Err != nil {
			t.Errorf("prune %s: %v", o.Name, r.Err)
		}
		if s.get(o.ID) != nil {
			t.Errorf("%s still exists after the prune", o.Name)
		}
	}
	// The made-elsewhere agent, alpha and delta remain.
	if agents, _ := s.plain.Agents.List(ctx, nil); len(agents) != 3 {
		t.Errorf("%d agents after the prune, want 3", len(agents))
	}
	if got, err := s.newApplier(ReadAll()).Orphans(ctx, keepLazy); err != nil || len(got) != 0 {
		t.Errorf("orphans after the prune: %+v %v", got, err)
	}
}

// TestOrphansListingFails: when the listing Orphans makes fails, it says
// so, and nothing is pruned.
func TestOrphansListingFails(t *testing.T) {
	failList := false
	s := startService(t, func(w http.ResponseWriter, r *http.Request) bool {
		if failList && r.URL.Path == "/v1/agents" && r.Method == "GET" {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		return false
	})
	ap := s.newApplier()
	failList = true
	orphans, err := ap.Orphans(t.Context(), map[string]bool{})
	if err == nil || !strings.Contains(err.Error(), "find the agents to prune") || !errors.Is(err, client.ErrServer) || len(orphans) != 0 {
		t.Fatalf("orphans: %+v, %v", orphans, err)
	}
}

// TestPrefetch: New with Prefetch reads the files' agents at once, one GET
// each and their tags in one batch, whatever the organization holds; Apply
// and Plan then read nothing.
func TestPrefetch(t *testing.T) {
	s := startService(t, nil)
	ctx := t.Context()
	made, err := s.plain.Agents.CreateYAML(ctx, editorAgent, nil)
	if err != nil {
		t.Fatal(err)
	}
	var files []*agentfile.Agent
	for i, name := range []string{"a1", "a2", "a3", "a4", "a5", "a6"} {
		fa := parseAgent(t, "agents/"+name+".yaml", contactForm)
		files = append(files, fa)
		if i < 4 {
			applyOnce(t, s.plain, fa)
		}
	}
	adopted := parseAgent(t, "agents/editor.yaml", "id: "+made.WorkflowPermanentID+"\n"+editorAgent)
	files = append(files, adopted)
	applyOnce(t, s.plain, adopted)
	files[1] = parseAgent(t, "agents/a2.yaml", strings.Replace(contactForm, "wait_sec: 1", "wait_sec: 5", 1))

	var ap *Applier
	reqs, _ := s.rec.count(func() { ap = s.newApplier(Prefetch(files)) })
	want := []string{"GET /v1/agents?page_size=1"}
	for range 7 {
		want = append(want, "GET /v1/agents/{id}")
	}
	want = append(want, "GET /v1/workflow-tags")
	if !slices.Equal(reqs, want) {
		t.Errorf("New with Prefetch: %s, want %s", reqs, want)
	}
	wantActions := []Action{Unchanged, Configured, Unchanged, Unchanged, Created, Created, Unchanged}
	reqs, _ = s.rec.count(func() {
		for i, fa := range files {
			if action, _, _, err := ap.Plan(t.Context(), fa); err != nil || action != wantActions[i] {
				t.Errorf("plan of %s: %s %v, want %s", fa.Name, action, err, wantActions[i])
			}
		}
	})
	if len(reqs) != 0 {
		t.Errorf("plans after Prefetch read: %s", reqs)
	}
}

// TestRemote: Remote finds a file's agent by the id its name maps to, or by
// its id key.
func TestRemote(t *testing.T) {
	s := startService(t, nil)
	fa := parseAgent(t, "agents/contact-form.yaml", contactForm)
	if ag, id := s.newApplier().Remote(t.Context(), fa); ag != nil || id != "" {
		t.Errorf("before any agent: %v %q", ag, id)
	}
	res := applyOnce(t, s.plain, fa)
	ap := s.newApplier()
	if ag, id := ap.Remote(t.Context(), fa); ag == nil || id != res.ID || ag.WorkflowPermanentID != id {
		t.Errorf("after apply: %v %q, want %s", ag, id, res.ID)
	}
	other := parseAgent(t, "agents/other.yaml", contactForm)
	if ag, id := ap.Remote(t.Context(), other); ag != nil || id != agentfile.AgentID(ap.OrganizationID(), "other") {
		t.Errorf("a name without agent: %v %q", ag, id)
	}
	byID := parseAgent(t, "x.yaml", "id: "+res.ID+"\n"+contactForm)
	if ag, id := ap.Remote(t.Context(), byID); ag == nil || id != res.ID {
		t.Errorf("by id: %v %q", ag, id)
	}
}

// TestPrefetchLists: with many files and a short agent list, Prefetch
// finds the agents in the list, a page per 50 files at most; when the list
// is longer than that, it reads the files' agents one by one.
func TestPrefetchLists(t *testing.T) {
	s := startService(t, nil)
	var files []*agentfile.Agent
	for i := range 60 {
		fa := parseAgent(t, fmt.Sprintf("agents/f%02d.yaml", i), contactForm)
		files = append(files, fa)
		if i < 10 {
			applyOnce(t, s.plain, fa)
		}
	}
	plans := func(ap *Applier) {
		t.Helper()
		for i, fa := range files {
			want := Unchanged
			if i >= 10 {
				want = Created
			}
			if action, _, _, err := ap.Plan(t.Context(), fa); err != nil || action != want {
				t.Errorf("plan of %s: %s %v, want %s", fa.Name, action, err, want)
			}
		}
	}

	// 10 agents: one page of the list holds them all.
	var ap *Applier
	reqs, _ := s.rec.count(func() { ap = s.newApplier(Prefetch(files)) })
	if want := []string{"GET /v1/agents?page_size=1", "GET /v1/agents?page_size=100", "GET /v1/workflow-tags"}; !slices.Equal(reqs, want) {
		t.Errorf("a short list: %s, want %s", reqs, want)
	}
	if reqs, _ = s.rec.count(func() { plans(ap) }); len(reqs) != 0 {
		t.Errorf("plans after Prefetch read: %s", reqs)
	}

	// 110 agents: more than the one page 60 files allow.
	s.seed(0, 100)
	reqs, _ = s.rec.count(func() { ap = s.newApplier(Prefetch(files)) })
	want := []string{"GET /v1/agents?page_size=1", "GET /v1/agents?page_size=100"}
	for range 60 {
		want = append(want, "GET /v1/agents/{id}")
	}
	want = append(want, "GET /v1/workflow-tags")
	if !slices.Equal(reqs, want) {
		t.Errorf("a long list: %d requests (%s), want %d", len(reqs), summarize(reqs), len(want))
	}
	if reqs, _ = s.rec.count(func() { plans(ap) }); len(reqs) != 0 {
		t.Errorf("plans after Prefetch read: %s", reqs)
	}
}

// summarize writes requests as "GET /v1/agents ×2, ...".
func summarize(reqs []string) string {
	var order []string
	n := map[string]int{}
	for _, r := range reqs {
		if n[r] == 0 {
			order = append(order, r)
		}
		n[r]++
	}
	for i, r := range order {
		order[i] = fmt.Sprintf("%s ×%d", r, n[r])
	}
	return strings.Join(order, ", ")
}

// TestConcurrentCreate: two applies of one file at once (two `abctl run` of
// it) both find no agent, and both create it with the key its name gives:
// the service makes one agent and replays it to the second, whose apply
// then says unchanged, not created (issue 30: both said created). With
// another definition under the same name the second updates it. The race
// is made certain by a gate that hides the agent from the second apply's
// lookup, as the first apply's create had not reached the service yet.
func TestConcurrentCreate(t *testing.T) {
	hide := func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/agents/wpid_") {
			http.Error(w, `{"detail":"Workflow not found"}`, http.StatusNotFound)
			return true
		}
		return false
	}
	s := startService(t, hide)
	fa := parseAgent(t, "agents/contact-form.yaml", contactForm)
	first := applyOnce(t, s.plain, fa)
	if first.Action != Created {
		t.Fatalf("first apply: %+v", first)
	}
	second := applyOnce(t, s.counted, fa)
	if second.Action != Unchanged || second.ID != first.ID {
		t.Errorf("second apply, which raced the first: %s %s, want unchanged %s", second.Action, second.ID, first.ID)
	}
	if a := s.get(first.ID); a == nil || a.Version != 1 {
		t.Errorf("the agent after both: %+v", a)
	}

	other := parseAgent(t, "agents/contact-form.yaml", strings.Replace(contactForm, "title: ", "title: Another ", 1))
	third := applyOnce(t, s.counted, other)
	if third.Action != Configured || third.ID != first.ID {
		t.Errorf("an apply of another definition under the name: %s %s, want configured %s", third.Action, third.ID, first.ID)
	}
}
