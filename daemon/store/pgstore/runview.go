package pgstore

// Run views (see the bbolt store's runview.go): every write of a run also
// stores, in its row's view column, the bytes Options.RunViews make of the
// record, in the write's transaction, so that a view is never older than
// its record; Runs.View hands them to a reader. A store opened without
// RunViews writes runs without views (NULL).
//
// meta's run_view_format holds the Format of the RunViews that made the
// stored views; Open makes every view again when its RunViews' Format
// differs (refreshRunViews).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/daemon/store"
)

// View calls fn with the stored view of a run of the organization. The
// bytes are fn's only until it returns, and fn must not change them.
// ErrNotFound when there is no such run, store.ErrNoRunView when it has no
// view; an error of fn is returned as it is.
func (r *Runs) View(ctx context.Context, orgID, id string, fn func(view []byte) error) error {
	if !validKey(orgID) || !validKey(id) {
		return runMissing(ctx, r.s.pool, orgID, id)
	}
	var has bool
	var view []byte
	err := r.s.pool.QueryRow(ctx, `SELECT view IS NOT NULL, view FROM runs WHERE org_id = $1 AND id = $2`, orgID, id).Scan(&has, &view)
	if errors.Is(err, pgx.ErrNoRows) {
		return runMissing(ctx, r.s.pool, orgID, id)
	}
	if err != nil {
		return fmt.Errorf("store: run %s: %w", id, err)
	}
	if !has {
		return store.ErrNoRunView
	}
	if view == nil {
		view = []byte{}
	}
	return fn(view)
}

// keyRunViewFormat is meta's key for the Format of the views stored.
const keyRunViewFormat = "run_view_format"

// runViewBatch is how many runs one transaction of refreshRunViews makes
// the views of, so that no transaction holds many rows for long.
const runViewBatch = 500

// refreshRunViews makes every run's view again when the stored views were
// made by RunViews of another Format than s.views' (or by none: a new
// database), then records the Format. Without views it does nothing.
//
// The runs are done in batches, each in a transaction that holds its rows
// while it rewrites them; the Format is recorded after the last, so that
// an Open interrupted midway starts again at the next Open. Daemons that
// open at the same time with the new Format each make the views, which
// gives the same bytes.
func (s *Store) refreshRunViews(ctx context.Context) error {
	if s.views == nil {
		return nil
	}
	format, err := s.views.Format()
	if err != nil {
		return fmt.Errorf("store: run views: %w", err)
	}
	var stored []byte
	err = s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, keyRunViewFormat).Scan(&stored)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store: read the run views' format: %w", err)
	}
	if err == nil && bytes.Equal(stored, format) {
		return nil
	}
	if err := s.remakeRunViews(ctx); err != nil {
		return fmt.Errorf("store: re-encode the runs' answers: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `
		INSERT INTO meta (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, keyRunViewFormat, format); err != nil {
		return fmt.Errorf("store: record the run views' format: %w", err)
	}
	return nil
}

// remakeRunViews writes the view s.views make of every run, in batches in
// (org_id, id) order.
func (s *Store) remakeRunViews(ctx context.Context) error {
	var lastOrg, lastID string // the last run done
	first := true
	for {
		var n int
		var org, id string
		err := s.tx(ctx, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `
				SELECT org_id, id, record FROM runs
				WHERE $1 OR (org_id, id) > ($2, $3)
				ORDER BY org_id, id LIMIT $4 FOR UPDATE`, first, lastOrg, lastID, runViewBatch)
			if err != nil {
				return err
			}
			type viewed struct {
				org, id string
				view    []byte
			}
			var batch []viewed
			for rows.Next() {
				var v viewed
				var data []byte
				if err := rows.Scan(&v.org, &v.id, &data); err != nil {
					rows.Close()
					return err
				}
				rec := new(store.RunRecord)
				if err := json.Unmarshal(data, rec); err != nil {
					rows.Close()
					return fmt.Errorf("run %s of %s: %w", v.id, v.org, err)
				}
				if view, err := s.views.Encode(rec); err == nil {
					v.view = view
					if v.view == nil {
						v.view = []byte{}
					}
				}
				batch = append(batch, v)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			b := &pgx.Batch{}
			for _, v := range batch {
				b.Queue(`UPDATE runs SET view = $3 WHERE org_id = $1 AND id = $2`, v.org, v.id, v.view)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			n = len(batch)
			if n > 0 {
				org, id = batch[n-1].org, batch[n-1].id
			}
			return nil
		})
		if err != nil {
			return err
		}
		first, lastOrg, lastID = false, org, id
		if n < runViewBatch {
			return nil
		}
	}
}
