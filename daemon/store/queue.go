package store

import (
	"context"
	"time"
)

// Queue is the run queue of a store that several daemons share (package
// pgstore implements it; the embedded bbolt store, which one daemon owns,
// does not: its daemon queues runs in memory). A daemon finds out whether
// its store has one with a type assertion, st.(store.Queue).
//
// Daemons take the queued runs from the store rather than from memory: a
// daemon claims a run for itself (Claim) for a while (its lease), keeps
// its leases alive while it works (Renew), and lets the run go when it is
// done with it (Release). A daemon that dies stops renewing; once its
// leases have lapsed, any other daemon takes its unfinished runs over
// (TakeOver) and ends them or queues them again, as a daemon starting up
// does with the runs it left unfinished itself.
//
// A run is held when its owner is set and its lease has not lapsed (the
// lease's end is not before the database's now()); a run whose lease lapsed
// still names its last owner until another daemon takes it or the owner
// renews or releases it. Every time is the database's clock (now()), so the
// daemons' clocks do not matter; leases are durations from it. All methods
// are safe for concurrent use by several daemons: each run is taken by one
// claimer or taker at a time (row locks, FOR UPDATE SKIP LOCKED), never
// two.
//
// owner names a daemon: an id of its own that it keeps for its lifetime
// and that no other daemon uses (for example a random one made at start).
type Queue interface {
	// Claim takes one claimable run for owner, holding it until now+lease,
	// and returns it; ok is false when no run is claimable. A run is
	// claimable when its status is queued, nobody holds it (no owner, or
	// an owner whose lease has lapsed), and it does not execute in a
	// browser session that another daemon, alive, holds (HoldSession).
	//
	// The run taken is, of the claimable runs, the first by:
	//  1. how many runs of its organization are held (by any daemon, in
	//     any status), fewest first: the organization that has the fewest
	//     runs in the works gets the next one, so that one organization
	//     submitting a thousand runs does not starve another's single run;
	//  2. its snowflake (the number after the last underscore of its id,
	//     which is its creation time; records.CompareRunIDs's order for
	//     the ids the store makes), oldest first: first in, first out
	//     within an organization, and among organizations with as many
	//     held runs, the one whose claimable run waited longest;
	//  3. its id, byte by byte.
	// A run another claimer is taking at the same moment is skipped, so
	// concurrent claimers take the next runs in that order.
	//
	// The run's status is left as it is (queued): the daemon that claimed
	// it starts it with Runs.Update as before.
	Claim(ctx context.Context, owner string, lease time.Duration) (ref RunRef, ok bool, err error)

	// ClaimRun takes the run ref for owner, holding it until now+lease,
	// when it is not held (no owner, or an owner whose lease has lapsed)
	// and its status is queued or created; ok is false otherwise (held by
	// a daemon, another status, or no such run). A daemon asked to cancel
	// a run that it does not execute claims it this way: a run it then
	// holds is its to end; a run another daemon holds is that daemon's
	// (see RunRecord.CancelRequested).
	ClaimRun(ctx context.Context, owner string, ref RunRef, lease time.Duration) (ok bool, err error)

	// HoldSession records that owner holds the browser of the
	// organization's browser session sessionID (a daemon opened it): from
	// then on, while owner is alive (it renews its leases, see Renew),
	// Claim leaves the runs that execute in that session
	// (RunRecord.BrowserSessionID) to owner, since no other daemon has its
	// browser. Once owner stops renewing, such runs are claimable by any
	// daemon again, which fails them: the session's browser is gone. A
	// session that does not exist is a *NotFoundError.
	HoldSession(ctx context.Context, owner, orgID, sessionID string) error

	// EndLostSessions ends, with status, the running browser sessions
	// held (HoldSession) by daemons that are no longer alive: their
	// browsers went with them. It returns how many. Daemons call it as
	// they take over the runs of lapsed leases.
	EndLostSessions(ctx context.Context, status string) (int, error)

	// Renew extends to now+lease every lease owner holds, lapsed or not
	// (as long as no other daemon took the run over), and returns those
	// runs, oldest first: a run the daemon executes that is not among them
	// was taken over by another daemon (its lease lapsed while the daemon
	// was stalled or cut off), and must stop. It also records that owner is alive until now+lease
	// (see HoldSession). A daemon calls it when it starts and then
	// periodically, well within its lease (say every third of it).
	Renew(ctx context.Context, owner string, lease time.Duration) ([]RunRef, error)

	// Release lets a run go: its owner and lease are cleared when owner
	// holds it (its lease lapsed or not); a run owner does not hold (any
	// more) is left as it is, without an error. A daemon releases a run it
	// is done with: once the run ended and its webhook is sent, or when it
	// stops before starting a run it claimed, which is claimable again
	// (and announced to Queued) if it is still queued.
	Release(ctx context.Context, owner string, ref RunRef) error

	// TakeOver takes for owner, until now+lease, every unfinished run (one
	// Runs.Pending returns: not terminal, or terminal with its webhook not
	// sent) whose owner's lease has lapsed, the runs of a daemon that died,
	// and returns them oldest first (records.CompareRunIDs). Runs nobody
	// holds are not taken: a queued one is Claim's, and a daemon releases a
	// run only once it is done with it. Concurrent takers never take the
	// same run; a run whose lease is alive is never taken.
	//
	// The caller then handles each run as a daemon starting up handles the
	// unfinished runs of Runs.Pending: it ends the runs that were executing,
	// sends the webhooks not sent, and queues the others again (releasing
	// them) or runs them.
	TakeOver(ctx context.Context, owner string, lease time.Duration) ([]RunRef, error)

	// Queued returns a channel that receives when a run became claimable
	// (created queued, queued again, or released while queued) by any
	// daemon on the database, so that an idle daemon claims it at once
	// rather than polling tightly. Notifications are coalesced: one receive
	// may stand for several runs, so the caller claims until Claim finds
	// none. The channel is closed when ctx ends or the listening fails (the
	// database went away); the caller may call Queued again.
	//
	// A notification can be missed (while the listening reconnects, or a
	// lease that lapses announces nothing), so callers still poll Claim
	// slowly as a fallback (every few seconds) besides waiting here.
	Queued(ctx context.Context) (<-chan struct{}, error)
}
