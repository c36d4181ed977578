package daemon

import "net/http"

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

	api.HandleFunc("POST /v1/folders", s.handleCreateFolder)
	api.HandleFunc("GET /v1/folders", s.handleListFolders)
	api.HandleFunc("GET /v1/folders/{id}", s.handleGetFolder)
	api.HandleFunc("PUT /v1/folders/{id}", s.handleUpdateFolder)
	api.HandleFunc("DELETE /v1/folders/{id}", s.handleDeleteFolder)

	api.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})

	root := http.NewServeMux()
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	root.Handle("/", chain(api, withAuth(s.store, s.logger), withBodyLimit))

	return chain(root, withRequestID, withSecurityHeaders, withAccessLog(s.logger), withRecover(s.logger))
}
