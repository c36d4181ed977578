package blocks

// workflow_trigger blocks: start a run of another agent of the same
// organization, with the block's payload as its parameters, and wait for
// it to end (wait_for_completion, the default) or not. The run itself is
// the daemon's to make (Run.Trigger): it validates the parameters as the
// run route does, bounds chains of triggered runs and decides in which
// browser the run executes (see executor.AgentStarter and
// daemon/runner/trigger.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/abctl/abctl/agentfile/tmpl"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
)

// AgentStarter starts the runs of workflow_trigger blocks (see Run.Trigger).
type AgentStarter = executor.AgentStarter

func checkWorkflowTrigger(b *client.WorkflowTriggerBlock) error {
	label, typ := b.Label, b.BlockType()
	if strings.TrimSpace(b.WorkflowPermanentID) == "" {
		return fmt.Errorf("block %q (%s) has no workflow_permanent_id: name the agent to run (wpid_...)", label, typ)
	}
	if p := strings.TrimSpace(string(b.Payload)); p != "" && p != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b.Payload, &obj); err != nil {
			return fmt.Errorf("block %q (%s): payload must be an object of parameter values by key", label, typ)
		}
	}
	return nil
}

// workflowTrigger starts the run and returns what the run's record says of
// it: its id, status, output and failure reason. A run that waited and did
// not complete fails the block, naming the run and why it ended; its
// output is kept all the same (continue_on_failure can read it).
func (in peopleBlocks) workflowTrigger(ctx context.Context, b *client.WorkflowTriggerBlock, sc *scope) (_ any, err error) {
	if in.trigger == nil {
		return nil, errors.New("this engine cannot start agent runs; workflow_trigger blocks run in agent runs of the daemon")
	}
	agentID, err := sc.render(b.WorkflowPermanentID)
	if err != nil {
		return nil, fmt.Errorf("workflow_permanent_id: %w", err)
	}
	agentID = strings.TrimSpace(agentID)
	if agentID == "" {
		return nil, fmt.Errorf("workflow_permanent_id %q renders empty", b.WorkflowPermanentID)
	}
	params, err := triggerPayload(b.Payload, sc)
	if err != nil {
		return nil, err
	}
	session, err := sc.render(b.BrowserSessionID)
	if err != nil {
		return nil, fmt.Errorf("browser_session_id: %w", err)
	}
	wait := b.WaitForCompletion == nil || *b.WaitForCompletion
	req := executor.AgentRunRequest{
		AgentID: agentID, Parameters: params, Wait: wait,
		BrowserSessionID: strings.TrimSpace(session), UseParentBrowserSession: b.UseParentBrowserSession,
	}

	what := "start " + agentID
	if wait {
		what = "run " + agentID + " and wait for it"
	}
	step, err := in.steps.Start(b.Label, steplog.Action{Type: "workflow_trigger", Text: what})
	if err != nil {
		return nil, err
	}
	var result string
	defer func() { in.steps.End(step, "", result, err) }()

	run, err := in.trigger.StartAgentRun(ctx, req)
	if err != nil {
		return nil, err
	}
	result = fmt.Sprintf("run %s %s", run.RunID, run.Status)
	out := map[string]any{
		"workflow_run_id":       run.RunID,
		"workflow_permanent_id": agentID,
		"status":                string(run.Status),
		"output":                nil,
		"failure_reason":        nil,
	}
	if len(run.Output) > 0 {
		var v any
		if json.Unmarshal(run.Output, &v) == nil {
			out["output"] = v
		}
	}
	if run.FailureReason != "" {
		out["failure_reason"] = run.FailureReason
	}
	if wait && run.Status != client.RunStatusCompleted {
		why := run.FailureReason
		if why == "" {
			why = "no reason given"
		}
		return out, fmt.Errorf("the triggered run %s of agent %s ended %s: %s", run.RunID, agentID, run.Status, why)
	}
	return out, nil
}

// triggerPayload renders the templates in the payload's values with the
// block's scope and returns the child run's parameters (nil for none).
func triggerPayload(raw json.RawMessage, sc *scope) (map[string]any, error) {
	if p := strings.TrimSpace(string(raw)); p == "" || p == "null" {
		return nil, nil
	}
	rendered, err := tmpl.RenderJSON(raw, sc.vars())
	if err != nil {
		return nil, &templateError{fmt.Errorf("payload: %w", err)}
	}
	var params map[string]any
	if err := json.Unmarshal(rendered, &params); err != nil {
		return nil, fmt.Errorf("payload must be an object of parameter values by key: %v", err)
	}
	return params, nil
}
