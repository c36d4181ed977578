package api

import (
	"net/http"
	"runtime/debug"
	"strings"
)

// WithVersion sets what GET /v1/version answers: the version of abctl
// (the CLI gives its build's). Without it the server answers the main
// module's version from the binary's build information, or "dev".
func WithVersion(v string) ServerOption {
	return func(s *Server) { s.version = strings.TrimSpace(v) }
}

// handleVersion serves GET /v1/version, which needs no API key, as the
// hosted service's: {"version": "<abctl version>"}.
func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request) {
	v := s.version
	if v == "" {
		v = "dev"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = strings.TrimPrefix(bi.Main.Version, "v")
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"version": v})
}
