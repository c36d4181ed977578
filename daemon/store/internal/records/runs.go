package records

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/jsonenc"
)

// CompareRunIDs orders run ids by their snowflake (creation time),
// whatever their prefix.
func CompareRunIDs(a, b string) int {
	_, na, oka := ids.Parse(a)
	_, nb, okb := ids.Parse(b)
	if oka && okb && na != nb {
		if na < nb {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// StepNumber is what AddStep's error names for a step.
func StepNumber(step *client.RunStep) any {
	if step == nil {
		return "nil"
	}
	return step.Number
}

// StampChange stamps a run that Runs.Update changed: modified_at now, and
// the time of the state it reached (queued_at, started_at, finished_at)
// when it has none yet.
func StampChange(rec *store.RunRecord, now client.Time) {
	rec.ModifiedAt = now
	switch {
	case rec.Status == client.RunStatusQueued && rec.QueuedAt == nil:
		rec.QueuedAt = &now
	case rec.Status == client.RunStatusRunning && rec.StartedAt == nil:
		rec.StartedAt = &now
	case rec.Terminal() && rec.FinishedAt == nil:
		rec.FinishedAt = &now
	}
}

// NewRunID returns a new id for a run of type t: wr_ for agent runs,
// tsk_v2_ for task v2, tsk_ for the other task engines.
func NewRunID(g *ids.Generator, t client.RunType) string {
	switch t {
	case client.RunTypeWorkflowRun:
		return g.Next(ids.PrefixWorkflowRun)
	case client.RunTypeTaskV2:
		return g.Next(ids.PrefixTaskV2)
	}
	return g.Next(ids.PrefixTask)
}

// DecodeRunBlock decodes a stored block execution of run runID.
func DecodeRunBlock(runID string, v []byte) (*client.RunBlock, error) {
	b := new(client.RunBlock)
	if err := json.Unmarshal(v, b); err != nil {
		return nil, store.Errorf(store.ErrInvalid, "store: run %s: a block record does not decode: %v", runID, err)
	}
	return b, nil
}

// DecodeRunStep decodes a stored step of run runID.
func DecodeRunStep(runID string, v []byte) (*client.RunStep, error) {
	s := new(client.RunStep)
	if err := json.Unmarshal(v, s); err != nil {
		return nil, store.Errorf(store.ErrInvalid, "store: run %s: a step record does not decode: %v", runID, err)
	}
	return s, nil
}

// FileNeedle is what a stored run record that lists file id contains: the
// id as a JSON string. A record without it need not be decoded.
func FileNeedle(id string) []byte {
	needle, _ := json.Marshal(id)
	return needle
}

// FileOf returns file id from the stored record of run runID, and whether
// the run has it.
func FileOf(runID string, record []byte, id string) (store.RunFile, bool, error) {
	var rec struct {
		Files []store.RunFile `json:"files"`
	}
	if err := json.Unmarshal(record, &rec); err != nil {
		return store.RunFile{}, false, fmt.Errorf("store: run %s: %w", runID, err)
	}
	for _, f := range rec.Files {
		if f.ID == id {
			return f, true, nil
		}
	}
	return store.RunFile{}, false, nil
}

// ApplyRunChange applies change, a caller's change of a run read for
// Runs.Update, and stamps the run (StampChange) with clock's time when it
// changed it; changed is false when change returned store.ErrUnchanged,
// and nothing is to be written.
func ApplyRunChange(rec *store.RunRecord, change func(*store.RunRecord) error, clock func() client.Time) (changed bool, err error) {
	if err := change(rec); err != nil {
		if errors.Is(err, store.ErrUnchanged) {
			return false, nil
		}
		return false, err
	}
	StampChange(rec, clock())
	return true, nil
}

// CheckStep refuses a step AddStep cannot record for run runID.
func CheckStep(runID string, step *client.RunStep) error {
	if step == nil || step.Number < 1 || step.Number > math.MaxUint32 {
		return store.Errorf(store.ErrInvalid, "store: run %s: a step is numbered from 1, not %v", runID, StepNumber(step))
	}
	return nil
}

// CheckBlock refuses a block execution PutBlock cannot record as number n
// of run runID.
func CheckBlock(runID string, n int, block *client.RunBlock) error {
	if block == nil || n < 1 || n > math.MaxUint32 {
		return store.Errorf(store.ErrInvalid, "store: run %s: a block execution is numbered from 1, not %d", runID, n)
	}
	return nil
}

// EncodeStep is the stored form of a step recorded at now: the step as
// the API answers it, its created_at the store's.
func EncodeStep(step *client.RunStep, now client.Time) ([]byte, error) {
	stamped := *step
	stamped.CreatedAt = now
	return jsonenc.Marshal(&stamped)
}

// EncodeBlock is the stored form of a block execution written at now:
// created_at and modified_at now, but created_at kept from old, the block
// as recorded before (nil for none), when it has one.
func EncodeBlock(block *client.RunBlock, old []byte, now client.Time) ([]byte, error) {
	stamped := *block
	stamped.CreatedAt, stamped.ModifiedAt = now, now
	if old != nil {
		var prev struct {
			CreatedAt client.Time `json:"created_at"`
		}
		if err := json.Unmarshal(old, &prev); err == nil && !prev.CreatedAt.IsZero() {
			stamped.CreatedAt = prev.CreatedAt
		}
	}
	return jsonenc.Marshal(&stamped)
}
