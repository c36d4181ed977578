package store

import "github.com/abctl/abctl/client"

// MaxRunSteps is how many steps of a run the store keeps: the newest.
const MaxRunSteps = 200

// MaxRunBlocks is how many block executions of a run the store keeps: the
// newest (a loop over many items executes its blocks once per item).
const MaxRunBlocks = 1000

// RunTrace is what a run did, read in one transaction: its record, its
// block executions in the order they started, and its steps in order.
type RunTrace struct {
	Record *RunRecord
	Blocks []*client.RunBlock
	Steps  []*client.RunStep
}
