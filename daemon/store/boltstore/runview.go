package boltstore

// Run views. Every write of a run can also store a view of it
// (run_views/<run id>): bytes that the layer above makes of the record, so
// that the daemon's most frequent read, GET /v1/runs/{id}, sends them
// without decoding the record (package daemon/runview makes the daemon's:
// the run's answer, encoded, with holes for the URLs that depend on the
// request). The store neither makes nor reads them. Options.RunViews makes
// them, inside the write transaction of the record, so that a view is
// never older than its record; Runs.View hands them to a reader.
//
// When the way views are made changes, the stored ones are stale:
// meta/run_view_format holds the Format of the RunViews that made them, and
// Open makes every view again when its RunViews' Format differs.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/daemon/store"
)

// putRunView stores the view of rec, or removes a stale one when there is
// no view to store.
func putRunView(o *orgTx, views store.RunViews, rec *store.RunRecord) error {
	if views != nil {
		if view, err := views.Encode(rec); err == nil {
			return o.runViews().Put([]byte(rec.ID), view)
		}
	}
	return o.runViews().Delete([]byte(rec.ID))
}

// View calls fn with the stored view of a run of the organization, inside
// the read transaction: the bytes are bbolt's, valid only until fn returns,
// and fn must not change them. ErrNotFound when there is no such run,
// ErrNoRunView when it has no view; an error of fn is returned as it is.
func (r *Runs) View(ctx context.Context, orgID, id string, fn func(view []byte) error) error {
	return r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(id) {
			return runNotFound(id)
		}
		v := o.runViews().Get([]byte(id))
		if v == nil {
			if o.runs().Get([]byte(id)) == nil {
				return runNotFound(id)
			}
			return store.ErrNoRunView
		}
		return fn(v)
	})
}

// keyRunViewFormat is meta's key for the Format of the views stored.
var keyRunViewFormat = []byte("run_view_format")

// refreshRunViews makes every run's view again, in one write transaction,
// when the stored views were made by RunViews of another Format than
// views' (or not at all: a store migrated from schema 3). Without views it
// does nothing.
func refreshRunViews(db *bolt.DB, views store.RunViews) error {
	if views == nil {
		return nil
	}
	format, err := views.Format()
	if err != nil {
		return fmt.Errorf("store: run views: %w", err)
	}
	var current bool
	if err := db.View(func(tx *bolt.Tx) error {
		current = bytes.Equal(tx.Bucket(bucketMeta).Get(keyRunViewFormat), format)
		return nil
	}); err != nil || current {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		data := tx.Bucket(bucketOrgData)
		err := data.ForEachBucket(func(orgID []byte) error {
			o, err := openOrg(tx, string(orgID))
			if err != nil {
				return err
			}
			return o.runs().ForEach(func(k, v []byte) error {
				rec := new(store.RunRecord)
				if err := json.Unmarshal(v, rec); err != nil {
					return fmt.Errorf("run %s of %s: %w", k, orgID, err)
				}
				return putRunView(o, views, rec)
			})
		})
		if err != nil {
			return fmt.Errorf("store: re-encode the runs' answers: %w", err)
		}
		return tx.Bucket(bucketMeta).Put(keyRunViewFormat, format)
	})
}
