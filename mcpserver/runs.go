package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The schemas name the service's enumerations (engines, action types) in
// descriptions rather than as enums, so that a value the service adds
// later is not refused here (the service adds enum values without a new
// API version); the service checks them.

// Default waits of the waiting tools, the hosted service's.
const (
	defaultTaskTimeout  = 180
	defaultAgentTimeout = 300
	maxWaitSeconds      = 3600
)

// RunTaskInput is the input of skyvern_run_task.
type RunTaskInput struct {
	Prompt               string            `json:"prompt" jsonschema:"the goal in plain language: what to do on the website and what to report back"`
	URL                  string            `json:"url,omitempty" jsonschema:"the page to start on; without it the agent picks one from the prompt"`
	Title                string            `json:"title,omitempty" jsonschema:"a short name for the run"`
	Engine               string            `json:"engine,omitempty" jsonschema:"the agent engine: skyvern-1.0 (the default), skyvern-2.0, openai-cua, anthropic-cua, ..."`
	DataExtractionSchema any               `json:"data_extraction_schema,omitempty" jsonschema:"JSON Schema of the output to extract, as an object or as JSON text"`
	ErrorCodeMapping     map[string]string `json:"error_code_mapping,omitempty" jsonschema:"custom error codes: code -> description of the situation that ends the run with it"`
	MaxSteps             int               `json:"max_steps,omitempty" jsonschema:"the most browser steps the run may take"`
	WebhookURL           string            `json:"webhook_url,omitempty" jsonschema:"URL that receives the run's result when it ends"`
	ProxyLocation        string            `json:"proxy_location,omitempty" jsonschema:"where the browser's traffic exits: RESIDENTIAL (the default), NONE, RESIDENTIAL_GB, RESIDENTIAL_DE, ..."`
	Wait                 bool              `json:"wait,omitempty" jsonschema:"wait for the run to end (default true); false returns at once with the run id"`
	TimeoutSeconds       int               `json:"timeout_seconds,omitempty" jsonschema:"how long to wait for the result; the run goes on after it"`
	Verbosity            string            `json:"verbosity,omitempty" jsonschema:"summary (default) or full, which adds the service's whole run object"`
}

// WorkflowRunInput is the input of skyvern_workflow_run.
type WorkflowRunInput struct {
	WorkflowID       string `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...)"`
	Parameters       any    `json:"parameters,omitempty" jsonschema:"values of the agent's parameters by key, as an object or as JSON text; skyvern_workflow_get lists them"`
	BrowserSessionID string `json:"browser_session_id,omitempty" jsonschema:"an existing browser session (pbs_...) to run in"`
	WebhookURL       string `json:"webhook_url,omitempty" jsonschema:"URL that receives the run's result; overrides the agent's webhook_callback_url"`
	ProxyLocation    string `json:"proxy_location,omitempty" jsonschema:"where the browser's traffic exits: RESIDENTIAL, NONE, RESIDENTIAL_GB, ..."`
	RunWith          string `json:"run_with,omitempty" jsonschema:"agent (an AI agent drives every step) or code (the agent's recorded script replays without the model, which takes over what cannot be replayed; the first such run records the script)"`
	AIFallback       *bool  `json:"ai_fallback,omitempty" jsonschema:"with run_with code: whether the model may take over a step that cannot be replayed (default: the agent's, true unless it says otherwise)"`
	Wait             bool   `json:"wait,omitempty" jsonschema:"wait for the run to end (default false: return at once with the run id)"`
	TimeoutSeconds   int    `json:"timeout_seconds,omitempty" jsonschema:"with wait, how long to wait for the result; the run goes on after it"`
	Verbosity        string `json:"verbosity,omitempty" jsonschema:"summary (default) or full, which adds the service's whole run object"`
}

// RunIDInput names one run.
type RunIDInput struct {
	RunID     string `json:"run_id" jsonschema:"id of the run: tsk_... (task) or wr_... (agent run)"`
	Verbosity string `json:"verbosity,omitempty" jsonschema:"summary (default) or full, which adds the service's whole run object"`
}

// CancelInput is the input of skyvern_workflow_cancel.
type CancelInput struct {
	RunID string `json:"run_id" jsonschema:"id of the run to stop: tsk_... or wr_..."`
}

// CancelResult reports a cancel.
type CancelResult struct {
	RunID    string `json:"run_id"`
	Status   string `json:"status,omitempty" jsonschema:"the run's status after the cancel"`
	Finished bool   `json:"finished" jsonschema:"true when the run has ended"`
}

// BulkCancelInput is the input of skyvern_run_bulk_cancel.
type BulkCancelInput struct {
	RunIDs []string `json:"run_ids" jsonschema:"ids of the runs to stop, tasks and agent runs alike"`
}

// BulkCancelResult reports a bulk cancel.
type BulkCancelResult struct {
	Cancelled []string `json:"cancelled" jsonschema:"runs that were cancelled"`
	Failed    []string `json:"failed" jsonschema:"runs that could not be cancelled (unknown ids among them)"`
}

// WebhookRetryInput is the input of skyvern_run_webhook_retry.
type WebhookRetryInput struct {
	RunID      string `json:"run_id" jsonschema:"id of a run that has ended"`
	WebhookURL string `json:"webhook_url,omitempty" jsonschema:"send to this URL instead of the run's own webhook URL"`
}

// WebhookRetryResult reports a webhook re-send.
type WebhookRetryResult struct {
	RunID string `json:"run_id"`
	// Queued is true when the service delivers in the background (as the
	// abctl daemon does) and so reports nothing about the delivery.
	Queued           bool   `json:"queued" jsonschema:"true when the service sends in the background and so reports no delivery result"`
	TargetWebhookURL string `json:"target_webhook_url,omitempty"`
	StatusCode       int    `json:"status_code,omitempty" jsonschema:"the receiver's HTTP status"`
	LatencyMS        int64  `json:"latency_ms,omitempty"`
	ResponseBody     string `json:"response_body,omitempty" jsonschema:"the start of the receiver's answer"`
	Error            string `json:"error,omitempty" jsonschema:"why the delivery failed"`
}

// RunActionInput is the input of skyvern_run_action.
type RunActionInput struct {
	URL            string  `json:"url" jsonschema:"the page to act on"`
	ActionType     string  `json:"action_type,omitempty" jsonschema:"ai_click (the default), ai_input_text, ai_select_option, ai_upload_file, ai_act, extract, locate_element, validate or prompt"`
	Selector       string  `json:"selector,omitempty" jsonschema:"CSS selector (or xpath=...) of the element; tried first"`
	Intention      string  `json:"intention,omitempty" jsonschema:"the element or the goal in words, resolved by the AI when no selector matches"`
	Value          string  `json:"value,omitempty" jsonschema:"text to type (ai_input_text) or option to choose (ai_select_option)"`
	Prompt         string  `json:"prompt,omitempty" jsonschema:"the question or instruction of extract, locate_element, validate and prompt"`
	Data           string  `json:"data,omitempty" jsonschema:"context the AI may use (for example the values of a form)"`
	FileURL        string  `json:"file_url,omitempty" jsonschema:"the file to upload (ai_upload_file)"`
	Timeout        float64 `json:"timeout,omitempty" jsonschema:"milliseconds to wait for the element"`
	WorkflowRunID  string  `json:"workflow_run_id,omitempty" jsonschema:"continue on the page of an earlier action's run (wr_...) instead of opening a new browser"`
	BrowserAddress string  `json:"browser_address,omitempty" jsonschema:"CDP address of a browser to use (http, https, ws or wss URL)"`
}

// RunActionResult is the answer of skyvern_run_action.
type RunActionResult struct {
	WorkflowRunID string `json:"workflow_run_id" jsonschema:"the run the action belongs to: pass it to the next action to stay on the same page"`
	Result        any    `json:"result,omitempty" jsonschema:"the action's result: extracted data, a selector, a verdict, or nothing"`
}

var verbosityValues = []string{"summary", "full"}

func refineVerbosity(p map[string]*jsonschema.Schema) {
	enum(p["verbosity"], verbosityValues...)
	withDefault(p["verbosity"], `"summary"`)
}

// refineTimeout bounds the timeout_seconds of a waiting tool and gives it
// its default.
func refineTimeout(p map[string]*jsonschema.Schema, defaultSeconds int) {
	bounds(p["timeout_seconds"], 1, maxWaitSeconds)
	withDefault(p["timeout_seconds"], fmt.Sprint(defaultSeconds))
}

// refineAgentRunArgs refines the arguments that the tools starting an
// agent run (skyvern_workflow_run, skyvern_script_run) share: the
// parameters, and whether and how long to wait for the run.
func refineAgentRunArgs(p map[string]*jsonschema.Schema) {
	jsonOrText(p["parameters"], "object")
	withDefault(p["wait"], "false")
	refineTimeout(p, defaultAgentTimeout)
	refineVerbosity(p)
}

// runTools start, follow, cancel and re-notify runs, and run single
// browser actions.
type runTools struct {
	runs     *client.RunsService
	actions  *client.ActionsService
	follower runFollower
}

func (t *runTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_run_task",
		title: "Run a browser task",
		description: "Have the browser agent do something on a website, described in plain language, and get the result: " +
			"find information, fill a form, extract data (give data_extraction_schema for structured output). " +
			"By default it waits up to timeout_seconds for the run to end and returns its output; if the run is still going " +
			"then, it says so and skyvern_workflow_status gets the result later. Use skyvern_workflow_run instead to run a saved agent.",
		annotations: browses(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "prompt")
			jsonOrText(p["data_extraction_schema"], "object", "array")
			bounds(p["max_steps"], 1, 0)
			withDefault(p["wait"], "true")
			refineTimeout(p, defaultTaskTimeout)
			refineVerbosity(p)
		},
	}, t.runTask)

	addTool(s, spec{
		name:  "skyvern_workflow_run",
		title: "Run an agent",
		description: "Start a run of a saved agent (workflow, wpid_...) with values for its parameters. " +
			"Returns the run id at once, or with wait=true waits up to timeout_seconds and returns the output. " +
			"skyvern_workflow_get lists an agent's parameters; skyvern_workflow_status follows the run.",
		annotations: browses(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "workflow_id")
			refineAgentRunArgs(p)
		},
	}, t.workflowRun)

	addTool(s, spec{
		name:  "skyvern_workflow_status",
		title: "Get a run",
		description: "Get the status and, once it has ended, the output of any run: a task (tsk_...) or an agent run (wr_...). " +
			"Also gives the failure reason, screenshots, the recording and downloaded files.",
		annotations: readOnly(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "run_id")
			refineVerbosity(p)
		},
	}, t.workflowStatus)

	addTool(s, spec{
		name:        "skyvern_workflow_cancel",
		title:       "Cancel a run",
		description: "Stop a run (task or agent run) that is queued or running. What it produced so far is kept. Cancelling a run that already ended changes nothing.",
		annotations: destroys(true),
		refine:      nonEmptyArgs("run_id"),
	}, t.workflowCancel)

	addTool(s, spec{
		name:        "skyvern_run_bulk_cancel",
		title:       "Cancel many runs",
		description: "Stop up to 100 runs at once and report which were cancelled and which could not be." + ownTool,
		annotations: destroys(true),
		refine: func(p map[string]*jsonschema.Schema) {
			p["run_ids"].MinItems, p["run_ids"].MaxItems = new(1), new(100)
			p["run_ids"].Types, p["run_ids"].Type = nil, "array"
		},
	}, t.bulkCancel)

	addTool(s, spec{
		name:  "skyvern_run_webhook_retry",
		title: "Re-send a run's webhook",
		description: "Send the result of a run that has ended to its webhook URL again, or to another URL, " +
			"for example after the receiver was down. Reports the receiver's answer when the service delivers at once." + ownTool,
		annotations: writes(false),
		refine:      nonEmptyArgs("run_id"),
	}, t.webhookRetry)

	addTool(s, spec{
		name:  "skyvern_run_action",
		title: "Run one browser action",
		description: "Do a single action on a web page: click (ai_click), type (ai_input_text), choose an option (ai_select_option), " +
			"upload a file (ai_upload_file), follow an instruction (ai_act), extract data (extract), find an element (locate_element), " +
			"check a statement (validate) or ask about the page (prompt). A selector is tried first, the intention otherwise. " +
			"Pass the returned workflow_run_id to the next action to continue on the same page." + ownTool,
		annotations: browses(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "url")
			withDefault(p["action_type"], `"`+string(client.ActionClick)+`"`)
			bounds(p["timeout"], 0, 0)
		},
	}, t.runAction)
}

func (t *runTools) runTask(ctx context.Context, in RunTaskInput) (*RunResult, error) {
	req := &client.TaskRunRequest{
		Prompt: in.Prompt, URL: in.URL, Title: in.Title, Engine: client.RunEngine(in.Engine),
		ErrorCodeMapping: in.ErrorCodeMapping, WebhookURL: in.WebhookURL, UserAgent: mcpUserAgent,
	}
	schema, err := schemaArg("data_extraction_schema", in.DataExtractionSchema)
	if err != nil {
		return nil, err
	}
	req.DataExtractionSchema = schema
	if in.MaxSteps > 0 {
		req.MaxSteps = &in.MaxSteps
	}
	if in.ProxyLocation != "" {
		req.ProxyLocation = client.Proxy(in.ProxyLocation)
	}
	run, err := t.runs.StartTask(ctx, req)
	if err != nil {
		return nil, err
	}
	return t.follower.follow(ctx, run, in.Wait, in.TimeoutSeconds, in.Verbosity == "full")
}

func (t *runTools) workflowRun(ctx context.Context, in WorkflowRunInput) (*RunResult, error) {
	params, err := objectArg("parameters", in.Parameters)
	if err != nil {
		return nil, err
	}
	req := &client.AgentRunRequest{
		AgentID: in.WorkflowID, Parameters: params, BrowserSessionID: in.BrowserSessionID,
		WebhookURL: in.WebhookURL, RunWith: in.RunWith, AIFallback: in.AIFallback, UserAgent: mcpUserAgent,
	}
	if in.ProxyLocation != "" {
		req.ProxyLocation = client.Proxy(in.ProxyLocation)
	}
	run, err := t.runs.StartAgent(ctx, req)
	if err != nil {
		return nil, err
	}
	return t.follower.follow(ctx, run, in.Wait, in.TimeoutSeconds, in.Verbosity == "full")
}

// runFollower answers the tools that start a run, waiting for the run
// when asked to.
type runFollower struct {
	runs *client.RunsService
	// poll is how a run is polled while waited for; nil means the
	// client's defaults.
	poll *client.WaitOptions
}

// follow returns the answer of a tool that started run: the run as started
// without wait; with it, the run once it has ended, or as it stands after
// timeoutSeconds. Once a run exists, failing to follow it is reported in
// the answer rather than as an error, so that the model does not start it
// a second time.
func (t runFollower) follow(ctx context.Context, run *client.Run, wait bool, timeoutSeconds int, full bool) (*RunResult, error) {
	if !wait || run.IsTerminal() {
		res := runResult(run, full)
		if !res.Finished {
			res.Note = fmt.Sprintf("The run has started. Call skyvern_workflow_status with run_id %s to get its result.", run.RunID)
		}
		return res, nil
	}
	if timeoutSeconds <= 0 {
		timeoutSeconds = defaultTaskTimeout
	}
	waitCtx, cancel := context.WithTimeout(ctx, time.Duration(timeoutSeconds)*time.Second)
	defer cancel()
	done, err := t.runs.Wait(waitCtx, run.RunID, t.poll)
	if err == nil {
		return runResult(done, full), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err() // the caller gave up: nobody reads an answer
	}
	if done != nil {
		run = done
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// Read once more, so that the report is current rather than as of
		// the last poll.
		if latest, gerr := t.runs.Get(ctx, run.RunID); gerr == nil {
			run = latest
		}
		res := runResult(run, full)
		if !res.Finished {
			res.StillRunning = true
			res.Note = fmt.Sprintf("The run is still %s after %d s of waiting. Call skyvern_workflow_status with run_id %s later for its result, or skyvern_workflow_cancel to stop it.",
				run.Status, timeoutSeconds, run.RunID)
		}
		return res, nil
	}
	res := runResult(run, full)
	res.Note = fmt.Sprintf("The run has started, but following it failed: %v. Call skyvern_workflow_status with run_id %s to get its result.",
		describeError(err), run.RunID)
	return res, nil
}

func (t *runTools) workflowStatus(ctx context.Context, in RunIDInput) (*RunResult, error) {
	run, err := t.runs.Get(ctx, in.RunID)
	if err != nil {
		return nil, err
	}
	return runResult(run, in.Verbosity == "full"), nil
}

func (t *runTools) workflowCancel(ctx context.Context, in CancelInput) (*CancelResult, error) {
	if err := t.runs.Cancel(ctx, in.RunID); err != nil {
		return nil, err
	}
	out := &CancelResult{RunID: in.RunID}
	// The status after the cancel is a courtesy: the cancel itself worked.
	if run, err := t.runs.Get(ctx, in.RunID); err == nil {
		out.Status, out.Finished = string(run.Status), run.IsTerminal()
	}
	return out, nil
}

func (t *runTools) bulkCancel(ctx context.Context, in BulkCancelInput) (*BulkCancelResult, error) {
	res, err := t.runs.CancelMany(ctx, in.RunIDs)
	if err != nil {
		return nil, err
	}
	out := &BulkCancelResult{Cancelled: res.Cancelled, Failed: res.Failed}
	if out.Cancelled == nil {
		out.Cancelled = []string{}
	}
	if out.Failed == nil {
		out.Failed = []string{}
	}
	return out, nil
}

func (t *runTools) webhookRetry(ctx context.Context, in WebhookRetryInput) (*WebhookRetryResult, error) {
	replay, err := t.runs.RetryWebhook(ctx, in.RunID, &client.RetryWebhookRequest{WebhookURL: in.WebhookURL})
	if err != nil {
		return nil, err
	}
	if replay == nil { // an empty answer: sent in the background
		return &WebhookRetryResult{RunID: in.RunID, Queued: true}, nil
	}
	// The hosted service delivers before answering and reports the
	// receiver's status or the error; the abctl daemon answers with the
	// signed request it is about to send, and neither.
	return &WebhookRetryResult{
		RunID: in.RunID, TargetWebhookURL: replay.TargetWebhookURL,
		Queued:     replay.StatusCode == nil && replay.Error == nil,
		StatusCode: ptr.Value(replay.StatusCode), LatencyMS: replay.LatencyMS,
		ResponseBody: ptr.Value(replay.ResponseBody), Error: ptr.Value(replay.Error),
	}, nil
}

func (t *runTools) runAction(ctx context.Context, in RunActionInput) (*RunActionResult, error) {
	action := client.Action{
		Type: client.ActionType(in.ActionType), Selector: in.Selector, Intention: in.Intention,
		Value: in.Value, Prompt: in.Prompt, FileURL: in.FileURL,
	}
	if action.Type == "" {
		action.Type = client.ActionClick
	}
	if in.Data != "" {
		action.Data, _ = json.Marshal(in.Data)
	}
	if in.Timeout > 0 {
		action.Timeout = &in.Timeout
	}
	res, err := t.actions.Run(ctx, &client.RunActionRequest{
		URL: in.URL, Action: action, WorkflowRunID: in.WorkflowRunID, BrowserAddress: in.BrowserAddress,
	})
	if err != nil {
		return nil, err
	}
	return &RunActionResult{WorkflowRunID: res.WorkflowRunID, Result: rawValue(res.Result)}, nil
}

// objectArg reads an argument that is a JSON object, given as one or as
// JSON text; nil and "" mean none.
func objectArg(name string, v any) (map[string]any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return nil, argError(name, "want a JSON object such as {\"key\": \"value\"}, got %.80q", v)
		}
		return m, nil
	}
	return nil, argError(name, "want a JSON object, got %T", v)
}

// schemaArg reads a JSON Schema argument: an object or array, JSON text
// holding one, or other text, which the service takes as a description of
// the wanted output.
func schemaArg(name string, v any) (json.RawMessage, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		s := strings.TrimSpace(v)
		if s == "" {
			return nil, nil
		}
		if (s[0] == '{' || s[0] == '[') && json.Valid([]byte(s)) {
			return json.RawMessage(s), nil
		}
		if s[0] == '{' || s[0] == '[' {
			return nil, argError(name, "the text starts like JSON but is not valid JSON")
		}
		return json.Marshal(s)
	case map[string]any, []any:
		return json.Marshal(v)
	}
	return nil, argError(name, "want a JSON Schema object, got %T", v)
}
