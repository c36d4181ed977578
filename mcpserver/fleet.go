package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
)

// The fleet tool tells an assistant whether browsers are free before it
// starts runs, and why runs wait or fail: the daemon's browser endpoints,
// their load and health, and the queue (GET /healthz).

// BrowserFleetInput is the input of skyvern_browser_fleet.
type BrowserFleetInput struct {
	Endpoint string `json:"endpoint,omitempty" jsonschema:"only the endpoint of this name (default: all)"`
}

// BrowserFleetResult is the answer of skyvern_browser_fleet.
type BrowserFleetResult struct {
	Fleet bool   `json:"fleet" jsonschema:"whether the daemon places runs on a fleet of browser endpoints; false: its own browser, or one remote browser"`
	Note  string `json:"note,omitempty"`
	// Endpoints and the queue, as GET /healthz shows them.
	Endpoints     []client.BrowserEndpointStatus `json:"endpoints,omitempty" jsonschema:"each endpoint: name, url, capacity, in_use, healthy, last_error, failures, placed"`
	Queued        int                            `json:"queued" jsonschema:"runs waiting for an endpoint with room now"`
	QueueWaits    uint64                         `json:"queue_waits" jsonschema:"runs that had to wait since the daemon started"`
	QueueTimeouts uint64                         `json:"queue_timeouts" jsonschema:"runs that gave up waiting since the daemon started"`
}

// fleetTools report the daemon's browser endpoints.
type fleetTools struct {
	// health reads GET /healthz: client.Client.Health.
	health func(ctx context.Context, opts ...client.Option) (*client.Health, error)
}

func (t *fleetTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_browser_fleet",
		title: "Browser fleet",
		description: "The daemon's browser endpoints: for each, how many runs it takes at once and runs now, whether it is up " +
			"(and why not), and the runs waiting for a browser. Use it before starting many runs, or to explain runs " +
			"that wait or fail because a browser went away." + ownTool,
		annotations: readOnly(),
	}, t.browserFleet)
}

func (t *fleetTools) browserFleet(ctx context.Context, in BrowserFleetInput) (*BrowserFleetResult, error) {
	h, err := t.health(ctx)
	if err != nil {
		return nil, err
	}
	if h.Browsers == nil {
		return &BrowserFleetResult{Note: "The daemon runs its browsers itself (no fleet of browser endpoints): runs wait only for its workers."}, nil
	}
	b := h.Browsers
	out := &BrowserFleetResult{Fleet: true, Endpoints: b.Endpoints, Queued: b.Queued, QueueWaits: b.QueueWaits, QueueTimeouts: b.QueueTimeouts}
	if in.Endpoint != "" {
		out.Endpoints = nil
		var names []string
		for _, e := range b.Endpoints {
			names = append(names, e.Name)
			if e.Name == in.Endpoint {
				out.Endpoints = append(out.Endpoints, e)
			}
		}
		if len(out.Endpoints) == 0 {
			return nil, fmt.Errorf("the daemon has no browser endpoint %q; its endpoints are %s", in.Endpoint, strings.Join(names, ", "))
		}
	}
	return out, nil
}
