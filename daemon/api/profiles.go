package api

import (
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// Browser profiles: POST/GET /v1/browser_profiles, GET/PATCH/DELETE
// /v1/browser_profiles/{id}, and POST
// /v1/agents/{id}/browser_session/reset_profile. A profile's browser state
// (cookies, local storage) is sealed in the store and never answered.

// handleCreateProfile serves POST /v1/browser_profiles: an empty profile,
// or the browser state an agent run kept.
func (s profilesAPI) handleCreateProfile(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name             *string `json:"name"`
		Description      *string `json:"description"`
		BrowserSessionID *string `json:"browser_session_id"`
		WorkflowRunID    *string `json:"workflow_run_id"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	var errs []client.ValidationError
	switch {
	case body.Name == nil:
		errs = append(errs, missingField("body", "name"))
	case *body.Name == "":
		errs = append(errs, fieldError("string_too_short", "String should have at least 1 character", "", "body", "name"))
	}
	sessionID, runID := strings.TrimSpace(deref(body.BrowserSessionID)), strings.TrimSpace(deref(body.WorkflowRunID))
	if sessionID != "" && runID != "" {
		errs = append(errs, valueError("give browser_session_id or workflow_run_id, not both", nil, "body", "browser_session_id"))
	}
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context())
	desc := ""
	if body.Description != nil {
		desc = *body.Description
	}
	var state []byte
	wpid := ""
	if sessionID != "" {
		bs, err := s.browserSessions.Get(r.Context(), org.ID, sessionID)
		if err != nil {
			s.error(w, r, err)
			return
		}
		if bs.Status != nil && *bs.Status == store.SessionRunning {
			s.error(w, r, errorf(KindConflict, "Browser session %s is still open: close it first (with generate_browser_profile true), then make the profile", sessionID))
			return
		}
		if state, err = s.profiles.SessionState(r.Context(), org.ID, sessionID); err != nil {
			s.error(w, r, err)
			return
		}
		if state == nil {
			s.error(w, r, errorf(KindBadRequest, "Browser session %s kept no browser state: set generate_browser_profile to true before it closes", sessionID))
			return
		}
	}
	if id := runID; id != "" {
		run, err := s.runs.Get(r.Context(), org.ID, id)
		if err != nil {
			s.error(w, r, err)
			return
		}
		if state, err = s.profiles.RunState(r.Context(), org.ID, id); err != nil {
			s.error(w, r, err)
			return
		}
		if state == nil {
			s.error(w, r, errorf(KindBadRequest, "Workflow run %s kept no browser state: only the runs of an agent with persist_browser_session keep theirs, when they end", id))
			return
		}
		wpid = run.AgentID
	}
	out, err := s.profiles.Create(r.Context(), org.ID, *body.Name, desc, state, wpid)
	s.reply(w, r, out, err)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// handleListProfiles serves GET /v1/browser_profiles.
func (s profilesAPI) handleListProfiles(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	page, size := qr.paging(10, 0, 0)
	deleted := qr.bool("include_deleted")
	search := qr.string("search_key")
	managed := qr.string("managed")
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	out := []*client.BrowserProfile{}
	// The daemon has no managed profiles: managed=true lists none.
	if managed != "true" {
		var err error
		out, err = s.profiles.List(r.Context(), organization(r.Context()).ID,
			store.ProfileQuery{Page: page, PageSize: size, Search: search, IncludeDeleted: deleted})
		if err != nil {
			s.error(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleUpdateProfile serves PATCH /v1/browser_profiles/{id}.
func (s profilesAPI) handleUpdateProfile(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if body.Name != nil && *body.Name == "" {
		s.error(w, r, invalid([]client.ValidationError{fieldError("string_too_short", "String should have at least 1 character", "", "body", "name")}))
		return
	}
	out, err := s.profiles.Update(r.Context(), organization(r.Context()).ID, r.PathValue("id"), body.Name, body.Description)
	s.reply(w, r, out, err)
}

// handleResetProfile serves POST /v1/agents/{id}/browser_session/reset_profile:
// the agent's next run starts from a fresh browser.
func (s profilesAPI) handleResetProfile(w http.ResponseWriter, r *http.Request) {
	org := organization(r.Context())
	id := r.PathValue("id")
	if _, err := s.agents.Get(r.Context(), org.ID, id, 0); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.profiles.ResetAgentState(r.Context(), org.ID, id); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
