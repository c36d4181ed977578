package api

import (
	"net/http"

	"github.com/abctl/abctl/client"
)

// WithMetrics serves GET /metrics with h (Prometheus' text format, package
// daemon/metrics), without an API key, as GET /healthz: scrapers hold
// none, and the metrics name no organization's records. Without it the
// route does not exist.
func WithMetrics(h http.Handler) ServerOption {
	return func(s *Server) { s.metrics = h }
}

// WithBrowsers adds "browsers" to GET /healthz: the first result of
// browsers, asked at each request, when its second is true (the daemon
// places runs on a fleet of browser endpoints: client.BrowserFleet).
func WithBrowsers(browsers func() (any, bool)) ServerOption {
	return func(s *Server) { s.browsers = browsers }
}

// handleHealthz answers GET /healthz: {"status": "ok"}, and the fleet of
// browser endpoints under "browsers" when there is one.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	body := map[string]any{"status": "ok"}
	if s.browsers != nil {
		if fleet, ok := s.browsers(); ok {
			body["browsers"] = fleet
		}
	}
	writeJSON(w, http.StatusOK, body)
}

// fleet is the fleet of browser endpoints as GET /healthz shows it, for
// the web UI's fleet page; false when the daemon has none.
func (s *Server) fleet() (client.BrowserFleet, bool) {
	if s.browsers == nil {
		return client.BrowserFleet{}, false
	}
	v, ok := s.browsers()
	f, isFleet := v.(client.BrowserFleet)
	return f, ok && isFleet
}
