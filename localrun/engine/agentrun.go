package engine

// Agent runs (POST /v1/run/agents): the agent's definition is checked
// before a browser opens, then its blocks run (package engine/blocks). The
// job's MaxSteps (x-max-steps-override) bounds the steps of the whole run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
)

func (e *Engine) runAgent(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	if job.Agent == nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The run has no agent definition."}
	}
	// The blocks as a definition writes them: a stored agent carries some
	// fields in the service's response shape (the parameters' records
	// instead of a block's parameter_keys, loop_over and the smtp_*
	// records instead of their keys), which the blocks would not read.
	wd := job.Agent.WorkflowDefinition.RequestShape()
	def := &wd
	// The engine's models and the custom models of the run's organization.
	models := e.runModels(job)
	scripts, err := runScripts(job)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	// The blocks a script replays need no model.
	var replay *script.Script
	if scripts != nil {
		replay = scripts.Replay
	}
	if err := blocks.CheckReplay(def, models.Configured(), replay); err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	// Code blocks run only where the daemon allows them; an email_inbox
	// prompt needs a model.
	if err := blocks.CheckCode(ctx, def, e.cfg.Code); err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	if err := blocks.CheckInbox(def, models.Configured()); err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	// The models the blocks name must exist before any browser opens.
	if err := blocks.CheckModels(job.Agent, models); err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	params, err := decodeParameters(job.Parameters)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	// The credentials blocks name (email_inbox, Google Sheets) are read
	// with the parameters'.
	creds, err := e.credentials(ctx, job, blocks.WithBlockCredentials(def), params)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	r, ctx, err := e.openRun(ctx, job, progress, job.MaxSteps)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	// The run's file URLs go through its organization's guard; the
	// daemon's own are read from its disk.
	r.files.UseNetwork(r.guard, job.LocalFiles)
	r.browser.SetSecrets(creds)
	env := e.env
	env.Models = models
	in := blocks.New(env, blocks.Run{Browser: r.browser, Agent: r.agent, Steps: r.steps,
		Definition: def, Model: job.Agent.Model, Params: params, Human: job.Human,
		Trigger: job.Trigger, Scripts: scripts, Guard: r.guard, Started: r.started})
	fail := in.Execute(ctx)
	if fail != nil && ctx.Err() == nil {
		// A browser that went away fails what was running on it with
		// whatever its page saw last (a canceled load): the reason is the
		// browser's.
		if serr := r.browser.Err(); serr != nil && !strings.Contains(fail.Err.Error(), serr.Error()) {
			fail.Err = fmt.Errorf("the browser session ended: %w (%v)", serr, fail.Err)
		}
	}
	status, reason := agentStatus(ctx, fail, job.MaxSteps)
	summary := r.steps.Summarize(status, reason)
	res := r.finish(ctx)
	res.Status, res.FailureReason, res.Summary = status, reason, summary
	res.Output = in.Output()
	if scripts != nil {
		res.ScriptReplayed, res.AIFallbackTriggered = scripts.Replayed() > 0, scripts.FallbackTriggered()
		if rec := scripts.Recorded(); rec != nil && status == client.RunStatusCompleted {
			res.Script = rec.Marshal()
		}
	}
	return res
}

// runScripts is how the job's run replays and records scripts, nil for
// neither; a script to replay that cannot be read fails the run.
func runScripts(job *executor.Job) (*blocks.Scripts, error) {
	sj := job.Script
	if sj == nil || (sj.Replay == nil && !sj.Record) {
		return nil, nil
	}
	s := &blocks.Scripts{Record: sj.Record, AIFallback: sj.AIFallback, Agent: job.Agent.WorkflowPermanentID, CacheKey: sj.CacheKey}
	if sj.Replay != nil {
		sc, err := script.Parse(sj.Replay)
		if err != nil {
			return nil, fmt.Errorf("The agent's script cannot be read: %v.", err)
		}
		s.Replay = sc
	}
	return s, nil
}

// agentStatus is the status and failure reason of an agent run that ended
// with fail (nil: completed); maxSteps is the run's step limit.
func agentStatus(ctx context.Context, fail *blocks.Failure, maxSteps int) (client.RunStatus, string) {
	var term *agent.TerminatedError
	var limit *agent.StepLimitError
	switch lost := lostBrowser(ctx); {
	case fail == nil:
		return client.RunStatusCompleted, ""
	case lost != nil:
		return client.RunStatusFailed, fmt.Sprintf("%s (block %q (%s) was running).", lost.Error(), fail.Label, fail.Type)
	case errors.As(fail.Err, &limit):
		return client.RunStatusTimedOut, fmt.Sprintf("Block %q (%s) reached its limit of %d steps before its goal was reached.", fail.Label, fail.Type, limit.Limit)
	case errors.Is(fail.Err, steplog.ErrLimit):
		return client.RunStatusTimedOut, fmt.Sprintf("The run reached its limit of %d steps before block %q finished.", maxSteps, fail.Label)
	case ctx.Err() != nil:
		return client.RunStatusFailed, "The run was stopped before it finished."
	case errors.As(fail.Err, &term):
		return client.RunStatusTerminated, fail.Reason()
	}
	return client.RunStatusFailed, fail.Reason()
}

// credentials reads the credentials the agent's parameters name (a
// credential parameter's credential_id, or the value of a workflow
// parameter of type credential_id) and gives each parameter its value as
// templates and the model see it: the credential's fields, its secrets as
// placeholders (package engine/secrets). It returns nil when there are
// none. A credential that does not exist fails the run before a browser
// opens.
func (e *Engine) credentials(ctx context.Context, job *executor.Job, ps []client.Parameter, params map[string]any) (*secrets.Set, error) {
	var set *secrets.Set
	for _, p := range ps {
		id := ""
		switch {
		case p.ParameterType == client.ParameterTypeCredential:
			id = p.CredentialID
			if id == "" && len(p.CredentialIDs) > 0 {
				id = p.CredentialIDs[0]
			}
			if id == "" {
				return nil, fmt.Errorf("credential parameter %q names no credential_id", p.Key)
			}
		case p.ParameterType == client.ParameterTypeWorkflow && p.WorkflowParameterType == client.WorkflowParameterCredentialID:
			v, _ := params[p.Key].(string)
			if v == "" {
				continue
			}
			id = v
		default:
			continue
		}
		vault := job.Vault
		if vault == nil {
			vault = e.cfg.Vault
		}
		if vault == nil {
			return nil, fmt.Errorf("parameter %q names a credential, and this engine has no credential store", p.Key)
		}
		if set == nil {
			run := secrets.Run{OrgID: job.OrgID, RunID: job.RunID, Start: time.Now()}
			if a := job.Agent; a != nil {
				run.AgentID = a.WorkflowPermanentID
				if a.TOTPVerificationURL != nil {
					run.TOTPURL = *a.TOTPVerificationURL
				}
			}
			set = secrets.NewSet(vault, run)
		}
		shown, err := set.Add(ctx, p.Key, id)
		if err != nil {
			return nil, err
		}
		params[p.Key] = shown
	}
	return set, nil
}

// decodeParameters decodes the run's parameter values.
func decodeParameters(raw map[string]json.RawMessage) (map[string]any, error) {
	out := make(map[string]any, len(raw))
	for k, v := range raw {
		if len(v) == 0 {
			out[k] = nil
			continue
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return nil, fmt.Errorf("The value of parameter %q is not valid JSON: %v", k, err)
		}
		out[k] = x
	}
	return out, nil
}
