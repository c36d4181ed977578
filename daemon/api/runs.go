package api

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// Bounds of run requests, as the hosted service checks them.
const (
	maxBulkCancel          = 100
	defaultMaxElapsedMin   = 240
	maxElapsedMinutesLimit = 480
	maxRunMetadata         = 20
	maxRunMetadataKey      = 64
	maxRunMetadataValue    = 256
	maxScreenshotScrolls   = 1000
)

// runTypeOfEngine maps the engines the daemon can execute to their run
// types; any other engine is refused with 400, as the hosted service
// refuses engines it does not offer.
var runTypeOfEngine = map[client.RunEngine]client.RunType{
	client.EngineSkyvernV1: client.RunTypeTaskV1,
	client.EngineSkyvernV2: client.RunTypeTaskV2,
}

// baseURL is the address the client reached the daemon on, which URLs in
// answers (artifacts, app_url) use.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// keyHash is the SHA-256 of the request's API key, which identifies the key
// that starts a run and signs its webhooks.
func keyHash(r *http.Request) []byte {
	sum := sha256.Sum256([]byte(r.Header.Get("X-Api-Key")))
	return sum[:]
}

// triggerOf says what started a run requested by r: the MCP tools, whose
// requests the daemon serves in process carrying their MCP caller (mcp.go),
// or a call to the API.
func triggerOf(r *http.Request) client.RunTriggerType {
	if _, ok := r.Context().Value(mcpCallerKey{}).(mcpCaller); ok {
		return client.RunTriggerMCP
	}
	return client.RunTriggerAPI
}

// checkWebhookURL returns why a webhook URL is unusable, or "".
func checkWebhookURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "URL must be an absolute http or https URL"
	}
	return ""
}

// normalizeURL gives a scheme-less start URL https://, as the hosted
// service does.
func normalizeURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw != "" && !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	return raw
}

// handleStartTask serves POST /v1/run/tasks and POST /v1/runs.
func (s runsAPI) handleStartTask(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	var req client.TaskRunRequest
	if err := decodeJSONBody(r, &req); err != nil {
		s.error(w, r, err)
		return
	}
	var errs []client.ValidationError
	if strings.TrimSpace(req.Prompt) == "" {
		errs = append(errs, fieldError("missing", "Field required", nil, "body", "prompt"))
	}
	errs = append(errs, callbackURLErrors(req.WebhookURL, req.TOTPURL)...)
	if req.MaxSteps != nil && *req.MaxSteps < 1 {
		errs = append(errs, fieldError("greater_than_equal", "Input should be greater than or equal to 1", *req.MaxSteps, "body", "max_steps"))
	}
	if req.StartFreshBrowser && (req.BrowserSessionID != "" || req.BrowserProfileID != "" || req.BrowserAddress != "") {
		errs = append(errs, valueError("start_fresh_browser cannot be combined with browser_session_id, browser_profile_id or browser_address", true, "body", "start_fresh_browser"))
	}
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	if req.Engine == "" {
		req.Engine = client.EngineSkyvernV1
	}
	if req.PublishWorkflow {
		req.Engine = client.EngineSkyvernV2 // as the service does for this deprecated flag
	}
	runType, ok := runTypeOfEngine[req.Engine]
	if !ok {
		s.error(w, r, errorf(KindBadRequest, "invalid agent engine: %q; the local daemon runs %s and %s", req.Engine, client.EngineSkyvernV1, client.EngineSkyvernV2))
		return
	}
	if req.BrowserProfileID != "" && runType != client.RunTypeTaskV2 {
		s.error(w, r, errorf(KindBadRequest, "browser_profile_id is only supported with engine %s", client.EngineSkyvernV2))
		return
	}
	if req.StartFreshBrowser && runType != client.RunTypeTaskV2 {
		s.error(w, r, errorf(KindBadRequest, "start_fresh_browser is only supported with engine %s", client.EngineSkyvernV2))
		return
	}
	req.URL = normalizeURL(req.URL)
	req.UserAgent = r.Header.Get("X-User-Agent")
	if n := req.MaxScreenshotScrolls; n != nil {
		v := min(max(*n, 0), maxScreenshotScrolls)
		req.MaxScreenshotScrolls = &v
	}
	echo := req
	echo.CDPConnectHeaders = maskHeaders(req.CDPConnectHeaders)
	runRequest, _ := json.Marshal(echo)

	if err := s.starter.checkBrowser(r, req.BrowserProfileID, req.BrowserSessionID); err != nil {
		s.error(w, r, err)
		return
	}
	rec := &store.RunRecord{
		ID: s.runs.NewID(runType), OrgID: organization(r.Context()).ID, Type: runType,
		Status: client.RunStatusQueued, RunRequest: runRequest, Task: &req,
		Title: req.Title, WebhookURL: strings.TrimSpace(req.WebhookURL),
		BrowserProfileID: req.BrowserProfileID, BrowserSessionID: req.BrowserSessionID,
	}
	if req.MaxSteps != nil {
		rec.MaxSteps = *req.MaxSteps
	}
	s.starter.start(w, r, rec)
}

// maskHeaders hides header values in echoes, as the service masks
// cdp_connect_headers.
func maskHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k := range h {
		out[k] = "****"
	}
	return out
}

// agentRunBody is the body of POST /v1/run/agents: the client's request,
// with agent_id accepted beside workflow_id (the service takes both).
type agentRunBody struct {
	client.AgentRunRequest
	AgentIDAlias string `json:"agent_id"`
}

// handleStartAgent serves POST /v1/run/agents.
func (s runsAPI) handleStartAgent(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	qr := newQueryReader(r)
	template := qr.bool("template")
	var maxStepsOverride int
	if v := strings.TrimSpace(r.Header.Get("X-Max-Steps-Override")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.error(w, r, invalid([]client.ValidationError{fieldError("int_parsing",
				"Input should be a valid integer of at least 1", v, "header", "x-max-steps-override")}))
			return
		}
		maxStepsOverride = n
	}
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	var body agentRunBody
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	req := body.AgentRunRequest
	if req.AgentID == "" {
		req.AgentID = body.AgentIDAlias
	}
	var errs []client.ValidationError
	if req.AgentID == "" {
		errs = append(errs, fieldError("missing", "Field required", nil, "body", "workflow_id"))
	}
	errs = append(errs, callbackURLErrors(req.WebhookURL, "")...)
	if m := req.MaxElapsedTimeMinutes; m != nil && (*m < 1 || *m > maxElapsedMinutesLimit) {
		errs = append(errs, valueError(fmt.Sprintf("max_elapsed_time_minutes must be between 1 and %d", maxElapsedMinutesLimit), *m, "body", "max_elapsed_time_minutes"))
	}
	errs = append(errs, checkRunMetadata(req.RunMetadata)...)
	if req.RunWith != "" && !contains(runWithValues, req.RunWith) {
		errs = append(errs, enumError(runWithValues, req.RunWith, "body", "run_with"))
	}
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	if template {
		s.error(w, r, errorf(KindBadRequest, "The local daemon has no global templates; run your own agent without template=true"))
		return
	}
	org := organization(r.Context())
	agent, err := s.agents.Get(r.Context(), org.ID, req.AgentID, 0)
	if err != nil {
		s.error(w, r, err)
		return
	}
	params, err := resolveParameters(agent, req.Parameters)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.starter.checkBrowser(r, req.BrowserProfileID, req.BrowserSessionID); err != nil {
		s.error(w, r, err)
		return
	}
	rec := s.starter.agentRunRecord(org.ID, agent, &req, params)
	rec.MaxSteps = maxStepsOverride
	s.starter.start(w, r, rec)
}

// checkRunMetadata checks run_metadata: at most 20 entries, keys of at
// most 64 characters, values of at most 256.
func checkRunMetadata(m map[string]string) []client.ValidationError {
	var errs []client.ValidationError
	if len(m) > maxRunMetadata {
		errs = append(errs, fieldError("too_long", fmt.Sprintf("Dictionary should have at most %d items after validation, not %d", maxRunMetadata, len(m)), nil, "body", "run_metadata"))
	}
	for k, v := range m {
		if utf8.RuneCountInString(k) > maxRunMetadataKey {
			errs = append(errs, valueError(fmt.Sprintf("run_metadata keys must be at most %d characters", maxRunMetadataKey), k, "body", "run_metadata", k))
		}
		if utf8.RuneCountInString(v) > maxRunMetadataValue {
			errs = append(errs, valueError(fmt.Sprintf("run_metadata values must be at most %d characters", maxRunMetadataValue), v, "body", "run_metadata", k))
		}
	}
	return errs
}

// handleGetRun serves GET /v1/runs/{id}.
func (s runsAPI) handleGetRun(w http.ResponseWriter, r *http.Request) {
	s.writeRun(w, r, organization(r.Context()).ID, r.PathValue("id"))
}

// handleCancelRun serves POST /v1/runs/{id}/cancel. Canceling a run that
// already ended leaves it as it is and still answers 200, as the service
// does for workflow runs.
func (s runsAPI) handleCancelRun(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	if err := s.cancelRun(r.Context(), organization(r.Context()).ID, r.PathValue("id")); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}

// cancelRun cancels a run and, for a run_action workflow run, closes its
// browser session now rather than at its idle timeout.
func (s runsAPI) cancelRun(ctx context.Context, orgID, id string) error {
	if _, err := s.exec.Runner.Cancel(ctx, orgID, id); err != nil {
		return err
	}
	if a := s.exec.Actions; a != nil && a.ActionRunOpen(id) {
		// The session is the run's only if the run is the organization's:
		// Cancel found it.
		a.EndActionRun(ctx, id, client.RunStatusCanceled, "The run was canceled.")
	}
	return nil
}

// handleCancelRuns serves POST /v1/runs/cancel: up to 100 ids, each either
// cancelled (including runs that had already ended, which stay as they
// were) or failed (unknown ids).
func (s runsAPI) handleCancelRuns(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	var body struct {
		RunIDs *[]string `json:"run_ids"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if body.RunIDs == nil {
		s.error(w, r, invalid([]client.ValidationError{missingField("body", "run_ids")}))
		return
	}
	if n := len(*body.RunIDs); n > maxBulkCancel {
		s.error(w, r, invalid([]client.ValidationError{tooLong(n, maxBulkCancel, nil, "body", "run_ids")}))
		return
	}
	out := client.BulkCancelResponse{Cancelled: []string{}, Failed: []string{}}
	seen := map[string]bool{}
	org := organization(r.Context()).ID
	for _, id := range *body.RunIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		if err := s.cancelRun(r.Context(), org, id); err != nil {
			out.Failed = append(out.Failed, id)
			continue
		}
		out.Cancelled = append(out.Cancelled, id)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleRetryWebhook serves POST /v1/runs/{id}/retry_webhook: it sends the
// run's webhook again, to its URL or to the one in the body, signed with
// the caller's key. It answers at once with what is being sent (one
// attempt, in the background); the outcome is recorded in the run's
// webhook retries, and logged when it fails. The run's status,
// failure_reason and webhook_failure_reason stay as they are (see
// runner.Webhooks.Replay).
func (s runsAPI) handleRetryWebhook(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	var body struct {
		WebhookURL *string `json:"webhook_url"`
	}
	if raw, err := readBody(r); err != nil {
		s.error(w, r, err)
		return
	} else if len(strings.TrimSpace(string(raw))) > 0 {
		if err := decodeJSON(raw, &body); err != nil {
			s.error(w, r, err)
			return
		}
	}
	org := organization(r.Context()).ID
	id := r.PathValue("id")
	rec, err := s.runs.Get(r.Context(), org, id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if !rec.Terminal() {
		s.error(w, r, errorf(KindBadRequest, "Run %s has not reached a terminal state (status=%s).", id, rec.Status))
		return
	}
	target := rec.WebhookURL
	if body.WebhookURL != nil && strings.TrimSpace(*body.WebhookURL) != "" {
		target = strings.TrimSpace(*body.WebhookURL)
	}
	if target == "" {
		s.error(w, r, errorf(KindBadRequest, "No webhook URL configured for the run."))
		return
	}
	replay := s.exec.Webhooks.Replay(r.Context(), rec, target, r.Header.Get("X-Api-Key"))
	writeJSON(w, http.StatusOK, replay)
}

// handleRunArtifacts serves GET /v1/runs/{id}/artifacts, optionally only
// the artifact_type values given (repeatable).
func (s runsAPI) handleRunArtifacts(w http.ResponseWriter, r *http.Request) {
	rec, err := s.runs.Get(r.Context(), organization(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	types := map[client.ArtifactType]bool{}
	for _, v := range r.URL.Query()["artifact_type"] {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				types[client.ArtifactType(t)] = true
			}
		}
	}
	writeJSON(w, http.StatusOK, s.runArtifacts(rec, baseURL(r), types))
}
