package pgstore

// Runs. Each run is one row of the runs table (schema/v1/30_runs.sql),
// rewritten at every move of its life: its record (the JSON the bbolt
// store keeps), its view (runview.go), the columns the run list filters,
// orders and shows (runlist.go), and whether it is pending (not terminal,
// or terminal with a webhook still to send), which a daemon starting after
// a crash reads to find the runs it must resume or end.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/internal/jsonenc"
)

// Runs are the runs of the organizations. Get it with Store.Runs.
type Runs struct{ s *Store }

// Runs returns the store's runs.
func (s *Store) Runs() store.Runs { return &Runs{s} }

func runNotFound(id string) error { return &store.NotFoundError{Record: store.RecordRun, ID: id} }

// checkRunsOrg returns the organization's NotFoundError when it does not
// exist (or its id cannot be one).
func checkRunsOrg(ctx context.Context, q querier, orgID string) error {
	if !validKey(orgID) {
		return &store.NotFoundError{Record: store.RecordOrganization, ID: orgID}
	}
	_, err := getOrg(ctx, q, orgID)
	return err
}

// runMissing is the error for a run that was not found: the
// organization's when it does not exist, as the bbolt store checks the
// organization first, or else the run's.
func runMissing(ctx context.Context, q querier, orgID, runID string) error {
	if err := checkRunsOrg(ctx, q, orgID); err != nil {
		return err
	}
	return runNotFound(runID)
}

// readRuns runs fn in a read-only transaction on one snapshot, so that
// what fn reads in several statements is consistent, as a bbolt read
// transaction is.
func (s *Store) readRuns(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
}

// NewID returns a new id for a run of the given type: wr_ for agent runs,
// tsk_v2_ for task v2, tsk_ for the other task engines.
func (r *Runs) NewID(t client.RunType) string {
	return records.NewRunID(r.s.ids, t)
}

// NewBlockID returns a new id for a block execution of a run (wrb_).
func (r *Runs) NewBlockID() string { return r.s.ids.Next(ids.PrefixWorkflowRunBlock) }

// NewStepID returns a new id for a step of a run (stp_), which the step's
// screenshots carry.
func (r *Runs) NewStepID() string { return r.s.ids.Next(ids.PrefixStep) }

// decodeRun decodes the record stored for run id.
func decodeRun(id string, v []byte) (*store.RunRecord, error) {
	rec := new(store.RunRecord)
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	return rec, nil
}

// getRun reads one run; a *store.NotFoundError{Record: store.RecordRun}
// when there is none.
func (s *Store) getRun(ctx context.Context, q querier, orgID, id string) (*store.RunRecord, error) {
	if !validKey(orgID) || !validKey(id) {
		return nil, runNotFound(id)
	}
	var data []byte
	err := q.QueryRow(ctx, `SELECT record FROM runs WHERE org_id = $1 AND id = $2`, orgID, id).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, runNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	return decodeRun(id, data)
}

// runRow is what a write of a run stores in its row.
type runRow struct {
	record, view         []byte // view nil: none
	title, agent         []byte
	created              time.Time
	started, finished    *time.Time
	search               [][]byte
	pending              bool
	status, typ, trigger string
}

// micro is t cut to the microsecond as the bbolt store's run list keeps it
// (Unix microseconds, truncated), which PostgreSQL would round instead.
func micro(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()) }

func microPtr(t *client.Time) *time.Time {
	if t == nil {
		return nil
	}
	m := micro(t.Time)
	return &m
}

// makeRunRow encodes rec and makes its view and list columns.
func (s *Store) makeRunRow(rec *store.RunRecord) (*runRow, error) {
	// Encoded without HTML escaping, as answers are and as the bbolt store
	// writes it, so that the raw JSON a record carries reads back as it was
	// written.
	data, err := jsonenc.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("store: encode run %s: %w", rec.ID, err)
	}
	row := &runRow{
		record: data,
		title:  []byte(rec.Title), agent: []byte(rec.AgentID),
		created: micro(rec.CreatedAt.Time), started: microPtr(rec.StartedAt), finished: microPtr(rec.FinishedAt),
		search: [][]byte{bytes.ToLower([]byte(rec.ID)), bytes.ToLower([]byte(rec.Title)), bytes.ToLower([]byte(rec.AgentID))},
		// A run leaves the pending runs once it is terminal and its
		// webhook, if it has one, was sent (its delivery recorded).
		pending: !(rec.Terminal() && (rec.WebhookURL == "" || rec.Webhook != nil)),
		status:  string(rec.Status), typ: string(rec.Type), trigger: string(rec.Trigger),
	}
	if s.views != nil {
		if view, err := s.views.Encode(rec); err == nil {
			row.view = view
			if row.view == nil {
				row.view = []byte{}
			}
		}
	}
	return row, nil
}

// insertRun writes a new run (its record, list columns and view, as
// Runs.Create does inside its transaction); a
// *store.ConflictError{Record: store.RecordRun} when the id exists.
func (s *Store) insertRun(ctx context.Context, q querier, rec *store.RunRecord) error {
	if !validKey(rec.OrgID) || !validKey(rec.ID) {
		return fmt.Errorf("store: run %q of organization %q: not an id", rec.ID, rec.OrgID)
	}
	row, err := s.makeRunRow(rec)
	if err != nil {
		return err
	}
	tag, err := q.Exec(ctx, `
		INSERT INTO runs (org_id, id, record, view, status, type, trigger, title, agent_id,
			created_at, started_at, finished_at, search, pending, session_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, NULLIF($15, ''))
		ON CONFLICT (org_id, id) DO NOTHING`,
		rec.OrgID, rec.ID, row.record, row.view, row.status, row.typ, row.trigger, row.title, row.agent,
		row.created, row.started, row.finished, row.search, row.pending, rec.BrowserSessionID)
	if err != nil {
		return fmt.Errorf("store: run %s: %w", rec.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return &store.ConflictError{Record: store.RecordRun, ID: rec.ID}
	}
	return nil
}

// updateRun rewrites the row of an existing run if its version (xmin, as
// text) is still version, and reports whether it did.
func (s *Store) updateRun(ctx context.Context, q querier, orgID string, rec *store.RunRecord, version string) (bool, error) {
	row, err := s.makeRunRow(rec)
	if err != nil {
		return false, err
	}
	tag, err := q.Exec(ctx, `
		UPDATE runs SET record = $3, view = $4, status = $5, type = $6, trigger = $7, title = $8,
			agent_id = $9, created_at = $10, started_at = $11, finished_at = $12, search = $13, pending = $14
		WHERE org_id = $1 AND id = $2 AND xmin::text = $15`,
		orgID, rec.ID, row.record, row.view, row.status, row.typ, row.trigger, row.title, row.agent,
		row.created, row.started, row.finished, row.search, row.pending, version)
	if err != nil {
		return false, fmt.Errorf("store: run %s: %w", rec.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Create stores a new run. rec.ID (from NewID), OrgID, Type and Status
// (created or queued) are the caller's; the store sets CreatedAt and
// ModifiedAt, and QueuedAt when the status is queued.
func (r *Runs) Create(ctx context.Context, rec *store.RunRecord) error {
	if rec == nil || rec.ID == "" || !validKey(rec.ID) {
		return fmt.Errorf("store: Runs.Create: the run needs an id from NewID")
	}
	if rec.Status != client.RunStatusCreated && rec.Status != client.RunStatusQueued {
		return fmt.Errorf("store: Runs.Create: a new run is created or queued, not %q", rec.Status)
	}
	// Stamped on a copy, which becomes rec once written: a conflict leaves
	// rec as it was, as the bbolt store does.
	// One statement, atomic on its own: the organization, which is never
	// removed, is checked first (once per handle, see needOrg).
	if err := r.s.needOrg(ctx, r.s.pool, rec.OrgID); err != nil {
		return err
	}
	stamped := *rec
	now := r.s.clock()
	stamped.CreatedAt, stamped.ModifiedAt = now, now
	if stamped.Status == client.RunStatusQueued {
		stamped.QueuedAt = &now
	}
	if err := r.s.insertRun(ctx, r.s.pool, &stamped); err != nil {
		return err
	}
	*rec = stamped
	return nil
}

// Get returns a run of the organization, or ErrNotFound.
func (r *Runs) Get(ctx context.Context, orgID, id string) (*store.RunRecord, error) {
	rec, err := r.s.getRun(ctx, r.s.pool, orgID, id)
	var nf *store.NotFoundError
	if errors.As(err, &nf) {
		return nil, runMissing(ctx, r.s.pool, orgID, id)
	}
	return rec, err
}

// Update reads a run, lets change modify it and writes it back, only if
// nobody wrote the run in between: the write is conditional on the row's
// version (its xmin, which every write of the row changes), and a write
// that finds another in between reads the run again and calls change again.
// Concurrent updates of a run, by this daemon or another, never lose each
// other's changes, and each costs two statements without a transaction
// around them (no row lock held across the round trips). The store stamps
// ModifiedAt, and QueuedAt, StartedAt and FinishedAt when the status enters
// queued, running or a terminal state and they are not set yet. A change
// returning an error writes nothing; returning store.ErrUnchanged writes
// nothing either and returns the record as read. change may be called
// more than once: it must change nothing but rec.
func (r *Runs) Update(ctx context.Context, orgID, id string, change func(rec *store.RunRecord) error) (*store.RunRecord, error) {
	if !validKey(orgID) || !validKey(id) {
		return nil, runMissing(ctx, r.s.pool, orgID, id)
	}
	for attempt := 0; ; attempt++ {
		var data []byte
		var version string
		err := r.s.pool.QueryRow(ctx, `SELECT record, xmin::text FROM runs WHERE org_id = $1 AND id = $2`, orgID, id).Scan(&data, &version)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, runMissing(ctx, r.s.pool, orgID, id)
		}
		if err != nil {
			return nil, fmt.Errorf("store: run %s: %w", id, err)
		}
		rec, err := decodeRun(id, data)
		if err != nil {
			return nil, err
		}
		changed, err := records.ApplyRunChange(rec, change, r.s.clock)
		if err != nil {
			return nil, err
		}
		if !changed {
			return rec, nil
		}
		written, err := r.s.updateRun(ctx, r.s.pool, orgID, rec, version)
		if err != nil {
			return nil, err
		}
		if written {
			return rec, nil
		}
		if attempt >= maxUpdateAttempts {
			return nil, fmt.Errorf("store: run %s: written by others %d times while this update was made", id, attempt+1)
		}
	}
}

// maxUpdateAttempts bounds the attempts of Runs.Update on a run that
// others keep writing (each write by another makes one attempt fail).
const maxUpdateAttempts = 100

// Pending returns every run that is not terminal, or is terminal with its
// webhook not sent yet, of every organization, oldest first (run ids are
// time-ordered snowflakes).
func (r *Runs) Pending(ctx context.Context) ([]store.RunRef, error) {
	rows, err := r.s.pool.Query(ctx, `SELECT org_id, id FROM runs WHERE pending`)
	if err != nil {
		return nil, fmt.Errorf("store: the pending runs: %w", err)
	}
	var out []store.RunRef
	for rows.Next() {
		var ref store.RunRef
		if err := rows.Scan(&ref.OrgID, &ref.RunID); err != nil {
			return nil, fmt.Errorf("store: the pending runs: %w", err)
		}
		out = append(out, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: the pending runs: %w", err)
	}
	slices.SortFunc(out, func(a, b store.RunRef) int { return records.CompareRunIDs(a.RunID, b.RunID) })
	return out, nil
}

// FindFile returns the run of the organization that recorded the file
// with artifact id id, and that file's record; a NotFoundError
// (RecordArtifact) when no run of the organization has it.
//
// Runs keep their files in their records and no index maps an artifact id
// to its run, so this searches the organization's records, in id order
// as the bbolt store does: the database looks for the id's JSON string in
// the bytes, and only a record that contains it is decoded. The content
// route that uses it is not on any hot path.
func (r *Runs) FindFile(ctx context.Context, orgID, id string) (string, store.RunFile, error) {
	var runID string
	var file store.RunFile
	err := r.s.readRuns(ctx, func(tx pgx.Tx) error {
		if err := checkRunsOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if !validKey(id) {
			return &store.NotFoundError{Record: store.RecordArtifact, ID: id}
		}
		needle := records.FileNeedle(id)
		rows, err := tx.Query(ctx, `SELECT id, record FROM runs WHERE org_id = $1 AND position($2::bytea IN record) > 0 ORDER BY id`, orgID, needle)
		if err != nil {
			return fmt.Errorf("store: find file %s: %w", id, err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var v []byte
			if err := rows.Scan(&k, &v); err != nil {
				return fmt.Errorf("store: find file %s: %w", id, err)
			}
			f, ok, err := records.FileOf(k, v, id)
			if err != nil {
				return err
			}
			if ok {
				runID, file = k, f
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store: find file %s: %w", id, err)
		}
		return &store.NotFoundError{Record: store.RecordArtifact, ID: id}
	})
	return runID, file, err
}
