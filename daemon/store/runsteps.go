package store

// Run steps: the details of each step of a run's agent loop (what the page
// was, what the model thought and decided, the actions and how they went,
// the time and tokens spent), which GET /v1/runs/{id}/timeline answers.
//
// They have their own bucket, run_steps, rather than a place in the run's
// record: the record is decoded and rewritten at every move of the run,
// and a few hundred steps of a kilobyte each would make every one of those
// writes carry them. A step is written once, in its answer's shape (a
// client.TimelineEntry, encoded), keyed by run id and step number, so that
// the timeline is the run's keys read backwards, sent as they are. Only
// the newest MaxRunSteps steps of a run are kept.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/abctl/abctl/client"
)

// MaxRunSteps is how many steps of a run the store keeps: the newest.
const MaxRunSteps = 200

// runStepPrefix starts the keys of a run's steps: its id and 0x00, which
// no id contains, so that one run's prefix never matches another's keys.
func runStepPrefix(runID string) []byte {
	return append([]byte(runID), 0)
}

// runStepKey is the key of step n of a run: runStepPrefix, then n as 4
// bytes big-endian, so that a run's steps are in numeric order.
func runStepKey(runID string, n int) []byte {
	return binary.BigEndian.AppendUint32(runStepPrefix(runID), uint32(n))
}

// AddStep records a step of a run of the organization (step.Number from
// 1; a step recorded again under its number replaces the first), and
// forgets the steps MaxRunSteps or more numbers older. The store stamps its
// created_at. ErrNotFound when there is no such run.
func (r *Runs) AddStep(ctx context.Context, orgID, runID string, step *client.TimelineStep) error {
	if step == nil || step.Number < 1 || step.Number > math.MaxUint32 {
		return errorf(ErrInvalid, "store: run %s: a step is numbered from 1, not %v", runID, stepNumber(step))
	}
	return r.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(runID) || o.runs().Get([]byte(runID)) == nil {
			return runNotFound(runID)
		}
		now := r.s.clock()
		data, err := encodeJSON(&client.TimelineEntry{Type: client.TimelineStepEntry, Step: step, CreatedAt: now, ModifiedAt: now})
		if err != nil {
			return err
		}
		steps := o.runSteps()
		if err := steps.Put(runStepKey(runID, step.Number), data); err != nil {
			return err
		}
		// The run's oldest steps come first under its prefix.
		prefix := runStepPrefix(runID)
		c := steps.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
			if len(k) != len(prefix)+4 || int64(binary.BigEndian.Uint32(k[len(prefix):])) > int64(step.Number)-MaxRunSteps {
				break
			}
			if err := c.Delete(); err != nil {
				return err
			}
		}
		return nil
	})
}

func stepNumber(step *client.TimelineStep) any {
	if step == nil {
		return "nil"
	}
	return step.Number
}

// TimelineJSON returns the timeline of a run of the organization as
// GET /v1/runs/{id}/timeline answers it: its steps, newest first, each an
// encoded client.TimelineEntry. ErrNotFound when there is no such run; a
// run without steps has an empty (non-nil) timeline.
func (r *Runs) TimelineJSON(ctx context.Context, orgID, runID string) ([]json.RawMessage, error) {
	out := []json.RawMessage{}
	err := r.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if !validID(runID) || o.runs().Get([]byte(runID)) == nil {
			return runNotFound(runID)
		}
		prefix := runStepPrefix(runID)
		// Start after the run's last key: its prefix with the 0x00 raised
		// to 0x01.
		end := append([]byte(runID), 1)
		c := o.runSteps().Cursor()
		k, v := c.Seek(end)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
			out = append(out, bytes.Clone(v))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
