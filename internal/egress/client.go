package egress

import (
	"net/http"
	"time"
)

// Permanent reports that a refusal is permanent: the same request would
// be refused again, so callers that retry (the model client) stop.
func (e *Error) Permanent() bool { return true }

// CheckedTransport returns next behind an early check of every request's
// URL (CheckURL with schemes, WebSchemes when none), redirects included:
// a refusal names the URL asked for, the address it resolved to and the
// rule, where a refusal of the dialer alone names only host and port.
// next should connect through the guard (Transport): the early check is
// for the message, the dialer's for the address really connected to.
func (g *Guard) CheckedTransport(next http.RoundTripper, schemes ...string) http.RoundTripper {
	if next == nil {
		next = g.Transport()
	}
	return checkedTransport{g: g, next: next, schemes: schemes}
}

type checkedTransport struct {
	g       *Guard
	next    http.RoundTripper
	schemes []string
}

func (t checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.CheckURL(req.Context(), req.URL.String(), t.schemes...); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections closes next's idle connections.
func (t checkedTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// CheckedClient is HTTPClient with every request's URL checked first
// (CheckedTransport): what the blocks and the daemon use for a run's
// requests.
func (g *Guard) CheckedClient(timeout time.Duration, schemes ...string) *http.Client {
	c := g.HTTPClient(timeout, schemes...)
	c.Transport = g.CheckedTransport(c.Transport, schemes...)
	return c
}
