package records

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
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
