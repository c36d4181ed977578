package egress

import (
	"net/http"
)

// Permanent reports that a refusal is permanent: the same request would
// be refused again, so callers that retry (the model client) stop.
func (e *Error) Permanent() bool { return true }

// CheckedTransport returns next behind a check of every request's URL
// (CheckURL with schemes, WebSchemes when none), redirects included, for a
// transport that does not connect through the guard (a caller's own
// client, as the daemon's tests give the webhook sender). A transport of
// the guard's wants HTTPClient, which decides once per connection.
func (g *Guard) CheckedTransport(next http.RoundTripper, schemes ...string) http.RoundTripper {
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
