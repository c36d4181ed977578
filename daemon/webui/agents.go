package webui

import "net/http"

// agentRoutes adds the agents' pages: the list, an agent, its versions and
// the form that runs it.
func (s *Server) agentRoutes(mux *http.ServeMux) {}
