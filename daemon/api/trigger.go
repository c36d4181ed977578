package api

import (
	"context"
	"errors"
	"fmt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// NewTriggeredRun implements runner.AgentRuns: the record, not yet stored,
// of the run a workflow_trigger block of a run of organization orgID asks
// for, made and validated as POST /v1/run/agents makes and validates its
// runs (the agent's latest version, the parameters, the browser session).
// An agent of another organization is as unknown as one that does not
// exist.
func (s *Server) NewTriggeredRun(ctx context.Context, orgID string, req *client.AgentRunRequest) (*store.RunRecord, error) {
	starter := s.runStarter()
	agent, err := s.store.Agents().Get(ctx, orgID, req.AgentID, 0)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no agent %s in this organization", req.AgentID)
	}
	if err != nil {
		return nil, err
	}
	params, err := resolveParameters(agent, req.Parameters)
	if err != nil {
		return nil, err
	}
	if err := checkSession(ctx, starter.browserSessions, orgID, req.BrowserSessionID); err != nil {
		return nil, err
	}
	return starter.agentRunRecord(orgID, agent, req, params), nil
}
