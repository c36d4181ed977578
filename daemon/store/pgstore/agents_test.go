package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/daemon/tagquery"
	"github.com/abctl/abctl/internal/agentid"
)

// stepClock is a clock that moves only when told to: both backends read
// the same times in a step however often they read it, and so make the
// same ids.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) step() {
	c.mu.Lock()
	c.t = c.t.Add(time.Second + 1500*time.Nanosecond)
	c.mu.Unlock()
}

// side is one backend of a comparison, with what it answered.
type side struct {
	name    string
	clock   *stepClock
	agents  store.Agents
	folders store.Folders
	tags    store.Tags
	org     store.Organization
	other   store.Organization
	log     []string
}

func newSide(t *testing.T, name string) *side {
	clock := &stepClock{t: time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)}
	opts := store.Options{Now: clock.Now, IDs: ids.NewWithClock(7, clock.Now)}
	s := &side{name: name, clock: clock}
	var createOrg func(ctx context.Context, name string) (store.Organization, string, error)
	switch name {
	case "bbolt":
		st, err := boltstore.Open(filepath.Join(t.TempDir(), "abctl.db"), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		s.agents, s.folders, s.tags, createOrg = st.Agents(), st.Folders(), st.Tags(), st.CreateOrganization
	default:
		st := open(t, newDatabase(t), opts)
		s.agents, s.folders, s.tags, createOrg = st.Agents(), st.Folders(), st.Tags(), st.CreateOrganization
	}
	var err error
	if s.org, _, err = createOrg(t.Context(), "first"); err != nil {
		t.Fatal(err)
	}
	clock.step()
	if s.other, _, err = createOrg(t.Context(), "second"); err != nil {
		t.Fatal(err)
	}
	return s
}

// record notes what a step answered, as JSON, or its error.
func (s *side) record(step string, v any, err error) {
	if err != nil {
		var kinds []string
		for _, k := range []error{store.ErrNotFound, store.ErrConflict, store.ErrInvalid} {
			if errors.Is(err, k) {
				kinds = append(kinds, k.Error())
			}
		}
		s.log = append(s.log, fmt.Sprintf("%s: error %q %v", step, err, kinds))
		return
	}
	b, jerr := json.Marshal(v)
	if jerr != nil {
		b = []byte(jerr.Error())
	}
	s.log = append(s.log, fmt.Sprintf("%s: %s", step, b))
}

func param(key, description string, def any) client.Parameter {
	p := client.Parameter{ParameterType: client.ParameterTypeWorkflow, Key: key, Description: description,
		WorkflowParameterType: client.WorkflowParameterString}
	if def != nil {
		p.DefaultValue, _ = json.Marshal(def)
	}
	return p
}

func def(title string, params ...client.Parameter) *client.Agent {
	return &client.Agent{
		Title:  title,
		Status: client.AgentStatusPublished,
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: params,
			Blocks: client.Blocks{&client.NavigationBlock{
				BlockBase: client.BlockBase{Label: "open"}, NavigationGoal: "Open the page", URL: "{{url}}",
			}},
		},
		RunWith: "agent",
	}
}

func inFolder(d *client.Agent, folder string) *client.Agent {
	d.FolderID = &folder
	return d
}

func with(d *client.Agent, status client.AgentStatus, saved bool) *client.Agent {
	d.Status, d.IsSavedTask = status, saved
	return d
}

// scenario runs the agents', folders' and tags' operations on one side,
// recording every answer. What it creates it names by the answers, so
// both sides run the same steps on their own ids (which agree when the
// backends agree).
func scenario(ctx context.Context, s *side) {
	org, other := s.org.ID, s.other.ID
	var n int
	step := func(format string, args ...any) string {
		s.clock.step()
		n++
		return fmt.Sprintf("%03d "+format, append([]any{n}, args...)...)
	}
	create := func(orgID string, d *client.Agent, key string) string {
		a, created, err := s.agents.Create(ctx, orgID, d, key)
		s.record(step("create %q key %q", d.Title, key), map[string]any{"agent": a, "created": created}, err)
		if a == nil {
			return "wpid_none"
		}
		return a.WorkflowPermanentID
	}
	list := func(orgID string, q store.AgentQuery) {
		rows, err := s.agents.ListJSON(ctx, orgID, q)
		var titles []string
		for _, r := range rows {
			var a client.Agent
			_ = json.Unmarshal(r, &a)
			titles = append(titles, fmt.Sprintf("%s v%d", a.Title, a.Version))
		}
		q.Filter = nil
		s.record(step("list %+v", q), map[string]any{"titles": titles, "rows": rows}, err)
	}
	folder := func(orgID, title, desc string) string {
		f, err := s.folders.Create(ctx, orgID, title, desc)
		s.record(step("folder %q", title), f, err)
		if f == nil {
			return "fld_none"
		}
		return f.FolderID
	}
	getFolder := func(orgID, id string) {
		f, err := s.folders.Get(ctx, orgID, id)
		s.record(step("get folder"), f, err)
	}
	listFolders := func(orgID string, page, size int, search string) {
		fs, err := s.folders.List(ctx, orgID, page, size, search)
		s.record(step("folders %d %d %q", page, size, search), fs, err)
	}
	get := func(orgID, wpid string, version int) {
		raw, err := s.agents.GetJSON(ctx, orgID, wpid, version)
		s.record(step("get %d", version), raw, err)
	}
	versions := func(orgID, wpid string) {
		vs, err := s.agents.Versions(ctx, orgID, wpid)
		s.record(step("versions"), vs, err)
	}
	update := func(orgID, wpid string, d *client.Agent) {
		a, err := s.agents.Update(ctx, orgID, wpid, d)
		s.record(step("update %q", d.Title), a, err)
	}
	del := func(orgID, wpid string) {
		s.record(step("delete"), nil, s.agents.Delete(ctx, orgID, wpid))
	}
	setFolder := func(orgID, wpid, folderID string) {
		a, err := s.agents.SetFolder(ctx, orgID, wpid, folderID)
		s.record(step("set folder"), a, err)
	}
	subj := func(id string) store.TagSubject { return store.TagSubject{Kind: store.AgentSubject, ID: id} }
	colors := map[string]client.TagColor{"env": client.TagColorRed, "team": client.TagColorBlue, "n": client.TagColorTeal,
		"team-urgent": client.TagColorGreen}
	for i := range 25 {
		colors[fmt.Sprintf("k%02d", i)] = client.TagColorPink
	}
	apply := func(orgID string, sj store.TagSubject, set []store.TagSet, dels ...store.TagDelete) {
		tags, err := s.tags.Apply(ctx, orgID, sj, store.TagChange{Set: set, Delete: dels, Colors: colors, SetBy: orgID})
		s.record(step("apply %v %v", set, dels), tags, err)
	}
	tagsOf := func(orgID string, sj store.TagSubject) {
		tags, err := s.tags.Get(ctx, orgID, sj)
		s.record(step("tags"), tags, err)
	}
	history := func(orgID string, sj store.TagSubject, q store.TagHistoryQuery) {
		evs, err := s.tags.History(ctx, orgID, sj, q)
		s.record(step("history %d %q", q.Limit, q.Key), evs, err)
	}
	registry := func(orgID string) {
		keys, err := s.tags.Keys(ctx, orgID)
		s.record(step("keys"), keys, err)
		vals, err := s.tags.Values(ctx, orgID, "")
		s.record(step("values"), vals, err)
	}
	byTags := func(terms ...string) {
		q, err := tagquery.Parse(terms)
		if err != nil {
			s.record(step("parse %q", terms), nil, err)
			return
		}
		list(org, store.AgentQuery{Tags: q, PageSize: 100})
	}

	// Agents: create, defaults, idempotency, versions, errors.
	fl := folder(org, "Quarterly Finance", "")
	ops := folder(org, "Ops", "Daily REPORTS")
	odd := folder(org, "Quarter_end reports", "")
	invoices := create(org, inFolder(def("Download INVOICES", param("vendor_account", "The Vendor's Billing page", "https://Billing.Example.org/login")), fl), "")
	noStatus := def("no status")
	noStatus.Status = ""
	create(org, inFolder(noStatus, "fld_does_not_exist"), "")
	keyed := create(org, def("First"), "key-1")
	create(org, def("Different body"), "key-1")
	create(org, def("x"), "key-1")
	create(other, def("other org"), "key-1")
	create("o_404", def("x"), "")
	_, _, err := s.agents.Create(ctx, org, nil, "")
	s.record(step("create nil"), nil, err)
	update(org, invoices, def("Invoices v2", param("url", "", nil), param("user", "", 987654)))
	update(org, "wpid_404", def("x"))
	update(other, invoices, def("hijack"))
	for v := -1; v <= 3; v++ {
		get(org, invoices, v)
	}
	get(org, invoices[:len(invoices)-1], 0)
	get(other, invoices, 0)
	get("o_404", invoices, 0)
	get(org, "bad\x00id", 0)
	get(org, "bad\xffid", 0)
	get("o_\xff", invoices, 0)
	versions(org, "bad\xffid")
	versions(org, invoices)
	versions(org, "wpid_404")
	versions("o_404", invoices)

	// Many agents: order, paging, filters, search.
	var many []string
	for i := range 12 {
		many = append(many, create(org, def(fmt.Sprintf("plain %d", i), param(fmt.Sprintf("first%sname", []string{"_", "X"}[i%2]), "", i)), ""))
	}
	create(org, with(def("draft one"), client.AgentStatusDraft, false), "")
	create(org, with(inFolder(def("auto saved"), ops), client.AgentStatusAutoGenerated, true), "")
	create(org, with(inFolder(def("saved task"), ops), client.AgentStatusPublished, true), "")
	create(org, with(def("importing"), client.AgentStatusImporting, false), "")
	oddAgent := def("odd")
	oddAgent.Status = `draft\x`
	create(org, inFolder(oddAgent, `fld_"q"`), "")
	create(org, def(`Say "hello" \ world`), "")
	create(org, def("Überweisungen prüfen"), "")
	create(org, def("a <b> & c"), "")
	for _, q := range []store.AgentQuery{
		{}, {Page: 2, PageSize: 7}, {Page: 3, PageSize: 7}, {Page: 9, PageSize: 7}, {Page: 1 << 60, PageSize: 1 << 40},
		{Statuses: []client.AgentStatus{client.AgentStatusAutoGenerated}},
		{Statuses: []client.AgentStatus{client.AgentStatusImporting, client.AgentStatusDraft}},
		{OnlySavedTasks: true}, {OnlyWorkflows: true, PageSize: 3}, {OnlySavedTasks: true, OnlyWorkflows: true},
		{FolderID: ops}, {FolderID: fl}, {FolderID: "fld_404"},
		{FolderID: `fld_"q"`, Statuses: []client.AgentStatus{`draft\x`}},
		{SearchKey: "invoices"}, {SearchKey: "iNvOiCeS"}, {SearchKey: "quarterly fin"}, {SearchKey: "VENDOR_acc"},
		{SearchKey: "vendor's billing"}, {SearchKey: "billing.example.org"}, {SearchKey: "87654"}, {SearchKey: "for block"},
		{SearchKey: `"hello" \`}, {SearchKey: "ÜBERWEISUNGEN"}, {SearchKey: "<b> &"}, {SearchKey: "first_name"},
		{SearchKey: "plain%1"}, {SearchKey: "p_ain 1", PageSize: 2, Page: 2}, {SearchKey: "%"}, {SearchKey: "quarter%rep"},
		{SearchKey: strings.ToUpper(many[3][3:])}, {SearchKey: "open the page"}, {SearchKey: "a", Statuses: []client.AgentStatus{client.AgentStatusAutoGenerated, client.AgentStatusDraft}},
		{SearchKey: "x\x00y"}, {FolderID: "fld\x00"}, {SearchKey: "\xff"}, {FolderID: "fld\xff"},
	} {
		list(org, q)
	}
	list(other, store.AgentQuery{})
	list(other, store.AgentQuery{SearchKey: "invoices"})
	list("o_404", store.AgentQuery{})
	list(org, store.AgentQuery{Filter: func(w string) bool { return w != many[11] }, PageSize: 2, Page: 2})

	// Folders: counts, moves, updates, deletes.
	setFolder(org, many[0], ops)
	setFolder(org, many[0], ops)
	setFolder(org, many[1], fl)
	setFolder(org, many[1], "")
	setFolder(org, many[2], "fld_404")
	setFolder(org, "wpid_404", ops)
	setFolder(other, invoices, "")
	setFolder(org, many[5], odd)
	list(org, store.AgentQuery{SearchKey: "quarter%rep"})
	getFolder(org, ops)
	getFolder(org, fl)
	getFolder(other, ops)
	getFolder("o_404", ops)
	getFolder(org, "fld_404")
	listFolders(org, 0, 0, "")
	listFolders(org, 2, 2, "")
	listFolders(org, 1<<62, 1<<62, "")
	listFolders(org, 1, 10, "reports")
	listFolders(org, 1, 10, "quarter_end")
	listFolders(org, 1, 10, "zzz")
	listFolders("o_404", 1, 10, "")
	up, err := s.folders.Update(ctx, org, fl, nil, nil)
	s.record(step("update folder"), up, err)
	title, empty := "Finance", ""
	up, err = s.folders.Update(ctx, org, fl, &title, &empty)
	s.record(step("update folder"), up, err)
	up, err = s.folders.Update(ctx, org, "fld_404", &title, nil)
	s.record(step("update folder"), up, err)
	listFolders(org, 0, 0, "")

	// Delete and resurrect; tags come back with the agent.
	apply(org, subj(invoices), []store.TagSet{{Key: "env", Value: "staging"}, {Value: "urgent"}, {Key: "team", Value: "billing"}, {Key: "env", Value: "prod"}, {Value: "alpha"}})
	del(org, invoices)
	del(org, invoices)
	del(org, "wpid_404")
	del(org, "")
	del(org, "bad\x00id")
	del("o_404", invoices)
	get(org, invoices, 1)
	versions(org, invoices)
	tagsOf(org, subj(invoices))
	setFolder(org, invoices, "")
	getFolder(org, fl)
	create(org, def("x"), "key-1")
	del(org, keyed)
	create(org, def("x"), "key-1")
	update(org, invoices, def("back"))
	versions(org, invoices)
	tagsOf(org, subj(invoices))
	getFolder(org, fl)
	list(org, store.AgentQuery{PageSize: 3})

	// Tags.
	apply(org, subj(invoices), []store.TagSet{{Key: "env", Value: "prod"}, {Key: "team", Value: "payments"}},
		store.TagDelete{Key: "team"}, store.TagDelete{Key: "missing"}, store.TagDelete{Value: "nope"}, store.TagDelete{Value: "alpha"})
	history(org, subj(invoices), store.TagHistoryQuery{})
	apply(org, subj(invoices), nil, store.TagDelete{Key: "env"})
	history(org, subj(invoices), store.TagHistoryQuery{Limit: 1})
	var twenty []store.TagSet
	for i := range store.MaxTagsPerSubject {
		twenty = append(twenty, store.TagSet{Key: fmt.Sprintf("k%02d", i), Value: "v"})
	}
	apply(org, subj(many[0]), twenty)
	apply(org, subj(many[0]), []store.TagSet{{Value: "one-more"}})
	apply(org, subj(many[0]), []store.TagSet{{Value: "one-more"}}, store.TagDelete{Key: "k00"})
	apply(org, subj(many[0]), []store.TagSet{{Key: "k01", Value: "w"}, {Key: "k02", Value: "w"}})
	var mark time.Time
	for i := range 5 {
		apply(org, subj(many[1]), []store.TagSet{{Key: "env", Value: fmt.Sprintf("v%d", i)}, {Key: "n", Value: fmt.Sprint(i)}})
		if i == 3 {
			mark = s.clock.Now() // with nanoseconds: the events' set_at is cut to microseconds
		}
	}
	history(org, subj(many[1]), store.TagHistoryQuery{Key: "env"})
	history(org, subj(many[1]), store.TagHistoryQuery{Limit: 3})
	history(org, subj(many[1]), store.TagHistoryQuery{Key: "env\x00"})
	for _, since := range []time.Time{mark, mark.Truncate(time.Microsecond), mark.Add(-time.Second), mark.Add(time.Hour)} {
		evs, err := s.tags.History(ctx, org, subj(many[1]), store.TagHistoryQuery{Since: &since})
		s.record(step("history since %s", since.Format(time.RFC3339Nano)), evs, err)
	}
	tagsOf(other, subj(invoices))
	tagsOf("o_404", subj(invoices))
	tagsOf(org, store.TagSubject{Kind: store.RunSubject, ID: "wr_1"})
	tagsOf(org, store.TagSubject{Kind: store.RunSubject, ID: "tsk_1"})
	tagsOf(org, subj("wpid_\x00"))
	tagsOf(org, subj("wpid_\xff"))
	history(org, subj(many[1]), store.TagHistoryQuery{Key: "env\xff"})
	del(org, "bad\xffid")
	getFolder(org, "fld_\xff")
	apply(other, subj(invoices), []store.TagSet{{Value: "x"}})
	apply("o_404", subj(invoices), []store.TagSet{{Value: "x"}})
	batch, err := s.tags.Batch(ctx, org, store.AgentSubject, []string{invoices, many[0], many[1], "wpid_404", "bad\x00"})
	s.record(step("batch"), batch, err)
	batch, err = s.tags.Batch(ctx, other, store.AgentSubject, []string{invoices})
	s.record(step("batch other"), batch, err)
	batch, err = s.tags.Batch(ctx, org, store.RunSubject, []string{"wr_1", "tsk_1"})
	s.record(step("batch runs"), batch, err)
	batch, err = s.tags.Batch(ctx, "o_404", store.AgentSubject, []string{invoices})
	s.record(step("batch unknown org"), batch, err)

	// Tag filters of the list.
	apply(org, subj(many[2]), []store.TagSet{{Key: "env", Value: "prod"}, {Key: "team", Value: "billing"}, {Value: "urgent"}})
	apply(org, subj(many[3]), []store.TagSet{{Key: "env", Value: "staging"}, {Key: "team", Value: "billing"}})
	apply(org, subj(many[4]), []store.TagSet{{Key: "env", Value: "dev"}, {Key: "team", Value: "search"}, {Key: "team-urgent", Value: "urgent"}})
	for _, terms := range [][]string{{"urgent"}, {"env:*"}, {"env:prod,env:staging"}, {"env:prod", "env:dev"},
		{"env:prod,team:search"}, {"team:billing", "urgent"}, {"missing:*"}, {"Urgent"}} {
		byTags(terms...)
	}
	q, _ := tagquery.Parse([]string{"team:billing"})
	list(org, store.AgentQuery{Tags: q, SearchKey: "plain 3"})
	list(org, store.AgentQuery{Tags: q, PageSize: 1, Page: 2})
	list(org, store.AgentQuery{Tags: &tagquery.Query{}})

	// The registry.
	del(org, many[4])
	registry(org)
	k, err := s.tags.UpdateKey(ctx, org, "env", &title)
	s.record(step("update key"), k, err)
	k, err = s.tags.UpdateKey(ctx, org, "nope", nil)
	s.record(step("update key"), k, err)
	k, err = s.tags.UpdateKey(ctx, org, "", nil)
	s.record(step("update key"), k, err)
	v, err := s.tags.CreateValue(ctx, org, "env", "qa", client.TagColorTeal)
	s.record(step("create value"), v, err)
	v, err = s.tags.CreateValue(ctx, org, "env", "qa", client.TagColorTeal)
	s.record(step("create value"), v, err)
	v, err = s.tags.CreateValue(ctx, org, "fresh", "one", client.TagColorPurple)
	s.record(step("create value"), v, err)
	v, err = s.tags.RecolorValue(ctx, org, "env", "prod", client.TagColorPink)
	s.record(step("recolor"), v, err)
	v, err = s.tags.RecolorValue(ctx, org, "env", "nope", client.TagColorPink)
	s.record(step("recolor"), v, err)
	r, err := s.tags.RenameValue(ctx, org, "env", "prod", "qa", org)
	s.record(step("rename"), r, err)
	r, err = s.tags.RenameValue(ctx, org, "env", "prod", "production", org)
	s.record(step("rename"), r, err)
	r, err = s.tags.RenameValue(ctx, org, "env", "gone", "production2", org)
	s.record(step("rename"), r, err)
	registry(org)
	history(org, subj(many[2]), store.TagHistoryQuery{})
	dv, err := s.tags.DeleteValue(ctx, org, "env", "production", org)
	s.record(step("delete value"), dv, err)
	dv, err = s.tags.DeleteValue(ctx, org, "env", "production", org)
	s.record(step("delete value"), dv, err)
	dk, err := s.tags.DeleteKey(ctx, org, "team", org)
	s.record(step("delete key"), dk, err)
	dk, err = s.tags.DeleteKey(ctx, org, "team", org)
	s.record(step("delete key"), dk, err)
	dk, err = s.tags.DeleteKey(ctx, other, "env", other)
	s.record(step("delete key"), dk, err)
	registry(org)
	registry(other)
	registry("o_404")
	history(org, subj(many[3]), store.TagHistoryQuery{})
	vals, err := s.tags.Values(ctx, org, "env")
	s.record(step("values env"), vals, err)

	// Folder deletes: keeping the agents, then with them.
	update(org, many[0], def("plain 0 v2"))
	setFolder(org, many[6], ops)
	update(org, many[6], def("plain 6 v2"))
	setFolder(org, many[6], fl)
	deadInOps := create(org, inFolder(def("dead"), ops), "")
	del(org, deadInOps)
	s.record(step("delete folder"), nil, s.folders.Delete(ctx, org, ops, false))
	s.record(step("delete folder"), nil, s.folders.Delete(ctx, org, ops, false))
	s.record(step("delete folder"), nil, s.folders.Delete(ctx, other, fl, true))
	s.record(step("delete folder"), nil, s.folders.Delete(ctx, "o_404", fl, true))
	versions(org, many[0])
	versions(org, many[6])
	update(org, deadInOps, def("back"))
	getFolder(org, ops)
	setFolder(org, many[7], fl)
	keyedInFl := create(org, inFolder(def("keyed"), fl), "key-fl")
	s.record(step("delete folder with agents"), nil, s.folders.Delete(ctx, org, fl, true))
	create(org, def("x"), "key-fl")
	get(org, keyedInFl, 0)
	versions(org, many[6])
	get(org, many[7], 0)
	list(org, store.AgentQuery{PageSize: 100})
	listFolders(org, 0, 0, "")
}

// TestAgentsFoldersTagsAsBbolt runs one scenario of the agents', folders'
// and tags' operations on the bbolt store and on the PostgreSQL store and
// compares their answers byte for byte, errors included.
func TestAgentsFoldersTagsAsBbolt(t *testing.T) {
	ctx := t.Context()
	bolt := newSide(t, "bbolt")
	pg := newSide(t, "postgres")
	if bolt.org != pg.org || bolt.other != pg.other {
		t.Fatalf("the organizations differ: %+v %+v", bolt.org, pg.org)
	}
	scenario(ctx, bolt)
	scenario(ctx, pg)
	if len(bolt.log) != len(pg.log) {
		t.Fatalf("%d steps on bbolt, %d on PostgreSQL", len(bolt.log), len(pg.log))
	}
	diffs := 0
	for i := range bolt.log {
		if bolt.log[i] != pg.log[i] {
			diffs++
			if diffs <= 10 {
				b, p := bolt.log[i], pg.log[i]
				at := 0
				for at < len(b) && at < len(p) && b[at] == p[at] {
					at++
				}
				from := max(0, at-300)
				t.Errorf("step differs at byte %d\n  bbolt:    %s\n  postgres: %s", at, b[from:min(len(b), at+300)], p[from:min(len(p), at+300)])
			}
		}
	}
	if diffs > 10 {
		t.Errorf("%d steps differ in all", diffs)
	}
}

// TestIdempotentCreateAcrossDaemons: concurrent creates with one key, from
// two Store handles on one database (two daemons), make one agent: one
// created=true, one version row, every other create answering it.
func TestIdempotentCreateAcrossDaemons(t *testing.T) {
	url := newDatabase(t)
	a := open(t, url, store.Options{})
	b := open(t, url, store.Options{})
	org, _, err := a.CreateOrganization(t.Context(), "o")
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	results := make([]*client.Agent, n)
	created := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], created[i], errs[i] = st.Agents().Create(t.Context(), org.ID, def(fmt.Sprint("racer ", i)), "same-key")
		}()
	}
	wg.Wait()
	createdCount := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if created[i] {
			createdCount++
		}
		if results[i].WorkflowID != results[0].WorkflowID || results[i].WorkflowPermanentID != agentid.FromKey(org.ID, "same-key") {
			t.Fatalf("two version rows: %s and %s", results[i].WorkflowID, results[0].WorkflowID)
		}
	}
	if createdCount != 1 {
		t.Fatalf("%d creates reported created", createdCount)
	}
	var rows int
	if err := a.Pool().QueryRow(t.Context(), `SELECT count(*) FROM agent_versions`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("%d version rows, %v", rows, err)
	}
	for _, st := range []*pgstore.Store{a, b} {
		got, err := st.Agents().List(t.Context(), org.ID, store.AgentQuery{})
		if err != nil || len(got) != 1 {
			t.Fatalf("list: %d, %v", len(got), err)
		}
	}
	// After a delete, a replay from the other daemon answers the
	// soft-deleted version 1.
	if err := a.Agents().Delete(t.Context(), org.ID, results[0].WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	replay, wasCreated, err := b.Agents().Create(t.Context(), org.ID, def("again"), "same-key")
	if err != nil || wasCreated || replay.DeletedAt == nil || replay.Version != 1 {
		t.Fatalf("replay after delete: %+v, %v, %v", replay, wasCreated, err)
	}
}

// TestConcurrentChangesAcrossDaemons: two daemons updating, moving,
// tagging and deleting the same agents at once leave them consistent:
// versions without gaps, folder counts that agree with the list, tags
// within the cap and a history with one SET event per current tag.
func TestConcurrentChangesAcrossDaemons(t *testing.T) {
	url := newDatabase(t)
	a := open(t, url, store.Options{})
	b := open(t, url, store.Options{})
	ctx := t.Context()
	org, _, err := a.CreateOrganization(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := a.Folders().Create(ctx, org.ID, "Shared", "")
	if err != nil {
		t.Fatal(err)
	}
	var agents []string
	for i := range 4 {
		ag, _, err := a.Agents().Create(ctx, org.ID, def(fmt.Sprint("agent ", i)), "")
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, ag.WorkflowPermanentID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w, st := range []*pgstore.Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				wpid := agents[(w+i)%len(agents)]
				steps := []func() error{
					func() error { _, err := st.Agents().Update(ctx, org.ID, wpid, def("u")); return err },
					func() error { _, err := st.Agents().SetFolder(ctx, org.ID, wpid, fl.FolderID); return err },
					func() error {
						_, err := st.Tags().Apply(ctx, org.ID, store.TagSubject{Kind: store.AgentSubject, ID: wpid},
							store.TagChange{Set: []store.TagSet{{Key: "w", Value: fmt.Sprint(w)}, {Value: fmt.Sprint("l", i%3)}},
								Colors: map[string]client.TagColor{"w": client.TagColorRed}, SetBy: org.ID})
						return err
					},
				}
				for _, step := range steps {
					if err := step(); err != nil && !errors.Is(err, store.ErrNotFound) {
						errs <- err
						return
					}
				}
			}
		}()
	}
	// Meanwhile a third party creates, deletes and brings back agents of
	// its own in the folder, and lists.
	for w, st := range []*pgstore.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6 {
				ag, _, err := st.Agents().Create(ctx, org.ID, inFolder(def(fmt.Sprint("churn ", w, i)), fl.FolderID), "")
				if err == nil {
					err = st.Agents().Delete(ctx, org.ID, ag.WorkflowPermanentID)
				}
				if err == nil && i%2 == 0 {
					_, err = st.Agents().Update(ctx, org.ID, ag.WorkflowPermanentID, def("back"))
				}
				if err == nil {
					_, err = st.Agents().List(ctx, org.ID, store.AgentQuery{FolderID: fl.FolderID, SearchKey: "a"})
				}
				if err == nil {
					_, err = st.Folders().List(ctx, org.ID, 1, 10, "")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, wpid := range agents {
		vs, err := b.Agents().Versions(ctx, org.ID, wpid)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if v.Version != i+1 {
				t.Fatalf("%s: version %d at %d", wpid, v.Version, i)
			}
		}
		if last := vs[len(vs)-1]; last.FolderID == nil || *last.FolderID != fl.FolderID {
			t.Fatalf("%s not in the folder", wpid)
		}
		tags, err := a.Tags().Get(ctx, org.ID, store.TagSubject{Kind: store.AgentSubject, ID: wpid})
		if err != nil {
			t.Fatal(err)
		}
		hist, err := a.Tags().History(ctx, org.ID, store.TagSubject{Kind: store.AgentSubject, ID: wpid}, store.TagHistoryQuery{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, ev := range hist {
			if ev.EventType == client.TagEventSet && ev.SupersededAt == nil {
				live++
			}
		}
		if live != len(tags) {
			t.Fatalf("%s: %d current tags, %d SET events not superseded", wpid, len(tags), live)
		}
	}
	// The four agents and the six churned agents brought back.
	got, err := a.Folders().Get(ctx, org.ID, fl.FolderID)
	if err != nil || got.WorkflowCount != len(agents)+6 {
		t.Fatalf("folder count %d, %v", got.WorkflowCount, err)
	}
	listed, err := b.Agents().List(ctx, org.ID, store.AgentQuery{FolderID: fl.FolderID, PageSize: 100})
	if err != nil || len(listed) != got.WorkflowCount {
		t.Fatalf("%d agents listed in the folder, %v", len(listed), err)
	}
}

// TestListUsesTheIndexes: the list's and the history's queries read
// indexes, not whole tables, once the tables are large enough for the
// planner to care.
func TestListUsesTheIndexes(t *testing.T) {
	st := open(t, newDatabase(t), store.Options{})
	ctx := t.Context()
	org, _, err := st.CreateOrganization(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	// Many agents of other organizations, a few of this one.
	if _, err := st.Pool().Exec(ctx, `
		INSERT INTO organizations (id, name, created_at) SELECT 'o_' || i, 'x', now() FROM generate_series(1, 200) i;
		INSERT INTO agents (org_id, wpid, version, created_at, folder_id, status, saved_task, deleted, search)
			SELECT 'o_' || (i % 200 + 1), 'wpid_' || i, 1, now(), '', 'published', false, false, '{}'
			FROM generate_series(1, 20000) i;
		ANALYZE agents;`); err != nil {
		t.Fatal(err)
	}
	var plan []string
	rows, err := st.Pool().Query(ctx, `EXPLAIN SELECT wpid FROM agents a WHERE a.org_id = $1 AND NOT a.deleted
		AND a.status = ANY($2) ORDER BY a.created_at DESC, a.wpid DESC LIMIT 10`, org.ID, []string{"published"})
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(plan, func(l string) bool { return strings.Contains(l, "agents_list") }) {
		t.Errorf("the list does not use agents_list:\n%s", strings.Join(plan, "\n"))
	}
}
