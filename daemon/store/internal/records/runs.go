package records

import (
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
