package pgstore

// The run queue that daemons sharing the database take their runs from
// (store.Queue). A run's row says who holds it: owner (a daemon's id) and
// lease_until (until when, by the database's clock); NULL: nobody. Claim
// and TakeOver take rows with FOR UPDATE SKIP LOCKED, so that concurrent
// daemons never take the same run; a trigger (schema/v1/30_runs.sql)
// announces runs that become claimable on the channel abctl_runs_queued,
// which Queued listens to.
//
// The queue works across organizations, as Runs.Pending does: a daemon
// serves all of them. What it hands out is a RunRef, with which the
// daemon reads the run through the organization's id as everywhere else.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

var _ store.Queue = (*Store)(nil)

// queuedChannel is the channel runs that become claimable are announced on.
const queuedChannel = "abctl_runs_queued"

// checkClaim checks a queue call's owner and lease.
func checkClaim(op, owner string, lease time.Duration) error {
	if owner == "" || !utf8.ValidString(owner) || strings.ContainsRune(owner, 0) {
		return fmt.Errorf("store: Queue.%s: the owner %q is not a daemon's id", op, owner)
	}
	if lease <= 0 {
		return fmt.Errorf("store: Queue.%s: the lease %v is not a duration", op, lease)
	}
	return nil
}

// leaseMicros is lease in microseconds, as the queries take it (at least 1).
func leaseMicros(lease time.Duration) int64 { return max(lease.Microseconds(), 1) }

// claimSQL takes the next claimable run (see store.Queue.Claim). held
// counts the runs each organization has in the works (held by a live
// lease); pick orders the claimable runs (queued, nobody holding them, and
// not in a browser session another live daemon holds) by that count, then
// oldest first, and locks the first that no other claimer has locked; the
// UPDATE then holds it for $1 until now()+$2 µs.
// The partial indexes runs_queued and runs_held keep both scans to the
// queued and the held runs.
const claimSQL = `
WITH held AS (
	SELECT org_id, count(*) AS n
	FROM runs
	WHERE owner IS NOT NULL AND lease_until >= now()
	GROUP BY org_id
), pick AS (
	SELECT r.org_id, r.id
	FROM runs r LEFT JOIN held h ON h.org_id = r.org_id
	WHERE r.status = 'queued' AND (r.owner IS NULL OR r.lease_until < now())
		AND (r.session_id IS NULL OR NOT EXISTS (
			SELECT 1 FROM browser_sessions s JOIN daemons d ON d.owner = s.daemon
			WHERE s.org_id = r.org_id AND s.id = r.session_id
				AND s.daemon <> $1 AND d.alive_until >= now()))
	ORDER BY coalesce(h.n, 0), r.snowflake, r.id
	LIMIT 1
	FOR UPDATE OF r SKIP LOCKED
)
UPDATE runs SET owner = $1, lease_until = now() + $2::float8 * interval '1 microsecond'
FROM pick
WHERE runs.org_id = pick.org_id AND runs.id = pick.id
RETURNING runs.org_id, runs.id`

// Claim takes the next claimable run for owner (see store.Queue).
func (s *Store) Claim(ctx context.Context, owner string, lease time.Duration) (store.RunRef, bool, error) {
	var ref store.RunRef
	if err := checkClaim("Claim", owner, lease); err != nil {
		return ref, false, err
	}
	err := s.pool.QueryRow(ctx, claimSQL, owner, leaseMicros(lease)).Scan(&ref.OrgID, &ref.RunID)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.RunRef{}, false, nil
	}
	if err != nil {
		return store.RunRef{}, false, fmt.Errorf("store: claim a queued run: %w", err)
	}
	return ref, true, nil
}

// HoldSession records that owner holds the browser of a browser session
// (see store.Queue).
func (s *Store) HoldSession(ctx context.Context, owner, orgID, sessionID string) error {
	if err := checkClaim("HoldSession", owner, time.Second); err != nil {
		return err
	}
	if !validKey(orgID) || !validKey(sessionID) {
		return &store.NotFoundError{Record: store.RecordSession, ID: sessionID}
	}
	tag, err := s.pool.Exec(ctx, `UPDATE browser_sessions SET daemon = $3 WHERE org_id = $1 AND id = $2`, orgID, sessionID, owner)
	if err != nil {
		return fmt.Errorf("store: hold browser session %s: %w", sessionID, err)
	}
	if tag.RowsAffected() == 0 {
		return &store.NotFoundError{Record: store.RecordSession, ID: sessionID}
	}
	return nil
}

// EndLostSessions ends the running browser sessions of daemons that are
// no longer alive (see store.Queue).
func (s *Store) EndLostSessions(ctx context.Context, status string) (int, error) {
	n, err := s.endSessions(ctx, status, `daemon IS NOT NULL AND NOT EXISTS (
		SELECT 1 FROM daemons d WHERE d.owner = browser_sessions.daemon AND d.alive_until >= now())`)
	if err != nil {
		return 0, fmt.Errorf("store: end the browser sessions of daemons gone: %w", err)
	}
	return n, nil
}

// ClaimRun takes one run for owner when nobody holds it and it is queued
// or created (see store.Queue).
func (s *Store) ClaimRun(ctx context.Context, owner string, ref store.RunRef, lease time.Duration) (bool, error) {
	if err := checkClaim("ClaimRun", owner, lease); err != nil {
		return false, err
	}
	if !validKey(ref.OrgID) || !validKey(ref.RunID) {
		return false, nil // no such run
	}
	tag, err := s.pool.Exec(ctx, `
		UPDATE runs SET owner = $3, lease_until = now() + $4::float8 * interval '1 microsecond'
		WHERE org_id = $1 AND id = $2 AND status IN ('queued', 'created')
			AND (owner IS NULL OR lease_until < now())`,
		ref.OrgID, ref.RunID, owner, leaseMicros(lease))
	if err != nil {
		return false, fmt.Errorf("store: claim run %s: %w", ref.RunID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Renew extends every lease owner holds and returns those runs (see
// store.Queue).
func (s *Store) Renew(ctx context.Context, owner string, lease time.Duration) ([]store.RunRef, error) {
	if err := checkClaim("Renew", owner, lease); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		WITH alive AS (
			INSERT INTO daemons (owner, alive_until) VALUES ($1, now() + $2::float8 * interval '1 microsecond')
			ON CONFLICT (owner) DO UPDATE SET alive_until = EXCLUDED.alive_until
		)
		UPDATE runs SET lease_until = now() + $2::float8 * interval '1 microsecond'
		WHERE owner = $1
		RETURNING org_id, id`, owner, leaseMicros(lease))
	if err != nil {
		return nil, fmt.Errorf("store: renew the leases of %s: %w", owner, err)
	}
	refs, err := collectRefs(rows)
	if err != nil {
		return nil, fmt.Errorf("store: renew the leases of %s: %w", owner, err)
	}
	return refs, nil
}

// collectRefs reads rows of (org_id, id), oldest run first.
func collectRefs(rows pgx.Rows) ([]store.RunRef, error) {
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.RunRef, error) {
		var ref store.RunRef
		err := row.Scan(&ref.OrgID, &ref.RunID)
		return ref, err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(refs, func(a, b store.RunRef) int { return records.CompareRunIDs(a.RunID, b.RunID) })
	return refs, nil
}

// Release lets a run owner holds go (see store.Queue).
func (s *Store) Release(ctx context.Context, owner string, ref store.RunRef) error {
	if err := checkClaim("Release", owner, time.Second); err != nil {
		return err
	}
	if !validKey(ref.OrgID) || !validKey(ref.RunID) {
		return nil // no such run, so owner does not hold it
	}
	_, err := s.pool.Exec(ctx, `
		UPDATE runs SET owner = NULL, lease_until = NULL
		WHERE org_id = $1 AND id = $2 AND owner = $3`, ref.OrgID, ref.RunID, owner)
	if err != nil {
		return fmt.Errorf("store: release run %s: %w", ref.RunID, err)
	}
	return nil
}

// TakeOver takes for owner the unfinished runs whose lease lapsed (see
// store.Queue). The rows are locked as they are read (SKIP LOCKED: a row
// another taker is taking is left to it); a row another taker took and
// committed since this statement began is read again as it is now, with
// its new lease, and no longer matches.
func (s *Store) TakeOver(ctx context.Context, owner string, lease time.Duration) ([]store.RunRef, error) {
	if err := checkClaim("TakeOver", owner, lease); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `
		WITH lapsed AS (
			SELECT org_id, id FROM runs
			WHERE pending AND owner IS NOT NULL AND lease_until < now()
			FOR UPDATE SKIP LOCKED
		)
		UPDATE runs SET owner = $1, lease_until = now() + $2::float8 * interval '1 microsecond'
		FROM lapsed
		WHERE runs.org_id = lapsed.org_id AND runs.id = lapsed.id
		RETURNING runs.org_id, runs.id`, owner, leaseMicros(lease))
	if err != nil {
		return nil, fmt.Errorf("store: take over the runs of lapsed leases: %w", err)
	}
	refs, err := collectRefs(rows)
	if err != nil {
		return nil, fmt.Errorf("store: take over the runs of lapsed leases: %w", err)
	}
	// The daemons gone for an hour are forgotten: their sessions' runs are
	// claimable as those of a daemon that just died are.
	if _, err := s.pool.Exec(ctx, `DELETE FROM daemons WHERE alive_until < now() - interval '1 hour'`); err != nil {
		return nil, fmt.Errorf("store: forget the daemons gone: %w", err)
	}
	return refs, nil
}

// Queued listens for runs becoming claimable (see store.Queue) on a
// connection of its own, outside the pool: a listening connection stays
// busy for as long as ctx lasts. LISTEN is in effect when Queued returns,
// so a run queued after that is announced.
func (s *Store) Queued(ctx context.Context) (<-chan struct{}, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("store: connect to listen for queued runs: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+queuedChannel); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("store: listen for queued runs: %w", err)
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			conn.Close(cctx)
		}()
		for {
			if _, err := conn.WaitForNotification(ctx); err != nil {
				return // ctx ended or the connection failed: the channel closes
			}
			select {
			case ch <- struct{}{}:
			default: // a notification is waiting already: they coalesce
			}
		}
	}()
	return ch, nil
}
