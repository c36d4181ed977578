package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// runStarter is what every route that starts a run shares (task, agent,
// login and download_files runs, retries, script runs, run_action's
// workflow runs): the checks of the browser a run asks for, and the
// storing of the new run and its hand-over to the runner.
type runStarter struct {
	responder
	runs            store.Runs
	profiles        store.Profiles
	browserSessions store.BrowserSessions
	exec            *Runs // nil: the server starts no runs
}

// enabled answers 503 and returns false when the server has no runner.
func (rs runStarter) enabled(w http.ResponseWriter, r *http.Request) bool {
	return rs.runsEnabled(w, r, rs.exec)
}

// checkBrowser makes sure the browser_profile_id and browser_session_id of
// a run requested by r (either may be "") name a profile and an open
// session of the organization, before the run is queued.
func (rs runStarter) checkBrowser(r *http.Request, profileID, sessionID string) error {
	orgID := organization(r.Context()).ID
	if err := checkProfile(r.Context(), rs.profiles, orgID, profileID); err != nil {
		return err
	}
	return checkSession(r.Context(), rs.browserSessions, orgID, sessionID)
}

// start stores a new run requested by r (it records who asked and where
// from), hands it to the runner and answers it.
func (rs runStarter) start(w http.ResponseWriter, r *http.Request, rec *store.RunRecord) {
	rec.KeyHash, rec.BaseURL, rec.Trigger = keyHash(r), baseURL(r), triggerOf(r)
	if err := rs.runs.Create(r.Context(), rec); err != nil {
		rs.error(w, r, err)
		return
	}
	rs.exec.Runner.Submit(rec.OrgID, rec.ID)
	writeJSON(w, http.StatusOK, rs.exec.links().Run(rec, baseURL(r)))
}

// agentRunRecord is the record of a new run of agent for req, with params
// its parameters resolved (resolveParameters), queued and not yet stored:
// the webhook, time limit and title default to the agent's. The caller
// sets what depends on who asked (MaxSteps; start sets the rest).
// POST /v1/run/agents, script runs and the runs of workflow_trigger blocks
// (NewTriggeredRun) make their records here.
func (rs runStarter) agentRunRecord(orgID string, agent *client.Agent, req *client.AgentRunRequest, params map[string]json.RawMessage) *store.RunRecord {
	webhook := strings.TrimSpace(req.WebhookURL)
	if webhook == "" && agent.WebhookCallbackURL != nil {
		webhook = strings.TrimSpace(*agent.WebhookCallbackURL)
	}
	elapsed := defaultMaxElapsedMin
	switch {
	case req.MaxElapsedTimeMinutes != nil:
		elapsed = *req.MaxElapsedTimeMinutes
	case agent.MaxElapsedTimeMinutes != nil:
		elapsed = *agent.MaxElapsedTimeMinutes
	}
	echo := *req
	echo.CDPConnectHeaders = maskHeaders(req.CDPConnectHeaders)
	runRequest, _ := json.Marshal(echo)
	rec := &store.RunRecord{
		ID: rs.runs.NewID(client.RunTypeWorkflowRun), OrgID: orgID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, RunRequest: runRequest,
		AgentID: agent.WorkflowPermanentID, AgentVersion: agent.Version, AgentVersionID: agent.WorkflowID, Parameters: params,
		Title: req.Title, MaxElapsedMinutes: elapsed, WebhookURL: webhook,
		BrowserProfileID: req.BrowserProfileID, BrowserSessionID: req.BrowserSessionID,
		RunWith: req.RunWith, AIFallback: req.AIFallback,
	}
	if rec.Title == "" {
		rec.Title = agent.Title
	}
	return rec
}

// definitionRun is what a run started from a definition the request
// builds (a login or download_files run: no agent backs it) takes from its
// request.
type definitionRun struct {
	title                       string
	webhookURL                  string
	browserProfileID, sessionID string
}

// definitionRunRecord is the queued record of a run of def, not yet
// stored, for the request req (echoed in run_request with the empty
// workflow_id every agent run's has: no agent backs the run).
func (rs runStarter) definitionRunRecord(orgID string, req any, def *client.WorkflowDefinition, run definitionRun) *store.RunRecord {
	echo := map[string]any{}
	raw, _ := json.Marshal(req)
	json.Unmarshal(raw, &echo)
	echo["workflow_id"] = ""
	runRequest, _ := json.Marshal(echo)
	return &store.RunRecord{
		ID: rs.runs.NewID(client.RunTypeWorkflowRun), OrgID: orgID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, RunRequest: runRequest, Definition: def, Title: run.title,
		MaxElapsedMinutes: defaultMaxElapsedMin, WebhookURL: strings.TrimSpace(run.webhookURL),
		BrowserProfileID: run.browserProfileID, BrowserSessionID: run.sessionID,
	}
}

// decodeWithPresence decodes the JSON body of r into req and into
// present, a struct of pointers that tells the members the body left out
// from those it gave empty. Unlike decodeJSONBody it does not look at the
// media type.
func decodeWithPresence(r *http.Request, req, present any) error {
	body, err := readBody(r)
	if err == nil {
		err = decodeJSON(body, req)
	}
	if err == nil {
		err = decodeJSON(body, present)
	}
	return err
}

// callbackURLErrors checks the URLs a run calls back, the webhook_url and
// the totp_url (either may be ""; a request without a totp_url passes "").
func callbackURLErrors(webhookURL, totpURL string) []client.ValidationError {
	var errs []client.ValidationError
	if webhookURL != "" {
		if msg := checkWebhookURL(webhookURL); msg != "" {
			errs = append(errs, valueError(msg, webhookURL, "body", "webhook_url"))
		}
	}
	if totpURL != "" {
		if msg := checkWebhookURL(totpURL); msg != "" {
			errs = append(errs, valueError(msg, totpURL, "body", "totp_url"))
		}
	}
	return errs
}

// checkProfile makes sure a run's browser_profile_id names a profile of
// organization orgID: 404 otherwise. "" names none and passes.
func checkProfile(ctx context.Context, profiles store.Profiles, orgID, id string) error {
	if id == "" {
		return nil
	}
	_, err := profiles.Get(ctx, orgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(KindNotFound, "Browser profile %s not found", id)
	}
	return err
}

// checkSession makes sure a run's browser_session_id names an open session
// of organization orgID: 404 for an unknown one, 409 for one that ended.
// "" names none and passes.
func checkSession(ctx context.Context, sessions store.BrowserSessions, orgID, id string) error {
	if id == "" {
		return nil
	}
	bs, err := sessions.Get(ctx, orgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(KindNotFound, "Browser session %s not found", id)
	}
	if err != nil {
		return err
	}
	if bs.Status == nil || *bs.Status != store.SessionRunning {
		return errorf(KindConflict, "Browser session %s is %s: open a new one", id, deref(bs.Status))
	}
	return nil
}
