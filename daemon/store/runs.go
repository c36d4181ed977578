package store

import (
	"encoding/json"
	"errors"

	"github.com/abctl/abctl/client"
)

// RunFile is the record of a file a run produced (or of an uploaded file),
// which the run's record keeps. Package daemon/artifacts keeps the file
// itself, and makes this record of it.
type RunFile struct {
	ID        string              `json:"id"`                // a_<snowflake>
	Type      client.ArtifactType `json:"type"`              // what the file is
	Name      string              `json:"name"`              // base name in the run directory
	Size      int64               `json:"size"`              // bytes
	SHA256    string              `json:"sha256"`            // lowercase hex of the content's SHA-256
	CreatedAt client.Time         `json:"created_at"`        // when it was recorded
	StepID    string              `json:"step_id,omitempty"` // the step it shows (stp_), "" for none
}

// WebhookDelivery is the outcome of sending a run's webhook.
type WebhookDelivery struct {
	URL        string      `json:"url"`
	At         client.Time `json:"at"`
	StatusCode int         `json:"status_code,omitempty"` // 0: no response
	LatencyMS  int64       `json:"latency_ms"`
	Error      string      `json:"error,omitempty"` // "" when delivered (2xx)
}

// RunRecord is everything the daemon keeps of a run: what it answers in
// GET /v1/runs/{id} (package daemon/runview builds the answer from it),
// what the executor needs, and what the webhook needs.
type RunRecord struct {
	ID        string           `json:"id"`
	OrgID     string           `json:"org_id"`
	Type      client.RunType   `json:"type"`
	Status    client.RunStatus `json:"status"`
	CreatedAt client.Time      `json:"created_at"`
	// ModifiedAt is set by the store at every write.
	ModifiedAt client.Time  `json:"modified_at"`
	QueuedAt   *client.Time `json:"queued_at,omitempty"`
	StartedAt  *client.Time `json:"started_at,omitempty"`
	FinishedAt *client.Time `json:"finished_at,omitempty"`

	// RunRequest is the request as the API echoes it in run_request.
	RunRequest json.RawMessage `json:"run_request,omitempty"`
	// Task is the request of a task run.
	Task *client.TaskRunRequest `json:"task,omitempty"`
	// AgentID and AgentVersion name the agent version an agent run
	// executes; Parameters holds every workflow parameter's value.
	AgentID      string `json:"agent_id,omitempty"`
	AgentVersion int    `json:"agent_version,omitempty"`
	// AgentVersionID is that version's id (wf_...), which the agent run
	// lists answer as workflow_id; "" in runs stored before it was kept.
	AgentVersionID string                     `json:"agent_version_id,omitempty"`
	Parameters     map[string]json.RawMessage `json:"parameters,omitempty"`
	// BrowserProfileID is the browser profile the run starts from ("" for
	// none: a fresh browser, or the state its agent kept).
	BrowserProfileID string `json:"browser_profile_id,omitempty"`
	// BrowserSessionID is the browser session the run executes in ("" for
	// a browser of its own).
	BrowserSessionID string `json:"browser_session_id,omitempty"`
	// Definition is the definition an agent run executes when no stored
	// agent backs it (AgentID is then ""): the sign-in of
	// POST /v1/run/tasks/login.
	Definition *client.WorkflowDefinition `json:"definition,omitempty"`
	Title      string                     `json:"title,omitempty"`
	// Trigger says what started the run ("api", "mcp"); "" for runs
	// stored before it was recorded, which the run list shows as null.
	Trigger client.RunTriggerType `json:"trigger,omitempty"`
	// ParentRunID is the run whose workflow_trigger block started this one
	// ("" for none); TriggerDepth counts the runs of that chain above it
	// (1 for a run an API-started run triggered), which bounds it.
	ParentRunID  string `json:"parent_run_id,omitempty"`
	TriggerDepth int    `json:"trigger_depth,omitempty"`
	// ScheduleID is the schedule that started the run, whose Trigger is
	// then "scheduled" and which carries the tag schedule:<id>
	// (schedules.go); "" for other runs.
	ScheduleID string `json:"schedule_id,omitempty"`
	// ScheduledFor is the fire time of the schedule that the run is for
	// (set by Schedules.Fire); nil for other runs.
	ScheduledFor *client.Time `json:"scheduled_for,omitempty"`

	// RunWith is how an agent run executes: "agent" (the model decides
	// every step) or "code" (the recorded script of its agent and cache
	// key replays, package script); "" means the agent's own run_with.
	// AIFallback is the request's ai_fallback (nil: the agent's).
	RunWith    string `json:"run_with,omitempty"`
	AIFallback *bool  `json:"ai_fallback,omitempty"`
	// ScriptID pins the script an agent run replays
	// (POST /v1/scripts/{id}/run); "" chooses by agent and cache key.
	ScriptID string `json:"script_id,omitempty"`
	// ScriptRun says which script version the run replayed or recorded,
	// and whether the model had to take over (script_run in answers); nil
	// when the run used no script.
	ScriptRun *client.ScriptRun `json:"script_run,omitempty"`

	MaxSteps          int `json:"max_steps,omitempty"`           // 0: the executor's default
	MaxElapsedMinutes int `json:"max_elapsed_minutes,omitempty"` // 0: no wall-clock limit

	// WebhookURL is where the terminal webhook goes ("" for none).
	WebhookURL string `json:"webhook_url,omitempty"`
	// KeyHash is the SHA-256 of the API key that started the run, which
	// signs its webhooks (SigningKey).
	KeyHash []byte `json:"key_hash,omitempty"`
	// BaseURL is the address the run was started through; URLs in its
	// webhook point there.
	BaseURL string `json:"base_url,omitempty"`

	Output        json.RawMessage `json:"output,omitempty"`
	FailureReason string          `json:"failure_reason,omitempty"`
	// Summary says, for people, what the run did (the executor's); it
	// goes into the webhook's summary.
	Summary   string            `json:"summary,omitempty"`
	Errors    []json.RawMessage `json:"errors,omitempty"`
	StepCount *int              `json:"step_count,omitempty"`
	Files     []RunFile         `json:"files,omitempty"` // in the order produced
	// Human is the latest question the run's human_interaction blocks
	// asked, with its answer once given (package runner, human.go); nil
	// when none asked.
	Human *client.HumanInteraction `json:"human,omitempty"`

	// Webhook is the delivery of the terminal webhook; nil until sent (or
	// when there was none to send). Retries are recorded in
	// WebhookRetries, newest last.
	Webhook        *WebhookDelivery  `json:"webhook,omitempty"`
	WebhookRetries []WebhookDelivery `json:"webhook_retries,omitempty"`
	// WebhookFailureReason says why the terminal webhook (Webhook) could
	// not be delivered, as the hosted service's webhook_failure_reason
	// does; "" while it was not sent or once it was delivered. It is kept
	// apart from FailureReason so that a receiver being down never hides
	// why the run itself failed (see runner's finish). Retries do not
	// change it.
	WebhookFailureReason string `json:"webhook_failure_reason,omitempty"`

	// CancelRequested says that a cancel was asked for through a daemon
	// that does not hold the run (several daemons sharing a store, see
	// Queue): the daemon that holds it sees the request and cancels the
	// run, which then ends canceled as any canceled run. It is never set
	// by a daemon that holds the run (that one cancels it at once).
	CancelRequested bool `json:"cancel_requested,omitempty"`
}

// Terminal reports whether the run has ended.
func (r *RunRecord) Terminal() bool { return IsTerminal(r.Status) }

// IsTerminal reports whether status is one a run ends in.
func IsTerminal(status client.RunStatus) bool {
	switch status {
	case client.RunStatusCompleted, client.RunStatusFailed, client.RunStatusTerminated,
		client.RunStatusTimedOut, client.RunStatusCanceled:
		return true
	}
	return false
}

// RunRef names a run of an organization.
type RunRef struct{ OrgID, RunID string }

// ErrUnchanged, returned by the change function of Runs.Update, means
// there is nothing to write.
var ErrUnchanged = errors.New("store: run unchanged")
