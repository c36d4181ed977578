package client

import "context"

// Health is the answer of GET /healthz: the server is up, and, on an abctl
// daemon whose runs use a fleet of browser endpoints, the fleet's state
// (docs/scaling.md).
type Health struct {
	Status string `json:"status"`
	// Browsers is the fleet; nil when the daemon has none (its own
	// browser, or one remote browser) or the server is not an abctl
	// daemon.
	Browsers *BrowserFleet `json:"browsers,omitempty"`
}

// BrowserFleet is the state of a daemon's browser endpoints and of the
// runs waiting for one. URLs carry no credentials and no query, and the
// endpoints' headers never show.
type BrowserFleet struct {
	Endpoints []BrowserEndpointStatus `json:"endpoints"`
	// Queued is how many runs wait now for an endpoint with room.
	Queued int `json:"queued"`
	// QueueWaits counts the runs that had to wait, QueueTimeouts those
	// that gave up waiting, since the daemon started.
	QueueWaits    uint64 `json:"queue_waits"`
	QueueTimeouts uint64 `json:"queue_timeouts"`
}

// BrowserEndpointStatus is one endpoint of a BrowserFleet.
type BrowserEndpointStatus struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	Capacity int    `json:"capacity"`
	// InUse is how many sessions are open on it now.
	InUse int `json:"in_use"`
	// Healthy is false while it is down: it takes no new sessions, and
	// LastError says why it was last marked down.
	Healthy   bool   `json:"healthy"`
	LastError string `json:"last_error,omitempty"`
	// Failures counts the sessions that ended because it failed and the
	// connections to it that failed; Placed the sessions placed on it.
	Failures uint64 `json:"failures"`
	Placed   uint64 `json:"placed"`
}

// Health asks the server whether it is up (GET /healthz, which needs no API
// key), and an abctl daemon for the state of its browser fleet.
func (c *Client) Health(ctx context.Context, opts ...Option) (*Health, error) {
	out := new(Health)
	_, err := c.do(ctx, request{method: "GET", path: "/healthz", idempotent: true}, out, opts)
	return nil2(out, err)
}
