package daemon

import (
	"testing"

	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
)

// fleetExec is an executor with a fleet of browser endpoints.
type fleetExec struct {
	executor.Executor
	st browser.FleetStatus
	ok bool
}

func (f fleetExec) FleetStatus() (browser.FleetStatus, bool) { return f.st, f.ok }

// TestWorkersOfAFleet: with a fleet, the default workers are its
// capacity; --workers wins; without a fleet, the runner's
// default (0).
func TestWorkersOfAFleet(t *testing.T) {
	fleet := browser.FleetStatus{Endpoints: []browser.EndpointStatus{{Capacity: 2}, {Capacity: 4}, {Capacity: 2}}}
	for _, c := range []struct {
		n    int
		exec executor.Executor
		want int
	}{
		{0, fleetExec{st: fleet, ok: true}, 8},
		{5, fleetExec{st: fleet, ok: true}, 5},
		{0, fleetExec{ok: false}, 0},
		{0, noEngine{}, 0},
	} {
		if got := workers(c.n, c.exec); got != c.want {
			t.Errorf("workers(%d, %T) = %d, want %d", c.n, c.exec, got, c.want)
		}
	}
}
