package api

// The run list and the run timeline.
//
// GET /v1/runs is left out of the hosted service's reference but served
// there (docs/hosted-service.md); the daemon answers it the same way, from
// the store's run index (store.Runs.List): the organization's runs newest
// first, as TaskRunListItem objects. task_run_id is the run id, since the
// daemon keeps no separate task-run rows.
//
// GET /v1/runs/{id}/timeline answers the hosted service's shape (package
// daemon/runview builds it): the run's block executions with the agent
// loop's decisions as thoughts under them. GET /v1/runs/{id}/steps is
// abctl's own route: the run's steps, newest first, each a client.RunStep
//
//	{"number": 3, "block_label": "login" (null in a task run),
//	 "workflow_run_block_id": "wrb_...", "url": "...", "thought": "...",
//	 "actions": ["click [kd] button \"Sign in\": ok, loaded /account.html"],
//	 "decision": "continue",
//	 "timings_ms": {"settle": 12.5, "observe": 30.1, "model": 812, "act": 95.2},
//	 "tokens": {"input": 1234, "output": 56}, "created_at": "..."}
//
// of its latest store.MaxRunSteps steps; a run that took no step yet has [].

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/tagquery"
)

// Bounds of GET /v1/runs, as the hosted service declares them.
const (
	maxRunListPage      = 100
	maxRunListPageSize  = 100
	minRunSearchKey     = 3
	maxRunListAgentsIDs = 50
)

// runStatuses and runTypes are the values the run list's filters take: an
// unknown one is a 422, as the hosted service's enum validation answers.
var (
	runStatuses = []client.RunStatus{client.RunStatusCreated, client.RunStatusQueued, client.RunStatusRunning,
		client.RunStatusPaused, client.RunStatusTimedOut, client.RunStatusFailed, client.RunStatusTerminated,
		client.RunStatusCompleted, client.RunStatusCanceled}
	runTypes = []client.RunType{client.RunTypeTaskV1, client.RunTypeTaskV2, client.RunTypeTaskV3,
		client.RunTypeWorkflowRun, client.RunTypeOpenAICUA, client.RunTypeAnthropicCUA, client.RunTypeUITars,
		client.RunTypeYutoriNavigator}
)

// handleListRuns serves GET /v1/runs.
func (s runsAPI) handleListRuns(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	page, size := qr.paging(10, maxRunListPage, maxRunListPageSize)
	q := store.RunQuery{
		Page:     page,
		PageSize: size,
	}
	q.Statuses = enumValues(qr, "status", runStatuses)
	q.Types = enumValues(qr, "run_type", runTypes)
	if _, present := qr.q["search_key"]; present {
		q.SearchKey = qr.string("search_key")
		if n := utf8.RuneCountInString(q.SearchKey); n < minRunSearchKey {
			e := fieldError("string_too_short", fmt.Sprintf("String should have at least %d characters", minRunSearchKey), q.SearchKey, "query", "search_key")
			e.Ctx = []byte(fmt.Sprintf(`{"min_length":%d}`, minRunSearchKey))
			qr.errs = append(qr.errs, e)
		}
	}
	q.AgentIDs = splitValues(qr.strings("workflow_permanent_id"))
	if n := len(q.AgentIDs); n > maxRunListAgentsIDs {
		qr.errs = append(qr.errs, tooLong(n, maxRunListAgentsIDs, nil, "query", "workflow_permanent_id"))
	}
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	tags, err := tagquery.Parse(qr.strings("tags"))
	if err != nil {
		s.error(w, r, errorf(KindBadRequest, "%s", err.Error()))
		return
	}
	q.Tags = tags
	items, err := s.runs.List(r.Context(), organization(r.Context()).ID, q)
	s.reply(w, r, items, err)
}

// splitValues reads a repeated query parameter whose values may also be
// comma-separated ("a&x=b" or "a,b"), dropping empty ones.
func splitValues(raw []string) []string {
	var out []string
	for _, v := range raw {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// enumValues reads a repeated query parameter of enumerated values,
// recording a 422 entry for each value not in allowed.
func enumValues[E ~string](qr *queryReader, name string, allowed []E) []E {
	var out []E
	for i, v := range splitValues(qr.strings(name)) {
		if !containsValue(allowed, v) {
			quoted := make([]string, len(allowed))
			for j, a := range allowed {
				quoted[j] = "'" + string(a) + "'"
			}
			expected := strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
			e := fieldError("enum", "Input should be "+expected, v, "query", name, i)
			e.Ctx, _ = marshalJSON(map[string]string{"expected": expected})
			qr.errs = append(qr.errs, e)
			continue
		}
		out = append(out, E(v))
	}
	return out
}

func containsValue[E ~string](set []E, v string) bool {
	for _, s := range set {
		if string(s) == v {
			return true
		}
	}
	return false
}

// handleRunTimeline serves GET /v1/runs/{id}/timeline (see the top of
// this file).
func (s runsAPI) handleRunTimeline(w http.ResponseWriter, r *http.Request) {
	trace, err := s.runs.Trace(r.Context(), organization(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, runview.Timeline(trace))
}

// handleRunSteps serves GET /v1/runs/{id}/steps: the run's steps, newest
// first, as the store keeps them.
func (s runsAPI) handleRunSteps(w http.ResponseWriter, r *http.Request) {
	rows, err := s.runs.StepsJSON(r.Context(), organization(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeRawJSONList(w, rows)
}
