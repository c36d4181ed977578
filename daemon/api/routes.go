package api

import (
	"net/http"
	"slices"
	"strings"

	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/store"
)

// routes lists every route the daemon serves. Routes under /v1 need an API
// key; the hosted service also answers most of them with a trailing slash,
// which the mux here treats as a different path (answered 404).
func (s *Server) routes() http.Handler {
	api := http.NewServeMux()

	api.HandleFunc("GET /v1/agents", s.handleListAgents)
	api.HandleFunc("POST /v1/agents", s.handleCreateAgent)
	api.HandleFunc("GET /v1/agents/{id}", s.handleGetAgent)
	api.HandleFunc("POST /v1/agents/{id}", s.handleUpdateAgent)
	api.HandleFunc("GET /v1/agents/{id}/versions", s.handleAgentVersions)
	api.HandleFunc("POST /v1/agents/{id}/delete", s.handleDeleteAgent)
	api.HandleFunc("PUT /v1/agents/{id}/folder", s.handleSetAgentFolder)
	// "runs" is not an agent id: these literal paths win over {id}.
	api.HandleFunc("GET /v1/agents/runs", s.handleListAgentRuns)
	api.HandleFunc("GET /v1/agents/{id}/runs", s.handleListAgentRuns)
	api.HandleFunc("POST /v1/agents/runs/{id}/retry", s.handleRetryAgentRun)
	api.HandleFunc("POST /v1/agents/{id}/schedules", s.handleCreateSchedule) // schedules.go
	api.HandleFunc("GET /v1/agents/{id}/schedules", s.handleListSchedules)
	api.HandleFunc("GET /v1/agents/{id}/schedules/{schedule_id}", s.handleGetSchedule)
	api.HandleFunc("PUT /v1/agents/{id}/schedules/{schedule_id}", s.handleUpdateSchedule)
	api.HandleFunc("DELETE /v1/agents/{id}/schedules/{schedule_id}", s.handleDeleteSchedule)
	api.HandleFunc("POST /v1/agents/{id}/schedules/{schedule_id}/enable", s.handleSetScheduleEnabled(true))
	api.HandleFunc("POST /v1/agents/{id}/schedules/{schedule_id}/disable", s.handleSetScheduleEnabled(false))
	api.HandleFunc("GET /v1/schedules", s.handleListAllSchedules)

	agentTags := tagRoutes{s: s, kind: store.AgentSubject}
	api.HandleFunc("POST /v1/agents/{id}/tags", agentTags.apply)
	api.HandleFunc("GET /v1/agents/{id}/tags", agentTags.get)
	api.HandleFunc("DELETE /v1/agents/{id}/tags/{key}", agentTags.delete)
	api.HandleFunc("GET /v1/agents/{id}/tags/history", agentTags.history)
	workflowTags := s.batchTags(store.AgentSubject, "workflow_permanent_ids", "workflow_tags", "workflow")
	api.HandleFunc("GET /v1/workflow-tags", workflowTags)
	api.HandleFunc("POST /v1/workflow-tags", workflowTags)

	api.HandleFunc("POST /v1/run/tasks", s.handleStartTask)
	api.HandleFunc("POST /v1/runs", s.handleStartTask)
	api.HandleFunc("POST /v1/run/agents", s.handleStartAgent)
	api.HandleFunc("GET /v1/runs", s.handleListRuns)
	api.HandleFunc("GET /v1/runs/{id}", s.handleGetRun)
	api.HandleFunc("GET /v1/runs/{id}/timeline", s.handleRunTimeline)
	api.HandleFunc("GET /v1/runs/{id}/steps", s.handleRunSteps) // abctl's own
	api.HandleFunc("POST /v1/runs/{id}/cancel", s.handleCancelRun)
	api.HandleFunc("GET /v1/runs/{id}/interaction", s.handleRunInteraction) // abctl's own, as the two below (human.go)
	api.HandleFunc("POST /v1/runs/{id}/approve", s.handleApproveRun)
	api.HandleFunc("POST /v1/runs/{id}/reject", s.handleRejectRun)
	api.HandleFunc("POST /v1/runs/cancel", s.handleCancelRuns)
	api.HandleFunc("POST /v1/runs/{id}/retry_webhook", s.handleRetryWebhook)
	api.HandleFunc("GET /v1/runs/{id}/artifacts", s.handleRunArtifacts)
	api.HandleFunc("POST /v1/sdk/run_action", s.handleRunAction)

	api.HandleFunc("POST /v1/credentials", s.handleCreateCredential)
	api.HandleFunc("GET /v1/credentials", s.handleListCredentials)
	api.HandleFunc("POST /v1/credentials/totp", s.handleSendTOTPCode)
	api.HandleFunc("POST /v1/run/tasks/login", s.handleStartLogin)
	api.HandleFunc("POST /v1/run/tasks/download_files", s.handleDownloadFiles)
	api.HandleFunc("POST "+uploadPath, s.handleUploadFile)
	api.HandleFunc("GET /v1/artifacts/{artifact_id}/content", s.handleArtifactContent)

	api.HandleFunc("POST /v1/browser_profiles", s.handleCreateProfile)
	api.HandleFunc("GET /v1/browser_profiles", s.handleListProfiles)
	api.HandleFunc("GET /v1/browser_profiles/{id}", s.handleGetProfile)
	api.HandleFunc("PATCH /v1/browser_profiles/{id}", s.handleUpdateProfile)
	api.HandleFunc("DELETE /v1/browser_profiles/{id}", s.handleDeleteProfile)
	api.HandleFunc("POST /v1/agents/{id}/browser_session/reset_profile", s.handleResetProfile)

	api.HandleFunc("POST /v1/browser_sessions", s.handleCreateSession)
	api.HandleFunc("GET /v1/browser_sessions", s.handleListSessions)
	api.HandleFunc("GET /v1/browser_sessions/{id}", s.handleGetSession)
	api.HandleFunc("PATCH /v1/browser_sessions/{id}", s.handleUpdateSession)
	api.HandleFunc("POST /v1/browser_sessions/{id}/close", s.handleCloseSession)
	api.HandleFunc("GET /v1/credentials/{id}", s.handleGetCredential)
	api.HandleFunc("POST /v1/credentials/{id}/update", s.handleUpdateCredential)
	api.HandleFunc("POST /v1/credentials/{id}/delete", s.handleDeleteCredential)

	// Only workflow runs (wr_) carry tags.
	runTags := tagRoutes{s: s, kind: store.RunSubject}
	api.HandleFunc("POST /v1/runs/{id}/tags", runTags.apply)
	api.HandleFunc("GET /v1/runs/{id}/tags", runTags.get)
	api.HandleFunc("DELETE /v1/runs/{id}/tags/{key}", runTags.delete)
	api.HandleFunc("GET /v1/runs/{id}/tags/history", runTags.history)
	batchRunTags := s.batchTags(store.RunSubject, "workflow_run_ids", "run_tags", "workflow run")
	api.HandleFunc("GET /v1/run-tags", batchRunTags)
	api.HandleFunc("POST /v1/run-tags", batchRunTags)

	api.HandleFunc("GET /v1/tag-keys", s.handleListTagKeys)
	api.HandleFunc("PATCH /v1/tag-keys/{key}", s.handleUpdateTagKey)
	api.HandleFunc("DELETE /v1/tag-keys/{key}", s.handleDeleteTagKey)
	api.HandleFunc("GET /v1/tag-values", s.handleListTagValues)
	api.HandleFunc("POST /v1/tag-values", s.handleCreateTagValue)
	api.HandleFunc("PATCH /v1/tag-values/{key}", s.handleRecolorTagValue)
	api.HandleFunc("DELETE /v1/tag-values/{key}", s.handleDeleteTagValue)
	api.HandleFunc("PATCH /v1/tag-values/{key}/rename", s.handleRenameTagValue)

	api.HandleFunc("GET /v1/custom-llms", s.handleListCustomLLMs)
	api.HandleFunc("POST /v1/custom-llms", s.handleCreateCustomLLM)
	api.HandleFunc("PUT /v1/custom-llms/{id}", s.handleUpdateCustomLLM)
	api.HandleFunc("DELETE /v1/custom-llms/{id}", s.handleDeleteCustomLLM)

	api.HandleFunc("POST /v1/folders", s.handleCreateFolder)
	api.HandleFunc("GET /v1/folders", s.handleListFolders)
	api.HandleFunc("GET /v1/folders/{id}", s.handleGetFolder)
	api.HandleFunc("PUT /v1/folders/{id}", s.handleUpdateFolder)
	api.HandleFunc("DELETE /v1/folders/{id}", s.handleDeleteFolder)
	s.mountMCP(api) // /mcp: the MCP tools over streamable HTTP (mcp.go)

	api.Handle("/", notFoundOrMethod(api))

	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	// No API key for the version, as the hosted service asks none (version.go).
	root.HandleFunc("GET /v1/version", s.handleVersion)
	root.Handle("/admin/", s.adminRoutes()) // loopback and admin token only: admin.go
	if l := s.links(); l != nil && l.Signer != nil && s.runs.Files != nil {
		// Run files open in a browser: the URL's signature is the credential.
		root.Handle(artifacts.Path, s.runs.Files.Handler(l.Signer))
	}
	root.Handle("/", chain(api, withAuth(s.store, s.logger), withBodyLimit))

	return chain(root, withRequestID, withSecurityHeaders, withAccessLog(s.accessLog), withRecover(s.logger))
}

// notFoundOrMethod answers what no route took: 405 with an Allow header
// when the path exists for other methods, 404 otherwise, both with the
// hosted service's JSON bodies. (The mux would find the 405 itself, but
// only without a catch-all route, and then it would answer in plain text.)
func notFoundOrMethod(mux *http.ServeMux) http.Handler {
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, m := range methods {
			if m == r.Method {
				continue
			}
			probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) == 0 {
			writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
			return
		}
		if slices.Contains(allowed, http.MethodGet) {
			allowed = append(allowed, http.MethodHead)
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
	})
}
