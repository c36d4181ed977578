package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// testRunsCreateGetUpdate: a run's record as created and moved, its
// stamps, conflicts and errors.
func testRunsCreateGetUpdate(t *testing.T, o opener) {
	f := newFixture(t, o)
	rec := f.newRun(client.RunTypeTaskV2, func(r *store.RunRecord) { r.Status = client.RunStatusQueued })
	if rec.CreatedAt.IsZero() || rec.QueuedAt == nil || !rec.QueuedAt.Equal(rec.CreatedAt.Time) || !rec.ModifiedAt.Equal(rec.CreatedAt.Time) {
		t.Errorf("created %+v", rec)
	}
	got, err := f.Runs().Get(ctx, f.org.ID, rec.ID)
	if err != nil || mustJSON(t, got) != mustJSON(t, rec) {
		t.Fatalf("Get %+v %v", got, err)
	}

	// A second create of the id conflicts and leaves the record as given.
	again := &store.RunRecord{ID: rec.ID, OrgID: f.org.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusQueued}
	var cf *store.ConflictError
	if err := f.Runs().Create(ctx, again); !errors.As(err, &cf) || *cf != (store.ConflictError{Record: store.RecordRun, ID: rec.ID}) {
		t.Errorf("conflict: %v", err)
	}
	if !again.CreatedAt.IsZero() {
		t.Errorf("a conflicting create stamped the record")
	}
	for _, bad := range []*store.RunRecord{nil, {OrgID: f.org.ID, Status: client.RunStatusQueued}, {ID: "tsk\x00", OrgID: f.org.ID, Status: client.RunStatusQueued}} {
		if err := f.Runs().Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "needs an id from NewID") {
			t.Errorf("create %+v: %v", bad, err)
		}
	}
	if err := f.Runs().Create(ctx, &store.RunRecord{ID: "tsk_9", OrgID: f.org.ID, Status: client.RunStatusRunning}); err == nil ||
		err.Error() != `store: Runs.Create: a new run is created or queued, not "running"` {
		t.Errorf("create running: %v", err)
	}
	err = f.Runs().Create(ctx, &store.RunRecord{ID: "tsk_9", OrgID: "o_404", Status: client.RunStatusQueued})
	wantNotFoundError(t, "create in an unknown organization", err, store.NotFoundError{Record: store.RecordOrganization, ID: "o_404"})

	// Moves stamp their times once.
	update := func(change func(*store.RunRecord)) *store.RunRecord {
		t.Helper()
		r, err := f.Runs().Update(ctx, f.org.ID, rec.ID, func(r *store.RunRecord) error { change(r); return nil })
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	running := update(func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	done := update(func(r *store.RunRecord) {
		r.Status = client.RunStatusCompleted
		r.Output = json.RawMessage(`{"a":"<b>"}`)
	})
	if running.StartedAt == nil || done.FinishedAt == nil || !done.StartedAt.Equal(running.StartedAt.Time) ||
		!done.ModifiedAt.After(running.ModifiedAt.Time) || !done.QueuedAt.Equal(rec.QueuedAt.Time) {
		t.Errorf("running %+v, done %+v", running, done)
	}
	// ErrUnchanged writes nothing and answers the record as read; another
	// error writes nothing.
	same, err := f.Runs().Update(ctx, f.org.ID, rec.ID, func(r *store.RunRecord) error { r.Title = "lost"; return store.ErrUnchanged })
	if err != nil || same.Title != "lost" || !same.ModifiedAt.Equal(done.ModifiedAt.Time) {
		t.Errorf("unchanged: %+v %v", same, err)
	}
	mine := errors.New("mine")
	if _, err := f.Runs().Update(ctx, f.org.ID, rec.ID, func(r *store.RunRecord) error { r.Title = "lost"; return mine }); err != mine {
		t.Errorf("the change's error: %v", err)
	}
	if got, _ := f.Runs().Get(ctx, f.org.ID, rec.ID); got.Title != "" || mustJSON(t, got) != mustJSON(t, done) {
		t.Errorf("after refused changes: %+v", got)
	}

	other := f.newOrg("other")
	for _, c := range []struct{ org, id string }{{f.org.ID, "tsk_404"}, {f.org.ID, ""}, {f.org.ID, "tsk\x00"}, {f.org.ID, "tsk_\xff"}, {other.ID, rec.ID}} {
		want := store.NotFoundError{Record: store.RecordRun, ID: c.id}
		_, err := f.Runs().Get(ctx, c.org, c.id)
		wantNotFoundError(t, "Get", err, want)
		_, err = f.Runs().Update(ctx, c.org, c.id, func(*store.RunRecord) error { t.Error("change called"); return nil })
		wantNotFoundError(t, "Update", err, want)
	}
	for _, org := range []string{"o_404", "o\x00", ""} {
		want := store.NotFoundError{Record: store.RecordOrganization, ID: org}
		_, err := f.Runs().Get(ctx, org, rec.ID)
		wantNotFoundError(t, "Get", err, want)
		_, err = f.Runs().Update(ctx, org, rec.ID, func(*store.RunRecord) error { return nil })
		wantNotFoundError(t, "Update", err, want)
	}
}

// testRunsPending: runs not terminal, or terminal with a webhook to send,
// of every organization, oldest first.
func testRunsPending(t *testing.T, o opener) {
	f := newFixture(t, o)
	a := f.newRun(client.RunTypeTaskV1, nil)
	b := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.WebhookURL = "http://127.0.0.1:1/" })
	c := f.newRun(client.RunTypeTaskV2, nil)
	mine := f.org
	other := f.newOrg("other")
	d := &store.RunRecord{ID: f.Runs().NewID(client.RunTypeTaskV1), OrgID: other.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusCreated}
	if err := f.Runs().Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	pending := func() []store.RunRef {
		refs, err := f.Runs().Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return refs
	}
	ref := func(org, id string) store.RunRef { return store.RunRef{OrgID: org, RunID: id} }
	want := []store.RunRef{ref(mine.ID, a.ID), ref(mine.ID, b.ID), ref(mine.ID, c.ID), ref(other.ID, d.ID)}
	if got := pending(); !slices.Equal(got, want) {
		t.Errorf("pending %v, want %v", got, want)
	}
	end := func(org, id string, change func(*store.RunRecord)) {
		if _, err := f.Runs().Update(ctx, org, id, func(r *store.RunRecord) error { change(r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	end(mine.ID, a.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCompleted })
	end(mine.ID, b.ID, func(r *store.RunRecord) { r.Status = client.RunStatusFailed })
	end(other.ID, d.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCanceled })
	if got := pending(); !slices.Equal(got, []store.RunRef{ref(mine.ID, b.ID), ref(mine.ID, c.ID)}) {
		t.Errorf("pending after the ends: %v", got)
	}
	end(mine.ID, b.ID, func(r *store.RunRecord) { r.Webhook = &store.WebhookDelivery{URL: r.WebhookURL, StatusCode: 200} })
	end(mine.ID, c.ID, func(r *store.RunRecord) { r.Status = client.RunStatusTerminated })
	if got := pending(); got != nil {
		t.Errorf("pending at the end: %v", got)
	}
}

// testListRunsOddQueries: List and Records agree; odd bytes (a title of
// invalid UTF-8 is PostgreSQL's own test: the bbolt store's run index keeps
// it as given, its record as JSON made it), literal
// searches, creation bounds (near and far), Records' match, the item as
// encoded, and organizations unknown or odd.
func testListRunsOddQueries(t *testing.T, o opener) {
	f := newFixture(t, o)
	if got, err := f.Runs().List(ctx, f.org.ID, store.RunQuery{}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty list: %#v %v", got, err)
	}
	// ids lists with q through Records (which asks nothing of the agents)
	// and through List when the runs name no agent.
	ids := func(q store.RunQuery, withList bool) []string {
		t.Helper()
		recs, err := f.Runs().Records(ctx, f.org.ID, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.ID)
		}
		if withList {
			items, err := f.Runs().List(ctx, f.org.ID, q)
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, it := range items {
				if it.TaskRunID != it.RunID {
					t.Errorf("task_run_id %s of %s", it.TaskRunID, it.RunID)
				}
				listed = append(listed, it.RunID)
			}
			if !slices.Equal(listed, out) {
				t.Errorf("List %v, Records %v", listed, out)
			}
		}
		return out
	}
	a1 := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID, r.Title = "wpid_1", "Contact Form" })
	a2 := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID, r.Title = "wpid_2", "Other" })
	t1 := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "Check the INVOICES" })
	t2 := f.newRun(client.RunTypeTaskV2, func(r *store.RunRecord) { r.Title, r.Trigger = "Download invoices", "api" })
	odd := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "ÜBERWEISUNGEN a\x00b 100%_\\" })
	f.updateRun(t1.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCompleted })
	f.updateRun(a2.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	from, to := t1.CreatedAt, t2.CreatedAt
	for _, tc := range []struct {
		name     string
		q        store.RunQuery
		want     []string
		withList bool
	}{
		{"a page far past the end", store.RunQuery{Page: 1 << 40, PageSize: 100}, nil, true},
		{"status", store.RunQuery{Statuses: []client.RunStatus{client.RunStatusCreated}}, []string{odd.ID, t2.ID, a1.ID}, false},
		{"statuses", store.RunQuery{Statuses: []client.RunStatus{client.RunStatusCompleted, client.RunStatusRunning, "x\x00"}}, []string{t1.ID, a2.ID}, false},
		{"a status no run can have", store.RunQuery{Statuses: []client.RunStatus{"\xff"}}, nil, true},
		{"types", store.RunQuery{Types: []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2}}, []string{odd.ID, t2.ID, t1.ID}, true},
		{"agents", store.RunQuery{AgentIDs: []string{"wpid_2", "wpid_none", "\xff"}}, []string{a2.ID}, false},
		{"search unicode", store.RunQuery{SearchKey: "überweisungen"}, []string{odd.ID}, true},
		{"search odd bytes", store.RunQuery{SearchKey: "a\x00b 100%_\\"}, []string{odd.ID}, true},
		{"search invalid UTF-8", store.RunQuery{SearchKey: "\xff"}, nil, true},
		{"search is literal", store.RunQuery{SearchKey: "%"}, []string{odd.ID}, true},
		{"search never spans two fields", store.RunQuery{SearchKey: "form" + "wpid"}, nil, true},
		{"created bounds", store.RunQuery{CreatedFrom: &from, CreatedTo: &to}, []string{t2.ID, t1.ID}, true},
		{"created far bounds", store.RunQuery{CreatedFrom: &client.Time{Time: time.Date(-200000, 1, 1, 0, 0, 0, 0, time.UTC)},
			CreatedTo: &client.Time{Time: time.Date(290000, 1, 1, 0, 0, 0, 0, time.UTC)}, Types: []client.RunType{client.RunTypeTaskV2}}, []string{t2.ID}, true},
		{"created before any", store.RunQuery{CreatedTo: &client.Time{Time: time.Date(-200000, 1, 1, 0, 0, 0, 0, time.UTC)}}, nil, true},
	} {
		if got := ids(tc.q, tc.withList); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// Records keeps what match keeps, then pages.
	recs, err := f.Runs().Records(ctx, f.org.ID, store.RunQuery{Page: 2, PageSize: 1}, func(r *store.RunRecord) bool { return r.Type == client.RunTypeTaskV1 })
	if err != nil || len(recs) != 1 || recs[0].ID != t1.ID {
		t.Errorf("Records with match: %v %v", recs, err)
	}

	// The item: every field the record gives it, times in UTC.
	items, err := f.Runs().List(ctx, f.org.ID, store.RunQuery{Types: []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2}})
	if err != nil || len(items) != 3 {
		t.Fatalf("%v %v", items, err)
	}
	stored, _ := f.Runs().Get(ctx, f.org.ID, t1.ID)
	want := client.RunListItem{TaskRunID: t1.ID, RunID: t1.ID, RunType: client.RunTypeTaskV1, Status: client.RunStatusCompleted,
		Title: client.Ptr("Check the INVOICES"), CreatedAt: client.Time{Time: stored.CreatedAt.UTC()},
		FinishedAt: &client.Time{Time: stored.FinishedAt.UTC()}}
	if mustJSON(t, items[2]) != mustJSON(t, want) || items[2].CreatedAt.Location() != time.UTC {
		t.Errorf("item\n got %s\nwant %s", mustJSON(t, items[2]), mustJSON(t, want))
	}
	if *items[1].TriggerType != "api" || *items[0].Title != odd.Title {
		t.Errorf("items %+v %+v", items[1], items[0])
	}

	for _, org := range []string{"o_404", "o\x00"} {
		want := store.NotFoundError{Record: store.RecordOrganization, ID: org}
		_, err := f.Runs().List(ctx, org, store.RunQuery{})
		wantNotFoundError(t, "List", err, want)
		_, err = f.Runs().Records(ctx, org, store.RunQuery{}, nil)
		wantNotFoundError(t, "Records", err, want)
	}
}
