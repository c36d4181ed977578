package boltstore

// Runs. Each run is one record in its organization's runs bucket, written
// at every move of its life (see RunRecord). While a run is not terminal,
// or is terminal with a webhook URL but no delivery recorded yet, it also
// has an entry in the top-level runs_pending bucket, so that a daemon
// starting after a crash finds, without reading every run, the ones it must
// resume or end and the webhooks it must still send.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/internal/jsonenc"
)

// Runs are the runs of the organizations. Get it with Store.Runs.
type Runs struct{ s *Store }

func runNotFound(id string) error { return notFound(store.RecordRun, id) }

func pendingKey(orgID, runID string) []byte {
	return append(append([]byte(orgID), 0), runID...)
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

func getRun(o *orgTx, id string) (*store.RunRecord, error) {
	return getJSON[store.RunRecord](o.runs(), store.RecordRun, id)
}

// decodeRun decodes the record stored under key id.
func decodeRun(id, v []byte) (*store.RunRecord, error) {
	rec := new(store.RunRecord)
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("store: run %s: %w", id, err)
	}
	return rec, nil
}

// putRun writes rec, its view (runview.go) and its entry in the run list
// (runlist.go), and keeps its runs_pending entry in step with its status
// and its webhook: a run leaves runs_pending once it is terminal and its
// webhook, if it has one, was sent (its delivery recorded).
func (r *Runs) putRun(tx *bolt.Tx, o *orgTx, rec *store.RunRecord) error {
	// Encoded without HTML escaping, as answers are, so that the raw JSON
	// a record carries (the request's echo, the output) reads back as it
	// was written, and as its view shows it.
	data, err := jsonenc.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode run %s: %w", rec.ID, err)
	}
	if err := o.runs().Put([]byte(rec.ID), data); err != nil {
		return err
	}
	if err := putRunView(o, r.s.views, rec); err != nil {
		return err
	}
	if err := putRunSummary(o, rec); err != nil {
		return err
	}
	pending := tx.Bucket(bucketRunsPending)
	k := pendingKey(rec.OrgID, rec.ID)
	if rec.Terminal() && (rec.WebhookURL == "" || rec.Webhook != nil) {
		return pending.Delete(k)
	}
	return pending.Put(k, nil)
}

// Create stores a new run. rec.ID (from NewID), OrgID, Type and Status
// (created or queued) are the caller's; the store sets CreatedAt and
// ModifiedAt, and QueuedAt when the status is queued.
func (r *Runs) Create(ctx context.Context, rec *store.RunRecord) error {
	if rec == nil || rec.ID == "" || !validID(rec.ID) {
		return fmt.Errorf("store: Runs.Create: the run needs an id from NewID")
	}
	if rec.Status != client.RunStatusCreated && rec.Status != client.RunStatusQueued {
		return fmt.Errorf("store: Runs.Create: a new run is created or queued, not %q", rec.Status)
	}
	return r.s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, rec.OrgID)
		if err != nil {
			return err
		}
		if o.runs().Get([]byte(rec.ID)) != nil {
			return &store.ConflictError{Record: store.RecordRun, ID: rec.ID}
		}
		now := r.s.clock()
		rec.CreatedAt, rec.ModifiedAt = now, now
		if rec.Status == client.RunStatusQueued {
			rec.QueuedAt = &now
		}
		return r.putRun(tx, o, rec)
	})
}

// Get returns a run of the organization, or ErrNotFound.
func (r *Runs) Get(ctx context.Context, orgID, id string) (*store.RunRecord, error) {
	var rec *store.RunRecord
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		rec, err = getRun(o, id)
		return err
	})
	return rec, err
}

// Update reads a run, lets change modify it and writes it back, in one
// write transaction: concurrent updates of a run never lose each other's
// changes. The store stamps ModifiedAt, and QueuedAt, StartedAt and
// FinishedAt when the status enters queued, running or a terminal state
// and they are not set yet. A change returning an error writes nothing;
// returning ErrUnchanged (see below) writes nothing either and returns the
// record as read. change may be called more than once (the store's writes
// are committed in groups, commit.go): it must change nothing but rec.
func (r *Runs) Update(ctx context.Context, orgID, id string, change func(rec *store.RunRecord) error) (*store.RunRecord, error) {
	var out *store.RunRecord
	err := r.s.update(ctx, func(tx *bolt.Tx) error {
		o, err := openOrg(tx, orgID)
		if err != nil {
			return err
		}
		rec, err := getRun(o, id)
		if err != nil {
			return err
		}
		changed, err := records.ApplyRunChange(rec, change, r.s.clock)
		if err != nil {
			return err
		}
		out = rec
		if !changed {
			return nil
		}
		return r.putRun(tx, o, rec)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Pending returns every run that is not terminal, or is terminal with its
// webhook not sent yet (see putRun), of every organization, oldest first
// (run ids are time-ordered snowflakes).
func (r *Runs) Pending(ctx context.Context) ([]store.RunRef, error) {
	var out []store.RunRef
	err := r.s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRunsPending).ForEach(func(k, _ []byte) error {
			i := bytes.IndexByte(k, 0)
			if i < 0 {
				return fmt.Errorf("store: corrupt pending run key %q", k)
			}
			out = append(out, store.RunRef{OrgID: string(k[:i]), RunID: string(k[i+1:])})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b store.RunRef) int { return records.CompareRunIDs(a.RunID, b.RunID) })
	return out, nil
}
