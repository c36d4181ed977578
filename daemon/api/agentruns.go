package api

// The agent run lists and the retry of an agent run.
//
// GET /v1/agents/runs lists the organization's workflow runs, and
// GET /v1/agents/{id}/runs those of one agent, newest first, as the hosted
// service's WorkflowRun objects (client.AgentRun, built by package
// daemon/runview). Their filters: status (repeated), search_key (a
// case-insensitive substring of the run id, a parameter's key, description
// or value, or the extra HTTP headers), error_code (exact, against the
// error_code of the run's errors), and on the per-agent route
// created_at_start and created_at_end. An id that names no agent lists no
// run, as the service's query does.
//
// POST /v1/agents/runs/{id}/retry starts a new run of the same agent
// version with the original run's parameters and settings.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
)

// maxAgentRunSearchKey bounds search_key and error_code, as the hosted
// service declares them.
const maxAgentRunSearchKey = 500

// workflowRunStatuses are the values of the agent run lists' status filter
// (the hosted service's WorkflowRunStatus).
var workflowRunStatuses = []client.RunStatus{client.RunStatusCreated, client.RunStatusQueued, client.RunStatusRunning,
	client.RunStatusFailed, client.RunStatusTerminated, client.RunStatusCanceled, client.RunStatusTimedOut,
	client.RunStatusCompleted, client.RunStatusPaused}

// handleListAgentRuns serves GET /v1/agents/runs and GET /v1/agents/{id}/runs.
func (s agentsAPI) handleListAgentRuns(w http.ResponseWriter, r *http.Request) {
	agentID := r.PathValue("id")
	qr := newQueryReader(r)
	page, size := qr.paging(10, 0, 0)
	q := store.RunQuery{
		Page:     page,
		PageSize: size,
		Types:    []client.RunType{client.RunTypeWorkflowRun},
		Statuses: enumValues(qr, "status", workflowRunStatuses),
	}
	if agentID != "" {
		q.AgentIDs = []string{agentID}
		q.CreatedFrom, q.CreatedTo = qr.time("created_at_start"), qr.time("created_at_end")
	}
	term := bounded(qr, "search_key")
	code := bounded(qr, "error_code")
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	orgID := organization(r.Context()).ID
	versions := agentVersions{agents: s.agents, ctx: r.Context(), orgID: orgID}
	var match func(*store.RunRecord) bool
	if term != "" || code != "" {
		term = strings.ToLower(term)
		match = func(rec *store.RunRecord) bool {
			return (code == "" || hasErrorCode(rec, code)) && (term == "" || versions.searchMatches(rec, term))
		}
	}
	recs, err := s.runs.Records(r.Context(), orgID, q, match)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := make([]*client.AgentRun, len(recs))
	for i, rec := range recs {
		out[i] = runview.AgentRun(rec, versions.id(rec))
	}
	writeJSON(w, http.StatusOK, out)
}

// bounded reads a string filter of at most maxAgentRunSearchKey
// characters; "" when absent.
func bounded(qr *queryReader, name string) string {
	v := qr.string(name)
	if n := utf8.RuneCountInString(v); n > maxAgentRunSearchKey {
		e := fieldError("string_too_long", fmt.Sprintf("String should have at most %d characters", maxAgentRunSearchKey), v, "query", name)
		e.Ctx = []byte(fmt.Sprintf(`{"max_length":%d}`, maxAgentRunSearchKey))
		qr.errs = append(qr.errs, e)
		return ""
	}
	return v
}

// hasErrorCode reports whether one of the run's errors has exactly this
// error_code.
func hasErrorCode(rec *store.RunRecord, code string) bool {
	for _, raw := range rec.Errors {
		var e struct {
			ErrorCode any `json:"error_code"`
		}
		if json.Unmarshal(raw, &e) == nil && fmt.Sprint(e.ErrorCode) == code && e.ErrorCode != nil {
			return true
		}
	}
	return false
}

// agentVersions looks up, once per list, the agent versions the listed
// runs executed: their ids, for runs stored before the record kept them,
// and their parameters' descriptions, for search_key.
type agentVersions struct {
	agents store.Agents
	ctx    context.Context
	orgID  string
	seen   map[string]*client.Agent // "wpid@version" -> the version; nil when gone
}

func (v *agentVersions) get(rec *store.RunRecord) *client.Agent {
	key := fmt.Sprintf("%s@%d", rec.AgentID, rec.AgentVersion)
	if a, ok := v.seen[key]; ok {
		return a
	}
	if v.seen == nil {
		v.seen = map[string]*client.Agent{}
	}
	var a *client.Agent
	if rec.AgentID != "" && rec.AgentVersion > 0 {
		// A deleted agent (or version) is left out: its runs are still
		// listed, without what only the version knew.
		a, _ = v.agents.Get(v.ctx, v.orgID, rec.AgentID, rec.AgentVersion)
	}
	v.seen[key] = a
	return a
}

// id is the id of the version the run executed, "" when unknown.
func (v *agentVersions) id(rec *store.RunRecord) string {
	if rec.AgentVersionID != "" {
		return rec.AgentVersionID
	}
	if a := v.get(rec); a != nil {
		return a.WorkflowID
	}
	return ""
}

// searchMatches reports whether the lower-case term is in the run's id, a
// parameter's key, description or value, or its extra HTTP headers.
func (v *agentVersions) searchMatches(rec *store.RunRecord, term string) bool {
	has := func(s string) bool { return strings.Contains(strings.ToLower(s), term) }
	if has(rec.ID) {
		return true
	}
	for key, value := range rec.Parameters {
		if has(key) || has(jsonText(value)) {
			return true
		}
	}
	if a := v.get(rec); a != nil {
		for _, p := range a.WorkflowDefinition.Parameters {
			if has(p.Key) || has(p.Description) {
				return true
			}
		}
	}
	var req struct {
		ExtraHTTPHeaders json.RawMessage `json:"extra_http_headers"`
	}
	if json.Unmarshal(rec.RunRequest, &req) == nil && len(req.ExtraHTTPHeaders) > 0 && !bytes.Equal(req.ExtraHTTPHeaders, []byte("null")) {
		return has(string(req.ExtraHTTPHeaders))
	}
	return false
}

// jsonText is a parameter value as text: a string's content, any other
// value's JSON.
func jsonText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// handleRetryAgentRun serves POST /v1/agents/runs/{id}/retry: a new run
// of the agent version the run executed, with its parameters, title,
// limits, webhook and request settings. 404 for an unknown run or one that
// is not an agent run; 400 for a run that has not ended, or that cannot be
// run again (a run_action run, which has no agent; a run whose agent
// version was deleted).
func (s agentsAPI) handleRetryAgentRun(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	orgID := organization(r.Context()).ID
	id := r.PathValue("id")
	orig, err := s.runs.Get(r.Context(), orgID, id)
	if err == nil && orig.Type != client.RunTypeWorkflowRun {
		err = errorf(KindNotFound, "Workflow run not found: %s is a %s run; retry it by starting a new task run", id, orig.Type)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	switch {
	case !orig.Terminal():
		s.error(w, r, errorf(KindBadRequest, "Workflow run %s is not retryable: it is %s; only a run that has ended can be retried", id, orig.Status))
		return
	case orig.AgentID == "":
		s.error(w, r, errorf(KindBadRequest, "Workflow run %s is not retryable: it was started by run_action and runs no agent", id))
		return
	}
	agent, err := s.agents.Get(r.Context(), orgID, orig.AgentID, orig.AgentVersion)
	if err != nil {
		s.error(w, r, errorf(KindBadRequest, "Workflow run %s is not retryable: version %d of its agent %s no longer exists", id, orig.AgentVersion, orig.AgentID))
		return
	}
	rec := &store.RunRecord{
		ID: s.runs.NewID(client.RunTypeWorkflowRun), OrgID: orgID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, RunRequest: orig.RunRequest,
		AgentID: orig.AgentID, AgentVersion: orig.AgentVersion, AgentVersionID: agent.WorkflowID, Parameters: orig.Parameters,
		Title: orig.Title, MaxSteps: orig.MaxSteps, MaxElapsedMinutes: orig.MaxElapsedMinutes,
		WebhookURL: orig.WebhookURL, BrowserProfileID: orig.BrowserProfileID,
	}
	s.starter.start(w, r, rec)
}
