package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/definition"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/tagquery"
)

// handleListAgents serves GET /v1/agents: the latest version of each agent,
// newest first, filtered and paged.
func (s agentsAPI) handleListAgents(w http.ResponseWriter, r *http.Request) {
	qr := newQueryReader(r)
	page, size := qr.paging(10, 0, 0)
	q := store.AgentQuery{
		Page:     page,
		PageSize: size,
		FolderID: qr.string("folder_id"),
	}
	q.SearchKey = qr.string("search_key")
	if q.SearchKey == "" {
		q.SearchKey = qr.string("title") // deprecated: fed into the same search
	}
	q.OnlySavedTasks = qr.bool("only_saved_tasks")
	q.OnlyWorkflows = qr.bool("only_workflows")
	onlyTemplates := qr.bool("only_templates")
	template := qr.bool("template")
	for _, st := range qr.strings("status") {
		for _, v := range strings.Split(st, ",") {
			if v = strings.TrimSpace(v); v != "" {
				q.Statuses = append(q.Statuses, client.AgentStatus(v))
			}
		}
	}
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	if q.OnlySavedTasks && q.OnlyWorkflows {
		s.error(w, r, errorf(KindBadRequest, "only_saved_tasks and only_workflows cannot be used together"))
		return
	}
	tags, err := tagquery.Parse(qr.strings("tags"))
	if err != nil {
		s.error(w, r, errorf(KindBadRequest, "%s", err.Error()))
		return
	}
	if tags != nil && template {
		s.error(w, r, errorf(KindBadRequest, "tags cannot be combined with template=true: global templates carry no tags"))
		return
	}
	q.Tags = tags
	if template || onlyTemplates {
		// The daemon has no global templates: the list is empty.
		writeJSON(w, http.StatusOK, []*client.Agent{})
		return
	}
	rows, err := s.agents.ListJSON(r.Context(), organization(r.Context()).ID, q)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeRawJSONList(w, rows)
}

// handleCreateAgent serves POST /v1/agents.
func (s agentsAPI) handleCreateAgent(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	if _, present := r.Header["Idempotency-Key"]; present {
		if err := client.ValidateIdempotencyKey(key); err != nil {
			s.error(w, r, errorf(KindInvalid, "Idempotency-Key must contain 1 to 255 visible ASCII bytes."))
			return
		}
	}
	def, err := readDefinition(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	agent := agentFromDefinition(def)
	if f := queryValue(r, "folder_id"); f != "" {
		agent.FolderID = &f
	}
	s.newVersion(agent)
	out, created, err := s.agents.CreateJSON(r.Context(), organization(r.Context()).ID, agent, key)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if !created {
		// The key's agent existed: this answer is a replay, which tells a
		// client whose create raced another's (two `abctl run` of one file)
		// that it did not create the agent.
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRawJSON(w, http.StatusOK, out)
}

// handleUpdateAgent serves POST /v1/agents/{id}: a new version.
func (s agentsAPI) handleUpdateAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	def, err := readDefinition(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	agent := agentFromDefinition(def)
	s.newVersion(agent)
	out, err := s.agents.Update(r.Context(), organization(r.Context()).ID, id, agent)
	s.reply(w, r, out, err)
}

// newVersion makes a the content of a new agent version as the hosted
// service stores it (package definition): a new workflow_id, created_at
// now, and its definition in the response shape, with parameter records
// of its own. The store gives it its place (wpid, version).
func (s agentsAPI) newVersion(a *client.Agent) {
	definition.NewVersion(a, s.ids, client.NewTime(s.now()))
}

// handleGetAgent serves GET /v1/agents/{id}, optionally ?version=N.
func (s agentsAPI) handleGetAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	qr := newQueryReader(r)
	version := qr.int("version", 0, 1, 0)
	template := qr.bool("template")
	if err := qr.err(); err != nil {
		s.error(w, r, err)
		return
	}
	if template {
		s.error(w, r, errorf(KindBadRequest, "Workflow %s is not a template", id))
		return
	}
	org := organization(r.Context()).ID
	err := writeAppended(w, func(dst []byte) ([]byte, error) {
		return s.agents.AppendJSON(r.Context(), dst, org, id, version)
	})
	if err != nil {
		s.error(w, r, err)
	}
}

// handleAgentVersions serves GET /v1/agents/{id}/versions.
func (s agentsAPI) handleAgentVersions(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	out, err := s.agents.Versions(r.Context(), organization(r.Context()).ID, id)
	if errors.Is(err, store.ErrNotFound) {
		out, err = []*client.Agent{}, nil // as upstream: no 404 here
	}
	s.reply(w, r, out, err)
}

// handleDeleteAgent serves POST /v1/agents/{id}/delete: soft and
// idempotent, answering null.
func (s agentsAPI) handleDeleteAgent(w http.ResponseWriter, r *http.Request) {
	if err := s.agents.Delete(r.Context(), organization(r.Context()).ID, r.PathValue("id")); err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nil)
}

// handleSetAgentFolder serves PUT /v1/agents/{id}/folder.
func (s agentsAPI) handleSetAgentFolder(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body struct {
		FolderID *string `json:"folder_id"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	folder := ""
	if body.FolderID != nil {
		folder = *body.FolderID
	}
	org := organization(r.Context()).ID
	if folder != "" {
		if _, err := s.folders.Get(r.Context(), org, folder); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				err = errorf(KindBadRequest, "Folder %s not found", folder)
			}
			s.error(w, r, err)
			return
		}
	}
	out, err := s.agents.SetFolder(r.Context(), org, id, folder)
	s.reply(w, r, out, err)
}
