package boltstore

// Run steps and run blocks: what a run did, as it did it. A step is one
// step of the run's agent loop or of a model-free block (what the page was,
// what the model thought and decided, the actions and how they went, the
// time and tokens spent); a block is one execution of a block of an agent
// run (its label, type, status, output, and the loop it ran in). The
// steps answer GET /v1/runs/{id}/steps; blocks and steps together make the
// run's timeline (GET /v1/runs/{id}/timeline, shaped by package
// daemon/runview).
//
// They have their own buckets, run_steps and run_blocks, rather than a
// place in the run's record: the record is decoded and rewritten at every
// move of the run, and a few hundred steps of a kilobyte each would make
// every one of those writes carry them. Each is written in its answer's
// shape (client.RunStep, client.RunBlock), keyed by run id and number, so
// that a run's steps are its keys read in order. Only the newest
// MaxRunSteps steps and MaxRunBlocks blocks of a run are kept.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/internal/jsonenc"
)

// runItemPrefix starts the keys of a run's steps or blocks: its id and
// 0x00, which no id contains, so that one run's prefix never matches
// another's keys.
func runItemPrefix(runID string) []byte {
	return append([]byte(runID), 0)
}

// runItemKey is the key of step or block n of a run: runItemPrefix, then
// n as 4 bytes big-endian, so that a run's items are in numeric order.
func runItemKey(runID string, n int) []byte {
	return binary.BigEndian.AppendUint32(runItemPrefix(runID), uint32(n))
}

// putRunItem writes item n of a run into b and deletes the run's items
// keep or more numbers older than n.
func putRunItem(b *bolt.Bucket, runID string, n int, data []byte, keep int) error {
	if err := b.Put(runItemKey(runID, n), data); err != nil {
		return err
	}
	// The run's oldest items come first under its prefix.
	prefix := runItemPrefix(runID)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if len(k) != len(prefix)+4 || int64(binary.BigEndian.Uint32(k[len(prefix):])) > int64(n)-int64(keep) {
			break
		}
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// eachRunItem calls fn with the value of each item of a run in b, in
// numeric order, or newest first when backwards.
func eachRunItem(b *bolt.Bucket, runID string, backwards bool, fn func(v []byte) error) error {
	prefix := runItemPrefix(runID)
	c := b.Cursor()
	k, v := c.Seek(prefix)
	next := c.Next
	if backwards {
		// Start at the run's last key: the one before its prefix with the
		// 0x00 raised to 0x01.
		k, v = c.Seek(append([]byte(runID), 1))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		next = c.Prev
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = next() {
		if err := fn(v); err != nil {
			return err
		}
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
	return r.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(runID) || o.runs().Get([]byte(runID)) == nil {
			return runNotFound(runID)
		}
		data, err := records.EncodeStep(step, r.s.clock())
		if err != nil {
			return err
		}
		return putRunItem(o.runSteps(), runID, step.Number, data, store.MaxRunSteps)
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
	return r.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(runID) || o.runs().Get([]byte(runID)) == nil {
			return runNotFound(runID)
		}
		data, err := records.EncodeBlock(block, o.runBlocks().Get(runItemKey(runID, n)), r.s.clock())
		if err != nil {
			return err
		}
		return putRunItem(o.runBlocks(), runID, n, data, store.MaxRunBlocks)
	})
}

// StepsJSON returns the steps of a run of the organization as
// GET /v1/runs/{id}/steps answers them: newest first, each an encoded
// client.RunStep. ErrNotFound when there is no such run; a run without
// steps has an empty (non-nil) list.
func (r *Runs) StepsJSON(ctx context.Context, orgID, runID string) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(runID) || o.runs().Get([]byte(runID)) == nil {
			return runNotFound(runID)
		}
		return eachRunItem(o.runSteps(), runID, true, func(v []byte) error {
			out = append(out, bytes.Clone(v))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Trace returns a run's record, blocks and steps, or ErrNotFound.
func (r *Runs) Trace(ctx context.Context, orgID, runID string) (*store.RunTrace, error) {
	var t store.RunTrace
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getRun(o, runID)
		if err != nil {
			return err
		}
		t.Record = rec
		err = eachRunItem(o.runBlocks(), runID, false, func(v []byte) error {
			b, err := records.DecodeRunBlock(runID, v)
			t.Blocks = append(t.Blocks, b)
			return err
		})
		if err != nil {
			return err
		}
		return eachRunItem(o.runSteps(), runID, false, func(v []byte) error {
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

// unwrapRunSteps rewrites the run steps of an organization from the layout
// of schema 5, a timeline entry {"type":"step","step":{...},"created_at":
// ...}, to the step itself with the entry's created_at (migration 6).
func unwrapRunSteps(steps *bolt.Bucket) error {
	type entry struct {
		Step      json.RawMessage `json:"step"`
		CreatedAt json.RawMessage `json:"created_at"`
	}
	var keys, values [][]byte
	err := steps.ForEach(func(k, v []byte) error {
		var e entry
		if err := json.Unmarshal(v, &e); err != nil || len(e.Step) == 0 || e.Step[0] != '{' {
			return nil // not the old layout: left as it is
		}
		var step map[string]json.RawMessage
		if err := json.Unmarshal(e.Step, &step); err != nil {
			return nil
		}
		if len(e.CreatedAt) > 0 {
			step["created_at"] = e.CreatedAt
		}
		data, err := jsonenc.Marshal(step)
		if err != nil {
			return err
		}
		keys, values = append(keys, bytes.Clone(k)), append(values, data)
		return nil
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if err := steps.Put(k, values[i]); err != nil {
			return err
		}
	}
	return nil
}
