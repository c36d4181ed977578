package storetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/tagquery"
	"github.com/abctl/abctl/internal/jsonenc"
)

// listIDs lists the organization's runs with q and returns their ids.
func (f *fixture) listIDs(orgID string, q store.RunQuery) []string {
	f.t.Helper()
	items, err := f.Runs().List(ctx, orgID, q)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		if it.TaskRunID != it.RunID {
			f.t.Errorf("task_run_id %s of run %s", it.TaskRunID, it.RunID)
		}
		out = append(out, it.RunID)
	}
	return out
}

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

func testListRunsNewestFirstAndPaged(t *testing.T, o opener) {
	f := newFixture(t, o)
	if got := f.listIDs(f.org.ID, store.RunQuery{}); got != nil {
		t.Fatalf("an organization without runs lists %v", got)
	}
	var ids []string
	for i := range 25 {
		typ := []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2, client.RunTypeWorkflowRun}[i%3]
		ids = append(ids, f.newRun(typ, nil).ID)
	}
	newest := reversed(ids)
	if got := f.listIDs(f.org.ID, store.RunQuery{}); !slices.Equal(got, newest[:10]) {
		t.Errorf("first page (default size 10):\n got %v\nwant %v", got, newest[:10])
	}
	if got := f.listIDs(f.org.ID, store.RunQuery{Page: 3, PageSize: 10}); !slices.Equal(got, newest[20:]) {
		t.Errorf("last page: got %v, want %v", got, newest[20:])
	}
	if got := f.listIDs(f.org.ID, store.RunQuery{Page: 4, PageSize: 10}); got != nil {
		t.Errorf("beyond the last page: %v", got)
	}
	if got := f.listIDs(f.org.ID, store.RunQuery{Page: 1 << 40, PageSize: 100}); got != nil {
		t.Errorf("a page beyond any: %v", got)
	}
	// Moves of a run change its entry, not its place.
	f.updateRun(ids[3], func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	f.updateRun(ids[3], func(r *store.RunRecord) { r.Status = client.RunStatusCompleted })
	if got := f.listIDs(f.org.ID, store.RunQuery{PageSize: 100}); !slices.Equal(got, newest) {
		t.Errorf("after updates: %v", got)
	}
}

// testListRunsItem: a list item carries what the record says, as the run
// moves.
func testListRunsItem(t *testing.T, o opener) {
	f := newFixture(t, o)
	rec := f.newRun(client.RunTypeTaskV2, func(r *store.RunRecord) {
		r.Title, r.Trigger = "Find the price", "api"
	})
	item := func() client.RunListItem {
		items, err := f.Runs().List(ctx, f.org.ID, store.RunQuery{})
		if err != nil || len(items) != 1 {
			t.Fatalf("%v %v", items, err)
		}
		return items[0]
	}
	got := item()
	if got.RunID != rec.ID || got.RunType != client.RunTypeTaskV2 || got.Status != client.RunStatusCreated ||
		*got.Title != "Find the price" || *got.TriggerType != "api" || got.StartedAt != nil || got.FinishedAt != nil ||
		!got.CreatedAt.Equal(rec.CreatedAt.Time) || got.WorkflowPermanentID != nil || got.WorkflowDeleted || got.ScriptRun {
		t.Errorf("new run: %+v", got)
	}
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	f.updateRun(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusFailed })
	stored, err := f.Runs().Get(ctx, f.org.ID, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	got = item()
	if got.Status != client.RunStatusFailed || got.StartedAt == nil || !got.StartedAt.Equal(stored.StartedAt.Time) ||
		got.FinishedAt == nil || !got.FinishedAt.Equal(stored.FinishedAt.Time) {
		t.Errorf("ended run: %+v, record %+v", got, stored)
	}
	// Encoded as the API answers it: every field, nulls included.
	b, err := jsonenc.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"task_run_id":"` + rec.ID + `"`, `"task_run_type":"task_v2"`, `"workflow_permanent_id":null`,
		`"workflow_deleted":false`, `"script_run":false`, `"trigger_type":"api"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

func testListRunsFilters(t *testing.T, o opener) {
	f := newFixture(t, o)
	agent := f.create(f.org.ID, AgentDef("Contact form"))
	other := f.create(f.org.ID, AgentDef("Other"))
	a1 := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID, r.Title = agent.WorkflowPermanentID, "Contact Form" })
	a2 := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID, r.Title = other.WorkflowPermanentID, "Other" })
	t1 := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "Check the INVOICES" })
	t2 := f.newRun(client.RunTypeTaskV2, func(r *store.RunRecord) { r.Title = "Download invoices" })
	f.updateRun(t1.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCompleted })
	f.updateRun(a2.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })

	if _, err := f.Tags().Apply(ctx, f.org.ID, store.TagSubject{Kind: store.RunSubject, ID: a1.ID},
		store.TagChange{Set: []store.TagSet{{Key: "env", Value: "prod"}}, SetBy: f.org.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tags().Apply(ctx, f.org.ID, store.TagSubject{Kind: store.AgentSubject, ID: agent.WorkflowPermanentID},
		store.TagChange{Set: []store.TagSet{{Key: "env", Value: "prod"}}, SetBy: f.org.ID}); err != nil {
		t.Fatal(err)
	}
	tags := func(terms ...string) *tagquery.Query {
		q, err := tagquery.Parse(terms)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}

	for _, tc := range []struct {
		name string
		q    store.RunQuery
		want []string
	}{
		{"status", store.RunQuery{Statuses: []client.RunStatus{client.RunStatusCreated}}, []string{t2.ID, a1.ID}},
		{"statuses", store.RunQuery{Statuses: []client.RunStatus{client.RunStatusCompleted, client.RunStatusRunning}}, []string{t1.ID, a2.ID}},
		{"type", store.RunQuery{Types: []client.RunType{client.RunTypeWorkflowRun}}, []string{a2.ID, a1.ID}},
		{"types", store.RunQuery{Types: []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2}}, []string{t2.ID, t1.ID}},
		{"agent", store.RunQuery{AgentIDs: []string{agent.WorkflowPermanentID}}, []string{a1.ID}},
		{"agents", store.RunQuery{AgentIDs: []string{agent.WorkflowPermanentID, other.WorkflowPermanentID, "wpid_none"}}, []string{a2.ID, a1.ID}},
		{"search title, any case", store.RunQuery{SearchKey: "inVOIces"}, []string{t2.ID, t1.ID}},
		{"search id", store.RunQuery{SearchKey: strings.ToUpper(t1.ID)}, []string{t1.ID}},
		{"search agent id", store.RunQuery{SearchKey: strings.ToUpper(other.WorkflowPermanentID)}, []string{a2.ID}},
		{"search no match", store.RunQuery{SearchKey: "zzz"}, nil},
		{"tags: runs only", store.RunQuery{Tags: tags("env:prod")}, []string{a1.ID}},
		{"tags: none carries it", store.RunQuery{Tags: tags("env:dev")}, nil},
		{"all filters", store.RunQuery{Statuses: []client.RunStatus{client.RunStatusCreated}, Types: []client.RunType{client.RunTypeWorkflowRun},
			AgentIDs: []string{agent.WorkflowPermanentID}, SearchKey: "contact", Tags: tags("env:*")}, []string{a1.ID}},
		{"filters then pages", store.RunQuery{Types: []client.RunType{client.RunTypeWorkflowRun, client.RunTypeTaskV2}, Page: 2, PageSize: 2}, []string{a1.ID}},
	} {
		if got := f.listIDs(f.org.ID, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// testListRunsWorkflowDeleted: workflow_deleted follows the agent, read
// at listing time.
func testListRunsWorkflowDeleted(t *testing.T, o opener) {
	f := newFixture(t, o)
	agent := f.create(f.org.ID, AgentDef("Contact form"))
	run := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID = agent.WorkflowPermanentID })
	lost := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID = "wpid_never_existed" })
	deleted := func() map[string]bool {
		items, err := f.Runs().List(ctx, f.org.ID, store.RunQuery{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, it := range items {
			out[it.RunID] = it.WorkflowDeleted
		}
		return out
	}
	if got := deleted(); got[run.ID] || !got[lost.ID] {
		t.Errorf("before the delete: %v", got)
	}
	if err := f.Agents().Delete(ctx, f.org.ID, agent.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	if got := deleted(); !got[run.ID] {
		t.Errorf("after the delete: %v", got)
	}
}

// testListRunsOrganizations: an organization lists its own runs only, and
// its filters never reach another's.
func testListRunsOrganizations(t *testing.T, o opener) {
	f := newFixture(t, o)
	other := f.newOrg("other")
	mine := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "shared words" })
	theirs := &store.RunRecord{ID: f.Runs().NewID(client.RunTypeTaskV1), OrgID: other.ID, Type: client.RunTypeTaskV1,
		Status: client.RunStatusQueued, Title: "shared words"}
	if err := f.Runs().Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	if got := f.listIDs(f.org.ID, store.RunQuery{}); !slices.Equal(got, []string{mine.ID}) {
		t.Errorf("mine: %v", got)
	}
	if got := f.listIDs(other.ID, store.RunQuery{SearchKey: "shared"}); !slices.Equal(got, []string{theirs.ID}) {
		t.Errorf("theirs: %v", got)
	}
	if got := f.listIDs(f.org.ID, store.RunQuery{SearchKey: theirs.ID}); got != nil {
		t.Errorf("another organization's run found by id: %v", got)
	}
	if _, err := f.Runs().List(ctx, "o_unknown", store.RunQuery{}); err == nil {
		t.Error("an unknown organization listed runs")
	}
}
