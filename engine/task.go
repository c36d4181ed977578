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
	"github.com/abctl/abctl/executor"
)

func (e *Engine) runTask(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	t := job.Task
	if t == nil || strings.TrimSpace(t.Prompt) == "" {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The task has no prompt."}
	}
	m, err := e.model(t.Model)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The task cannot run: " + err.Error() + "."}
	}
	r, err := e.openRun(ctx, job, progress)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	g := &goal{navigation: t.Prompt, model: m, verify: true, errorCodes: t.ErrorCodeMapping,
		schema: parseDataSchema(t.DataExtractionSchema), historyInVerify: t.IncludeActionHistoryInVerification != nil && *t.IncludeActionHistoryInVerification}
	if g.schema != nil {
		g.extraction = t.Prompt
	}
	g.maxSteps = e.cfg.MaxSteps
	switch {
	case job.MaxSteps > 0:
		g.maxSteps = job.MaxSteps
	case t.MaxSteps != nil && *t.MaxSteps > 0:
		g.maxSteps = *t.MaxSteps
	}

	o, err := r.startTask(ctx, t.URL, g)
	var output json.RawMessage
	var status client.RunStatus
	var reason string
	var term *terminatedError
	var limit *stepLimitError
	switch {
	case err == nil:
		status, output = client.RunStatusCompleted, o.data
	case ctx.Err() != nil:
		status, reason = client.RunStatusFailed, "The run was stopped before it finished."
	case errors.As(err, &limit):
		status, reason = client.RunStatusTimedOut, upperFirst(err.Error())+"."
	case errors.As(err, &term):
		status, reason = client.RunStatusTerminated, "The goal cannot be reached: "+term.reason
	default:
		status, reason = client.RunStatusFailed, upperFirst(err.Error())
	}
	if o != nil && o.summary != "" {
		r.summaries = append(r.summaries, o.summary)
	}
	if status != client.RunStatusCompleted && classifiable(ctx, err) {
		if code := r.classify(ctx, m, g.errorCodes, failureInfo{goal: t.Prompt, details: nil, reason: reason, history: r.ag.historyOf("")}); code != "" {
			output = withErrorCode(output, code)
		}
	}
	summary := r.summary(status, reason)
	res := r.finish(ctx)
	res.Status, res.FailureReason, res.Output, res.Summary = status, reason, output, summary
	return res
}

// startTask opens the task's url and runs the loop.
func (r *run) startTask(ctx context.Context, url string, g *goal) (*outcome, error) {
	if strings.TrimSpace(url) != "" {
		if _, err := r.navigate(ctx, url); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, errors.New("the start page could not be loaded: " + err.Error())
		}
	}
	return r.pursue(ctx, g)
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
