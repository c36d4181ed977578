package runner_test

// Several runners on one PostgreSQL database, as several daemons sharing
// it: each runner has its own store handle, notifier and owner; they share
// one scripted executor, so that a test sees every execution in one place.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/internal/pgtest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// cluster is one database and the daemons on it.
type cluster struct {
	t    *testing.T
	url  string
	exec *scripted.Executor
}

func newCluster(t *testing.T) *cluster {
	return &cluster{t: t, url: pgtest.Shared(t).NewDatabase(t), exec: &scripted.Executor{}}
}

// open opens a handle on the cluster's database, closed at the test's end.
func (c *cluster) open() *pgstore.Store {
	c.t.Helper()
	st, err := pgstore.Open(context.Background(), c.url, store.Options{})
	if err != nil {
		c.t.Fatal(err)
	}
	return st
}

// daemon returns a runner on its own handle (not started) with workers
// workers, a lease of lease (0: 10 s) and a short poll.
func (c *cluster) daemon(workers int, lease time.Duration) *env {
	c.t.Helper()
	return c.daemonOn(c.open(), workers, lease)
}

// daemonOn is daemon on a store handle of the caller's.
func (c *cluster) daemonOn(st store.Store, workers int, lease time.Duration) *env {
	c.t.Helper()
	e := newEnvOn(c.t, st, workers)
	e.exec = c.exec
	e.cfg.Executor = c.exec
	if lease == 0 {
		lease = 10 * time.Second
	}
	e.cfg.Lease, e.cfg.Poll = lease, 20*time.Millisecond
	c.t.Cleanup(c.exec.ReleaseAll) // before the runner stops
	return e
}

func (c *cluster) blocked(gate string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), deadline)
	defer cancel()
	if err := c.exec.WaitBlocked(ctx, gate); err != nil {
		c.t.Fatalf("waiting for a run at gate %s: %v", gate, err)
	}
}

// owners returns the owners holding runs, and how many runs each holds.
func owners(t *testing.T, st *pgstore.Store) map[string]int {
	t.Helper()
	rows, err := st.Pool().Query(t.Context(), `SELECT owner, count(*) FROM runs WHERE owner IS NOT NULL GROUP BY owner`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var o string
		var n int
		if err := rows.Scan(&o, &n); err != nil {
			t.Fatal(err)
		}
		out[o] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// allReleased waits until no run is held.
func allReleased(t *testing.T, st *pgstore.Store) {
	t.Helper()
	until(t, "every run to be released", func() bool { return len(owners(t, st)) == 0 })
}

// TestSharedStoreRunsEachRunOnce: three daemons take runs from one queue.
// With one worker each and three runs that block, each daemon holds one;
// sixty runs submitted through all three then execute once each, each
// with one webhook, and every run is released at its end.
func TestSharedStoreRunsEachRunOnce(t *testing.T) {
	c := newCluster(t)
	ds := []*env{c.daemon(1, 0), c.daemon(1, 0), c.daemon(1, 0)}
	for _, d := range ds {
		d.start()
	}
	org := ds[0].org("a")
	st := ds[0].st.(*pgstore.Store)

	var blocking []string
	for i := range 3 {
		blocking = append(blocking, ds[i].submit(org, fmt.Sprintf("block=g%d", i)))
	}
	for i := range 3 {
		c.blocked(fmt.Sprintf("g%d", i))
	}
	held := owners(t, st)
	want := []string{ds[0].r.Owner(), ds[1].r.Owner(), ds[2].r.Owner()}
	if got := slices.Sorted(maps.Keys(held)); !slices.Equal(got, slices.Sorted(slices.Values(want))) || len(slices.Compact(slices.Clone(got))) != 3 {
		t.Fatalf("owners of the three blocking runs: %v, want one run each for %v", held, want)
	}
	for i := range 3 {
		c.exec.Release(fmt.Sprintf("g%d", i))
	}

	ids := slices.Clone(blocking)
	for i := range 60 {
		ids = append(ids, ds[i%3].submit(org, "steps=1"))
	}
	for _, id := range ids {
		if rec := ds[0].ended(org, id); rec.Status != client.RunStatusCompleted {
			t.Errorf("run %s ended %s (%s)", id, rec.Status, rec.FailureReason)
		}
	}
	executed := map[string]int{}
	for _, id := range c.exec.Order() {
		executed[id]++
	}
	for _, id := range ids {
		var hooks []client.RunStatus
		for _, d := range ds {
			hooks = append(hooks, d.notes.sent(id)...)
		}
		if executed[id] != 1 || !slices.Equal(hooks, []client.RunStatus{client.RunStatusCompleted}) {
			t.Errorf("run %s executed %d times, webhooks %v; want once, one completed", id, executed[id], hooks)
		}
	}
	if len(executed) != len(ids) {
		t.Errorf("%d runs executed, want %d", len(executed), len(ids))
	}
	allReleased(t, st)
}

// TestSharedStoreCancelReachesTheHolder: a cancel asked through a daemon
// that does not execute the run reaches the daemon that does, which ends
// it canceled and sends its one webhook; a queued run nobody holds is
// canceled at once by the daemon asked; another organization's run is not
// found.
func TestSharedStoreCancelReachesTheHolder(t *testing.T) {
	c := newCluster(t)
	b := c.daemon(1, 0)
	b.start()
	org, other := b.org("a"), b.org("b")
	id := b.submit(org, "block")
	c.blocked(id)
	a := c.daemon(1, 0)
	a.start()

	if _, err := a.r.Cancel(t.Context(), other, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancel through another organization: %v, want not found", err)
	}
	rec, err := a.r.Cancel(t.Context(), org, id)
	if err != nil || !rec.CancelRequested {
		t.Fatalf("cancel through the other daemon: %+v, %v; want the request recorded", rec, err)
	}
	if rec := b.ended(org, id); rec.Status != client.RunStatusCanceled {
		t.Errorf("run canceled through another daemon ended %s (%s)", rec.Status, rec.FailureReason)
	}
	if got, none := b.notes.sent(id), a.notes.sent(id); !slices.Equal(got, []client.RunStatus{client.RunStatusCanceled}) || len(none) != 0 {
		t.Errorf("webhooks: holder %v, other %v; want one canceled, from the holder", got, none)
	}

	// Both workers busy: nobody can claim the next run.
	busy1, busy2 := b.submit(org, "block=x1"), b.submit(org, "block=x2")
	c.blocked("x1")
	c.blocked("x2")
	queued := b.create(org, "steps=1")
	rec, err = a.r.Cancel(t.Context(), org, queued)
	if err != nil || rec.Status != client.RunStatusCanceled {
		t.Fatalf("cancel of a queued run nobody holds: %+v, %v; want canceled at once", rec, err)
	}
	a.ended(org, queued)
	if got := a.notes.sent(queued); !slices.Equal(got, []client.RunStatus{client.RunStatusCanceled}) {
		t.Errorf("webhooks of the queued run: %v", got)
	}
	c.exec.Release("x1")
	c.exec.Release("x2")
	b.ended(org, busy1)
	b.ended(org, busy2)
	if slices.Contains(c.exec.Order(), queued) {
		t.Error("the canceled queued run executed")
	}
	allReleased(t, b.st.(*pgstore.Store))
}

// TestSharedStoreTakesOverLapsedRuns: the unfinished runs of a daemon
// whose leases lapsed are taken over by another: the one it was
// executing ends failed, saying why; the one it had claimed but not
// started executes; the one that ended without its webhook sends it. A
// run whose lease is alive is left to its daemon.
func TestSharedStoreTakesOverLapsedRuns(t *testing.T) {
	c := newCluster(t)
	dead := c.open()
	t.Cleanup(func() { dead.Close() })
	b := c.daemon(1, 0)
	org := b.org("a")
	running, queued, ended, alive := b.create(org, "steps=1"), b.create(org, "steps=1"), b.create(org, "steps=1"), b.create(org, "steps=1")
	for range 3 {
		if _, ok, err := dead.Claim(t.Context(), "dead", time.Hour); err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
	}
	if _, ok, err := dead.Claim(t.Context(), "alive", time.Hour); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	set := func(id string, status client.RunStatus) {
		if _, err := dead.Runs().Update(t.Context(), org, id, func(rec *store.RunRecord) error {
			rec.Status = status
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	set(running, client.RunStatusRunning)
	// Ended, its webhook not sent: pending still.
	if _, err := dead.Runs().Update(t.Context(), org, ended, func(rec *store.RunRecord) error {
		rec.Status, rec.WebhookURL = client.RunStatusCompleted, "http://127.0.0.1:1/hook"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	set(alive, client.RunStatusRunning)
	if _, err := dead.Pool().Exec(t.Context(), `UPDATE runs SET lease_until = now() - interval '1 minute' WHERE owner = 'dead'`); err != nil {
		t.Fatal(err)
	}

	b.start()
	if rec := b.ended(org, running); rec.Status != client.RunStatusFailed || !strings.Contains(rec.FailureReason, "no longer renewed its lease") {
		t.Errorf("the run it was executing: %s %q", rec.Status, rec.FailureReason)
	}
	if rec := b.ended(org, queued); rec.Status != client.RunStatusCompleted || !slices.Equal(c.exec.Order(), []string{queued}) {
		t.Errorf("the run it had claimed: %s %q, executions %v", rec.Status, rec.FailureReason, c.exec.Order())
	}
	if rec := b.ended(org, ended); rec.Status != client.RunStatusCompleted || !slices.Equal(b.notes.sent(ended), []client.RunStatus{client.RunStatusCompleted}) {
		t.Errorf("the run that ended without its webhook: %s, webhooks %v", rec.Status, b.notes.sent(ended))
	}
	st := b.st.(*pgstore.Store)
	until(t, "the taken-over runs to be released", func() bool {
		h := owners(t, st)
		return len(h) == 1 && h["alive"] == 1
	})
	if rec := b.get(org, alive); rec.Status != client.RunStatusRunning {
		t.Errorf("the run whose lease is alive: %s", rec.Status)
	}
}

// TestSharedStoreRenewsLeases: a daemon executing a run renews its lease
// on it, so that another daemon does not take it over.
func TestSharedStoreRenewsLeases(t *testing.T) {
	c := newCluster(t)
	b := c.daemon(1, 3*time.Second)
	b.start()
	org := b.org("a")
	id := b.submit(org, "block")
	c.blocked(id)
	st := b.st.(*pgstore.Store)
	leaseEnd := func() time.Time {
		var at time.Time
		if err := st.Pool().QueryRow(t.Context(), `SELECT lease_until FROM runs WHERE id = $1`, id).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	first := leaseEnd()
	until(t, "the lease to be renewed", func() bool { return leaseEnd().After(first) })
	c.exec.Release(id)
	if rec := b.ended(org, id); rec.Status != client.RunStatusCompleted {
		t.Errorf("run ended %s (%s)", rec.Status, rec.FailureReason)
	}
	allReleased(t, st)
}

// TestSharedStoreAnswerReachesTheHolder: a person's answer given through a
// daemon that does not execute the paused run reaches the one that does,
// whose block gets it.
func TestSharedStoreAnswerReachesTheHolder(t *testing.T) {
	c := newCluster(t)
	b := c.daemon(1, 0)
	var executed sync.Map
	b.cfg.Executor = humanExecutor(b, &executed)
	b.start()
	org := b.org("a")
	id := b.humanRun(org, 3600)
	b.r.Submit(org, id)
	b.paused(org, id)
	a := c.daemon(1, 0)
	a.start()

	got, err := a.r.Answer(t.Context(), org, id, false, "wrong amount")
	if err != nil || got.State != client.HumanRejected || got.Comment == nil || *got.Comment != "wrong amount" {
		t.Fatalf("answer through the other daemon: %+v, %v", got, err)
	}
	rec := b.ended(org, id)
	if rec.Status != client.RunStatusFailed || rec.FailureReason != "rejected: wrong amount" || rec.Human.State != client.HumanRejected {
		t.Errorf("run answered through another daemon: %s %q %+v", rec.Status, rec.FailureReason, rec.Human)
	}
	var nw *runner.NotWaitingError
	if _, err := a.r.Answer(t.Context(), org, id, true, ""); !errors.As(err, &nw) || nw.Status != client.RunStatusFailed {
		t.Errorf("answering an ended run through the other daemon: %v", err)
	}
}

// failingRenewals is a shared store whose Renew fails once fail is set, as
// when the database cannot be reached.
type failingRenewals struct {
	*pgstore.Store
	fail sync.Map // "fail" -> true
}

func (f *failingRenewals) Renew(ctx context.Context, owner string, lease time.Duration) ([]store.RunRef, error) {
	if _, ok := f.fail.Load("fail"); ok {
		return nil, errors.New("connection refused")
	}
	return f.Store.Renew(ctx, owner, lease)
}

// TestSharedStoreStopsRunsWhoseLeaseLapsed: a daemon that cannot renew its
// leases for longer than a lease stops its executing runs, which end
// failed, saying why: another daemon may take them over by then.
func TestSharedStoreStopsRunsWhoseLeaseLapsed(t *testing.T) {
	c := newCluster(t)
	st := &failingRenewals{Store: c.open()}
	e := c.daemonOn(st, 1, 600*time.Millisecond)
	e.start()
	org := e.org("a")
	id := e.submit(org, "block")
	c.blocked(id)
	st.fail.Store("fail", true)
	rec := e.ended(org, id)
	if rec.Status != client.RunStatusFailed || !strings.Contains(rec.FailureReason, "could not reach its database to renew its lease") {
		t.Errorf("run of a daemon that lost its lease: %s %q", rec.Status, rec.FailureReason)
	}
}

// TestSharedStoreStalledDaemonYields: a daemon that was stalled past its
// lease, whose run another daemon took over and ended meanwhile, stops
// the run at its next renewal, and leaves the other daemon's end as it
// is, sending no webhook of its own.
func TestSharedStoreStalledDaemonYields(t *testing.T) {
	c := newCluster(t)
	b := c.daemon(1, 900*time.Millisecond)
	b.start()
	org := b.org("a")
	id := b.submit(org, "block")
	c.blocked(id)
	// What a daemon taking the run over does, while b is stalled: it
	// holds the run and ends it.
	st := b.st.(*pgstore.Store)
	if _, err := st.Pool().Exec(t.Context(), `UPDATE runs SET owner = 'other', lease_until = now() + interval '1 hour' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	const reason = "ended by the daemon that took it over"
	if _, err := st.Runs().Update(t.Context(), org, id, func(rec *store.RunRecord) error {
		rec.Status, rec.FailureReason = client.RunStatusFailed, reason
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	until(t, "the stalled daemon to stop the run", func() bool {
		return c.exec.Running() == 0
	})
	b.r.Stop() // every webhook it would send is sent by now
	if rec := b.get(org, id); rec.Status != client.RunStatusFailed || rec.FailureReason != reason {
		t.Errorf("the run after the stalled daemon stopped it: %s %q; want the other daemon's end", rec.Status, rec.FailureReason)
	}
	if got := b.notes.sent(id); len(got) != 0 {
		t.Errorf("the stalled daemon sent webhooks %v", got)
	}
}
