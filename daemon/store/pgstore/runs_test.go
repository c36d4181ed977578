package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/internal/jsonenc"
)

// runClock starts at a fixed time and moves 1ms at every reading, so that
// every write has its own time.
type runClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *runClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// runViews stand for the daemon's views: the run's id, status and number
// of files, and none for a run titled "no view".
type runViews struct{ format string }

func (v runViews) Format() ([]byte, error) { return []byte("views " + v.format), nil }

func (v runViews) Encode(rec *store.RunRecord) ([]byte, error) {
	if rec.Title == "no view" {
		return nil, errors.New("no view")
	}
	return fmt.Appendf(nil, "%s: %s, %d files%s", rec.ID, rec.Status, len(rec.Files), v.format), nil
}

// runFixture is a store with an organization, on a database of its own.
type runFixture struct {
	t     *testing.T
	url   string
	clock *runClock
	st    *pgstore.Store
	org   store.Organization
}

func newRunFixture(t *testing.T) *runFixture {
	t.Helper()
	f := &runFixture{t: t, url: newDatabase(t), clock: &runClock{t: time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)}}
	f.st = f.open(runViews{}, 42)
	var err error
	if f.org, _, err = f.st.CreateOrganization(t.Context(), "test"); err != nil {
		t.Fatal(err)
	}
	return f
}

// open opens another store on the fixture's database: another daemon.
func (f *runFixture) open(views store.RunViews, worker uint32) *pgstore.Store {
	f.t.Helper()
	return open(f.t, f.url, store.Options{Now: f.clock.Now, IDs: ids.NewWithClock(worker, f.clock.Now), RunViews: views})
}

func (f *runFixture) newRun(typ client.RunType, mod func(*store.RunRecord)) *store.RunRecord {
	f.t.Helper()
	rec := &store.RunRecord{ID: f.st.Runs().NewID(typ), OrgID: f.org.ID, Type: typ, Status: client.RunStatusCreated,
		RunRequest: json.RawMessage(`{"prompt":"Find <the> price & \u00e9 \"quoted\""}`)}
	if mod != nil {
		mod(rec)
	}
	if err := f.st.Runs().Create(f.t.Context(), rec); err != nil {
		f.t.Fatal(err)
	}
	return rec
}

func (f *runFixture) update(id string, change func(*store.RunRecord)) *store.RunRecord {
	f.t.Helper()
	rec, err := f.st.Runs().Update(f.t.Context(), f.org.ID, id, func(r *store.RunRecord) error { change(r); return nil })
	if err != nil {
		f.t.Fatal(err)
	}
	return rec
}

// ids lists with q through Records (which asks nothing of the agents) and
// through List when the runs name no agent.
func (f *runFixture) ids(orgID string, q store.RunQuery, withList bool) []string {
	f.t.Helper()
	recs, err := f.st.Runs().Records(f.t.Context(), orgID, q, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.ID)
	}
	if withList {
		items, err := f.st.Runs().List(f.t.Context(), orgID, q)
		if err != nil {
			f.t.Fatal(err)
		}
		var listed []string
		for _, it := range items {
			if it.TaskRunID != it.RunID {
				f.t.Errorf("task_run_id %s of %s", it.TaskRunID, it.RunID)
			}
			listed = append(listed, it.RunID)
		}
		if !slices.Equal(listed, out) {
			f.t.Errorf("List %v, Records %v", listed, out)
		}
	}
	return out
}

func wantRunNotFound(t *testing.T, err error, want store.NotFoundError) {
	t.Helper()
	var nf *store.NotFoundError
	if !errors.As(err, &nf) || *nf != want || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("error %v, want %+v", err, want)
	}
}

// TestRunsCreateGetUpdate: the record as the bbolt store keeps it, its
// stamps, conflicts and errors.
func TestRunsCreateGetUpdate(t *testing.T) {
	f := newRunFixture(t)
	ctx := t.Context()
	rec := f.newRun(client.RunTypeTaskV2, func(r *store.RunRecord) { r.Status = client.RunStatusQueued })
	if rec.CreatedAt.IsZero() || rec.QueuedAt == nil || !rec.QueuedAt.Equal(rec.CreatedAt.Time) || !rec.ModifiedAt.Equal(rec.CreatedAt.Time) {
		t.Errorf("created %+v", rec)
	}
	got, err := f.st.Runs().Get(ctx, f.org.ID, rec.ID)
	if err != nil || mustJSONString(t, got) != mustJSONString(t, rec) {
		t.Fatalf("Get %+v %v", got, err)
	}
	// The stored bytes are the bbolt store's: encoded without HTML escaping.
	var stored []byte
	if err := f.st.Pool().QueryRow(ctx, `SELECT record FROM runs WHERE id = $1`, rec.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if want, _ := jsonenc.Marshal(rec); !bytes.Equal(stored, want) || !bytes.Contains(stored, []byte(`<the> price &`)) {
		t.Errorf("stored %s\nwant %s", stored, want)
	}

	// A second create of the id conflicts and leaves the record as given.
	again := &store.RunRecord{ID: rec.ID, OrgID: f.org.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusQueued}
	var cf *store.ConflictError
	if err := f.st.Runs().Create(ctx, again); !errors.As(err, &cf) || *cf != (store.ConflictError{Record: store.RecordRun, ID: rec.ID}) {
		t.Errorf("conflict: %v", err)
	}
	if !again.CreatedAt.IsZero() {
		t.Errorf("a conflicting create stamped the record")
	}
	for _, bad := range []*store.RunRecord{nil, {OrgID: f.org.ID, Status: client.RunStatusQueued}, {ID: "tsk\x00", OrgID: f.org.ID, Status: client.RunStatusQueued}} {
		if err := f.st.Runs().Create(ctx, bad); err == nil || !strings.Contains(err.Error(), "needs an id from NewID") {
			t.Errorf("create %+v: %v", bad, err)
		}
	}
	if err := f.st.Runs().Create(ctx, &store.RunRecord{ID: "tsk_9", OrgID: f.org.ID, Status: client.RunStatusRunning}); err == nil ||
		err.Error() != `store: Runs.Create: a new run is created or queued, not "running"` {
		t.Errorf("create running: %v", err)
	}
	err = f.st.Runs().Create(ctx, &store.RunRecord{ID: "tsk_9", OrgID: "o_404", Status: client.RunStatusQueued})
	wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordOrganization, ID: "o_404"})

	// Moves stamp their times once.
	running := f.update(rec.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	done := f.update(rec.ID, func(r *store.RunRecord) {
		r.Status = client.RunStatusCompleted
		r.Output = json.RawMessage(`{"a":"<b>"}`)
	})
	if running.StartedAt == nil || done.FinishedAt == nil || !done.StartedAt.Equal(running.StartedAt.Time) ||
		!done.ModifiedAt.After(running.ModifiedAt.Time) || !done.QueuedAt.Equal(rec.QueuedAt.Time) {
		t.Errorf("running %+v, done %+v", running, done)
	}
	// ErrUnchanged writes nothing and answers the record as read; another
	// error writes nothing.
	same, err := f.st.Runs().Update(ctx, f.org.ID, rec.ID, func(r *store.RunRecord) error { r.Title = "lost"; return store.ErrUnchanged })
	if err != nil || same.Title != "lost" || !same.ModifiedAt.Equal(done.ModifiedAt.Time) {
		t.Errorf("unchanged: %+v %v", same, err)
	}
	mine := errors.New("mine")
	if _, err := f.st.Runs().Update(ctx, f.org.ID, rec.ID, func(r *store.RunRecord) error { r.Title = "lost"; return mine }); err != mine {
		t.Errorf("the change's error: %v", err)
	}
	if got, _ := f.st.Runs().Get(ctx, f.org.ID, rec.ID); got.Title != "" || mustJSONString(t, got) != mustJSONString(t, done) {
		t.Errorf("after refused changes: %+v", got)
	}

	other, _, err := f.st.CreateOrganization(ctx, "other")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ org, id string }{{f.org.ID, "tsk_404"}, {f.org.ID, ""}, {f.org.ID, "tsk\x00"}, {f.org.ID, "tsk_\xff"}, {other.ID, rec.ID}} {
		_, err := f.st.Runs().Get(ctx, c.org, c.id)
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordRun, ID: c.id})
		_, err = f.st.Runs().Update(ctx, c.org, c.id, func(*store.RunRecord) error { t.Error("change called"); return nil })
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordRun, ID: c.id})
	}
	for _, org := range []string{"o_404", "o\x00", ""} {
		_, err := f.st.Runs().Get(ctx, org, rec.ID)
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordOrganization, ID: org})
		_, err = f.st.Runs().Update(ctx, org, rec.ID, func(*store.RunRecord) error { return nil })
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordOrganization, ID: org})
	}
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunsUpdateAcrossDaemons: updates of one run by two daemons at once
// serialise on its row: none is lost.
func TestRunsUpdateAcrossDaemons(t *testing.T) {
	f := newRunFixture(t)
	second := f.open(runViews{}, 43)
	rec := f.newRun(client.RunTypeWorkflowRun, nil)
	const each = 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for d, st := range []*pgstore.Store{f.st, second} {
		for i := range each {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := st.Runs().Update(t.Context(), f.org.ID, rec.ID, func(r *store.RunRecord) error {
					r.Files = append(r.Files, store.RunFile{ID: fmt.Sprintf("a_%d_%d", d, i)})
					return nil
				})
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := f.st.Runs().Get(t.Context(), f.org.ID, rec.ID)
	if err != nil || len(got.Files) != 2*each {
		t.Fatalf("%d files after %d updates (%v)", len(got.Files), 2*each, err)
	}
	// The view was written with the last record.
	var view []byte
	if err := second.Runs().View(t.Context(), f.org.ID, rec.ID, func(v []byte) error { view = bytes.Clone(v); return nil }); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%s: created, %d files", rec.ID, 2*each); string(view) != want {
		t.Errorf("view %q, want %q", view, want)
	}
}

// TestRunsCreateOnceAcrossDaemons: daemons creating one run id at once:
// one creates it, the others conflict.
func TestRunsCreateOnceAcrossDaemons(t *testing.T) {
	f := newRunFixture(t)
	stores := []*pgstore.Store{f.st, f.open(runViews{}, 43)}
	id := f.st.Runs().NewID(client.RunTypeTaskV1)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = stores[i%2].Runs().Create(t.Context(), &store.RunRecord{ID: id, OrgID: f.org.ID, Type: client.RunTypeTaskV1, Status: client.RunStatusQueued})
		}()
	}
	wg.Wait()
	created := 0
	for _, err := range errs {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("create: %v", err)
		}
	}
	if created != 1 {
		t.Errorf("%d creates succeeded, want 1", created)
	}
}

// TestRunsListPagedAndFiltered: newest first, paging, every filter, the
// item's fields, and organizations apart.
func TestRunsListPagedAndFiltered(t *testing.T) {
	f := newRunFixture(t)
	ctx := t.Context()
	if got, err := f.st.Runs().List(ctx, f.org.ID, store.RunQuery{}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty list: %#v %v", got, err)
	}
	var all []string
	for i := range 25 {
		typ := []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2, client.RunTypeWorkflowRun}[i%3]
		all = append(all, f.newRun(typ, nil).ID)
	}
	newest := slices.Clone(all)
	slices.Reverse(newest)
	for _, c := range []struct {
		q    store.RunQuery
		want []string
	}{
		{store.RunQuery{}, newest[:10]},
		{store.RunQuery{Page: 3, PageSize: 10}, newest[20:]},
		{store.RunQuery{Page: 4, PageSize: 10}, nil},
		{store.RunQuery{Page: 1 << 40, PageSize: 100}, nil},
		{store.RunQuery{Page: 1 << 60, PageSize: 1 << 40}, nil},
		{store.RunQuery{Types: []client.RunType{client.RunTypeWorkflowRun}, PageSize: 3, Page: 2}, []string{newest[10], newest[13], newest[16]}},
	} {
		if got := f.ids(f.org.ID, c.q, true); !slices.Equal(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.q, got, c.want)
		}
	}
	f.update(all[3], func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	f.update(all[3], func(r *store.RunRecord) { r.Status = client.RunStatusFailed })
	if got := f.ids(f.org.ID, store.RunQuery{PageSize: 100}, true); !slices.Equal(got, newest) {
		t.Errorf("after updates: %v", got)
	}

	// Filters, on runs of their own organization.
	f.org, _, _ = f.st.CreateOrganization(ctx, "filters")
	a1 := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID, r.Title = "wpid_1", "Contact Form" })
	a2 := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.AgentID, r.Title = "wpid_2", "Other" })
	t1 := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "Check the INVOICES" })
	t2 := f.newRun(client.RunTypeTaskV2, func(r *store.RunRecord) { r.Title, r.Trigger = "Download invoices", "api" })
	odd := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = "ÜBERWEISUNGEN a\x00b \xff 100%_\\" })
	f.update(t1.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCompleted })
	f.update(a2.ID, func(r *store.RunRecord) { r.Status = client.RunStatusRunning })
	from, to := t1.CreatedAt, t2.CreatedAt
	for _, tc := range []struct {
		name     string
		q        store.RunQuery
		want     []string
		withList bool
	}{
		{"status", store.RunQuery{Statuses: []client.RunStatus{client.RunStatusCreated}}, []string{odd.ID, t2.ID, a1.ID}, false},
		{"statuses", store.RunQuery{Statuses: []client.RunStatus{client.RunStatusCompleted, client.RunStatusRunning, "x\x00"}}, []string{t1.ID, a2.ID}, false},
		{"a status no run can have", store.RunQuery{Statuses: []client.RunStatus{"\xff"}}, nil, true},
		{"types", store.RunQuery{Types: []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2}}, []string{odd.ID, t2.ID, t1.ID}, true},
		{"agents", store.RunQuery{AgentIDs: []string{"wpid_2", "wpid_none", "\xff"}}, []string{a2.ID}, false},
		{"search title, any case", store.RunQuery{SearchKey: "inVOIces"}, []string{t2.ID, t1.ID}, true},
		{"search id", store.RunQuery{SearchKey: strings.ToUpper(t1.ID)}, []string{t1.ID}, true},
		{"search agent id", store.RunQuery{SearchKey: "WPID_2"}, []string{a2.ID}, false},
		{"search unicode", store.RunQuery{SearchKey: "überweisungen"}, []string{odd.ID}, true},
		{"search odd bytes", store.RunQuery{SearchKey: "a\x00b \xff 100%_\\"}, []string{odd.ID}, true},
		{"search is literal", store.RunQuery{SearchKey: "%"}, []string{odd.ID}, true},
		{"search never spans two fields", store.RunQuery{SearchKey: "form" + "wpid"}, nil, true},
		{"created bounds", store.RunQuery{CreatedFrom: &from, CreatedTo: &to}, []string{t2.ID, t1.ID}, true},
		{"created far bounds", store.RunQuery{CreatedFrom: &client.Time{Time: time.Date(-200000, 1, 1, 0, 0, 0, 0, time.UTC)},
			CreatedTo: &client.Time{Time: time.Date(290000, 1, 1, 0, 0, 0, 0, time.UTC)}, Types: []client.RunType{client.RunTypeTaskV2}}, []string{t2.ID}, true},
		{"created before any", store.RunQuery{CreatedTo: &client.Time{Time: time.Date(-200000, 1, 1, 0, 0, 0, 0, time.UTC)}}, nil, true},
		{"filters then pages", store.RunQuery{Types: []client.RunType{client.RunTypeWorkflowRun, client.RunTypeTaskV2}, Page: 2, PageSize: 2}, []string{a1.ID}, false},
	} {
		if got := f.ids(f.org.ID, tc.q, tc.withList); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
	// Records keeps what match keeps, then pages.
	recs, err := f.st.Runs().Records(ctx, f.org.ID, store.RunQuery{Page: 2, PageSize: 1}, func(r *store.RunRecord) bool { return r.Type == client.RunTypeTaskV1 })
	if err != nil || len(recs) != 1 || recs[0].ID != t1.ID {
		t.Errorf("Records with match: %v %v", recs, err)
	}

	// The item, as the bbolt store makes it.
	items, err := f.st.Runs().List(ctx, f.org.ID, store.RunQuery{Types: []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2}})
	if err != nil || len(items) != 3 {
		t.Fatalf("%v %v", items, err)
	}
	stored, _ := f.st.Runs().Get(ctx, f.org.ID, t1.ID)
	want := client.RunListItem{TaskRunID: t1.ID, RunID: t1.ID, RunType: client.RunTypeTaskV1, Status: client.RunStatusCompleted,
		Title: client.Ptr("Check the INVOICES"), CreatedAt: client.Time{Time: stored.CreatedAt.UTC()},
		FinishedAt: &client.Time{Time: stored.FinishedAt.UTC()}}
	if mustJSONString(t, items[2]) != mustJSONString(t, want) || items[2].CreatedAt.Location() != time.UTC {
		t.Errorf("item\n got %s\nwant %s", mustJSONString(t, items[2]), mustJSONString(t, want))
	}
	if *items[1].TriggerType != "api" || *items[0].Title != odd.Title {
		t.Errorf("items %+v %+v", items[1], items[0])
	}

	// Another organization's runs are out of reach; an unknown one is an error.
	if got := f.ids(f.org.ID, store.RunQuery{SearchKey: all[0]}, true); got != nil {
		t.Errorf("another organization's run found: %v", got)
	}
	for _, org := range []string{"o_404", "o\x00"} {
		_, err := f.st.Runs().List(ctx, org, store.RunQuery{})
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordOrganization, ID: org})
		_, err = f.st.Runs().Records(ctx, org, store.RunQuery{}, nil)
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordOrganization, ID: org})
	}
}

// TestRunsPending: runs not terminal, or terminal with a webhook to send,
// of every organization, oldest first.
func TestRunsPending(t *testing.T) {
	f := newRunFixture(t)
	ctx := t.Context()
	a := f.newRun(client.RunTypeTaskV1, nil)
	b := f.newRun(client.RunTypeWorkflowRun, func(r *store.RunRecord) { r.WebhookURL = "http://127.0.0.1:1/" })
	c := f.newRun(client.RunTypeTaskV2, nil)
	mine := f.org
	f.org, _, _ = f.st.CreateOrganization(ctx, "other")
	d := f.newRun(client.RunTypeTaskV1, nil)
	pending := func() []store.RunRef {
		refs, err := f.st.Runs().Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return refs
	}
	ref := func(org, id string) store.RunRef { return store.RunRef{OrgID: org, RunID: id} }
	want := []store.RunRef{ref(mine.ID, a.ID), ref(mine.ID, b.ID), ref(mine.ID, c.ID), ref(f.org.ID, d.ID)}
	if got := pending(); !slices.Equal(got, want) {
		t.Errorf("pending %v, want %v", got, want)
	}
	end := func(org, id string, change func(*store.RunRecord)) {
		if _, err := f.st.Runs().Update(ctx, org, id, func(r *store.RunRecord) error { change(r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	end(mine.ID, a.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCompleted })
	end(mine.ID, b.ID, func(r *store.RunRecord) { r.Status = client.RunStatusFailed })
	end(f.org.ID, d.ID, func(r *store.RunRecord) { r.Status = client.RunStatusCanceled })
	if got := pending(); !slices.Equal(got, []store.RunRef{ref(mine.ID, b.ID), ref(mine.ID, c.ID)}) {
		t.Errorf("pending after the ends: %v", got)
	}
	end(mine.ID, b.ID, func(r *store.RunRecord) { r.Webhook = &store.WebhookDelivery{URL: r.WebhookURL, StatusCode: 200} })
	end(mine.ID, c.ID, func(r *store.RunRecord) { r.Status = client.RunStatusTerminated })
	if got := pending(); got != nil {
		t.Errorf("pending at the end: %v", got)
	}
}

// TestRunStepsAndBlocks: steps newest first, replaced by number, bounded;
// blocks keep their first created_at; Trace reads one run's; errors.
func TestRunStepsAndBlocks(t *testing.T) {
	f := newRunFixture(t)
	ctx := t.Context()
	run := f.newRun(client.RunTypeWorkflowRun, nil)
	neighbour := f.newRun(client.RunTypeTaskV1, nil)
	if steps, err := f.st.Runs().StepsJSON(ctx, f.org.ID, run.ID); err != nil || steps == nil || len(steps) != 0 {
		t.Fatalf("no steps: %#v %v", steps, err)
	}
	label := "login"
	first := &client.RunStep{Number: 1, BlockLabel: &label, URL: "http://127.0.0.1:1/?a=<b>&c", Thought: "Sign in.", Actions: []string{`click "x"`}}
	for _, s := range []*client.RunStep{first, {Number: 2, Decision: "complete"}} {
		if err := f.st.Runs().AddStep(ctx, f.org.ID, run.ID, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.st.Runs().AddStep(ctx, f.org.ID, neighbour.ID, &client.RunStep{Number: 7}); err != nil {
		t.Fatal(err)
	}
	if err := f.st.Runs().AddStep(ctx, f.org.ID, run.ID, &client.RunStep{Number: 2, Decision: "terminate"}); err != nil {
		t.Fatal(err)
	}
	steps, err := f.st.Runs().StepsJSON(ctx, f.org.ID, run.ID)
	if err != nil || len(steps) != 2 {
		t.Fatalf("steps %s %v", steps, err)
	}
	var s1, s2 client.RunStep
	json.Unmarshal(steps[0], &s2)
	json.Unmarshal(steps[1], &s1)
	stamped := *first
	stamped.CreatedAt = s1.CreatedAt
	if want, _ := jsonenc.Marshal(&stamped); !bytes.Equal(steps[1], want) || s1.CreatedAt.IsZero() || s2.Decision != "terminate" {
		t.Errorf("steps %s %s, want step 1 %s", steps[0], steps[1], want)
	}
	if got, _ := f.st.Runs().Get(ctx, f.org.ID, run.ID); !got.ModifiedAt.Equal(run.ModifiedAt.Time) {
		t.Error("a step changed the record")
	}

	total := store.MaxRunSteps + 5
	for n := 1; n <= total; n++ {
		if err := f.st.Runs().AddStep(ctx, f.org.ID, neighbour.ID, &client.RunStep{Number: n}); err != nil {
			t.Fatal(err)
		}
	}
	if steps, _ := f.st.Runs().StepsJSON(ctx, f.org.ID, neighbour.ID); len(steps) != store.MaxRunSteps {
		t.Errorf("%d steps kept, want %d", len(steps), store.MaxRunSteps)
	}

	running, done := "running", "completed"
	put := func(runID string, n int, b *client.RunBlock) {
		t.Helper()
		if err := f.st.Runs().PutBlock(ctx, f.org.ID, runID, n, b); err != nil {
			t.Fatal(err)
		}
	}
	put(run.ID, 1, &client.RunBlock{WorkflowRunBlockID: "wrb_1", BlockType: client.BlockTypeForLoop, Status: &running})
	put(run.ID, 2, &client.RunBlock{WorkflowRunBlockID: "wrb_2", BlockType: client.BlockTypeGotoURL, Status: &done})
	before, err := f.st.Runs().Trace(ctx, f.org.ID, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	put(run.ID, 1, &client.RunBlock{WorkflowRunBlockID: "wrb_1", BlockType: client.BlockTypeForLoop, Status: &done, Output: json.RawMessage(`[1,2]`)})
	trace, err := f.st.Runs().Trace(ctx, f.org.ID, run.ID)
	if err != nil || trace.Record.ID != run.ID || len(trace.Blocks) != 2 || len(trace.Steps) != 2 || trace.Steps[0].Number != 1 {
		t.Fatalf("trace %+v %v", trace, err)
	}
	loop := trace.Blocks[0]
	if *loop.Status != done || string(loop.Output) != "[1,2]" || !loop.CreatedAt.Equal(before.Blocks[0].CreatedAt.Time) ||
		!loop.ModifiedAt.After(before.Blocks[0].ModifiedAt.Time) || trace.Blocks[1].WorkflowRunBlockID != "wrb_2" {
		t.Errorf("blocks %+v", trace.Blocks)
	}
	for n := 1; n <= store.MaxRunBlocks+3; n++ {
		put(neighbour.ID, n, &client.RunBlock{BlockType: client.BlockTypeWait})
	}
	if trace, err := f.st.Runs().Trace(ctx, f.org.ID, neighbour.ID); err != nil || len(trace.Blocks) != store.MaxRunBlocks || trace.Blocks[0].CreatedAt.IsZero() {
		t.Errorf("blocks of the neighbour: %d (%v)", len(trace.Blocks), err)
	}

	// Errors.
	for _, s := range []*client.RunStep{nil, {Number: 0}, {Number: -1}} {
		if err := f.st.Runs().AddStep(ctx, f.org.ID, run.ID, s); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("step %+v: %v", s, err)
		}
	}
	if err := f.st.Runs().PutBlock(ctx, f.org.ID, run.ID, 0, &client.RunBlock{}); !errors.Is(err, store.ErrInvalid) ||
		err.Error() != "store: run "+run.ID+": a block execution is numbered from 1, not 0" {
		t.Errorf("block 0: %v", err)
	}
	if err := f.st.Runs().PutBlock(ctx, f.org.ID, run.ID, 1, nil); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("a nil block: %v", err)
	}
	other, _, _ := f.st.CreateOrganization(ctx, "other")
	for _, c := range []struct{ org, id string }{{other.ID, run.ID}, {f.org.ID, "tsk_1"}, {f.org.ID, ""}, {f.org.ID, "a\x00b"}} {
		want := store.NotFoundError{Record: store.RecordRun, ID: c.id}
		wantRunNotFound(t, f.st.Runs().AddStep(ctx, c.org, c.id, &client.RunStep{Number: 1}), want)
		wantRunNotFound(t, f.st.Runs().PutBlock(ctx, c.org, c.id, 1, &client.RunBlock{}), want)
		_, err := f.st.Runs().StepsJSON(ctx, c.org, c.id)
		wantRunNotFound(t, err, want)
		_, err = f.st.Runs().Trace(ctx, c.org, c.id)
		wantRunNotFound(t, err, want)
	}
	noOrg := store.NotFoundError{Record: store.RecordOrganization, ID: "o_404"}
	wantRunNotFound(t, f.st.Runs().AddStep(ctx, "o_404", run.ID, &client.RunStep{Number: 1}), noOrg)
	_, err = f.st.Runs().StepsJSON(ctx, "o_404", run.ID)
	wantRunNotFound(t, err, noOrg)
}

// TestRunViews: views written with every write, none when they cannot be
// made or the store has no RunViews, the callback's error as it is, and
// every view made again when the Format changes (and only then).
func TestRunViews(t *testing.T) {
	f := newRunFixture(t)
	ctx := t.Context()
	view := func(st *pgstore.Store, id string) []byte {
		t.Helper()
		var v []byte
		err := st.Runs().View(ctx, f.org.ID, id, func(b []byte) error { v = bytes.Clone(b); return nil })
		if err != nil && !errors.Is(err, store.ErrNoRunView) {
			t.Fatal(err)
		}
		return v
	}
	rec := f.newRun(client.RunTypeTaskV1, nil)
	kept := f.newRun(client.RunTypeTaskV1, nil)
	if got := string(view(f.st, rec.ID)); got != rec.ID+": created, 0 files" {
		t.Errorf("view %q", got)
	}
	f.update(rec.ID, func(r *store.RunRecord) { r.Title = "no view" })
	if err := f.st.Runs().View(ctx, f.org.ID, rec.ID, func([]byte) error { t.Error("called"); return nil }); !errors.Is(err, store.ErrNoRunView) {
		t.Errorf("no view: %v", err)
	}
	f.update(rec.ID, func(r *store.RunRecord) { r.Title, r.Status = "", client.RunStatusQueued })
	if got := string(view(f.st, rec.ID)); got != rec.ID+": queued, 0 files" {
		t.Errorf("view %q", got)
	}
	mine := errors.New("mine")
	if err := f.st.Runs().View(ctx, f.org.ID, rec.ID, func([]byte) error { return mine }); err != mine {
		t.Errorf("the callback's error: %v", err)
	}
	other, _, _ := f.st.CreateOrganization(ctx, "other")
	for _, c := range []struct{ org, id string }{{f.org.ID, "tsk_1"}, {f.org.ID, ""}, {f.org.ID, "tsk\x00"}, {other.ID, rec.ID}} {
		err := f.st.Runs().View(ctx, c.org, c.id, func([]byte) error { t.Error("called"); return nil })
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordRun, ID: c.id})
	}
	wantRunNotFound(t, f.st.Runs().View(ctx, "o_missing", rec.ID, func([]byte) error { return nil }),
		store.NotFoundError{Record: store.RecordOrganization, ID: "o_missing"})

	// A daemon without views writes none and leaves the Format alone: a
	// daemon with the same Format opened next makes no view again.
	plain := f.open(nil, 44)
	if _, err := plain.Runs().Update(ctx, f.org.ID, rec.ID, func(r *store.RunRecord) error { r.Status = client.RunStatusRunning; return nil }); err != nil {
		t.Fatal(err)
	}
	if v := view(plain, rec.ID); v != nil {
		t.Errorf("a store without views wrote %q", v)
	}
	same := f.open(runViews{}, 45)
	if v := view(same, rec.ID); v != nil {
		t.Errorf("a view made again under the same Format: %q", v)
	}
	if got := string(view(same, kept.ID)); got != kept.ID+": created, 0 files" {
		t.Errorf("kept view %q", got)
	}
	// Another Format makes every view again, of every organization.
	f.org = other
	theirs := f.newRun(client.RunTypeTaskV1, nil)
	for n := range 3 {
		f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = fmt.Sprint(n) })
	}
	newer := f.open(runViews{format: " (v2)"}, 46)
	if got := string(view(newer, theirs.ID)); got != theirs.ID+": created, 0 files (v2)" {
		t.Errorf("remade view %q", got)
	}
	var missing int
	if err := newer.Pool().QueryRow(ctx, `SELECT count(*) FROM runs WHERE view IS NULL OR position('(v2)'::bytea IN view) = 0`).Scan(&missing); err != nil || missing != 0 {
		t.Errorf("%d views not remade (%v)", missing, err)
	}
	var format []byte
	if err := newer.Pool().QueryRow(ctx, `SELECT value FROM meta WHERE key = 'run_view_format'`).Scan(&format); err != nil || string(format) != "views  (v2)" {
		t.Errorf("format %q %v", format, err)
	}
}

// insertRuns writes n queued task runs tsk_1 ... tsk_<n> straight into
// the table, all created at one time, quicker than n creates.
func (f *runFixture) insertRuns(n int) {
	f.t.Helper()
	if _, err := f.st.Pool().Exec(f.t.Context(), `
		INSERT INTO runs (org_id, id, record, status, type, trigger, title, agent_id, created_at, search, pending)
		SELECT $1, 'tsk_' || i, convert_to('{"id":"tsk_' || i || '","status":"queued"}', 'UTF8'), 'queued', 'task_v1', '', '', '', now(), '{}', true
		FROM generate_series(1, $2::int) AS i`, f.org.ID, n); err != nil {
		f.t.Fatal(err)
	}
}

// TestRunViewsRemadeInBatches: more runs than one batch of the remaking
// all get their new view.
func TestRunViewsRemadeInBatches(t *testing.T) {
	f := newRunFixture(t)
	f.insertRuns(1200)
	newer := f.open(runViews{format: "!"}, 43)
	var remade int
	if err := newer.Pool().QueryRow(t.Context(), `SELECT count(*) FROM runs WHERE view = convert_to(id || ': queued, 0 files!', 'UTF8')`).Scan(&remade); err != nil || remade != 1200 {
		t.Errorf("%d views remade, want 1200 (%v)", remade, err)
	}
}

// TestRecordsMatchAcrossBatches: Records with a match reads as many
// batches as its page needs; runs created at one time are ordered by id,
// byte by byte, the highest first.
func TestRecordsMatchAcrossBatches(t *testing.T) {
	f := newRunFixture(t)
	f.insertRuns(700)
	var all []string
	for i := 1; i <= 700; i++ {
		all = append(all, fmt.Sprint("tsk_", i))
	}
	slices.Sort(all)
	slices.Reverse(all)
	var sevens []string
	for _, id := range all {
		if strings.HasSuffix(id, "7") {
			sevens = append(sevens, id)
		}
	}
	recs, err := f.st.Runs().Records(t.Context(), f.org.ID, store.RunQuery{Page: 3, PageSize: 20},
		func(r *store.RunRecord) bool { return strings.HasSuffix(r.ID, "7") })
	var got []string
	for _, r := range recs {
		got = append(got, r.ID)
	}
	if err != nil || !slices.Equal(got, sevens[40:60]) {
		t.Errorf("page 3 of the sevens: %v %v, want %v", got, err, sevens[40:60])
	}
	recs, err = f.st.Runs().Records(t.Context(), f.org.ID, store.RunQuery{PageSize: 1000},
		func(r *store.RunRecord) bool { return strings.HasSuffix(r.ID, "7") })
	if err != nil || len(recs) != len(sevens) {
		t.Errorf("all the sevens: %d %v, want %d", len(recs), err, len(sevens))
	}
	if got := f.ids(f.org.ID, store.RunQuery{Page: 2, PageSize: 3}, true); !slices.Equal(got, all[3:6]) {
		t.Errorf("page 2: %v, want %v", got, all[3:6])
	}
}

// TestFindFile: a run's file by its artifact id, in its organization only.
func TestFindFile(t *testing.T) {
	f := newRunFixture(t)
	ctx := t.Context()
	f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) { r.Title = `mentions a_7 in its title: "a_7"` })
	run := f.newRun(client.RunTypeTaskV1, func(r *store.RunRecord) {
		r.Files = []store.RunFile{{ID: "a_6", Name: "one.png"}, {ID: "a_7", Type: client.ArtifactDownload, Name: "report.csv"}}
	})
	runID, file, err := f.st.Runs().FindFile(ctx, f.org.ID, "a_7")
	if err != nil || runID != run.ID || file.Name != "report.csv" || file.Type != client.ArtifactDownload {
		t.Fatalf("find a_7: %s %+v %v", runID, file, err)
	}
	other, _, _ := f.st.CreateOrganization(ctx, "other")
	for _, c := range []struct{ org, id string }{{other.ID, "a_7"}, {f.org.ID, "a_8"}, {f.org.ID, ""}, {f.org.ID, "a\x00"}} {
		_, _, err := f.st.Runs().FindFile(ctx, c.org, c.id)
		wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordArtifact, ID: c.id})
	}
	_, _, err = f.st.Runs().FindFile(ctx, "o_404", "a_7")
	wantRunNotFound(t, err, store.NotFoundError{Record: store.RecordOrganization, ID: "o_404"})
}

// TestRunsCanceledContext: a canceled context fails with context.Canceled.
func TestRunsCanceledContext(t *testing.T) {
	f := newRunFixture(t)
	rec := f.newRun(client.RunTypeTaskV1, nil)
	cctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := f.st.Runs().List(cctx, f.org.ID, store.RunQuery{}); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v", err)
	}
	if _, err := f.st.Runs().Update(cctx, f.org.ID, rec.ID, func(*store.RunRecord) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Update: %v", err)
	}
	if _, err := f.st.Runs().Get(cctx, f.org.ID, rec.ID); !errors.Is(err, context.Canceled) {
		t.Errorf("Get: %v", err)
	}
}
