package pgstore

// Run steps and run blocks: what a run did, as it did it (see the bbolt
// store's runsteps.go for what they are). Each is a row of run_steps or
// run_blocks, written in its answer's shape (client.RunStep,
// client.RunBlock) and numbered within its run; only the newest
// store.MaxRunSteps steps and store.MaxRunBlocks blocks of a run are kept.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// runItemTable is one of the tables of a run's numbered items.
type runItemTable struct {
	name, column string // the table and its value's column
	keep         int    // how many numbers of a run it keeps
}

var (
	runStepsTable  = runItemTable{"run_steps", "step", store.MaxRunSteps}
	runBlocksTable = runItemTable{"run_blocks", "block", store.MaxRunBlocks}
)

// put writes item n of a run, replacing the one of that number, and
// deletes the run's items keep or more numbers older than n. The run must
// exist: ok is false, and nothing is written, when it does not.
func (t runItemTable) put(ctx context.Context, tx pgx.Tx, orgID, runID string, n int, data []byte) (ok bool, err error) {
	tag, err := tx.Exec(ctx, `
		INSERT INTO `+t.name+` (org_id, run_id, n, `+t.column+`)
		SELECT $1, $2, $3, $4 WHERE EXISTS (SELECT 1 FROM runs WHERE org_id = $1 AND id = $2)
		ON CONFLICT (org_id, run_id, n) DO UPDATE SET `+t.column+` = excluded.`+t.column,
		orgID, runID, int64(n), data)
	if err != nil {
		return false, fmt.Errorf("store: run %s: %w", runID, err)
	}
	if tag.RowsAffected() == 0 {
		return false, nil
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+t.name+` WHERE org_id = $1 AND run_id = $2 AND n <= $3`,
		orgID, runID, int64(n)-int64(t.keep)); err != nil {
		return false, fmt.Errorf("store: run %s: %w", runID, err)
	}
	return true, nil
}

// each calls fn with the value of each item of a run, in numeric order,
// or newest first when backwards.
func (t runItemTable) each(ctx context.Context, q querier, orgID, runID string, backwards bool, fn func(v []byte) error) error {
	order := "ASC"
	if backwards {
		order = "DESC"
	}
	rows, err := q.Query(ctx, `SELECT `+t.column+` FROM `+t.name+` WHERE org_id = $1 AND run_id = $2 ORDER BY n `+order, orgID, runID)
	if err != nil {
		return fmt.Errorf("store: run %s: %w", runID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var v []byte
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("store: run %s: %w", runID, err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: run %s: %w", runID, err)
	}
	return nil
}

// AddStep records a step of a run of the organization (step.Number from
// 1; a step recorded again under its number replaces the first), and
// forgets the steps MaxRunSteps or more numbers older. The store stamps its
// CreatedAt. ErrNotFound when there is no such run.
func (r *Runs) AddStep(ctx context.Context, orgID, runID string, step *client.RunStep) error {
	if err := records.CheckStep(runID, step); err != nil {
		return err
	}
	return r.s.tx(ctx, func(tx pgx.Tx) error {
		if !validKey(orgID) || !validKey(runID) {
			return runMissing(ctx, tx, orgID, runID)
		}
		data, err := records.EncodeStep(step, r.s.clock())
		if err != nil {
			return err
		}
		ok, err := runStepsTable.put(ctx, tx, orgID, runID, step.Number, data)
		if err == nil && !ok {
			err = runMissing(ctx, tx, orgID, runID)
		}
		return err
	})
}

// PutBlock records block execution n of a run of the organization (n from
// 1, in the order the executions started), or replaces it when recorded
// before (a block that ended), keeping its CreatedAt; the store stamps
// CreatedAt on the first write and ModifiedAt on every one. The blocks
// MaxRunBlocks or more numbers older are forgotten. ErrNotFound when there
// is no such run.
func (r *Runs) PutBlock(ctx context.Context, orgID, runID string, n int, block *client.RunBlock) error {
	if err := records.CheckBlock(runID, n, block); err != nil {
		return err
	}
	return r.s.tx(ctx, func(tx pgx.Tx) error {
		if !validKey(orgID) || !validKey(runID) {
			return runMissing(ctx, tx, orgID, runID)
		}
		now := r.s.clock()
		// The block as recorded before, held until this transaction ends
		// so that a concurrent write of it keeps the same created_at.
		var old []byte
		err := tx.QueryRow(ctx, `SELECT block FROM run_blocks WHERE org_id = $1 AND run_id = $2 AND n = $3 FOR UPDATE`,
			orgID, runID, int64(n)).Scan(&old)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("store: run %s: %w", runID, err)
		}
		data, err := records.EncodeBlock(block, old, now)
		if err != nil {
			return err
		}
		ok, err := runBlocksTable.put(ctx, tx, orgID, runID, n, data)
		if err == nil && !ok {
			err = runMissing(ctx, tx, orgID, runID)
		}
		return err
	})
}

// StepsJSON returns the steps of a run of the organization as
// GET /v1/runs/{id}/steps answers them: newest first, each an encoded
// client.RunStep. ErrNotFound when there is no such run; a run without
// steps has an empty (non-nil) list.
func (r *Runs) StepsJSON(ctx context.Context, orgID, runID string) ([]json.RawMessage, error) {
	if !validKey(orgID) || !validKey(runID) {
		return nil, runMissing(ctx, r.s.pool, orgID, runID)
	}
	// One statement: the run's row, joined to its steps (none: one row
	// with a NULL step), so that the run and its steps are read together.
	rows, err := r.s.pool.Query(ctx, `
		SELECT s.step FROM runs r
		LEFT JOIN run_steps s ON s.org_id = r.org_id AND s.run_id = r.id
		WHERE r.org_id = $1 AND r.id = $2
		ORDER BY s.n DESC`, orgID, runID)
	if err != nil {
		return nil, fmt.Errorf("store: run %s: %w", runID, err)
	}
	out := []json.RawMessage{}
	found := false
	for rows.Next() {
		var v []byte
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: run %s: %w", runID, err)
		}
		found = true
		if v != nil {
			out = append(out, v)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", runID, err)
	}
	if !found {
		return nil, runMissing(ctx, r.s.pool, orgID, runID)
	}
	return out, nil
}

// Trace returns a run's record, blocks and steps, or ErrNotFound.
func (r *Runs) Trace(ctx context.Context, orgID, runID string) (*store.RunTrace, error) {
	var t store.RunTrace
	err := r.s.readRuns(ctx, func(tx pgx.Tx) error {
		t = store.RunTrace{}
		rec, err := r.s.getRun(ctx, tx, orgID, runID)
		var nf *store.NotFoundError
		if errors.As(err, &nf) {
			return runMissing(ctx, tx, orgID, runID)
		}
		if err != nil {
			return err
		}
		t.Record = rec
		err = runBlocksTable.each(ctx, tx, orgID, runID, false, func(v []byte) error {
			b, err := records.DecodeRunBlock(runID, v)
			t.Blocks = append(t.Blocks, b)
			return err
		})
		if err != nil {
			return err
		}
		return runStepsTable.each(ctx, tx, orgID, runID, false, func(v []byte) error {
			s, err := records.DecodeRunStep(runID, v)
			t.Steps = append(t.Steps, s)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return &t, nil
}
