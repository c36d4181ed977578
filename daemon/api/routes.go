package api

import (
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/webui"
)

// routes lists every route the daemon serves. Routes under /v1 need an API
// key; the hosted service also answers most of them with a trailing slash,
// which the mux here treats as a different path (answered 404).
func (s *Server) routes() http.Handler {
	api := http.NewServeMux()
	g := s.groups()
	agents, schedules, runs, human, actions := g.agents, g.schedules, g.runs, g.human, g.actions
	credentials, files, profiles, sessions := g.credentials, g.files, g.profiles, g.sessions
	tagRegistry, customLLMs, folders, scripts := g.tagRegistry, g.customLLMs, g.folders, g.scripts

	api.HandleFunc("GET /v1/agents", agents.handleListAgents)
	api.HandleFunc("POST /v1/agents", agents.handleCreateAgent)
	api.HandleFunc("GET /v1/agents/{id}", agents.handleGetAgent)
	api.HandleFunc("POST /v1/agents/{id}", agents.handleUpdateAgent)
	api.HandleFunc("GET /v1/agents/{id}/versions", agents.handleAgentVersions)
	api.HandleFunc("POST /v1/agents/{id}/delete", agents.handleDeleteAgent)
	api.HandleFunc("PUT /v1/agents/{id}/folder", agents.handleSetAgentFolder)
	// "runs" is not an agent id: these literal paths win over {id}.
	api.HandleFunc("GET /v1/agents/runs", agents.handleListAgentRuns)
	api.HandleFunc("GET /v1/agents/{id}/runs", agents.handleListAgentRuns)
	api.HandleFunc("POST /v1/agents/runs/{id}/retry", agents.handleRetryAgentRun)
	api.HandleFunc("POST /v1/agents/{id}/schedules", schedules.handleCreateSchedule) // schedules.go
	api.HandleFunc("GET /v1/agents/{id}/schedules", schedules.handleListSchedules)
	api.HandleFunc("GET /v1/agents/{id}/schedules/{schedule_id}", schedules.handleGetSchedule)
	api.HandleFunc("PUT /v1/agents/{id}/schedules/{schedule_id}", schedules.handleUpdateSchedule)
	api.HandleFunc("DELETE /v1/agents/{id}/schedules/{schedule_id}", schedules.handleDeleteSchedule)
	api.HandleFunc("POST /v1/agents/{id}/schedules/{schedule_id}/enable", schedules.handleSetScheduleEnabled(true))
	api.HandleFunc("POST /v1/agents/{id}/schedules/{schedule_id}/disable", schedules.handleSetScheduleEnabled(false))
	api.HandleFunc("GET /v1/schedules", schedules.handleListAllSchedules)

	agentTags := tagRoutes{responder: g.responder, tags: g.tagRegistry.tags, kind: store.AgentSubject}
	api.HandleFunc("POST /v1/agents/{id}/tags", agentTags.apply)
	api.HandleFunc("GET /v1/agents/{id}/tags", agentTags.get)
	api.HandleFunc("DELETE /v1/agents/{id}/tags/{key}", agentTags.delete)
	api.HandleFunc("GET /v1/agents/{id}/tags/history", agentTags.history)
	workflowTags := tagRegistry.batchTags(store.AgentSubject, "workflow_permanent_ids", "workflow_tags", "workflow")
	api.HandleFunc("GET /v1/workflow-tags", workflowTags)
	api.HandleFunc("POST /v1/workflow-tags", workflowTags)

	api.HandleFunc("POST /v1/run/tasks", runs.handleStartTask)
	api.HandleFunc("POST /v1/runs", runs.handleStartTask)
	api.HandleFunc("POST /v1/run/agents", runs.handleStartAgent)
	api.HandleFunc("GET /v1/runs", runs.handleListRuns)
	api.HandleFunc("GET /v1/runs/{id}", runs.handleGetRun)
	api.HandleFunc("GET /v1/runs/{id}/timeline", runs.handleRunTimeline)
	api.HandleFunc("GET /v1/runs/{id}/steps", runs.handleRunSteps) // abctl's own
	api.HandleFunc("POST /v1/runs/{id}/cancel", runs.handleCancelRun)
	api.HandleFunc("GET /v1/runs/{id}/interaction", human.handleRunInteraction) // abctl's own, as the two below (human.go)
	api.HandleFunc("POST /v1/runs/{id}/approve", human.handleApproveRun)
	api.HandleFunc("POST /v1/runs/{id}/reject", human.handleRejectRun)
	api.HandleFunc("POST /v1/runs/cancel", runs.handleCancelRuns)
	api.HandleFunc("POST /v1/runs/{id}/retry_webhook", runs.handleRetryWebhook)
	api.HandleFunc("GET /v1/runs/{id}/artifacts", runs.handleRunArtifacts)
	api.HandleFunc("GET /v1/runs/{id}/frame", runs.handleRunFrame) // abctl's own (frame.go)
	api.HandleFunc("POST /v1/sdk/run_action", actions.handleRunAction)

	api.HandleFunc("POST /v1/credentials", credentials.handleCreateCredential)
	api.HandleFunc("GET /v1/credentials", credentials.handleListCredentials)
	api.HandleFunc("POST /v1/credentials/totp", credentials.handleSendTOTPCode)
	api.HandleFunc("POST /v1/run/tasks/login", runs.handleStartLogin)
	api.HandleFunc("POST /v1/run/tasks/download_files", runs.handleDownloadFiles)
	api.HandleFunc("POST "+uploadPath, files.handleUploadFile)
	api.HandleFunc("GET /v1/artifacts/{artifact_id}/content", files.handleArtifactContent)

	api.HandleFunc("POST /v1/browser_profiles", profiles.handleCreateProfile)
	api.HandleFunc("GET /v1/browser_profiles", profiles.handleListProfiles)
	api.HandleFunc("GET /v1/browser_profiles/{id}", getByID(profiles.responder, profiles.profiles.Get))
	api.HandleFunc("PATCH /v1/browser_profiles/{id}", profiles.handleUpdateProfile)
	api.HandleFunc("DELETE /v1/browser_profiles/{id}", deleteByID(profiles.responder, profiles.profiles.Delete))
	api.HandleFunc("POST /v1/agents/{id}/browser_session/reset_profile", profiles.handleResetProfile)

	api.HandleFunc("POST /v1/browser_sessions", sessions.handleCreateSession)
	api.HandleFunc("GET /v1/browser_sessions", sessions.handleListSessions)
	api.HandleFunc("GET /v1/browser_sessions/{id}", getByID(sessions.responder, sessions.browserSessions.Get))
	api.HandleFunc("PATCH /v1/browser_sessions/{id}", sessions.handleUpdateSession)
	api.HandleFunc("POST /v1/browser_sessions/{id}/close", sessions.handleCloseSession)
	api.HandleFunc("GET /v1/credentials/{id}", getByID(credentials.responder, credentials.credentials.Get))
	api.HandleFunc("POST /v1/credentials/{id}/update", credentials.handleUpdateCredential)
	api.HandleFunc("POST /v1/credentials/{id}/delete", deleteByID(credentials.responder, credentials.credentials.Delete))

	// Only workflow runs (wr_) carry tags.
	runTags := tagRoutes{responder: g.responder, tags: g.tagRegistry.tags, kind: store.RunSubject}
	api.HandleFunc("POST /v1/runs/{id}/tags", runTags.apply)
	api.HandleFunc("GET /v1/runs/{id}/tags", runTags.get)
	api.HandleFunc("DELETE /v1/runs/{id}/tags/{key}", runTags.delete)
	api.HandleFunc("GET /v1/runs/{id}/tags/history", runTags.history)
	batchRunTags := tagRegistry.batchTags(store.RunSubject, "workflow_run_ids", "run_tags", "workflow run")
	api.HandleFunc("GET /v1/run-tags", batchRunTags)
	api.HandleFunc("POST /v1/run-tags", batchRunTags)

	api.HandleFunc("GET /v1/tag-keys", tagRegistry.handleListTagKeys)
	api.HandleFunc("PATCH /v1/tag-keys/{key}", tagRegistry.handleUpdateTagKey)
	api.HandleFunc("DELETE /v1/tag-keys/{key}", tagRegistry.handleDeleteTagKey)
	api.HandleFunc("GET /v1/tag-values", tagRegistry.handleListTagValues)
	api.HandleFunc("POST /v1/tag-values", tagRegistry.handleCreateTagValue)
	api.HandleFunc("PATCH /v1/tag-values/{key}", tagRegistry.handleRecolorTagValue)
	api.HandleFunc("DELETE /v1/tag-values/{key}", tagRegistry.handleDeleteTagValue)
	api.HandleFunc("PATCH /v1/tag-values/{key}/rename", tagRegistry.handleRenameTagValue)

	api.HandleFunc("GET /v1/custom-llms", customLLMs.handleListCustomLLMs)
	api.HandleFunc("POST /v1/custom-llms", customLLMs.handleCreateCustomLLM)
	api.HandleFunc("PUT /v1/custom-llms/{id}", customLLMs.handleUpdateCustomLLM)
	api.HandleFunc("DELETE /v1/custom-llms/{id}", customLLMs.handleDeleteCustomLLM)

	api.HandleFunc("POST /v1/scripts", scripts.handleCreateScript) // scripts.go
	api.HandleFunc("GET /v1/scripts", scripts.handleListScripts)
	api.HandleFunc("GET /v1/scripts/{script_id}", scripts.handleGetScript)
	api.HandleFunc("POST /v1/scripts/{script_id}/deploy", scripts.handleDeployScript)
	api.HandleFunc("POST /v1/scripts/{script_id}/run", scripts.handleRunScript)
	api.HandleFunc("GET /v1/scripts/{script_id}/files/{path...}", scripts.handleScriptFile) // abctl's own

	api.HandleFunc("POST /v1/folders", folders.handleCreateFolder)
	api.HandleFunc("GET /v1/folders", folders.handleListFolders)
	api.HandleFunc("GET /v1/folders/{id}", getByID(folders.responder, folders.folders.Get))
	api.HandleFunc("PUT /v1/folders/{id}", folders.handleUpdateFolder)
	api.HandleFunc("DELETE /v1/folders/{id}", folders.handleDeleteFolder)
	s.mountMCP(api) // /mcp: the MCP tools over streamable HTTP (mcp.go)

	api.Handle("/", notFoundOrMethod(api))

	root := http.NewServeMux()
	// No API key for the health and the metrics: probes and scrapers
	// hold none (health.go).
	root.HandleFunc("GET /healthz", s.handleHealthz)
	if s.metrics != nil {
		root.Handle("GET /metrics", s.metrics)
	}
	// No API key for the version, as the hosted service asks none (version.go).
	root.HandleFunc("GET /v1/version", s.handleVersion)
	// No /admin/: the admin routes are served on the admin socket only
	// (AdminHandler, admin.go), never here, where runs' requests come from.
	if l := s.runs.links(); l != nil && l.Signer != nil && s.runs.Files != nil {
		// Run files open in a browser: the URL's signature is the credential.
		root.Handle(artifacts.Path, s.runs.Files.Handler(l.Signer))
	}
	authed := chain(api, withAuth(s.store, s.logger), withBodyLimit)
	root.Handle("/", authed)
	// The web page (package webui): it signs in with a key of its own
	// and reads through the API's handler, in process.
	ui, err := webui.New(authed, webui.Options{Logger: s.logger, Now: s.now, Fleet: s.fleet})
	if err != nil {
		panic(err) // the pages are embedded: their tests parse them
	}
	root.Handle(webui.Prefix, ui)
	root.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, webui.Prefix, http.StatusSeeOther)
	})

	return chain(apiFirst(authed, root), withRequestID, withSecurityHeaders, withAccessLog(s.accessLog), withRecover(s.logger))
}

// apiFirst sends a request for the API (a clean path under /v1/ but the
// version) straight to authed, and every other request to root. It is what
// root would choose for it, without root's routing: most requests are API
// calls, and finding "/" among root's patterns cost every one of them a
// walk of the routing tree and its allocations. A path that is not clean
// goes to root, which redirects it to its clean form as before.
func apiFirst(authed, root http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/v1/") && p != "/v1/version" && path.Clean(p) == p {
			authed.ServeHTTP(w, r)
			return
		}
		root.ServeHTTP(w, r)
	})
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

// handlerGroups are the server's handler groups, each holding the few
// things its handlers use.
type handlerGroups struct {
	responder
	agents      agentsAPI
	schedules   schedulesAPI
	runs        runsAPI
	human       humanAPI
	actions     actionsAPI
	credentials credentialsAPI
	files       filesAPI
	profiles    profilesAPI
	sessions    sessionsAPI
	tagRegistry tagRegistryAPI
	customLLMs  customLLMsAPI
	folders     foldersAPI
	scripts     scriptsAPI
}

// groups builds the handler groups from the server's parts.
func (s *Server) groups() handlerGroups {
	h := responder{logger: s.logger}
	st, starter := s.store, s.runStarter()
	return handlerGroups{
		responder: h,
		agents: agentsAPI{responder: h, agents: st.Agents(), folders: st.Folders(), runs: st.Runs(),
			ids: s.ids, now: s.now, starter: starter},
		schedules: schedulesAPI{responder: h, schedules: st.Schedules(), agents: st.Agents(), scheduler: &s.scheduler},
		runs: runsAPI{responder: h, runs: st.Runs(), agents: st.Agents(), credentials: st.Credentials(),
			exec: s.runs, starter: starter},
		human:       humanAPI{responder: h, runs: st.Runs(), exec: s.runs},
		actions:     actionsAPI{responder: h, runs: st.Runs(), exec: s.runs, starter: starter},
		credentials: credentialsAPI{responder: h, credentials: st.Credentials(), ids: s.ids, now: s.now},
		files: filesAPI{responder: h, uploads: st.Uploads(), runs: st.Runs(), exec: s.runs,
			maxUpload: s.maxUpload, now: s.now},
		profiles: profilesAPI{responder: h, profiles: st.Profiles(), browserSessions: st.BrowserSessions(),
			runs: st.Runs(), agents: st.Agents()},
		sessions: sessionsAPI{responder: h, browserSessions: st.BrowserSessions(), profiles: st.Profiles(),
			exec: s.runs, timers: &s.timers, minute: s.minute, now: s.now},
		tagRegistry: tagRegistryAPI{responder: h, tags: st.Tags()},
		customLLMs:  customLLMsAPI{responder: h, customLLMs: st.CustomLLMs(), modelCheck: s.modelCheck},
		folders:     foldersAPI{responder: h, folders: st.Folders()},
		scripts:     scriptsAPI{responder: h, scripts: st.Scripts(), agents: st.Agents(), starter: starter},
	}
}

// runStarter is the part of the server that starts runs (runstart.go).
func (s *Server) runStarter() runStarter {
	return runStarter{responder: responder{logger: s.logger}, runs: s.store.Runs(), profiles: s.store.Profiles(),
		browserSessions: s.store.BrowserSessions(), exec: s.runs}
}
