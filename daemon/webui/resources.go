package webui

import "net/http"

// resourceRoutes adds the read-only pages: schedules, credentials, browser
// sessions and profiles, scripts and the browser fleet.
func (s *Server) resourceRoutes(mux *http.ServeMux) {}
