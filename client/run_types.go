package client

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/abctl/abctl/internal/ptr"
)

// Model selects a language model. The service treats it as an opaque
// object and the documented samples send {"name": "gpt-4.1"} while its own
// code reads "model_name", so this package passes it through unchanged.
type Model map[string]any

// Name returns the model's "name" (or "model_name") entry, or "".
func (m Model) Name() string {
	for _, k := range []string{"name", "model_name"} {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

// TaskRunRequest starts a task run: one run described by a prompt and an
// optional start URL (POST /v1/run/tasks). Only Prompt is required.
type TaskRunRequest struct {
	Prompt                             string            `json:"prompt"`
	URL                                string            `json:"url,omitempty"`
	Engine                             RunEngine         `json:"engine,omitempty"`
	Title                              string            `json:"title,omitempty"`
	ProxyLocation                      *ProxyLocation    `json:"proxy_location,omitempty"`
	DataExtractionSchema               json.RawMessage   `json:"data_extraction_schema,omitempty"` // a JSON Schema (object, array or string)
	ErrorCodeMapping                   map[string]string `json:"error_code_mapping,omitempty"`     // your code -> description of the condition
	MaxSteps                           *int              `json:"max_steps,omitempty"`
	WebhookURL                         string            `json:"webhook_url,omitempty"`
	TOTPIdentifier                     string            `json:"totp_identifier,omitempty"`
	TOTPURL                            string            `json:"totp_url,omitempty"`
	BrowserSessionID                   string            `json:"browser_session_id,omitempty"`
	BrowserProfileID                   string            `json:"browser_profile_id,omitempty"`
	StartFreshBrowser                  bool              `json:"start_fresh_browser,omitempty"`
	Model                              Model             `json:"model,omitempty"`
	ExtraHTTPHeaders                   map[string]string `json:"extra_http_headers,omitempty"`
	CDPConnectHeaders                  map[string]string `json:"cdp_connect_headers,omitempty"`
	PublishWorkflow                    bool              `json:"publish_workflow,omitempty"` // Deprecated: forces engine skyvern-2.0 upstream.
	IncludeActionHistoryInVerification *bool             `json:"include_action_history_in_verification,omitempty"`
	MaxScreenshotScrolls               *int              `json:"max_screenshot_scrolls,omitempty"`
	BrowserAddress                     string            `json:"browser_address,omitempty"` // CDP address of an existing browser
	RunWith                            string            `json:"run_with,omitempty"`        // "agent" or "code"

	// UserAgent is sent as the x-user-agent header, not in the body. The
	// hosted service gives "skyvern-ui" and "skyvern-mcp" a meaning; any
	// other value counts as an API call.
	UserAgent string `json:"-"`
}

// AgentRunRequest starts a run of a saved agent (POST /v1/run/agents).
// Only AgentID is required.
type AgentRunRequest struct {
	// AgentID is the agent's permanent id (wpid_...). It is sent as
	// "workflow_id", the name the contract and every echo use; "agent_id",
	// the name of the published OpenAPI, is accepted when decoding.
	AgentID               string            `json:"workflow_id"`
	Parameters            map[string]any    `json:"parameters,omitempty"` // parameter key -> any JSON value
	Title                 string            `json:"title,omitempty"`
	ProxyLocation         *ProxyLocation    `json:"proxy_location,omitempty"`
	WebhookURL            string            `json:"webhook_url,omitempty"` // overrides the agent's webhook_callback_url for this run
	TOTPURL               string            `json:"totp_url,omitempty"`
	TOTPIdentifier        string            `json:"totp_identifier,omitempty"`
	BrowserSessionID      string            `json:"browser_session_id,omitempty"`
	BrowserProfileID      string            `json:"browser_profile_id,omitempty"`
	ReuseBrowserSession   *bool             `json:"reuse_browser_session,omitempty"`
	StartFreshBrowser     bool              `json:"start_fresh_browser,omitempty"`
	MaxScreenshotScrolls  *int              `json:"max_screenshot_scrolls,omitempty"`
	MaxElapsedTimeMinutes *int              `json:"max_elapsed_time_minutes,omitempty"` // 1 to 480; null means 240
	ExtraHTTPHeaders      map[string]string `json:"extra_http_headers,omitempty"`
	CDPConnectHeaders     map[string]string `json:"cdp_connect_headers,omitempty"`
	BrowserAddress        string            `json:"browser_address,omitempty"`
	AIFallback            *bool             `json:"ai_fallback,omitempty"`
	RunWith               string            `json:"run_with,omitempty"`
	RunMetadata           map[string]string `json:"run_metadata,omitempty"` // at most 20 entries

	// Template is sent as the "template" query parameter: run a global
	// template instead of one of the organization's agents.
	Template bool `json:"-"`
	// MaxStepsOverride is sent as the x-max-steps-override header: the step
	// limit of this run.
	MaxStepsOverride *int `json:"-"`
	// UserAgent is sent as the x-user-agent header (see TaskRunRequest).
	UserAgent string `json:"-"`
}

// UnmarshalJSON accepts the agent id as "workflow_id" or "agent_id".
func (r *AgentRunRequest) UnmarshalJSON(b []byte) error {
	type plain AgentRunRequest
	var v struct {
		plain
		AgentIDAlias string `json:"agent_id"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = AgentRunRequest(v.plain)
	if r.AgentID == "" {
		r.AgentID = v.AgentIDAlias
	}
	return nil
}

// FileInfo describes a file the run downloaded.
type FileInfo struct {
	URL        string  `json:"url"`
	Checksum   *string `json:"checksum"`  // SHA-256 hex, when known
	Filename   *string `json:"filename"`  // the file's real name
	FileSize   *int64  `json:"file_size"` // bytes
	ModifiedAt *Time   `json:"modified_at"`
	ArtifactID *string `json:"artifact_id,omitempty"`
}

// ScriptRun describes a run that executed generated code.
type ScriptRun struct {
	AIFallbackTriggered bool    `json:"ai_fallback_triggered"`
	ScriptID            *string `json:"script_id"`
	ScriptRevisionID    *string `json:"script_revision_id"`
}

// Run is a task run or a workflow (agent) run, as returned by
// GET /v1/runs/{run_id} and by the calls that start runs. The two response
// schemas share most fields; RunType tells which one came back, and the
// workflow-only fields are nil on task runs.
//
// Nullable fields are pointers, so that a nil value and an empty one stay
// apart and the daemon, which encodes this type, writes null where the
// hosted service does.
type Run struct {
	RunID                string            `json:"run_id"`
	Status               RunStatus         `json:"status"`
	Output               json.RawMessage   `json:"output"` // extracted data; for workflow runs, "<label>_output" per block
	DownloadedFiles      []FileInfo        `json:"downloaded_files"`
	RecordingURL         *string           `json:"recording_url"`
	RecordingArchived    bool              `json:"recording_archived"`
	ScreenshotURLs       []string          `json:"screenshot_urls"` // newest first
	FailureReason        *string           `json:"failure_reason"`  // descriptive text; not for branching
	CreatedAt            Time              `json:"created_at"`
	ModifiedAt           Time              `json:"modified_at"`
	QueuedAt             *Time             `json:"queued_at"`
	StartedAt            *Time             `json:"started_at"`
	FinishedAt           *Time             `json:"finished_at"`
	AppURL               *string           `json:"app_url"`
	BrowserSessionID     *string           `json:"browser_session_id"`
	BrowserProfileID     *string           `json:"browser_profile_id"`
	MaxScreenshotScrolls *int              `json:"max_screenshot_scrolls"`
	ScriptRun            *ScriptRun        `json:"script_run"`
	Errors               []json.RawMessage `json:"errors"`
	StepCount            *int              `json:"step_count"`
	RunType              RunType           `json:"run_type"`
	// RunRequest echoes the request that started the run: a TaskRunRequest
	// or an AgentRunRequest; see TaskRequest and AgentRequest.
	RunRequest json.RawMessage `json:"run_request"`

	// WebhookFailureReason says why the run's terminal webhook could not be
	// delivered; absent when it was, or when the run has no webhook. The
	// hosted service records it on agent runs (in GET /v1/agents/runs);
	// the daemon also reports it here, for runs of both kinds.
	WebhookFailureReason *string `json:"webhook_failure_reason,omitempty"`

	// Summary says in a few sentences what the run did (the agent's own
	// account, then how it ended): what there is to read of a run that
	// extracted nothing, whose output is null. The hosted service sends it
	// only in task webhooks (their "summary"); the daemon also reports it
	// here, absent when the run has none.
	Summary *string `json:"summary,omitempty"`

	// Workflow runs only.
	RunWith           *string `json:"run_with,omitempty"`
	AIFallback        *bool   `json:"ai_fallback,omitempty"`
	ScriptID          *string `json:"script_id,omitempty"`
	BrowserSeedSource *string `json:"browser_seed_source,omitempty"`
}

// IsTerminal reports whether the run has finished.
func (r *Run) IsTerminal() bool { return r.Status.IsTerminal() }

// GetFailureReason returns the failure reason, or "" when there is none.
func (r *Run) GetFailureReason() string { return ptr.Value(r.FailureReason) }

// GetWebhookFailureReason returns why the terminal webhook failed, or "".
func (r *Run) GetWebhookFailureReason() string { return ptr.Value(r.WebhookFailureReason) }

// GetSummary returns what the run did, or "" when it does not say.
func (r *Run) GetSummary() string { return ptr.Value(r.Summary) }

// GetRecordingURL returns the recording URL, or "" when there is none.
func (r *Run) GetRecordingURL() string { return ptr.Value(r.RecordingURL) }

// GetAppURL returns the link to the run in the web application, or "".
func (r *Run) GetAppURL() string { return ptr.Value(r.AppURL) }

// GetStepCount returns the number of steps executed, or 0 when unknown.
func (r *Run) GetStepCount() int {
	if r.StepCount == nil {
		return 0
	}
	return *r.StepCount
}

// DecodeOutput decodes the run's output into v. It returns an error when the
// run has no output (null), so callers need not check for that separately.
func (r *Run) DecodeOutput(v any) error {
	if isJSONNull(r.Output) {
		return fmt.Errorf("client: run %s has no output", r.RunID)
	}
	return json.Unmarshal(r.Output, v)
}

// TaskRequest decodes the echoed request of a task run. It returns nil and
// no error when the response carried no echo.
func (r *Run) TaskRequest() (*TaskRunRequest, error) {
	if isJSONNull(r.RunRequest) {
		return nil, nil
	}
	if r.RunType.IsWorkflow() {
		return nil, fmt.Errorf("client: run %s is a workflow run; use AgentRequest", r.RunID)
	}
	var v TaskRunRequest
	if err := json.Unmarshal(r.RunRequest, &v); err != nil {
		return nil, fmt.Errorf("client: decode run_request of %s: %w", r.RunID, err)
	}
	return &v, nil
}

// AgentRequest decodes the echoed request of a workflow run. It returns nil
// and no error when the response carried no echo.
func (r *Run) AgentRequest() (*AgentRunRequest, error) {
	if isJSONNull(r.RunRequest) {
		return nil, nil
	}
	if !r.RunType.IsWorkflow() {
		return nil, fmt.Errorf("client: run %s is a %s run; use TaskRequest", r.RunID, r.RunType)
	}
	var v AgentRunRequest
	if err := json.Unmarshal(r.RunRequest, &v); err != nil {
		return nil, fmt.Errorf("client: decode run_request of %s: %w", r.RunID, err)
	}
	return &v, nil
}

// BulkCancelResponse is the answer to a bulk cancel: the ids that were
// cancelled and those that could not be.
type BulkCancelResponse struct {
	Cancelled []string `json:"cancelled"`
	Failed    []string `json:"failed"`
}

// RetryWebhookRequest optionally sends a run's webhook to another URL.
type RetryWebhookRequest struct {
	WebhookURL string `json:"webhook_url,omitempty"`
}

// WebhookReplay is what the hosted service answers to a webhook retry: it
// delivers synchronously and reports the attempt. A server that delivers in
// the background (as the service's API reference describes) answers with an
// empty body, and RetryWebhook then returns nil.
type WebhookReplay struct {
	RunID             string            `json:"run_id"`
	RunType           RunType           `json:"run_type"`
	DefaultWebhookURL *string           `json:"default_webhook_url"`
	TargetWebhookURL  string            `json:"target_webhook_url"`
	Payload           string            `json:"payload"` // the exact signed body
	Headers           map[string]string `json:"headers"` // the signed headers that were sent
	StatusCode        *int              `json:"status_code"`
	LatencyMS         int64             `json:"latency_ms"`
	ResponseBody      *string           `json:"response_body"`
	Error             *string           `json:"error"`
}

// Artifact is one item of GET /v1/runs/{run_id}/artifacts.
type Artifact struct {
	ArtifactID         string       `json:"artifact_id"`
	ArtifactType       ArtifactType `json:"artifact_type"`
	URI                string       `json:"uri"`
	BundleKey          *string      `json:"bundle_key"`
	Checksum           *string      `json:"checksum"`
	FileSize           *int64       `json:"file_size"`
	TaskID             *string      `json:"task_id"`
	StepID             *string      `json:"step_id"`
	WorkflowRunID      *string      `json:"workflow_run_id"`
	WorkflowRunBlockID *string      `json:"workflow_run_block_id"`
	RunID              *string      `json:"run_id"`
	BrowserSessionID   *string      `json:"browser_session_id"`
	ObserverCruiseID   *string      `json:"observer_cruise_id"`
	ObserverThoughtID  *string      `json:"observer_thought_id"`
	AISuggestionID     *string      `json:"ai_suggestion_id"`
	SignedURL          *string      `json:"signed_url"` // a URL a browser can open
	Archived           bool         `json:"archived"`
	OrganizationID     string       `json:"organization_id"`
	CreatedAt          Time         `json:"created_at"`
	ModifiedAt         Time         `json:"modified_at"`
}

// Ptr returns a pointer to v, for the optional fields of request types
// (MaxSteps: client.Ptr(12)). It is the same as new(v), which code for Go
// 1.26 and later can write instead.
func Ptr[T any](v T) *T { return new(v) }

func isJSONNull(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || bytes.Equal(b, []byte("null"))
}
