package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/tagquery"
)

func agentSubj(wpid string) store.TagSubject {
	return store.TagSubject{Kind: store.AgentSubject, ID: wpid}
}

// apply applies a change as the test organization and fails on error.
// ApplyTags applies a change to an agent's tags as the organization (when
// ch names no one) and fails t on error.
func ApplyTags(t testing.TB, st store.Store, orgID, wpid string, ch store.TagChange) []client.Tag {
	t.Helper()
	if ch.SetBy == "" {
		ch.SetBy = orgID
	}
	tags, err := st.Tags().Apply(ctx, orgID, agentSubj(wpid), ch)
	if err != nil {
		t.Fatalf("ApplyTags: %v", err)
	}
	return tags
}

func (f *fixture) apply(wpid string, ch store.TagChange) []client.Tag {
	f.t.Helper()
	return ApplyTags(f.t, f.Backend, f.org.ID, wpid, ch)
}

// TagStrings writes tags as "value" (labels) and "key:value".
func TagStrings(tags []client.Tag) []string {
	out := []string{}
	for _, t := range tags {
		if t.Key == nil {
			out = append(out, t.Value)
		} else {
			out = append(out, *t.Key+":"+t.Value)
		}
	}
	return out
}

func eventStrings(evs []client.TagEvent) []string {
	out := []string{}
	for _, e := range evs {
		k, v := "-", "-"
		if e.Key != nil {
			k = *e.Key
		}
		if e.Value != nil {
			v = *e.Value
		}
		s := fmt.Sprintf("%s %s=%s", e.EventType, k, v)
		if e.SupersededAt != nil {
			s += " superseded"
		}
		out = append(out, s)
	}
	return out
}

// TagSets makes the tags of a change from "key:value" (grouped) and
// "value" (a label).
func TagSets(pairs ...string) []store.TagSet {
	var out []store.TagSet
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, ":")
		if !ok {
			k, v = "", p
		}
		out = append(out, store.TagSet{Key: k, Value: v})
	}
	return out
}

func testApplyTagsSemantics(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("Invoices"))

	got := f.apply(a.WorkflowPermanentID, store.TagChange{
		Set:    TagSets("env:staging", "urgent", "team:billing", "env:prod", "alpha"),
		Colors: map[string]client.TagColor{"env": client.TagColorRed},
	})
	// Labels first by value, then grouped tags by key; the last env wins.
	if want := []string{"alpha", "urgent", "env:prod", "team:billing"}; !slices.Equal(TagStrings(got), want) {
		t.Fatalf("tags %v, want %v", TagStrings(got), want)
	}
	for _, tag := range got {
		if tag.Source != client.TagSourceManual || tag.SetBy != f.org.ID || tag.SetAt.IsZero() {
			t.Errorf("tag %+v: source, set_by or set_at not filled", tag)
		}
	}

	// A set and a delete of the same key resolve to the set; deleting an
	// absent tag and setting an identical value change nothing.
	before, _ := f.Tags().History(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID), store.TagHistoryQuery{})
	got = f.apply(a.WorkflowPermanentID, store.TagChange{
		Set:    TagSets("env:prod", "team:payments"),
		Delete: []store.TagDelete{{Key: "team"}, {Key: "missing"}, {Value: "nope"}, {Value: "alpha"}},
	})
	if want := []string{"urgent", "env:prod", "team:payments"}; !slices.Equal(TagStrings(got), want) {
		t.Fatalf("after the second change: %v, want %v", TagStrings(got), want)
	}
	hist, err := f.Tags().History(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID), store.TagHistoryQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// New: delete of label alpha, and team billing -> payments.
	if len(hist)-len(before) != 2 {
		t.Fatalf("%d new events, want 2: %v", len(hist)-len(before), eventStrings(hist))
	}
	want := []string{
		"set team=payments",
		"delete -=alpha",
		// first change, newest first (same set_at: by event id)
		"set -=alpha superseded",
		"set team=billing superseded",
		"set -=urgent",
		"set env=prod", // env:staging lost to env:prod within the request: no event
	}
	// Within one change events share set_at, so their order is by id;
	// check as sets per change, and the order across changes.
	if !slices.Equal(sorted(eventStrings(hist[:2])), sorted(want[:2])) || !slices.Equal(sorted(eventStrings(hist[2:])), sorted(want[2:])) {
		t.Fatalf("history\n got %v\nwant %v", eventStrings(hist), want)
	}
	for i := 1; i < len(hist); i++ {
		if hist[i].SetAt.After(hist[i-1].SetAt.Time) {
			t.Fatalf("history not newest first at %d", i)
		}
		if hist[i].SetAt.Equal(hist[i-1].SetAt.Time) && hist[i].TagEventID > hist[i-1].TagEventID && len(hist[i].TagEventID) == len(hist[i-1].TagEventID) {
			t.Fatalf("same set_at not ordered by event id desc at %d", i)
		}
		if !strings.HasPrefix(hist[i].TagEventID, "tge_") {
			t.Fatalf("event id %q", hist[i].TagEventID)
		}
	}
	// The grouped delete of a key has no value; a label delete keeps it.
	f.apply(a.WorkflowPermanentID, store.TagChange{Delete: []store.TagDelete{{Key: "env"}}})
	hist, _ = f.Tags().History(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID), store.TagHistoryQuery{Limit: 1})
	if len(hist) != 1 || hist[0].EventType != client.TagEventDelete || hist[0].Value != nil || *hist[0].Key != "env" {
		t.Fatalf("grouped delete event %s", mustJSON(t, hist))
	}

	// The registry learned the keys and pairs; colours come from the
	// request or the palette.
	vals, err := f.Tags().Values(ctx, f.org.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var pairs []string
	for _, v := range vals {
		pairs = append(pairs, v.Key+":"+v.Value)
		if !v.Color.IsKnown() {
			t.Errorf("colour %q of %s:%s is not in the palette", v.Color, v.Key, v.Value)
		}
		if v.Key == "env" && v.Color != client.TagColorRed {
			t.Errorf("env:%s colour %q, want red from the request", v.Value, v.Color)
		}
	}
	if want := []string{"env:prod", "team:billing", "team:payments"}; !slices.Equal(pairs, want) {
		t.Fatalf("registered values %v, want %v", pairs, want)
	}
}

func testApplyTagsCap(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("Capped"))
	var twenty []string
	for i := range store.MaxTagsPerSubject {
		twenty = append(twenty, fmt.Sprintf("k%02d:v", i))
	}
	f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets(twenty...)})
	_, err := f.Tags().Apply(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID), store.TagChange{Set: TagSets("one-more")})
	wantErr(t, err, store.ErrInvalid, "would carry 21 tags; at most 20")
	// Swapping one tag for another in one change stays within the cap.
	got := f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets("one-more"), Delete: []store.TagDelete{{Key: "k00"}}})
	if len(got) != store.MaxTagsPerSubject || got[0].Value != "one-more" {
		t.Fatalf("after the swap: %v", TagStrings(got))
	}
	// Replacing values of existing keys never counts as growth.
	f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets("k01:w", "k02:w")})
}

func testTagSubjectsMustExist(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("Gone"))
	f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets("env:prod")})
	other := f.newOrg("other")

	_, err := f.Tags().Get(ctx, other.ID, agentSubj(a.WorkflowPermanentID))
	wantErr(t, err, store.ErrNotFound, a.WorkflowPermanentID)
	_, err = f.Tags().Apply(ctx, other.ID, agentSubj(a.WorkflowPermanentID), store.TagChange{Set: TagSets("x")})
	wantErr(t, err, store.ErrNotFound, a.WorkflowPermanentID)
	_, err = f.Tags().History(ctx, other.ID, agentSubj(a.WorkflowPermanentID), store.TagHistoryQuery{})
	wantErr(t, err, store.ErrNotFound, a.WorkflowPermanentID)
	_, err = f.Tags().Get(ctx, f.org.ID, store.TagSubject{Kind: store.RunSubject, ID: "wr_1"})
	wantErr(t, err, store.ErrNotFound, "workflow run wr_1 not found")
	_, err = f.Tags().Get(ctx, f.org.ID, agentSubj("wpid_\x00"))
	wantErr(t, err, store.ErrNotFound, "agent ")

	if err := f.Agents().Delete(ctx, f.org.ID, a.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	_, err = f.Tags().Get(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID))
	wantErr(t, err, store.ErrNotFound, a.WorkflowPermanentID)
	// The tags come back with the agent.
	f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("Back"))
	tags, err := f.Tags().Get(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID))
	if err != nil || !slices.Equal(TagStrings(tags), []string{"env:prod"}) {
		t.Fatalf("tags of the resurrected agent: %v, %v", TagStrings(tags), err)
	}

	// Batch reads echo every id; foreign, unknown and deleted ids get [].
	b := f.create(f.org.ID, AgentDef("Deleted"))
	f.apply(b.WorkflowPermanentID, store.TagChange{Set: TagSets("x")})
	if err := f.Agents().Delete(ctx, f.org.ID, b.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	batch, err := f.Tags().Batch(ctx, f.org.ID, store.AgentSubject, []string{a.WorkflowPermanentID, b.WorkflowPermanentID, "wpid_404"})
	if err != nil {
		t.Fatal(err)
	}
	wantBatch := map[string][]client.TagItem{
		a.WorkflowPermanentID: {{Key: new("env"), Value: "prod"}},
		b.WorkflowPermanentID: {},
		"wpid_404":            {},
	}
	if got, want := mustJSON(t, batch), mustJSON(t, wantBatch); got != want {
		t.Fatalf("batch %s, want %s", got, want)
	}
	batch, _ = f.Tags().Batch(ctx, other.ID, store.AgentSubject, []string{a.WorkflowPermanentID})
	if got := mustJSON(t, batch); got != fmt.Sprintf(`{"%s":[]}`, a.WorkflowPermanentID) {
		t.Fatalf("foreign batch %s", got)
	}
}

func testTagHistoryFilters(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("History"))
	subj := agentSubj(a.WorkflowPermanentID)
	var marks []time.Time
	for i := range 5 {
		f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets(fmt.Sprintf("env:v%d", i), fmt.Sprintf("n:%d", i))})
		tags, _ := f.Tags().Get(ctx, f.org.ID, subj)
		marks = append(marks, tags[0].SetAt.Time)
	}
	all, err := f.Tags().History(ctx, f.org.ID, subj, store.TagHistoryQuery{})
	if err != nil || len(all) != 10 {
		t.Fatalf("%d events, %v", len(all), err)
	}
	got, _ := f.Tags().History(ctx, f.org.ID, subj, store.TagHistoryQuery{Limit: 3})
	if len(got) != 3 || got[0].TagEventID != all[0].TagEventID {
		t.Fatalf("limit 3: %v", eventStrings(got))
	}
	got, _ = f.Tags().History(ctx, f.org.ID, subj, store.TagHistoryQuery{Key: "env"})
	if want := []string{"set env=v4", "set env=v3 superseded", "set env=v2 superseded", "set env=v1 superseded", "set env=v0 superseded"}; !slices.Equal(eventStrings(got), want) {
		t.Fatalf("key env: %v", eventStrings(got))
	}
	got, _ = f.Tags().History(ctx, f.org.ID, subj, store.TagHistoryQuery{Since: &marks[3], Key: "env"})
	if want := []string{"set env=v4", "set env=v3 superseded"}; !slices.Equal(eventStrings(got), want) {
		t.Fatalf("since the 4th change: %v", eventStrings(got))
	}
	future := marks[4].Add(time.Hour)
	got, _ = f.Tags().History(ctx, f.org.ID, subj, store.TagHistoryQuery{Since: &future})
	if len(got) != 0 {
		t.Fatalf("since the future: %v", eventStrings(got))
	}
	// Another subject's events never leak in, even one whose id extends
	// this one's.
	b := f.create(f.org.ID, AgentDef("Other"))
	f.apply(b.WorkflowPermanentID, store.TagChange{Set: TagSets("other")})
	got, _ = f.Tags().History(ctx, f.org.ID, subj, store.TagHistoryQuery{Limit: 500})
	if len(got) != 10 {
		t.Fatalf("%d events after another agent's change", len(got))
	}
}

func testTagRegistry(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("A"))
	b := f.create(f.org.ID, AgentDef("B"))
	c := f.create(f.org.ID, AgentDef("C"))
	f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets("env:prod", "team:x")})
	f.apply(b.WorkflowPermanentID, store.TagChange{Set: TagSets("env:prod")})
	f.apply(c.WorkflowPermanentID, store.TagChange{Set: TagSets("env:dev")})

	keys, err := f.Tags().Keys(ctx, f.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, keys); got != `[{"key":"env","description":null,"workflow_count":3},{"key":"team","description":null,"workflow_count":1}]` {
		t.Fatalf("keys %s", got)
	}
	// A deleted agent no longer counts.
	if err := f.Agents().Delete(ctx, f.org.ID, c.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	k, err := f.Tags().UpdateKey(ctx, f.org.ID, "env", new("Where it runs"))
	if err != nil || mustJSON(t, k) != `{"key":"env","description":"Where it runs","workflow_count":2}` {
		t.Fatalf("UpdateTagKey: %s, %v", mustJSON(t, k), err)
	}
	k, _ = f.Tags().UpdateKey(ctx, f.org.ID, "env", nil)
	if k.Description != nil {
		t.Fatalf("description not cleared: %s", mustJSON(t, k))
	}
	_, err = f.Tags().UpdateKey(ctx, f.org.ID, "nope", nil)
	wantErr(t, err, store.ErrNotFound, "tag key nope not found")

	// Values: create, conflict, recolour.
	v, err := f.Tags().CreateValue(ctx, f.org.ID, "env", "qa", client.TagColorTeal)
	if err != nil || mustJSON(t, v) != `{"key":"env","value":"qa","color":"teal","workflow_count":0}` {
		t.Fatalf("CreateTagValue: %s, %v", mustJSON(t, v), err)
	}
	_, err = f.Tags().CreateValue(ctx, f.org.ID, "env", "qa", "")
	wantErr(t, err, store.ErrConflict, "env:qa already exists")
	v, err = f.Tags().CreateValue(ctx, f.org.ID, "fresh", "one", "")
	if err != nil || !v.Color.IsKnown() {
		t.Fatalf("random colour: %s, %v", mustJSON(t, v), err)
	}
	keys, _ = f.Tags().Keys(ctx, f.org.ID)
	if len(keys) != 3 || keys[1].Key != "fresh" {
		t.Fatalf("creating a value did not register its key: %s", mustJSON(t, keys))
	}
	v, err = f.Tags().RecolorValue(ctx, f.org.ID, "env", "prod", client.TagColorPink)
	if err != nil || v.Color != client.TagColorPink || v.WorkflowCount != 2 {
		t.Fatalf("RecolorTagValue: %s, %v", mustJSON(t, v), err)
	}
	_, err = f.Tags().RecolorValue(ctx, f.org.ID, "env", "nope", client.TagColorPink)
	wantErr(t, err, store.ErrNotFound, "env:nope not found")

	// Rename re-tags the carriers, keeps the colour, refuses a taken value.
	_, err = f.Tags().RenameValue(ctx, f.org.ID, "env", "prod", "qa", f.org.ID)
	wantErr(t, err, store.ErrConflict, "env:qa already exists")
	r, err := f.Tags().RenameValue(ctx, f.org.ID, "env", "prod", "production", f.org.ID)
	if err != nil || mustJSON(t, r) != `{"key":"env","value":"production","color":"pink","renamed_workflow_count":2}` {
		t.Fatalf("RenameTagValue: %s, %v", mustJSON(t, r), err)
	}
	tags, _ := f.Tags().Get(ctx, f.org.ID, agentSubj(b.WorkflowPermanentID))
	if !slices.Equal(TagStrings(tags), []string{"env:production"}) {
		t.Fatalf("b after rename: %v", TagStrings(tags))
	}
	vals, _ := f.Tags().Values(ctx, f.org.ID, "env")
	if got := mustJSON(t, vals); !strings.Contains(got, `"value":"production","color":"pink","workflow_count":2`) || strings.Contains(got, `"prod"`) {
		t.Fatalf("values after rename %s", got)
	}

	// Delete a value: cascade, counts (the deleted agent c too: its tag
	// changed), and 404 the second time.
	dv, err := f.Tags().DeleteValue(ctx, f.org.ID, "env", "production", f.org.ID)
	if err != nil || mustJSON(t, dv) != `{"key":"env","value":"production","removed_from_workflow_count":2,"removed_from_run_count":0,"removed_count":2}` {
		t.Fatalf("DeleteTagValue: %s, %v", mustJSON(t, dv), err)
	}
	_, err = f.Tags().DeleteValue(ctx, f.org.ID, "env", "production", f.org.ID)
	wantErr(t, err, store.ErrNotFound, "not found")
	tags, _ = f.Tags().Get(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID))
	if !slices.Equal(TagStrings(tags), []string{"team:x"}) {
		t.Fatalf("a after the value delete: %v", TagStrings(tags))
	}
	hist, _ := f.Tags().History(ctx, f.org.ID, agentSubj(a.WorkflowPermanentID), store.TagHistoryQuery{Limit: 1})
	if eventStrings(hist)[0] != "delete env=-" {
		t.Fatalf("cascade event %v", eventStrings(hist))
	}

	// Delete a key: every carrier (c, deleted, included) and its values go.
	dk, err := f.Tags().DeleteKey(ctx, f.org.ID, "env", f.org.ID)
	if err != nil || mustJSON(t, dk) != `{"key":"env","removed_from_workflow_count":1,"removed_from_run_count":0,"removed_count":1}` {
		t.Fatalf("DeleteTagKey: %s, %v", mustJSON(t, dk), err)
	}
	_, err = f.Tags().DeleteKey(ctx, f.org.ID, "env", f.org.ID)
	wantErr(t, err, store.ErrNotFound, "tag key env not found")
	vals, _ = f.Tags().Values(ctx, f.org.ID, "env")
	if len(vals) != 0 {
		t.Fatalf("values of a deleted key: %s", mustJSON(t, vals))
	}
	// Using the key again registers it anew.
	f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets("env:back")})
	keys, _ = f.Tags().Keys(ctx, f.org.ID)
	if mustJSON(t, keys[0]) != `{"key":"env","description":null,"workflow_count":1}` {
		t.Fatalf("re-registered key %s", mustJSON(t, keys[0]))
	}

	// Another organization sees none of it.
	other := f.newOrg("other")
	if ks, _ := f.Tags().Keys(ctx, other.ID); len(ks) != 0 {
		t.Fatalf("foreign keys %s", mustJSON(t, ks))
	}
	if vs, _ := f.Tags().Values(ctx, other.ID, ""); len(vs) != 0 {
		t.Fatalf("foreign values %s", mustJSON(t, vs))
	}
	_, err = f.Tags().DeleteKey(ctx, other.ID, "team", other.ID)
	wantErr(t, err, store.ErrNotFound, "team")
}

func testListAgentsByTags(t *testing.T, o opener) {
	f := newFixture(t, o)
	mk := func(title string, tags ...string) string {
		a := f.create(f.org.ID, AgentDef(title))
		f.apply(a.WorkflowPermanentID, store.TagChange{Set: TagSets(tags...)})
		return a.WorkflowPermanentID
	}
	prod := mk("prod billing", "env:prod", "team:billing", "urgent")
	staging := mk("staging billing", "env:staging", "team:billing")
	dev := mk("dev search", "env:dev", "team:search", "team-urgent:urgent")
	none := mk("untagged")
	_ = none

	q := func(terms ...string) []string {
		t.Helper()
		query, err := tagquery.Parse(terms)
		if err != nil {
			t.Fatal(err)
		}
		return f.list(f.org.ID, store.AgentQuery{Tags: query, PageSize: 100})
	}
	cases := []struct {
		terms []string
		want  []string // newest first
	}{
		{[]string{"urgent"}, []string{dev, prod}}, // label term: a label or any group's value
		{[]string{"env:*"}, []string{dev, staging, prod}},
		{[]string{"env:prod,env:staging"}, []string{staging, prod}}, // OR within a key
		{[]string{"env:prod", "env:dev"}, []string{dev, prod}},      // across occurrences too
		{[]string{"env:prod,team:search"}, []string{}},              // AND across keys
		{[]string{"team:billing", "urgent"}, []string{prod}},
		{[]string{"missing:*"}, []string{}},
		{[]string{"Urgent"}, []string{}}, // case-sensitive, like the service's equality
	}
	for _, c := range cases {
		if got := q(c.terms...); !slices.Equal(got, c.want) {
			t.Errorf("tags %q: %v, want %v", c.terms, got, c.want)
		}
	}
	// Combined with search and paging.
	query, _ := tagquery.Parse([]string{"team:billing"})
	if got := f.list(f.org.ID, store.AgentQuery{Tags: query, SearchKey: "staging"}); !slices.Equal(got, []string{staging}) {
		t.Errorf("tags and search: %v", got)
	}
	if got := f.list(f.org.ID, store.AgentQuery{Tags: query, PageSize: 1, Page: 2}); !slices.Equal(got, []string{prod}) {
		t.Errorf("tags, page 2 of size 1: %v", got)
	}
	// Only current tags match.
	f.apply(prod, store.TagChange{Delete: []store.TagDelete{{Key: "team"}}})
	if got := q("team:billing"); !slices.Equal(got, []string{staging}) {
		t.Errorf("after removing prod's team: %v", got)
	}
}

func testSearchWildcards(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.create(f.org.ID, AgentDef("Fetch invoices", WorkflowParam("first_name", "", nil)))
	b := f.create(f.org.ID, AgentDef("Fetch receipts", WorkflowParam("firstXname", "", nil)))
	c := f.create(f.org.ID, AgentDef("Other"))
	for _, tc := range []struct {
		term string
		want []string
	}{
		{"first_name", []string{b.WorkflowPermanentID, a.WorkflowPermanentID}}, // '_' is any character
		{"fetch%s", []string{b.WorkflowPermanentID, a.WorkflowPermanentID}},
		{"f_tch_inv", []string{a.WorkflowPermanentID}},
		{"in%ces", []string{a.WorkflowPermanentID}},
		{"%", []string{c.WorkflowPermanentID, b.WorkflowPermanentID, a.WorkflowPermanentID}},
		// The wpid is matched literally: '_' there is the underscore.
		{c.WorkflowPermanentID, []string{c.WorkflowPermanentID}},
	} {
		if got := f.list(f.org.ID, store.AgentQuery{SearchKey: tc.term}); !slices.Equal(got, tc.want) {
			t.Errorf("search %q: %v, want %v", tc.term, got, tc.want)
		}
	}
	fl := f.folder(f.org.ID, "Quarter_end reports")
	if _, err := f.Agents().SetFolder(ctx, f.org.ID, c.WorkflowPermanentID, fl.FolderID); err != nil {
		t.Fatal(err)
	}
	if got := f.list(f.org.ID, store.AgentQuery{SearchKey: "quarter%rep"}); !slices.Equal(got, []string{c.WorkflowPermanentID}) {
		t.Errorf("folder title with a wildcard: %v", got)
	}
	folders, err := f.Folders().List(ctx, f.org.ID, 1, 10, "quarter_end")
	if err != nil || len(folders) != 1 {
		t.Errorf("folder search with a wildcard: %d, %v", len(folders), err)
	}
}

// testTagRunSubjects: workflow runs carry tags, with events of their own
// kind; task runs and unknown runs are not found; deleting a key counts
// what it removed from runs and from agents.
func testTagRunSubjects(t *testing.T, o opener) {
	f := newFixture(t, o)
	_, err := f.Tags().Get(ctx, f.org.ID, store.TagSubject{Kind: store.RunSubject, ID: "wr_1"})
	wantNotFoundError(t, "an unknown run", err, store.NotFoundError{Record: store.RecordWorkflowRun, ID: "wr_1"})
	r1 := f.newRun(client.RunTypeWorkflowRun, nil)
	r2 := f.newRun(client.RunTypeWorkflowRun, nil)
	task := f.newRun(client.RunTypeTaskV1, nil)
	ag := f.create(f.org.ID, AgentDef("a"))
	change := store.TagChange{Set: TagSets("env:prod"), Colors: map[string]client.TagColor{"env": client.TagColorRed}, SetBy: f.org.ID}
	for _, sj := range []store.TagSubject{{Kind: store.RunSubject, ID: r1.ID}, {Kind: store.RunSubject, ID: r2.ID}, agentSubj(ag.WorkflowPermanentID)} {
		if _, err := f.Tags().Apply(ctx, f.org.ID, sj, change); err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.Tags().Apply(ctx, f.org.ID, store.TagSubject{Kind: store.RunSubject, ID: task.ID}, store.TagChange{Set: TagSets("x")})
	wantNotFound(t, "tagging a task run", err, store.RecordWorkflowRun, task.ID)
	hist, err := f.Tags().History(ctx, f.org.ID, store.TagSubject{Kind: store.RunSubject, ID: r1.ID}, store.TagHistoryQuery{})
	if err != nil || len(hist) != 1 || !strings.HasPrefix(hist[0].TagEventID, "rtge_") {
		t.Fatalf("run history %+v, %v", hist, err)
	}
	dk, err := f.Tags().DeleteKey(ctx, f.org.ID, "env", f.org.ID)
	if err != nil || dk.RemovedFromRunCount != 2 || dk.RemovedFromWorkflowCount != 1 || dk.RemovedCount != 3 {
		t.Fatalf("delete key: %+v, %v", dk, err)
	}
}
