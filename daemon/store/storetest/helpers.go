package storetest

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
	"github.com/abctl/abctl/daemon/definition"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

var ctx = context.Background()

// testClock starts at a fixed time and moves 1ms forward at every reading,
// so that every transaction of a test has its own timestamp.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock {
	return &testClock{t: time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// fixture is a store with one organization, its clock and id generator.
type fixture struct {
	Backend
	t     *testing.T
	o     opener
	clock *testClock
	gen   *ids.Generator // the store's
	org   store.Organization
	key   string
	views TestViews // the views the store was last opened with
}

// newFixture opens a fresh store with one organization. Its runs have
// views (TestViews).
func newFixture(t *testing.T, o opener) *fixture {
	t.Helper()
	clock := newClock()
	gen := ids.NewWithClock(42, clock.Now)
	f := &fixture{t: t, o: o, clock: clock, gen: gen}
	f.Backend = o.open(t, store.Options{Now: clock.Now, IDs: gen, RunViews: TestViews{}})
	var err error
	f.org, f.key, err = f.CreateOrganization(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// reopen closes the store and opens the same database again, with the
// fixture's clock and views and another id worker.
func (f *fixture) reopen() {
	f.t.Helper()
	f.gen = ids.NewWithClock(43, f.clock.Now)
	f.reopenWith(store.Options{Now: f.clock.Now, IDs: f.gen, RunViews: TestViews{}})
}

// reopenWith closes the store and opens the same database again with opts.
func (f *fixture) reopenWith(opts store.Options) {
	f.t.Helper()
	f.Backend = f.o.reopen(f.t, f.Backend, opts)
}

func (f *fixture) newOrg(name string) store.Organization {
	f.t.Helper()
	org, _, err := f.CreateOrganization(ctx, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return org
}

// WorkflowParam is a string parameter of type workflow, as agent
// definitions declare one; def is its default (nil: none).
func WorkflowParam(key, description string, def any) client.Parameter {
	p := client.Parameter{ParameterType: client.ParameterTypeWorkflow, Key: key, Description: description,
		WorkflowParameterType: client.WorkflowParameterString}
	if def != nil {
		p.DefaultValue, _ = json.Marshal(def)
	}
	return p
}

// AgentDef is a definition as the API decodes it; version turns it into
// what the API hands to the store.
func AgentDef(title string, params ...client.Parameter) *client.Agent {
	return &client.Agent{
		Title:  title,
		Status: client.AgentStatusPublished,
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: params,
			Blocks: client.Blocks{&client.NavigationBlock{
				BlockBase:      client.BlockBase{Label: "open"},
				NavigationGoal: "Open the page and log in",
				URL:            "{{url}}",
			}},
		},
		RunWith: "agent",
	}
}

// version returns a copy of def made into a new version as the API makes
// it before storing it (package definition): a workflow_id, created_at
// and the definition in the response shape.
func (f *fixture) version(def *client.Agent) *client.Agent {
	f.t.Helper()
	data, err := json.Marshal(def) // a deep copy: NewVersion changes the definition
	if err != nil {
		f.t.Fatal(err)
	}
	a := new(client.Agent)
	if err := json.Unmarshal(data, a); err != nil {
		f.t.Fatal(err)
	}
	definition.NewVersion(a, f.gen, client.NewTime(f.clock.Now()))
	return a
}

// create stores def as a new agent, as the API does.
func (f *fixture) create(orgID string, def *client.Agent) *client.Agent {
	f.t.Helper()
	a, created, err := f.Agents().Create(ctx, orgID, f.version(def), "")
	if err != nil || !created {
		f.t.Fatalf("Agents.Create: %v, created=%v", err, created)
	}
	return a
}

// update stores def as a new version of the agent, as the API does.
func (f *fixture) update(orgID, wpid string, def *client.Agent) *client.Agent {
	f.t.Helper()
	a, err := f.Agents().Update(ctx, orgID, wpid, f.version(def))
	if err != nil {
		f.t.Fatalf("Agents.Update: %v", err)
	}
	return a
}

func (f *fixture) folder(orgID, title string) *client.Folder {
	f.t.Helper()
	fl, err := f.Folders().Create(ctx, orgID, title, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return fl
}

func (f *fixture) list(orgID string, q store.AgentQuery) []string {
	f.t.Helper()
	as, err := f.Agents().List(ctx, orgID, q)
	if err != nil {
		f.t.Fatalf("Agents.List: %v", err)
	}
	return wpids(as)
}

func (f *fixture) count(orgID, folderID string) int {
	f.t.Helper()
	fl, err := f.Folders().Get(ctx, orgID, folderID)
	if err != nil {
		f.t.Fatalf("Folders.Get: %v", err)
	}
	return fl.WorkflowCount
}

func wpids(as []*client.Agent) []string {
	out := []string{}
	for _, a := range as {
		out = append(out, a.WorkflowPermanentID)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantErr(t *testing.T, err, kind error, contains string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want %v", err, kind)
	}
	if !strings.Contains(err.Error(), contains) {
		t.Fatalf("error %q does not contain %q", err, contains)
	}
}

func ptr[T any](v T) *T { return &v }

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestViews stands for the daemon's run views (package daemon/runview,
// which imports the store): a view names the run's id, status and number
// of files, so that it changes with the record; a run titled noViewTitle
// has none. Its Format is its format field. A view names the format too
// when it is not "", and ends with mark, which is not part of the Format:
// views of the same Format that make other views.
type TestViews struct{ format, mark string }

const noViewTitle = "no view"

func (v TestViews) Format() ([]byte, error) { return []byte("test views " + v.format), nil }

func (v TestViews) Encode(rec *store.RunRecord) ([]byte, error) {
	if rec.Title == noViewTitle {
		return nil, errors.New("no view of this run")
	}
	view := fmt.Appendf(nil, "view of %s: %s, %d files", rec.ID, rec.Status, len(rec.Files))
	if v.format != "" {
		view = fmt.Appendf(view, " (format %s)", v.format)
	}
	return append(view, v.mark...), nil
}

// wantNotFound checks that err is a NotFoundError of record r and id.
func wantNotFound(t *testing.T, what string, err error, r store.Record, id string) {
	t.Helper()
	var nf *store.NotFoundError
	if !errors.As(err, &nf) || nf.Record != r || nf.ID != id || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: %v, want %s %q not found", what, err, r, id)
	}
}

// wantNotFoundError checks that err is the NotFoundError want, every
// field of it.
func wantNotFoundError(t *testing.T, what string, err error, want store.NotFoundError) {
	t.Helper()
	var nf *store.NotFoundError
	if !errors.As(err, &nf) || *nf != want || !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: %v, want %+v", what, err, want)
	}
}

// secretOpts are options with a secret, for the tests of sealed values.
func secretOpts(clock *testClock, b byte) store.Options {
	return store.Options{Now: clock.Now, IDs: ids.NewWithClock(1, clock.Now), Secret: bytes.Repeat([]byte{b}, store.SecretSize)}
}
