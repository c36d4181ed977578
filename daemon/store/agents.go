package store

import (
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/tagquery"
)

// AgentQuery selects and pages Agents.List.
type AgentQuery struct {
	Page     int // 1-based; 0 means 1
	PageSize int // 0 means 10
	// SearchKey matches, case-insensitively and anywhere, the title, the
	// folder's title, the wpid, and the key, description and (workflow
	// parameters) default value of the latest version's parameters. As in
	// the hosted service's ILIKE, '%' and '_' in it are wildcards, except
	// against the wpid.
	SearchKey string
	FolderID  string // only agents whose latest version is in this folder
	// Statuses keeps agents with one of these statuses; empty means
	// published and draft.
	Statuses       []client.AgentStatus
	OnlySavedTasks bool // only is_saved_task agents
	OnlyWorkflows  bool // only agents that are not saved tasks
	// Tags keeps the agents whose current tags satisfy the query; nil
	// means no tag filter.
	Tags *tagquery.Query
	// Filter, when set, is a further predicate on the wpid, applied after
	// the others and before paging. It runs inside the store's read
	// transaction, so it must not call the store (precompute what it
	// needs, a set of wpids for instance).
	Filter func(wpid string) bool
}
