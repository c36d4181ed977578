package pgstore_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
)

// queueOrg creates an organization with n runs in status, oldest first.
func queueOrg(t *testing.T, st *pgstore.Store, name string, n int, status client.RunStatus) (string, []string) {
	t.Helper()
	org, _, err := st.CreateOrganization(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return org.ID, addRuns(t, st, org.ID, n, status)
}

// addRuns creates n runs of the organization in status (created or
// queued), oldest first.
func addRuns(t *testing.T, st *pgstore.Store, orgID string, n int, status client.RunStatus) []string {
	t.Helper()
	var ids []string
	for range n {
		rec := &store.RunRecord{ID: st.Runs().NewID(client.RunTypeTaskV1), OrgID: orgID, Type: client.RunTypeTaskV1, Status: status}
		if err := st.Runs().Create(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	return ids
}

// setStatus moves a run to status.
func setStatus(t *testing.T, st *pgstore.Store, ref store.RunRef, status client.RunStatus) {
	t.Helper()
	_, err := st.Runs().Update(t.Context(), ref.OrgID, ref.RunID, func(rec *store.RunRecord) error {
		rec.Status = status
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// claimAll claims runs for owner until none is claimable.
func claimAll(t *testing.T, q store.Queue, owner string, lease time.Duration) []store.RunRef {
	t.Helper()
	var refs []store.RunRef
	for {
		ref, ok, err := q.Claim(t.Context(), owner, lease)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return refs
		}
		refs = append(refs, ref)
	}
}

// TestQueueClaimsEachRunOnceAndFairly: three daemons on one database
// claiming 300 queued runs of three organizations at the same time take
// each run once, and the organizations take turns: the one with a single
// run, queued last, gets it among the first claims, and the two others
// alternate while both have runs.
func TestQueueClaimsEachRunOnceAndFairly(t *testing.T) {
	url := newDatabase(t)
	daemons := []*pgstore.Store{open(t, url, store.Options{}), open(t, url, store.Options{}), open(t, url, store.Options{})}
	big, bigRuns := queueOrg(t, daemons[0], "big", 200, client.RunStatusQueued)
	mid, midRuns := queueOrg(t, daemons[0], "mid", 99, client.RunStatusQueued)
	small, smallRuns := queueOrg(t, daemons[0], "small", 1, client.RunStatusQueued)

	var mu sync.Mutex
	var order []store.RunRef
	claimedBy := map[store.RunRef][]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for d, st := range daemons {
		for w := range 4 {
			owner := fmt.Sprintf("daemon-%d", d)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					ref, ok, err := st.Claim(t.Context(), owner, time.Hour)
					if err != nil {
						errs <- fmt.Errorf("worker %d of %s: %w", w, owner, err)
						return
					}
					if !ok {
						return
					}
					mu.Lock()
					order = append(order, ref)
					claimedBy[ref] = append(claimedBy[ref], owner)
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	if len(order) != 300 || len(claimedBy) != 300 {
		t.Fatalf("%d claims of %d runs, want 300 of 300", len(order), len(claimedBy))
	}
	for org, ids := range map[string][]string{big: bigRuns, mid: midRuns, small: smallRuns} {
		for _, id := range ids {
			if owners := claimedBy[store.RunRef{OrgID: org, RunID: id}]; len(owners) != 1 {
				t.Errorf("run %s claimed by %v, want once", id, owners)
			}
		}
	}
	// The order of the claims is the order their transactions began, which
	// the leases tell (now() + the same lease), rather than the order the
	// goroutines got to append them, which the scheduler decides. Each run
	// is held by the daemon whose claim returned it.
	rows, err := daemons[0].Pool().Query(t.Context(), `SELECT org_id, id, owner FROM runs ORDER BY lease_until, snowflake`)
	if err != nil {
		t.Fatal(err)
	}
	order = order[:0]
	for rows.Next() {
		var ref store.RunRef
		var owner string
		if err := rows.Scan(&ref.OrgID, &ref.RunID, &owner); err != nil {
			t.Fatal(err)
		}
		if owners := claimedBy[ref]; len(owners) != 1 || owners[0] != owner {
			t.Errorf("run %s is held by %s, claimed by %v", ref.RunID, owner, owners)
		}
		order = append(order, ref)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// Twelve claims run at a time, and once the two big organizations hold
	// a run each the small one holds the fewest: its run is among the
	// first claims (first in, first out, it would be the last).
	i := slices.Index(order, store.RunRef{OrgID: small, RunID: smallRuns[0]})
	if i < 0 || i >= 24 {
		t.Errorf("the single run of an organization was claim %d of 300, want among the first 24", i+1)
	}
	var nBig, nMid int
	for _, ref := range order[:100] {
		switch ref.OrgID {
		case big:
			nBig++
		case mid:
			nMid++
		}
	}
	if nBig < 40 || nMid < 40 {
		t.Errorf("of the first 100 claims, %d are of the organization with 200 runs and %d of the one with 99: they do not take turns", nBig, nMid)
	}
	// Within an organization, first in, first out, give or take the claims
	// running at the same time: the last claims are the big organization's
	// newest runs.
	last := order[len(order)-1]
	if last.OrgID != big || !slices.Contains(bigRuns[len(bigRuns)-24:], last.RunID) {
		t.Errorf("the last claim is %v, want one of the big organization's newest runs", last)
	}
}

// TestQueueClaimOrder: with one claimer the order is exact: the
// organization with the fewest held runs first, its oldest run first, and
// among organizations holding as many, the one with the oldest run.
func TestQueueClaimOrder(t *testing.T) {
	st := open(t, newDatabase(t), store.Options{})
	a, aRuns := queueOrg(t, st, "a", 3, client.RunStatusQueued)
	b, bRuns := queueOrg(t, st, "b", 2, client.RunStatusQueued)
	got := claimAll(t, st, "d", time.Hour)
	want := []store.RunRef{rr(a, aRuns[0]), rr(b, bRuns[0]), rr(a, aRuns[1]), rr(b, bRuns[1]), rr(a, aRuns[2])}
	if !slices.Equal(got, want) {
		t.Errorf("claims %v, want %v", got, want)
	}
	// b now holds one run fewer than a: b's new run comes before a's.
	if err := st.Release(t.Context(), "d", store.RunRef{OrgID: b, RunID: bRuns[0]}); err != nil {
		t.Fatal(err)
	}
	setStatus(t, st, store.RunRef{OrgID: b, RunID: bRuns[0]}, client.RunStatusCompleted)
	newA := addRuns(t, st, a, 1, client.RunStatusQueued)
	newB := addRuns(t, st, b, 1, client.RunStatusQueued)
	got = claimAll(t, st, "d", time.Hour)
	want = []store.RunRef{rr(b, newB[0]), rr(a, newA[0])}
	if !slices.Equal(got, want) {
		t.Errorf("claims %v, want %v", got, want)
	}
}

// TestQueueClaimsOnlyQueuedRuns: a canceled, completed, created or running
// run is never claimed, nor a queued run another daemon holds.
func TestQueueClaimsOnlyQueuedRuns(t *testing.T) {
	url := newDatabase(t)
	st, other := open(t, url, store.Options{}), open(t, url, store.Options{})
	org, runs := queueOrg(t, st, "o", 5, client.RunStatusQueued)
	created := addRuns(t, st, org, 1, client.RunStatusCreated)
	setStatus(t, st, store.RunRef{OrgID: org, RunID: runs[0]}, client.RunStatusCanceled)
	setStatus(t, st, store.RunRef{OrgID: org, RunID: runs[1]}, client.RunStatusCompleted)
	setStatus(t, st, store.RunRef{OrgID: org, RunID: runs[2]}, client.RunStatusRunning)
	held, ok, err := other.Claim(t.Context(), "other", time.Hour)
	if err != nil || !ok || held.RunID != runs[3] {
		t.Fatalf("the other daemon claimed %v, %v, %v; want %s", held, ok, err, runs[3])
	}
	got := claimAll(t, st, "d", time.Hour)
	if want := []store.RunRef{rr(org, runs[4])}; !slices.Equal(got, want) {
		t.Errorf("claims %v, want %v (not the canceled, completed, running, held or created %s)", got, want, created[0])
	}
}

// TestQueueClaimRun: ClaimRun takes a queued or created run nobody holds,
// or whose lease lapsed; not a run another daemon holds, not a run in
// another status, not another organization's run, nor one that does not
// exist.
func TestQueueClaimRun(t *testing.T) {
	url := newDatabase(t)
	st, other := open(t, url, store.Options{}), open(t, url, store.Options{})
	org, runs := queueOrg(t, st, "o", 4, client.RunStatusQueued)
	created := addRuns(t, st, org, 1, client.RunStatusCreated)
	stranger, _ := queueOrg(t, st, "stranger", 0, client.RunStatusQueued)
	setStatus(t, st, rr(org, runs[3]), client.RunStatusRunning)

	held, ok, err := other.Claim(t.Context(), "other", time.Hour)
	if err != nil || !ok || held != rr(org, runs[0]) {
		t.Fatalf("the other daemon claimed %v, %v, %v; want %s", held, ok, err, runs[0])
	}
	claim := func(ref store.RunRef) bool {
		t.Helper()
		ok, err := st.ClaimRun(t.Context(), "d", ref, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, c := range []struct {
		what string
		ref  store.RunRef
		want bool
	}{
		{"a run another daemon holds", rr(org, runs[0]), false},
		{"a queued run nobody holds", rr(org, runs[1]), true},
		{"a run it holds already", rr(org, runs[1]), false},
		{"a created run", rr(org, created[0]), true},
		{"a running run", rr(org, runs[3]), false},
		{"another organization's run", rr(stranger, runs[2]), false},
		{"no such run", rr(org, "tsk_404"), false},
		{"an id that cannot exist", rr(org, "x\x00"), false},
	} {
		if got := claim(c.ref); got != c.want {
			t.Errorf("ClaimRun of %s: %v, want %v", c.what, got, c.want)
		}
	}
	if got := claimAll(t, other, "other", time.Hour); !slices.Equal(got, []store.RunRef{rr(org, runs[2])}) {
		t.Errorf("claimable after ClaimRun: %v, want only %s", got, runs[2])
	}
	// A lapsed lease is claimable again.
	if ok, err := other.ClaimRun(t.Context(), "other", rr(org, runs[1]), time.Hour); err != nil || ok {
		t.Fatalf("ClaimRun of a held run: %v, %v", ok, err)
	}
	if _, err := st.Pool().Exec(t.Context(), `UPDATE runs SET lease_until = now() - interval '1 second' WHERE owner = 'd'`); err != nil {
		t.Fatal(err)
	}
	if ok, err := other.ClaimRun(t.Context(), "other", rr(org, runs[1]), time.Hour); err != nil || !ok {
		t.Fatalf("ClaimRun of a run whose lease lapsed: %v, %v; want true", ok, err)
	}
	if _, err := st.ClaimRun(t.Context(), "", rr(org, runs[1]), time.Hour); err == nil {
		t.Error("ClaimRun without an owner succeeded")
	}
}

// TestQueueRenewAndRelease: Renew extends every lease of its owner and
// only those; Release lets a run go, which can then be claimed again, and
// does nothing to a run its caller does not hold.
func TestQueueRenewAndRelease(t *testing.T) {
	url := newDatabase(t)
	st, other := open(t, url, store.Options{}), open(t, url, store.Options{})
	org, runs := queueOrg(t, st, "o", 3, client.RunStatusQueued)
	claimed := claimAll(t, st, "d", time.Hour)
	if want := []store.RunRef{rr(org, runs[0]), rr(org, runs[1]), rr(org, runs[2])}; !slices.Equal(claimed, want) {
		t.Fatalf("claims %v, want %v", claimed, want)
	}
	// Give the third back, for the other daemon.
	mine, third := claimed[:2], claimed[2]
	if err := st.Release(t.Context(), "d", third); err != nil {
		t.Fatal(err)
	}
	if ref, ok, err := other.Claim(t.Context(), "other", time.Hour); err != nil || !ok || ref != third {
		t.Fatalf("claim after release: %v, %v, %v; want %v", ref, ok, err, third)
	}

	held, err := st.Renew(t.Context(), "d", 2*time.Hour)
	if err != nil || !slices.Equal(held, mine) {
		t.Fatalf("Renew: %v, %v; want %v", held, err, mine)
	}
	var renewed int
	if err := st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM runs
		WHERE owner = 'd' AND lease_until > now() + interval '90 minutes'`).Scan(&renewed); err != nil {
		t.Fatal(err)
	}
	if renewed != 2 {
		t.Errorf("%d leases extended to 2 hours, want 2", renewed)
	}

	// Releasing a run another daemon holds does nothing.
	if err := other.Release(t.Context(), "other", mine[0]); err != nil {
		t.Fatal(err)
	}
	if held, err := st.Renew(t.Context(), "d", time.Hour); err != nil || len(held) != 2 {
		t.Fatalf("Renew after another's release: %d, %v; want 2", len(held), err)
	}
	if err := st.Release(t.Context(), "d", mine[0]); err != nil {
		t.Fatal(err)
	}
	if held, err := st.Renew(t.Context(), "d", time.Hour); err != nil || len(held) != 1 {
		t.Fatalf("Renew after a release: %d, %v; want 1", len(held), err)
	}
	if held, err := st.Renew(t.Context(), "nobody", time.Hour); err != nil || len(held) != 0 {
		t.Fatalf("Renew of an owner holding nothing: %d, %v; want 0", len(held), err)
	}
	// A released run that is no longer queued is not claimable.
	setStatus(t, st, mine[1], client.RunStatusCompleted)
	if err := st.Release(t.Context(), "d", mine[1]); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, st, "d", time.Hour); !slices.Equal(got, []store.RunRef{mine[0]}) {
		t.Errorf("claimable after releases: %v, want %v", got, mine[:1])
	}

	for _, bad := range []func() error{
		func() error { _, _, err := st.Claim(t.Context(), "", time.Hour); return err },
		func() error { _, err := st.Renew(t.Context(), "d", 0); return err },
		func() error { _, err := st.TakeOver(t.Context(), "d", -time.Second); return err },
		func() error { return st.Release(t.Context(), "", mine[0]) },
	} {
		if err := bad(); err == nil {
			t.Error("a queue call without an owner or a lease succeeded")
		}
	}
}

// TestQueueTakeOver: once a daemon's leases lapse, daemons taking over at
// the same time take each of its unfinished runs once, and none whose
// lease is alive nor any finished one.
func TestQueueTakeOver(t *testing.T) {
	url := newDatabase(t)
	dead, alive := open(t, url, store.Options{}), open(t, url, store.Options{})
	takers := []*pgstore.Store{open(t, url, store.Options{}), open(t, url, store.Options{}), open(t, url, store.Options{})}
	queueOrg(t, dead, "o", 25, client.RunStatusQueued)

	var aliveRuns []store.RunRef
	for range 5 {
		ref, ok, err := alive.Claim(t.Context(), "alive", time.Hour)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		aliveRuns = append(aliveRuns, ref)
	}
	deadRuns := claimAll(t, dead, "dead", time.Hour)
	if len(deadRuns) != 20 {
		t.Fatalf("the dying daemon claimed %d runs, want 20", len(deadRuns))
	}
	// It started some, and finished one (no webhook: not pending).
	for _, ref := range deadRuns[:5] {
		setStatus(t, dead, ref, client.RunStatusRunning)
	}
	setStatus(t, dead, deadRuns[5], client.RunStatusCompleted)
	unfinished := slices.Concat(deadRuns[:5], deadRuns[6:])

	// While its leases hold, nothing is taken over.
	if refs, err := takers[0].TakeOver(t.Context(), "early", time.Hour); err != nil || len(refs) != 0 {
		t.Fatalf("TakeOver while the leases hold: %v, %v", refs, err)
	}

	// It dies: its leases lapse, by the database's clock (moved here, not
	// waited for, so that a slow machine cannot lapse them before the
	// check above).
	if _, err := dead.Pool().Exec(t.Context(), `UPDATE runs SET lease_until = now() - interval '1 second' WHERE owner = 'dead'`); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	takenBy := map[store.RunRef][]string{}
	var wg sync.WaitGroup
	errs := make(chan error, len(takers)*2)
	for i, st := range takers {
		for w := range 2 {
			owner := fmt.Sprintf("taker-%d", i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				refs, err := st.TakeOver(t.Context(), owner, time.Hour)
				if err != nil {
					errs <- fmt.Errorf("worker %d of %s: %w", w, owner, err)
					return
				}
				if !slices.IsSortedFunc(refs, func(a, b store.RunRef) int { return compareIDs(a.RunID, b.RunID) }) {
					errs <- fmt.Errorf("%s took %v, not oldest first", owner, refs)
				}
				mu.Lock()
				for _, ref := range refs {
					takenBy[ref] = append(takenBy[ref], owner)
				}
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(takenBy) != len(unfinished) {
		t.Errorf("%d runs taken over, want the %d unfinished runs of the dead daemon", len(takenBy), len(unfinished))
	}
	for _, ref := range unfinished {
		if owners := takenBy[ref]; len(owners) != 1 {
			t.Errorf("run %s taken over by %v, want once", ref.RunID, owners)
		}
	}
	for _, ref := range slices.Concat(aliveRuns, deadRuns[5:6]) {
		if owners := takenBy[ref]; len(owners) != 0 {
			t.Errorf("run %s (alive or finished) taken over by %v", ref.RunID, owners)
		}
	}
	if held, err := alive.Renew(t.Context(), "alive", time.Hour); err != nil || len(held) != 5 {
		t.Errorf("the live daemon renews %d leases, %v; want 5", len(held), err)
	}
	// The dead daemon, back, holds only the finished run it never released.
	if held, err := dead.Renew(t.Context(), "dead", time.Hour); err != nil || len(held) != 1 {
		t.Errorf("the dead daemon renews %d leases, %v; want 1", len(held), err)
	}
	// The queued runs taken over are held: nobody claims them until their
	// taker releases them.
	if got := claimAll(t, alive, "alive", time.Hour); len(got) != 0 {
		t.Errorf("claimed runs taken over: %v", got)
	}
}

// TestQueueQueuedNotifies: a daemon listening hears of a run another
// daemon queued, and of a queued run another released; the channel closes
// when its context ends.
func TestQueueQueuedNotifies(t *testing.T) {
	url := newDatabase(t)
	listener, writer := open(t, url, store.Options{}), open(t, url, store.Options{})
	org, _, err := writer.CreateOrganization(t.Context(), "o")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch, err := listener.Queued(ctx)
	if err != nil {
		t.Fatal(err)
	}
	receive := func(what string) {
		t.Helper()
		select {
		case _, ok := <-ch:
			if !ok {
				t.Fatalf("%s: the channel closed", what)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no notification in 30 s", what)
		}
	}
	ids := addRuns(t, writer, org.ID, 1, client.RunStatusQueued)
	receive("a run created queued")

	ref, ok, err := writer.Claim(t.Context(), "w", time.Hour)
	if err != nil || !ok || ref.RunID != ids[0] {
		t.Fatal(ref, ok, err)
	}
	if err := writer.Release(t.Context(), "w", ref); err != nil {
		t.Fatal(err)
	}
	receive("a queued run released")

	created := addRuns(t, writer, org.ID, 1, client.RunStatusCreated)
	setStatus(t, writer, store.RunRef{OrgID: org.ID, RunID: created[0]}, client.RunStatusQueued)
	receive("a created run queued")

	cancel()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the channel did not close in 30 s after its context ended")
		}
	}
}

// compareIDs orders run ids by their snowflake, as the store does.
func compareIDs(a, b string) int {
	_, na, _ := ids.Parse(a)
	_, nb, _ := ids.Parse(b)
	return cmp.Compare(na, nb)
}

// rr is the RunRef of a run.
func rr(orgID, runID string) store.RunRef { return store.RunRef{OrgID: orgID, RunID: runID} }

// TestQueueLeavesSessionRunsToTheirDaemon: a run that executes in a
// browser session is claimed only by the daemon holding the session while
// that daemon is alive; once it stops renewing, or when nobody holds the
// session, any daemon claims it.
func TestQueueLeavesSessionRunsToTheirDaemon(t *testing.T) {
	url := newDatabase(t)
	st := open(t, url, store.Options{})
	org, _, err := st.CreateOrganization(t.Context(), "o")
	if err != nil {
		t.Fatal(err)
	}
	session := func() string {
		running := store.SessionRunning
		bs := &client.BrowserSession{BrowserSessionID: st.BrowserSessions().NewID(), Status: &running}
		if err := st.BrowserSessions().Create(t.Context(), org.ID, bs); err != nil {
			t.Fatal(err)
		}
		return bs.BrowserSessionID
	}
	run := func(sessionID string) string {
		rec := &store.RunRecord{ID: st.Runs().NewID(client.RunTypeTaskV1), OrgID: org.ID, Type: client.RunTypeTaskV1,
			Status: client.RunStatusQueued, BrowserSessionID: sessionID}
		if err := st.Runs().Create(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
		return rec.ID
	}
	held, unheld := session(), session()
	if _, err := st.Renew(t.Context(), "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.HoldSession(t.Context(), "a", org.ID, held); err != nil {
		t.Fatal(err)
	}
	inHeld, inUnheld, plain := run(held), run(unheld), run("")

	if got := claimAll(t, st, "b", time.Hour); !slices.Equal(got, []store.RunRef{rr(org.ID, inUnheld), rr(org.ID, plain)}) {
		t.Errorf("another daemon claimed %v, want the run in a session nobody holds and the plain one", got)
	}
	if got := claimAll(t, st, "a", time.Hour); !slices.Equal(got, []store.RunRef{rr(org.ID, inHeld)}) {
		t.Errorf("the session's daemon claimed %v, want %s", got, inHeld)
	}

	// The daemon holding the session stops renewing: its session's runs
	// go to any daemon (which fails them: the browser is gone).
	again := run(held)
	if got := claimAll(t, st, "b", time.Hour); len(got) != 0 {
		t.Fatalf("claimed %v while the session's daemon is alive", got)
	}
	if _, err := st.Pool().Exec(t.Context(), `UPDATE daemons SET alive_until = now() - interval '1 second' WHERE owner = 'a'`); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, st, "b", time.Hour); !slices.Equal(got, []store.RunRef{rr(org.ID, again)}) {
		t.Errorf("after the session's daemon died, claimed %v, want %s", got, again)
	}

	// Its sessions end once it is gone; a session nobody holds, and one
	// of a live daemon, stay.
	alive := session()
	if _, err := st.Renew(t.Context(), "c", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := st.HoldSession(t.Context(), "c", org.ID, alive); err != nil {
		t.Fatal(err)
	}
	if n, err := st.EndLostSessions(t.Context(), store.SessionEndedByRestart); err != nil || n != 1 {
		t.Fatalf("EndLostSessions: %d, %v; want the dead daemon's one session", n, err)
	}
	for id, want := range map[string]string{held: store.SessionEndedByRestart, unheld: store.SessionRunning, alive: store.SessionRunning} {
		bs, err := st.BrowserSessions().Get(t.Context(), org.ID, id)
		if err != nil || bs.Status == nil || *bs.Status != want {
			t.Errorf("session %s after EndLostSessions: %+v, %v; want %s", id, bs, err, want)
		} else if want != store.SessionRunning && bs.CompletedAt == nil {
			t.Errorf("session %s ended without completed_at", id)
		}
	}

	var nf *store.NotFoundError
	if err := st.HoldSession(t.Context(), "a", org.ID, "pbs_404"); !errors.As(err, &nf) || nf.Record != store.RecordSession {
		t.Errorf("holding a session that does not exist: %v", err)
	}
	if err := st.HoldSession(t.Context(), "", org.ID, held); err == nil {
		t.Error("HoldSession without an owner succeeded")
	}
}
