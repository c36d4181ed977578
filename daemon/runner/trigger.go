package runner

// The runs workflow_trigger blocks start (executor.AgentStarter). A run
// that does not wait for its child queues it like any other run. A run
// that waits lends the child its worker: the child executes in the
// waiting run's goroutine, so that a chain of waiting runs never waits for
// a free worker that the chain itself holds.
//
// Browser sessions execute one run at a time: a child that would execute
// in a session its waiting parent (or a run waiting for that parent)
// holds would never start, and is refused. Chains of triggered runs are
// bounded by MaxTriggerDepth, so that an agent that triggers itself,
// directly or through others, cannot start runs without end.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// MaxTriggerDepth is how many runs a chain of workflow_trigger blocks may
// start one below the other: the run started through the API, then at
// most this many levels of triggered runs.
const MaxTriggerDepth = 5

// AgentRuns makes the records of the runs workflow_trigger blocks ask for,
// as POST /v1/run/agents makes its runs; the daemon's API server does
// (api.Server.NewTriggeredRun).
type AgentRuns interface {
	// NewTriggeredRun returns the record, not yet stored, of a queued run
	// of req.AgentID, an agent of organization orgID, with req.Parameters
	// validated. Its errors say, for people, why no run can be made.
	NewTriggeredRun(ctx context.Context, orgID string, req *client.AgentRunRequest) (*store.RunRecord, error)
}

// SetAgentRuns lets the runs' workflow_trigger blocks start runs, made by
// m. Without it those blocks fail. Call it before Start.
func (r *Runner) SetAgentRuns(m AgentRuns) {
	r.mu.Lock()
	r.agentRuns = m
	r.mu.Unlock()
}

// heldSessionsKey is the context key of the browser sessions held by the
// runs waiting, one for the other, for the run a context executes: a
// []string.
type heldSessionsKey struct{}

// starter returns the AgentStarter of the run rec, executing in ctx; nil
// for a task run, which has no blocks.
func (r *Runner) starter(ctx context.Context, rec *store.RunRecord) executor.AgentStarter {
	if rec.Type != client.RunTypeWorkflowRun {
		return nil
	}
	held, _ := ctx.Value(heldSessionsKey{}).([]string)
	if rec.BrowserSessionID != "" {
		held = append(slices.Clip(held), rec.BrowserSessionID)
	}
	return &starter{r: r, parent: rec, held: held}
}

// starter starts the runs the workflow_trigger blocks of one run ask for.
type starter struct {
	r      *Runner
	parent *store.RunRecord
	// held are the browser sessions the parent and the runs waiting for
	// it execute in.
	held []string
}

// StartAgentRun implements executor.AgentStarter.
func (s *starter) StartAgentRun(ctx context.Context, req executor.AgentRunRequest) (*executor.AgentRunResult, error) {
	r, parent := s.r, s.parent
	depth := parent.TriggerDepth + 1
	if depth > MaxTriggerDepth {
		return nil, fmt.Errorf("run %s is already %d levels down a chain of runs started by workflow_trigger blocks, the most allowed (%d); "+
			"an agent that triggers itself, directly or through other agents, needs a condition that ends the chain",
			parent.ID, parent.TriggerDepth, MaxTriggerDepth)
	}
	r.mu.Lock()
	agentRuns := r.agentRuns
	r.mu.Unlock()
	if agentRuns == nil {
		return nil, errors.New("this daemon was started without a way to make agent runs, so it cannot start one from a block")
	}
	session := req.BrowserSessionID
	if session == "" && req.UseParentBrowserSession {
		session = parent.BrowserSessionID
	}
	if req.Wait && session != "" && slices.Contains(s.held, session) {
		holder := "a run waiting for this one"
		if session == parent.BrowserSessionID {
			holder = "this run"
		}
		return nil, fmt.Errorf("the run would execute in browser session %s, which %s holds while it waits for it; "+
			"runs of one session execute one at a time, so it would never start: set wait_for_completion to false, "+
			"or let it run in a browser of its own (no browser_session_id, use_parent_browser_session false)", session, holder)
	}
	rec, err := agentRuns.NewTriggeredRun(ctx, parent.OrgID, &client.AgentRunRequest{
		AgentID: req.AgentID, Parameters: req.Parameters, BrowserSessionID: session,
	})
	if err != nil {
		return nil, err
	}
	// As its parent was started: the same key signs its webhook, the same
	// address is in it.
	rec.ParentRunID, rec.TriggerDepth = parent.ID, depth
	rec.KeyHash, rec.BaseURL, rec.Trigger = parent.KeyHash, parent.BaseURL, parent.Trigger
	if req.Wait && r.shared != nil {
		// Executed here, by the parent's worker: stored created, which no
		// other daemon claims, and held before it is executed.
		rec.Status = client.RunStatusCreated
	}
	if err := r.cfg.Store.Runs().Create(ctx, rec); err != nil {
		return nil, fmt.Errorf("the run could not be stored: %w", err)
	}
	ref := store.RunRef{OrgID: rec.OrgID, RunID: rec.ID}
	if req.Wait && r.shared != nil {
		held, err := r.shared.q.ClaimRun(ctx, r.shared.owner, ref, r.shared.lease)
		if err == nil && !held {
			err = errors.New("another daemon holds it")
		}
		if err != nil {
			return nil, fmt.Errorf("the triggered run %s could not be held for execution: %w", rec.ID, err)
		}
	}
	r.log.Info("run triggered", "run_id", rec.ID, "parent_run_id", parent.ID, "agent_id", rec.AgentID, "wait", req.Wait)
	if !req.Wait {
		r.Submit(ref.OrgID, ref.RunID)
		return &executor.AgentRunResult{RunID: rec.ID, Status: rec.Status}, nil
	}
	held := s.held
	if session != "" {
		held = append(slices.Clip(held), session)
	}
	if err := r.executeTriggered(ctx, ref, held); err != nil {
		return &executor.AgentRunResult{RunID: rec.ID, Status: client.RunStatusCanceled, FailureReason: err.Error()}, nil
	}
	final, err := r.cfg.Store.Runs().Get(context.WithoutCancel(ctx), ref.OrgID, ref.RunID)
	if err != nil {
		return nil, fmt.Errorf("the triggered run %s could not be read: %w", rec.ID, err)
	}
	return &executor.AgentRunResult{RunID: final.ID, Status: final.Status, Output: final.Output, FailureReason: final.FailureReason}, nil
}

// executeTriggered executes the stored, queued run ref in the calling
// goroutine (its parent's worker, which waits for it), registered as
// executing so that it can be canceled on its own. The parent stopping
// cancels it (Stop ends it as it ends every run). held are the browser
// sessions of the runs waiting for it. An error says why it did not
// execute: the runner is stopping (the run is canceled).
func (r *Runner) executeTriggered(parentCtx context.Context, ref store.RunRef, held []string) error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		if _, err := r.Cancel(context.WithoutCancel(parentCtx), ref.OrgID, ref.RunID); err != nil {
			r.log.Error("cancel a triggered run", "run_id", ref.RunID, "error", err)
		}
		return errShutdown
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(r.ctx, heldSessionsKey{}, held))
	r.running[ref] = cancel
	r.mu.Unlock()
	stop := context.AfterFunc(parentCtx, func() {
		cause := errCanceled
		if errors.Is(context.Cause(parentCtx), errShutdown) {
			cause = errShutdown
		}
		cancel(cause)
	})
	defer stop()
	r.execute(ctx, ref)
	r.done(ref)
	return nil
}
