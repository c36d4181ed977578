package api

// The admin routes (the protocol is described in package daemon/admin).

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/admin"
)

// EnableAdmin turns on the admin routes under /admin/, answering requests
// from loopback that carry token in the x-admin-token header. The token
// should be long and random (daemon.Run uses 32 random bytes, hex-encoded). An
// empty token turns them off again. It is safe to call while serving.
func (s *Server) EnableAdmin(token string) {
	if token == "" {
		s.adminToken.Store(nil)
		return
	}
	sum := sha256.Sum256([]byte(token))
	s.adminToken.Store(&sum)
}

func (s *Server) adminTokenHash() (sum [sha256.Size]byte, ok bool) {
	p := s.adminToken.Load()
	if p == nil {
		return sum, false
	}
	return *p, true
}

// adminRoutes serves /admin/; routes.go mounts it outside the API key check.
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
	mux.HandleFunc("/admin/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})
	return chain(mux, s.withAdminAuth, withBodyLimit)
}

// withAdminAuth lets a request through only when admin is enabled, it comes
// from a loopback address and it carries the admin token.
func (s *Server) withAdminAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want, ok := s.adminTokenHash()
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
			return
		}
		if !isLoopback(r.RemoteAddr) {
			writeError(w, r, s.logger, errorf(KindForbidden, "The admin routes answer only requests from loopback"))
			return
		}
		// Hashing both sides gives equal lengths, so that the comparison
		// takes the same time whatever was sent.
		got := sha256.Sum256([]byte(r.Header.Get(admin.TokenHeader)))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			writeError(w, r, s.logger, errorf(KindForbidden, "Invalid credentials"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopback reports whether a RemoteAddr ("ip:port") is a loopback address.
func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
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
