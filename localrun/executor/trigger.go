package executor

import (
	"context"
	"encoding/json"

	"github.com/abctl/abctl/client"
)

// AgentStarter starts runs of other agents of a run's organization: the
// runs its workflow_trigger blocks ask for (Job.Trigger). The daemon
// implements it; an executor without one refuses those blocks.
type AgentStarter interface {
	// StartAgentRun starts a run of req.AgentID with req.Parameters,
	// validated as POST /v1/run/agents validates them. With req.Wait it
	// returns once the run has ended, and ctx ending cancels the run;
	// without it, at once, the run queued. An error says why no run was
	// started: an agent that does not exist in the organization, a
	// missing parameter, a browser session that is not open or that the
	// run would wait for forever, a chain of triggered runs too deep.
	StartAgentRun(ctx context.Context, req AgentRunRequest) (*AgentRunResult, error)
}

// AgentRunRequest is a run a workflow_trigger block asks for.
type AgentRunRequest struct {
	// AgentID is the agent's permanent id (wpid_...).
	AgentID string
	// Parameters are the run's parameter values, by key.
	Parameters map[string]any
	// Wait asks StartAgentRun to return once the run has ended.
	Wait bool
	// BrowserSessionID names the browser session the run executes in; ""
	// leaves it to UseParentBrowserSession.
	BrowserSessionID string
	// UseParentBrowserSession runs it in the browser session of the run
	// that asks, when that run executes in one.
	UseParentBrowserSession bool
}

// AgentRunResult is a run started by StartAgentRun, as it was when
// StartAgentRun returned: ended when it waited, queued otherwise.
type AgentRunResult struct {
	RunID         string
	Status        client.RunStatus
	Output        json.RawMessage // nil for none
	FailureReason string
}
