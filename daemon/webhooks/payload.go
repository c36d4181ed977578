package webhooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
)

// Info is what a payload needs beyond the run response. Every field is
// optional: an empty one is filled from the run's run_request echo where
// the echo has it (see Payload), and sent as "" or null otherwise.
type Info struct {
	// OrganizationID is the organization that owns the run (o_...).
	OrganizationID string
	// Prompt and URL are the prompt and starting url of a task run's
	// request. Default: the echo's prompt and url (task runs only).
	Prompt, URL string
	// Summary describes what the agent did: the executor's summary of the
	// run (executor.Result.Summary), kept on its record.
	Summary string
	// WorkflowRunID is the workflow run (wr_...) of an agent run, and of a
	// task-v2 run when known. Default: the run id for agent runs.
	WorkflowRunID string
	// WorkflowID is, as the hosted service puts it in workflow_id, the
	// agent's permanent id (wpid_...) for agent runs and the internal
	// workflow id (w_...) for task v2. Default for agent runs: the
	// permanent id.
	WorkflowID string
	// WorkflowPermanentID is the agent's permanent id (wpid_...). Default
	// for agent runs: the echo's workflow_id.
	WorkflowPermanentID string
	// WorkflowTitle is the agent's title (agent runs); "" sends null.
	WorkflowTitle string
	// Parameters holds the value of every workflow parameter of an agent
	// run. Default: the echo's parameters. nil sends null.
	Parameters map[string]json.RawMessage
	// WebhookCallbackURL is the URL configured for the run: the request's
	// webhook_url, or for an agent run the agent's webhook_callback_url
	// when the request had none. Default: the echo's webhook_url. It stays
	// the configured URL when a retry targets another one.
	WebhookCallbackURL string
	// ProxyLocation is the proxy location of the run. Default: the echo's.
	ProxyLocation *client.ProxyLocation
	// TOTPVerificationURL and TOTPIdentifier are the request's totp_url and
	// totp_identifier. Default: the echo's; "" sends null.
	TOTPVerificationURL, TOTPIdentifier string
}

// payload is the documented superset (see the package comment): the
// fields of webhook.Payload in its order, then the run-response and
// agent-run fields it lacks. Embedding keeps webhook.Payload's keys first
// and in order, and a receiver decoding into webhook.Payload ignores the
// rest.
type payload struct {
	webhook.Payload

	RecordingArchived    bool                       `json:"recording_archived"`
	BrowserSessionID     *string                    `json:"browser_session_id"`
	BrowserProfileID     *string                    `json:"browser_profile_id"`
	MaxScreenshotScrolls *int                       `json:"max_screenshot_scrolls"`
	ScriptRun            *client.ScriptRun          `json:"script_run"`
	TOTPVerificationURL  *string                    `json:"totp_verification_url"`
	TOTPIdentifier       *string                    `json:"totp_identifier"`
	WorkflowTitle        *string                    `json:"workflow_title"`
	Parameters           map[string]json.RawMessage `json:"parameters"`
	RunWith              *string                    `json:"run_with"`
	AIFallback           *bool                      `json:"ai_fallback"`
	ScriptID             *string                    `json:"script_id"`
	RunRequest           json.RawMessage            `json:"run_request"`
}

// requestEcho is what Payload reads from a run's run_request when Info
// leaves a field empty. Parameters stay raw so that their numbers keep
// their exact spelling.
type requestEcho struct {
	Prompt         string                     `json:"prompt"`
	URL            string                     `json:"url"`
	WorkflowID     string                     `json:"workflow_id"`
	AgentID        string                     `json:"agent_id"`
	Parameters     map[string]json.RawMessage `json:"parameters"`
	ProxyLocation  *client.ProxyLocation      `json:"proxy_location"`
	WebhookURL     string                     `json:"webhook_url"`
	TOTPURL        string                     `json:"totp_url"`
	TOTPIdentifier string                     `json:"totp_identifier"`
}

// Payload returns the exact body of the terminal webhook of run: the
// documented superset of the package comment, filled from run (a
// *client.Run whose URLs are already absolute) and info, serialised by
// webhook.Body, so that the bytes are those to sign and send.
//
// Fields of info that are empty are taken from run.RunRequest when the
// echo has them (prompt and url of task runs; workflow_id, parameters,
// webhook_url, proxy_location, totp_url and totp_identifier); an echo that
// does not decode is ignored. It returns an error when run is nil, is not
// in a terminal status, or holds invalid JSON (output, errors, parameters).
func Payload(run *client.Run, info Info) ([]byte, error) {
	if run == nil {
		return nil, errors.New("webhooks: nil run")
	}
	if !run.Status.IsTerminal() {
		return nil, fmt.Errorf("webhooks: run %s has not reached a terminal state (status=%s)", run.RunID, run.Status)
	}
	p := build(run, info)
	body, err := webhook.Body(&p)
	if err != nil {
		return nil, fmt.Errorf("webhooks: payload of run %s: %w", run.RunID, err)
	}
	return body, nil
}

// RetryPayload returns the body that POST /v1/runs/{run_id}/retry_webhook
// sends. It is deliberately the same as Payload for the run's current
// state, not the hosted service's reduced retry variant: see "The retry
// payload" in the package comment.
func RetryPayload(run *client.Run, info Info) ([]byte, error) {
	return Payload(run, info)
}

func build(run *client.Run, info Info) payload {
	workflow := run.RunType.IsWorkflow()
	if needsEcho(run, info) {
		var echo requestEcho
		if json.Unmarshal(run.RunRequest, &echo) == nil {
			fillFromEcho(&info, &echo, workflow)
		}
	}
	if workflow {
		if info.WorkflowRunID == "" {
			info.WorkflowRunID = run.RunID
		}
		if info.WorkflowID == "" {
			info.WorkflowID = info.WorkflowPermanentID
		}
	}

	files := run.DownloadedFiles
	if files == nil {
		files = []client.FileInfo{}
	}
	errs := run.Errors
	if errs == nil {
		errs = []json.RawMessage{}
	}
	var runRequest json.RawMessage
	if workflow && !isNull(run.RunRequest) {
		runRequest = run.RunRequest
	}
	var appURL string
	if run.AppURL != nil {
		appURL = *run.AppURL
	}

	return payload{
		Payload: webhook.Payload{
			RunID:                run.RunID,
			TaskID:               run.RunID,
			Status:               run.Status,
			Output:               rawOrNull(run.Output),
			Summary:              info.Summary,
			Prompt:               info.Prompt,
			URL:                  info.URL,
			DownloadedFiles:      files,
			RecordingURL:         run.RecordingURL,
			ScreenshotURLs:       run.ScreenshotURLs,
			FailureReason:        run.FailureReason,
			Errors:               errs,
			StepCount:            run.StepCount,
			RunType:              run.RunType,
			AppURL:               appURL,
			OrganizationID:       info.OrganizationID,
			WorkflowRunID:        info.WorkflowRunID,
			WorkflowID:           info.WorkflowID,
			WorkflowPermanentID:  info.WorkflowPermanentID,
			ProxyLocation:        validProxy(info.ProxyLocation),
			WebhookCallbackURL:   info.WebhookCallbackURL,
			WebhookFailureReason: nil,
			CreatedAt:            run.CreatedAt,
			ModifiedAt:           run.ModifiedAt,
			QueuedAt:             run.QueuedAt,
			StartedAt:            run.StartedAt,
			FinishedAt:           run.FinishedAt,
		},
		RecordingArchived:    run.RecordingArchived,
		BrowserSessionID:     run.BrowserSessionID,
		BrowserProfileID:     run.BrowserProfileID,
		MaxScreenshotScrolls: run.MaxScreenshotScrolls,
		ScriptRun:            run.ScriptRun,
		TOTPVerificationURL:  nonEmpty(info.TOTPVerificationURL),
		TOTPIdentifier:       nonEmpty(info.TOTPIdentifier),
		WorkflowTitle:        nonEmpty(info.WorkflowTitle),
		Parameters:           nullEmptyValues(info.Parameters),
		RunWith:              run.RunWith,
		AIFallback:           run.AIFallback,
		ScriptID:             run.ScriptID,
		RunRequest:           runRequest,
	}
}

// needsEcho reports whether a field that can come from the echo is empty.
func needsEcho(run *client.Run, info Info) bool {
	if isNull(run.RunRequest) {
		return false
	}
	if info.WebhookCallbackURL == "" || info.ProxyLocation == nil ||
		info.TOTPVerificationURL == "" || info.TOTPIdentifier == "" {
		return true
	}
	if run.RunType.IsWorkflow() {
		return info.WorkflowPermanentID == "" || info.Parameters == nil
	}
	return info.Prompt == "" || info.URL == ""
}

func fillFromEcho(info *Info, e *requestEcho, workflow bool) {
	if workflow {
		if info.WorkflowPermanentID == "" {
			info.WorkflowPermanentID = e.WorkflowID
			if info.WorkflowPermanentID == "" {
				info.WorkflowPermanentID = e.AgentID
			}
		}
		if info.Parameters == nil {
			info.Parameters = e.Parameters
		}
	} else {
		if info.Prompt == "" {
			info.Prompt = e.Prompt
		}
		if info.URL == "" {
			info.URL = e.URL
		}
	}
	if info.WebhookCallbackURL == "" {
		info.WebhookCallbackURL = e.WebhookURL
	}
	if info.ProxyLocation == nil {
		info.ProxyLocation = e.ProxyLocation
	}
	if info.TOTPVerificationURL == "" {
		info.TOTPVerificationURL = e.TOTPURL
	}
	if info.TOTPIdentifier == "" {
		info.TOTPIdentifier = e.TOTPIdentifier
	}
}

func isNull(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || bytes.Equal(b, []byte("null"))
}

// rawOrNull maps an absent value to nil, which encodes as null; an empty
// json.RawMessage would make the encoder fail.
func rawOrNull(b json.RawMessage) json.RawMessage {
	if isNull(b) {
		return nil
	}
	return b
}

// nullEmptyValues returns m, with empty values replaced by null, so that
// encoding never fails on them; it copies only when it must.
func nullEmptyValues(m map[string]json.RawMessage) map[string]json.RawMessage {
	for _, v := range m {
		if len(bytes.TrimSpace(v)) != 0 {
			continue
		}
		c := make(map[string]json.RawMessage, len(m))
		for k, v := range m {
			c[k] = rawOrNull(v)
		}
		return c
	}
	return m
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// validProxy drops a location that would not encode (none of its shapes
// set), which is as good as no location.
func validProxy(p *client.ProxyLocation) *client.ProxyLocation {
	if p == nil || (p.Name == "" && p.Country == "" && p.URL == "" && len(p.Raw) == 0) {
		return nil
	}
	return p
}
