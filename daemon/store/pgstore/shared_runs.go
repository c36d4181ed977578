package pgstore

// Private copies of pure helpers of the bbolt store's run code
// (daemon/store/runs.go, runsteps.go), which the seam will export; the
// merge replaces them with calls.

import (
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
)

// compareRunIDs orders run ids by their snowflake (creation time), whatever
// their prefix (bbolt: compareRunIDs).
func compareRunIDs(a, b string) int {
	_, na, oka := ids.Parse(a)
	_, nb, okb := ids.Parse(b)
	if oka && okb && na != nb {
		if na < nb {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// stepNumber is what AddStep's error names for a step (bbolt: stepNumber).
func stepNumber(step *client.RunStep) any {
	if step == nil {
		return "nil"
	}
	return step.Number
}
