package engine

// Task runs (POST /v1/run/tasks): the prompt is the goal of one agent
// loop that starts at the request's url (or on a blank page, where the
// model can open a URL the prompt gives). With a data_extraction_schema
// the data is extracted once the goal is reached, validated against the
// schema, and is the run's output; without one, the output is the data the
// model gave when it completed (null when it gave none). The step budget
// is the job's MaxSteps (max_steps), else Config.MaxSteps; running out is
// timed_out. A goal judged unreachable is terminated; a browser or model
// that fails is failed. With error_code_mapping, a run that does not
// complete has output {"error": <code>} when a code fits (a successful
// run has no error key).

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/executor"
)

func (e *Engine) runTask(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	t := job.Task
	if t == nil || strings.TrimSpace(t.Prompt) == "" {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The task has no prompt."}
	}
	m, err := e.runModels(job).Pick(t.Model)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The task cannot run: " + err.Error() + "."}
	}
	r, ctx, err := e.openRun(ctx, job, progress, 0)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	// A task always works on a page: it starts once its browser is open.
	if err := r.browser.Acquire(ctx); err != nil {
		status, reason := taskStatus(ctx, err)
		res := r.finish(ctx)
		res.Status, res.FailureReason = status, reason
		return res
	}
	r.started()
	// The run's file URLs go through its organization's guard; the
	// daemon's own are read from its disk.
	r.files.UseNetwork(r.guard, job.LocalFiles)
	g := &agent.Goal{Navigation: t.Prompt, Model: m, Verify: true, ErrorCodes: t.ErrorCodeMapping,
		Schema: agent.ParseSchema(t.DataExtractionSchema), HistoryInVerify: t.IncludeActionHistoryInVerification != nil && *t.IncludeActionHistoryInVerification}
	if g.Schema != nil {
		g.Extraction = t.Prompt
	}
	g.MaxSteps = e.cfg.MaxSteps
	switch {
	case job.MaxSteps > 0:
		g.MaxSteps = job.MaxSteps
	case t.MaxSteps != nil && *t.MaxSteps > 0:
		g.MaxSteps = *t.MaxSteps
	}

	o, err := r.startTask(ctx, t.URL, g)
	var output json.RawMessage
	status, reason := taskStatus(ctx, err)
	if err == nil {
		output = o.Data
	}
	if o != nil && o.Summary != "" {
		r.steps.AddSummary(o.Summary)
	}
	if status != client.RunStatusCompleted && agent.Classifiable(ctx, err) {
		if code := r.agent.Classify(ctx, m, g.ErrorCodes, agent.FailureInfo{Goal: t.Prompt, Reason: reason, History: r.steps.History("")}); code != "" {
			output = withErrorCode(output, code)
		}
	}
	summary := r.steps.Summarize(status, reason)
	res := r.finish(ctx)
	res.Status, res.FailureReason, res.Output, res.Summary = status, reason, output, summary
	return res
}

// taskStatus is the status and failure reason of a task run whose goal
// ended with err (nil: reached).
func taskStatus(ctx context.Context, err error) (client.RunStatus, string) {
	var term *agent.TerminatedError
	var limit *agent.StepLimitError
	switch lost := lostBrowser(ctx); {
	case err == nil:
		return client.RunStatusCompleted, ""
	case lost != nil:
		return client.RunStatusFailed, lost.Error() + "."
	case ctx.Err() != nil:
		return client.RunStatusFailed, "The run was stopped before it finished."
	case errors.As(err, &limit):
		return client.RunStatusTimedOut, text.UpperFirst(err.Error()) + "."
	case errors.As(err, &term):
		return client.RunStatusTerminated, "The goal cannot be reached: " + term.Reason
	}
	return client.RunStatusFailed, text.UpperFirst(err.Error())
}

// startTask opens the task's url and runs the loop.
func (r *run) startTask(ctx context.Context, url string, g *agent.Goal) (*agent.Outcome, error) {
	if strings.TrimSpace(url) != "" {
		if _, err := r.browser.Navigate(ctx, url); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, errors.New("the start page could not be loaded: " + err.Error())
		}
	}
	return r.agent.Pursue(ctx, g)
}

// withErrorCode puts the code at output.error: in the object, or in a new
// object when the output is something else.
func withErrorCode(output json.RawMessage, code string) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(output) > 0 && json.Unmarshal(output, &obj) == nil && obj != nil {
		b, _ := json.Marshal(code)
		obj["error"] = b
		if out, err := json.Marshal(obj); err == nil {
			return out
		}
	}
	out, _ := json.Marshal(map[string]string{"error": code})
	return out
}
