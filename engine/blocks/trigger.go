package blocks

import (
	"context"
	"errors"

	"github.com/abctl/abctl/client"
)

// workflow_trigger blocks.

// AgentStarter starts agent runs (see Run.Trigger).
type AgentStarter interface{}

func checkWorkflowTrigger(b *client.WorkflowTriggerBlock) error {
	return errors.New("workflow_trigger: not yet")
}

func (in *Interpreter) workflowTrigger(ctx context.Context, b *client.WorkflowTriggerBlock, sc *scope) (any, error) {
	return nil, errors.New("workflow_trigger: not yet")
}
