package store

import (
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/tagquery"
)

// RunQuery filters and pages the run list. Empty filters keep every run.
type RunQuery struct {
	Page     int // from 1; 0 means 1
	PageSize int // 0 means 10
	// Statuses and Types keep runs in any of these statuses, of any of
	// these types.
	Statuses []client.RunStatus
	Types    []client.RunType
	// SearchKey keeps runs whose id, title or agent id contain it,
	// case-insensitively.
	SearchKey string
	// AgentIDs keeps the runs of these agents (workflow_permanent_id).
	AgentIDs []string
	// Tags keeps the workflow runs whose current tags satisfy the query.
	Tags *tagquery.Query
	// CreatedFrom and CreatedTo keep the runs created at or after, and at
	// or before, these times (to the microsecond); nil for no bound.
	CreatedFrom, CreatedTo *client.Time
}
