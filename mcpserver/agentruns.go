package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The tools on agent runs: listing an agent's runs with the filters the
// service offers, and running one of them again.

// AgentRunsInput is the input of skyvern_workflow_runs.
type AgentRunsInput struct {
	WorkflowID string   `json:"workflow_id,omitempty" jsonschema:"the agent whose runs to list (wpid_...); empty lists the runs of every agent"`
	Status     []string `json:"status,omitempty" jsonschema:"keep runs in any of these statuses: created, queued, running, paused, completed, failed, terminated, timed_out, canceled"`
	SearchKey  string   `json:"search_key,omitempty" jsonschema:"text to find in the run id, a parameter's key, description or value, or the extra HTTP headers (case-insensitive)"`
	ErrorCode  string   `json:"error_code,omitempty" jsonschema:"keep runs with an error of exactly this error_code"`
	Page       int      `json:"page,omitempty" jsonschema:"the page, from 1"`
	PageSize   int      `json:"page_size,omitempty" jsonschema:"runs per page"`
}

// AgentRunItem is one run in skyvern_workflow_runs' answer.
type AgentRunItem struct {
	RunID         string `json:"run_id" jsonschema:"the run (wr_...): skyvern_workflow_status gets its output"`
	WorkflowID    string `json:"workflow_id" jsonschema:"the agent (wpid_...)"`
	Title         string `json:"title,omitempty"`
	Status        string `json:"status"`
	FailureReason string `json:"failure_reason,omitempty"`
	CreatedAt     string `json:"created_at"`
	FinishedAt    string `json:"finished_at,omitempty"`
}

// AgentRunsResult is the answer of skyvern_workflow_runs.
type AgentRunsResult struct {
	Runs []AgentRunItem `json:"runs" jsonschema:"newest first"`
	Note string         `json:"note,omitempty"`
}

// RetryRunInput is the input of skyvern_workflow_run_retry.
type RetryRunInput struct {
	RunID string `json:"run_id" jsonschema:"an agent run that has ended (wr_...)"`
}

// agentRunTools list agent runs and run them again.
type agentRunTools struct {
	agents   *client.AgentsService
	follower runFollower
}

func (t *agentRunTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_workflow_runs",
		title: "List agent runs",
		description: "List the runs of an agent (or of every agent), newest first, with their status and failure reason: " +
			"to find the runs that failed, those with a given error code, or those that used a given parameter value." + ownTool,
		annotations: readOnly(),
		refine: func(p map[string]*jsonschema.Schema) {
			bounds(p["page"], 1, 0)
			bounds(p["page_size"], 1, 100)
			withDefault(p["page_size"], "10")
		},
	}, t.agentRuns)

	addTool(s, spec{
		name:  "skyvern_workflow_run_retry",
		title: "Run an agent run again",
		description: "Start a new run of an agent run that has ended, with the same agent version, parameters and settings, " +
			"for example after a site was down. Returns the new run's id; skyvern_workflow_status follows it." + ownTool,
		annotations: browses(),
		refine:      nonEmptyArgs("run_id"),
	}, t.retryRun)
}

func (t *agentRunTools) agentRuns(ctx context.Context, in AgentRunsInput) (*AgentRunsResult, error) {
	o := &client.ListAgentRunsOptions{AgentID: in.WorkflowID, SearchKey: in.SearchKey, ErrorCode: in.ErrorCode, Page: in.Page, PageSize: in.PageSize}
	for _, s := range in.Status {
		o.Status = append(o.Status, client.RunStatus(s))
	}
	runs, err := t.agents.ListRuns(ctx, o)
	if err != nil {
		return nil, err
	}
	out := &AgentRunsResult{Runs: shapeAll(runs, agentRunItem)}
	if size := max(in.PageSize, 10); len(runs) == size {
		out.Note = fmt.Sprintf("There may be more: ask for page %d.", max(in.Page, 1)+1)
	}
	return out, nil
}

func (t *agentRunTools) retryRun(ctx context.Context, in RetryRunInput) (*RunResult, error) {
	run, err := t.agents.RetryRun(ctx, in.RunID)
	if err != nil {
		return nil, err
	}
	return t.follower.follow(ctx, run, false, 0, false)
}

func agentRunItem(r *client.AgentRun) AgentRunItem {
	it := AgentRunItem{RunID: r.WorkflowRunID, WorkflowID: r.WorkflowPermanentID, Title: ptr.Value(r.WorkflowTitle),
		Status: string(r.Status), FailureReason: r.GetFailureReason(), CreatedAt: r.CreatedAt.String()}
	if r.FinishedAt != nil {
		it.FinishedAt = r.FinishedAt.String()
	}
	return it
}
