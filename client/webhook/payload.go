package webhook

import (
	"encoding/json"

	"github.com/abctl/abctl/client"
)

// Payload is the body of a run-completion webhook: one superset of the
// fields of every run type, in the order of the payload the hosted service
// documents, so that Body(payload) writes the documented layout (the daemon
// sends it for every run type, see docs/daemon.md, "Webhooks").
//
// The documented field set is that of a task-v2 run. Payloads of other run
// types lack some of these fields and add others (a task-v1 run has no
// prompt, url, summary, organization_id or workflow_*; a workflow run has no
// task_id, prompt or summary, and its workflow_id is the wpid_ permanent id
// rather than the internal w_ id), and the hosted service writes the keys in
// another order. Decoding therefore ignores unknown fields and leaves missing
// ones at their zero value, so one receiver can accept every run type; a
// null in a plain string field also decodes as "". Verification never
// depends on this type: it is done on the raw bytes before decoding.
//
// Nullable fields are pointers without omitempty: a delivered payload has
// every key, with null where there is no value. DownloadedFiles and Errors
// are arrays in a delivered payload; a nil slice encodes as null, so a
// sender should set them to empty slices.
type Payload struct {
	// RunID identifies the run; it is also the idempotency key for
	// receivers, since the same payload can be delivered more than once.
	RunID string `json:"run_id"`
	// TaskID repeats RunID in task payloads.
	TaskID string `json:"task_id"`
	// Status is the terminal status: completed, failed, terminated,
	// timed_out or canceled.
	Status client.RunStatus `json:"status"`
	// Output is the extracted data as raw JSON, or null. On failure with a
	// configured error_code_mapping it holds "error" with the mapped code.
	Output json.RawMessage `json:"output"`
	// Summary describes what the agent did.
	Summary string `json:"summary"`
	// Prompt is the prompt of the original request.
	Prompt string `json:"prompt"`
	// URL is the starting URL of the original request.
	URL string `json:"url"`
	// DownloadedFiles lists the files the run downloaded.
	DownloadedFiles []client.FileInfo `json:"downloaded_files"`
	// RecordingURL links to the video of the browser session, if any.
	RecordingURL *string `json:"recording_url"`
	// ScreenshotURLs lists screenshots, latest first, or is null.
	ScreenshotURLs []string `json:"screenshot_urls"`
	// FailureReason is the error message of a failed run, meant for
	// people; branch on Status instead.
	FailureReason *string `json:"failure_reason"`
	// Errors holds the errors encountered, each as raw JSON because their
	// shape depends on the run type and on error_code_mapping.
	Errors []json.RawMessage `json:"errors"`
	// StepCount is the number of steps executed, when known.
	StepCount *int `json:"step_count"`
	// RunType tells which kind of run this is, for example task_v2.
	RunType client.RunType `json:"run_type"`
	// AppURL links to the run in the web application.
	AppURL string `json:"app_url"`
	// OrganizationID is the organization that owns the run.
	OrganizationID string `json:"organization_id"`
	// WorkflowRunID is the associated workflow run (wr_...).
	WorkflowRunID string `json:"workflow_run_id"`
	// WorkflowID is the internal agent id (w_...) in task-v2 payloads but
	// the permanent id (wpid_...) in workflow-run payloads.
	WorkflowID string `json:"workflow_id"`
	// WorkflowPermanentID is the agent's permanent id (wpid_...).
	WorkflowPermanentID string `json:"workflow_permanent_id"`
	// ProxyLocation is the proxy location used: usually a name such as
	// RESIDENTIAL, but a geographic or self-hosted proxy is an object.
	ProxyLocation *client.ProxyLocation `json:"proxy_location"`
	// WebhookCallbackURL is the URL the payload was sent to.
	WebhookCallbackURL string `json:"webhook_callback_url"`
	// WebhookFailureReason is always null in a delivered payload: it is
	// filled in only after a delivery failed.
	WebhookFailureReason *string `json:"webhook_failure_reason"`
	// CreatedAt is when the run was created (UTC, written without a zone).
	CreatedAt client.Time `json:"created_at"`
	// ModifiedAt is when the run last changed.
	ModifiedAt client.Time `json:"modified_at"`
	// QueuedAt is when the run was queued, if it was.
	QueuedAt *client.Time `json:"queued_at"`
	// StartedAt is when the run started, if it did.
	StartedAt *client.Time `json:"started_at"`
	// FinishedAt is when the run finished, if it did.
	FinishedAt *client.Time `json:"finished_at"`
}
