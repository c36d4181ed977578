package client

import (
	"context"
	"iter"
	"net/url"
	"time"

	"github.com/abctl/abctl/internal/ptr"
)

// AgentRun is a run of an agent as the agent run lists answer it
// (GET /v1/agents/runs and GET /v1/agents/{id}/runs; the hosted service's
// WorkflowRun): the run's record rather than its result. Runs.Get
// answers a run's result (output, files, screenshots).
//
// Nullable fields are pointers, so that a nil value and an empty one stay
// apart and the daemon, which encodes this type, writes null where the
// hosted service does.
type AgentRun struct {
	WorkflowRunID string `json:"workflow_run_id"`
	// WorkflowID is the id of the agent version the run executes (wf_);
	// WorkflowPermanentID the agent's permanent id (wpid_).
	WorkflowID          string    `json:"workflow_id"`
	WorkflowPermanentID string    `json:"workflow_permanent_id"`
	OrganizationID      string    `json:"organization_id"`
	Status              RunStatus `json:"status"`
	// WorkflowTitle is the run's title: the request's, else the agent's.
	WorkflowTitle        *string           `json:"workflow_title"`
	BrowserSessionID     *string           `json:"browser_session_id"`
	BrowserProfileID     *string           `json:"browser_profile_id"`
	ProxyLocation        *ProxyLocation    `json:"proxy_location"`
	ExtraHTTPHeaders     map[string]string `json:"extra_http_headers"`
	WebhookCallbackURL   *string           `json:"webhook_callback_url"`
	WebhookFailureReason *string           `json:"webhook_failure_reason"`
	TOTPVerificationURL  *string           `json:"totp_verification_url"`
	TOTPIdentifier       *string           `json:"totp_identifier"`
	FailureReason        *string           `json:"failure_reason"`
	ParentWorkflowRunID  *string           `json:"parent_workflow_run_id"`
	MaxScreenshotScrolls *int              `json:"max_screenshot_scrolls"`
	MaxElapsedTimeMin    *int              `json:"max_elapsed_time_minutes"`
	BrowserAddress       *string           `json:"browser_address"`
	RunWith              *string           `json:"run_with"`
	AIFallback           *bool             `json:"ai_fallback"`
	TriggerType          *RunTriggerType   `json:"trigger_type"`
	WorkflowScheduleID   *string           `json:"workflow_schedule_id"`
	QueuedAt             *Time             `json:"queued_at"`
	StartedAt            *Time             `json:"started_at"`
	FinishedAt           *Time             `json:"finished_at"`
	CreatedAt            Time              `json:"created_at"`
	ModifiedAt           Time              `json:"modified_at"`
}

// IsTerminal reports whether the run has finished.
func (r *AgentRun) IsTerminal() bool { return r.Status.IsTerminal() }

// GetFailureReason returns the failure reason, or "" when there is none.
func (r *AgentRun) GetFailureReason() string { return ptr.Value(r.FailureReason) }

// ListAgentRunsOptions filter the agent run lists. Every filter given must
// match (AND).
type ListAgentRunsOptions struct {
	// AgentID lists the runs of this agent (wpid_...); "" lists the runs of
	// every agent of the organization.
	AgentID  string
	Page     int // from 1; 0 means 1
	PageSize int // 0 means the server default (10)
	// Status keeps runs in any of these statuses.
	Status []RunStatus
	// SearchKey matches, case-insensitively, a run's id, its parameters'
	// keys, descriptions and values, and its extra HTTP headers.
	SearchKey string
	// ErrorCode keeps runs with an error of exactly this error_code.
	ErrorCode string
	// CreatedAtStart and CreatedAtEnd keep runs created in this range
	// (inclusive); zero for no bound. The service reads them only with
	// AgentID.
	CreatedAtStart, CreatedAtEnd time.Time
}

func (o *ListAgentRunsOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setInt(q, "page", o.Page)
	setInt(q, "page_size", o.PageSize)
	addEach(q, "status", o.Status)
	setString(q, "search_key", o.SearchKey)
	setString(q, "error_code", o.ErrorCode)
	if !o.CreatedAtStart.IsZero() {
		q.Set("created_at_start", o.CreatedAtStart.UTC().Format(time.RFC3339Nano))
	}
	if !o.CreatedAtEnd.IsZero() {
		q.Set("created_at_end", o.CreatedAtEnd.UTC().Format(time.RFC3339Nano))
	}
	return q
}

// ListRuns returns one page of agent runs, newest first: those of
// o.AgentID (GET /v1/agents/{id}/runs), or of every agent
// (GET /v1/agents/runs) when o or o.AgentID is empty. Use AllRuns to walk
// every page.
func (s *AgentsService) ListRuns(ctx context.Context, o *ListAgentRunsOptions, opts ...Option) ([]*AgentRun, error) {
	path := "/v1/agents/runs"
	if o != nil && o.AgentID != "" {
		if err := requireID("agent id", o.AgentID); err != nil {
			return nil, err
		}
		path = pathf("/v1/agents/%s/runs", o.AgentID)
	}
	var out []*AgentRun
	_, err := s.client.do(ctx, request{method: "GET", path: path, query: o.query(), idempotent: true}, &out, opts)
	return out, err
}

// AllRuns returns an iterator over every agent run matching o, newest
// first, fetching pages as it goes.
func (s *AgentsService) AllRuns(ctx context.Context, o *ListAgentRunsOptions, opts ...Option) iter.Seq2[*AgentRun, error] {
	return paginate(o, func(o *ListAgentRunsOptions) ([]*AgentRun, error) { return s.ListRuns(ctx, o, opts...) })
}

func (o *ListAgentRunsOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }

// RetryRun starts a new run of an agent run's agent with the original
// run's parameters and settings (POST /v1/agents/runs/{id}/retry), and
// returns the new run. Only a run that has ended can be retried; the
// service answers 400 for one that has not.
func (s *AgentsService) RetryRun(ctx context.Context, runID string, opts ...Option) (*Run, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	var out Run
	// Not idempotent: each call starts a run.
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/agents/runs/%s/retry", runID)}, &out, opts)
	if err != nil {
		return nil, err
	}
	return &out, nil
}
