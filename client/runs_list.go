package client

import (
	"context"
	"iter"
	"net/url"
)

// RunListItem is one run in the run list (GET /v1/runs): a summary, not the
// whole run; Runs.Get returns that.
type RunListItem struct {
	// TaskRunID is the id of the run's row in the service's run index;
	// RunID is the run's id (tsk_, tsk_v2_ or wr_).
	TaskRunID           string          `json:"task_run_id"`
	RunID               string          `json:"run_id"`
	RunType             RunType         `json:"task_run_type"`
	Status              RunStatus       `json:"status"`
	Title               *string         `json:"title"`
	StartedAt           *Time           `json:"started_at"`
	FinishedAt          *Time           `json:"finished_at"`
	CreatedAt           Time            `json:"created_at"`
	WorkflowPermanentID *string         `json:"workflow_permanent_id"` // the agent of a workflow run
	WorkflowDeleted     bool            `json:"workflow_deleted"`      // that agent has been deleted since
	ScriptRun           bool            `json:"script_run"`
	TriggerType         *RunTriggerType `json:"trigger_type"`
}

// RunTriggerType says what started a run.
type RunTriggerType string

// Run triggers. The abctl daemon records api and mcp.
const (
	RunTriggerManual    RunTriggerType = "manual"    // a person, in the service's web app
	RunTriggerMCP       RunTriggerType = "mcp"       // an assistant, through the MCP tools
	RunTriggerAPI       RunTriggerType = "api"       // a call to the run endpoints
	RunTriggerScheduled RunTriggerType = "scheduled" // a schedule
	RunTriggerWebhook   RunTriggerType = "webhook"   // an external system, through a webhook
)

// ListRunsOptions filter the run list. The hosted service hides this
// operation from its reference but serves it; the abctl daemon serves it
// too.
type ListRunsOptions struct {
	Page     int // 1 to 100; 0 means 1
	PageSize int // 1 to 100; 0 means the server default (10)
	// Status keeps runs in any of these statuses.
	Status []RunStatus
	// RunType keeps runs of any of these types.
	RunType []RunType
	// SearchKey matches, case-insensitively, a run's id, title and agent
	// (at least 3 characters).
	SearchKey string
	// WorkflowPermanentID keeps the runs of these agents (at most 50).
	WorkflowPermanentID []string
	// Tags keeps the workflow runs carrying these tags, each term "label",
	// "key:*" or "key:value" (at most 20): AND across terms, OR among
	// values of the same key, as ListAgentsOptions.Tags.
	Tags []string
}

func (o *ListRunsOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setInt(q, "page", o.Page)
	setInt(q, "page_size", o.PageSize)
	addEach(q, "status", o.Status)
	addEach(q, "run_type", o.RunType)
	setString(q, "search_key", o.SearchKey)
	addEach(q, "workflow_permanent_id", o.WorkflowPermanentID)
	addEach(q, "tags", o.Tags)
	return q
}

// List returns one page of runs, newest first (GET /v1/runs); o may be nil.
// Use All to walk every page.
func (s *RunsService) List(ctx context.Context, o *ListRunsOptions, opts ...Option) ([]*RunListItem, error) {
	var out []*RunListItem
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/runs", query: o.query(), idempotent: true}, &out, opts)
	return out, err
}

// All returns an iterator over every run matching o, newest first, fetching
// pages as it goes. The service serves at most 100 pages.
func (s *RunsService) All(ctx context.Context, o *ListRunsOptions, opts ...Option) iter.Seq2[*RunListItem, error] {
	return paginate(o, func(o *ListRunsOptions) ([]*RunListItem, error) { return s.List(ctx, o, opts...) })
}

func (o *ListRunsOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }
