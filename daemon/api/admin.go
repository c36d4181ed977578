package api

// The admin routes (the protocol is described in package daemon/admin),
// served on the daemon's admin socket only.

import (
	"net/http"
	"net/http/pprof"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/admin"
)

// AdminHandler returns the handler of the admin routes (/admin/...), and of
// nothing else: daemon.Run serves it on the admin socket only, whose file
// mode is the access control. The server's own handler (ServeHTTP, what
// the TCP port serves) has no admin routes: it answers /admin/... as any
// unknown path.
func (s *Server) AdminHandler() http.Handler {
	return chain(s.adminRoutes(), withRequestID, withSecurityHeaders, withAccessLog(s.accessLog), withRecover(s.logger))
}

func (s *Server) adminRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/admin/organizations", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			s.handleAdminListOrganizations(w, r)
		case http.MethodPost:
			s.handleAdminCreateOrganization(w, r)
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
		}
	})
	if s.pprof {
		// Profiles of the daemon (`abctl daemon --pprof`), for the
		// operator, who alone can open the socket. pprof.Index serves the
		// named profiles (heap, goroutine, block, ...) below it.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})
	return chain(mux, withBodyLimit)
}

func (s *Server) handleAdminCreateOrganization(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name *string `json:"name"`
	}
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if body.Name == nil {
		s.error(w, r, invalid([]client.ValidationError{fieldError("missing", "Field required", nil, "body", "name")}))
		return
	}
	name, typ, msg := admin.CheckOrganizationName(*body.Name)
	if msg != "" {
		s.error(w, r, invalid([]client.ValidationError{fieldError(typ, msg, *body.Name, "body", "name")}))
		return
	}
	org, key, err := s.store.CreateOrganization(r.Context(), name)
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.logger.InfoContext(r.Context(), "organization created", "request_id", requestID(r.Context()),
		"organization_id", org.ID)
	writeJSON(w, http.StatusOK, admin.CreatedOrganization{OrganizationID: org.ID, APIKey: key})
}

func (s *Server) handleAdminListOrganizations(w http.ResponseWriter, r *http.Request) {
	orgs, err := s.store.Organizations(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := make([]admin.Organization, len(orgs))
	for i, o := range orgs {
		out[i] = admin.Organization{OrganizationID: o.ID, Name: o.Name, CreatedAt: o.CreatedAt}
	}
	writeJSON(w, http.StatusOK, out)
}
