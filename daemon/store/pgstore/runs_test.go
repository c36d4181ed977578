package pgstore_test

import (
	"bytes"
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
	var format []byte
	if err := newer.Pool().QueryRow(t.Context(), `SELECT value FROM meta WHERE key = 'run_view_format'`).Scan(&format); err != nil || string(format) != "views !" {
		t.Errorf("format %q %v", format, err)
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
