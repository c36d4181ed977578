package mcpserver_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/mcpserver"
)

// TestBrowserFleet: a daemon that runs its own browsers says so; the
// fleet's fields come from GET /healthz (checked with a fleet in the
// daemon's and the SDK's tests).
func TestBrowserFleet(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		got := call[mcpserver.BrowserFleetResult](t, s, "skyvern_browser_fleet", nil)
		if got.Fleet || got.Note == "" || len(got.Endpoints) != 0 {
			t.Errorf("without a fleet: %+v", got)
		}
	})
}
