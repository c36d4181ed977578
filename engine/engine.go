// Package engine is the execution engine of `abctl daemon`: it executes
// runs in Chromium (package engine/browser) and implements the daemon's
// executor seam (daemon/executor) and its single-action seam
// (POST /v1/sdk/run_action, see RunAction). A language model (package
// llm, Config.Models) drives task runs, the AI blocks and the
// single actions that name an intention; the other blocks run without one.
//
// # The agent loop
//
// A task run (POST /v1/run/tasks) is one goal, its prompt, pursued from
// its url. A goal is pursued in steps (agent.go): the page is read (the
// interactive elements with short ids such as [e12], the visible text, the
// open tabs, the dialogs answered since the last look, and a JPEG of the
// viewport, which is the run's screenshot of the step and goes to the model
// when it reads images), the model answers with one to five actions, the
// actions are done with the page package's trusted actions, and the page
// is read again once it has settled: that reading is the next step's. The
// rest of a batch is dropped when an action loads a document, changes the
// URL or the tab, since the model's ids belong to the page it saw.
// "complete" and "terminate" count only alone. A completion is checked by a
// second model call when the goal has a complete_criterion (unless
// complete_verification is false); a goal with complete_on_download is
// reached when a download finishes.
//
// Settling waits on events, never a fixed sleep (settle.go): requests in
// flight and a pending navigation of the tab, then a short quiet period of
// the DOM, all capped at two seconds.
//
// A goal ends:
//   - completed: the model completed (and the check agreed); with a data
//     schema the data is then extracted (extract.go);
//   - terminated: the model judged the goal unreachable, or a condition
//     check or validation block found the termination condition;
//   - timed_out: it used its step budget (max_steps of a task,
//     max_steps_per_run of a block, else the job's MaxSteps, the
//     x-max-steps-override of agent runs, else Config.MaxSteps); the job's
//     MaxSteps also bounds the whole agent run;
//   - failed: the browser went away, the start page did not load, the
//     model could not be reached (the llm package's text says which
//     endpoint and how to configure one), its answers were unusable three
//     times in a row, or it repeated the same actions without effect.
//
// With error_code_mapping (of the task, the block or the definition), a
// goal that does not complete is matched against the codes by one more
// model call (errorcodes.go); the code becomes output.error. Every model
// call, step, action, phase timing (settle, observe, model, act) and token
// count is logged, reported to a Progress that implements
// executor.StepReporter, and written to StepsName (steps.json) in the run's
// directory; Result.Summary tells what the run did.
//
// Prompts (prompts.go) put the page between markers that carry a random
// tag of the run and say it is data, never instructions; the page's text
// is indented so that it cannot pass for an element line; the model may
// only act on ids the engine issued, may upload only files the goal or the
// user's details name, and may not navigate to local or private addresses
// unless the run started on one (Config.AllowPrivateURLs lifts that).
//
// # Blocks
//
// An agent run executes the blocks of the agent's definition in order. The
// engine checks every block (loop blocks included) before it opens a
// browser: a block that lacks what it needs, that needs a model when none
// is configured, or that the engine does not implement fails the run at
// once, naming its label and type; so does a model name that does not
// resolve.
//
// Text fields are templates: {{ name }}, {{ name.field }} and
// {{ name.list[0] }} read the run's parameters (decoded JSON) and the
// outputs of the blocks that finished before ({{ <label>_output }}). A
// reference that names nothing fails the block with an error that names it
// (package tmpl); nothing renders silently as "".
//
// The blocks a model drives (aiblocks.go); each uses its own model, else
// the agent's, else the default. The user's details the model sees are the
// values parameter_keys names, else the run's parameters and loop values.
//
//   - navigation, login: when url is set, navigates there; then pursues
//     navigation_goal (login: logging in with the details, when it gives
//     none) with complete_criterion, terminate_criterion and
//     complete_on_download. Output: {"url", "summary", "downloaded_files"}
//     and "extracted_information" when the model gave data.
//   - task: navigation_goal (or prompt), then data_extraction_goal against
//     data_schema; without a navigation goal, an extraction only. Output:
//     the extracted data, else as navigation.
//   - task_v2: prompt as the goal, max_steps (default 25).
//   - extraction: extracts data_extraction_goal from the current page (or
//     url), validated against data_schema (one repair call, then the data
//     as it is with the errors in the run's errors). Output: the data.
//   - validation: one check of complete_criterion and terminate_criterion
//     on the page: complete lets the run go on, anything else terminates it
//     (with the mapped code). Output: {"status", "reasoning"}.
//   - action: a click on its selector; when the selector matches nothing
//     (within 3 s) or is absent, or ai_fallback is "proactive", the model
//     locates the element navigation_goal describes and clicks it (or types
//     or chooses, when it gives a value for a field). Output adds the
//     element and a selector that finds it without a model.
//   - file_download without a url: pursues navigation_goal until a file is
//     downloaded.
//   - text_prompt: sends prompt (no page); with json_schema the answer is
//     JSON checked against it, else {"llm_response": text}.
//
// The model-free blocks:
//
//   - goto_url: renders url and navigates the active tab; a page that cannot
//     be loaded fails the block with the browser's reason. Output:
//     {"url": <the URL reached>}.
//   - wait: sleeps wait_sec seconds (at most MaxWaitSec), ending early when
//     the run is canceled. Output: {"wait_sec": n}.
//   - action with a selector: when url is set, navigates there first; then
//     finds the element (CSS, or XPath with an "xpath=" prefix, waiting up
//     to Config.SelectorTimeout for it to appear) and clicks it; the block
//     type has no value field, so a click is all it does. With
//     complete_on_download the block also waits (download_timeout seconds,
//     default 60) for the download the click starts, which is how a file is
//     downloaded "by selector". Output: {"selector", "url",
//     "downloaded_files"}.
//   - for_loop: loops over a list: the parameter named by loop_over (the
//     parameter record of a stored agent) or loop_over_parameter_key, or
//     the value loop_variable_reference names (a template path such as
//     extract_output.items, with or without braces). A JSON string holding a
//     list is decoded; a single value counts as a list of one. Inside,
//     {{ current_value }} (also {{ current_item }}) is the item and
//     {{ current_index }} its index. An empty list fails the block unless
//     complete_if_empty is set. Output: a list with one object per
//     iteration, {"<label>_output": ...} of the loop's blocks. A loop block
//     that fails with next_loop_on_failure moves on to the next item.
//   - http_request: method, url, headers and body are rendered (the body,
//     an object, is sent as JSON unless the headers name another
//     Content-Type); timeout (seconds, default 30) and follow_redirects
//     (default true) apply. Output: {"status_code", "headers", "body"}, the
//     body decoded when the response is JSON, else text. A status of 400 or
//     more fails the block (its output is kept). With save_response_as_file
//     the body is also saved as a downloaded file (download_filename, else
//     the name the response or URL gives). Multipart files are not supported
//     yet.
//   - print_page: prints the active tab to PDF (format A4, Letter, Legal or
//     Tabloid; landscape; print_background, default true) as a downloaded
//     file named custom_filename (else the page title), with a UTC
//     timestamp unless include_timestamp is false.
//   - file_download with a url: navigates to the URL and waits for the
//     download it starts (download_timeout seconds, default 60).
//
// Every block's output is stored as <label>_output in the run's output
// object (a block inside a loop holds its last iteration's; a block that
// failed has one only when it produced something, such as the response of
// an http_request or the click of an action whose download did not come).
// A block with max_retries is tried up to that many more times when it
// fails (not when it was terminated, timed out, or the model could not be
// reached); a failed block fails the run, a terminated one terminates it,
// with a reason naming its label, unless it has continue_on_failure.
// next_block_label jumps to another block of the same list, and
// finally_block_label names a top-level block that runs last whatever
// happened before.
//
// Step count: every model decision of the loop, every extraction and
// validation, and every attempt of a model-free block that does something
// (navigate, wait, click, request, print, download) is one step. Every
// step counted is also reported (executor.StepReporter) and written to the
// step log: a model-free one with its block, what it did and how it ended
// (decision "done" or "failed"), so that a run's timeline lists all its
// steps.
//
// # Files
//
// All files are written into the run's directory (Job.Dir) under names the
// daemon's artifact store accepts: a JPEG screenshot of the active tab after
// every block that touched the page and at every step of the loop
// (screenshot-0001.jpg, ...), reported through Progress as it is taken; a
// WebM recording of the whole run from the DevTools screencast when ffmpeg
// is found (recording.webm); the step log (steps.json); and the downloaded
// files under their real names, with the PDFs of print_page and the files
// of http_request.
//
// # Performance
//
// BenchmarkAgentStep (agent_bench_test.go) measures the engine's time per
// step outside the model call with a scripted model that answers at once,
// beside raw chromedp doing the same action, screenshot and page read in
// the same run, and the size of the planning prompt.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine/browser"
	"github.com/abctl/abctl/engine/record"
	"github.com/abctl/abctl/executor"
	"github.com/abctl/abctl/llm"
)

// Defaults of Config.
const (
	// DefaultSelectorTimeout is how long an action block waits for its
	// selector to match.
	DefaultSelectorTimeout = 10 * time.Second
	// DefaultActionTimeout is the timeout of a single action
	// (run_action) that gives none, as the hosted service's runtime
	// default (5000 ms).
	DefaultActionTimeout = 5 * time.Second
	// MaxWaitSec caps a wait block.
	MaxWaitSec = 300
	// RecordingName is the file name of a run's recording.
	RecordingName = "recording.webm"
)

// Config configures an Engine. The zero value is usable.
type Config struct {
	// Chromium is the browser binary; "" looks for one (see
	// browser.FindChromium).
	Chromium string
	// BrowserAddress is a remote browser reached over CDP
	// (http://host:9222 or ws://...) used instead of a local Chromium.
	BrowserAddress string
	// Record records every run as a video when ffmpeg is found.
	Record bool
	// FFmpeg is the ffmpeg binary; "" looks up ffmpeg on PATH.
	FFmpeg string
	// HTTPClient makes the requests of http_request blocks and fetches the
	// files of ai_upload_file; nil means a client of its own.
	HTTPClient *http.Client
	// Logger receives the engine's diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// ActionIdle is how long the browser of a run_action workflow run stays
	// open without an action; 0 means executor.DefaultActionIdle.
	ActionIdle time.Duration
	// SelectorTimeout is how long an action block waits for its selector;
	// 0 means DefaultSelectorTimeout.
	SelectorTimeout time.Duration
	// Models are the language models of task runs, AI blocks and
	// model-driven single actions: the registry's default, or the model an
	// agent, block or action names. Nil means none: such work fails,
	// saying how to configure a model.
	Models *llm.Registry
	// MaxSteps is the step budget of a goal that sets none (a task run
	// without max_steps, a block without max_steps_per_run); 0 means
	// DefaultMaxSteps.
	MaxSteps int
	// AllowPrivateURLs lets the model navigate (goto_url) to loopback,
	// private and link-local addresses even when the run did not start on
	// one.
	AllowPrivateURLs bool
}

// Engine executes runs in Chromium. Build it with New; it is safe for
// concurrent use.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	ffmpeg string // "" when runs are not recorded
	http   *http.Client

	poolMu   sync.Mutex
	pool     *browser.Pool
	starting chan struct{} // closed when the pool start in progress ends
	startErr error
	closed   bool

	actMu sync.Mutex
	acts  map[string]*actionSession // open run_action sessions by run id
	wg    sync.WaitGroup            // session endings in the background
}

var (
	_ executor.Executor = (*Engine)(nil)
	_ executor.Actions  = (*Engine)(nil)
)

// New returns an engine. It does not start a browser: the first run does,
// so the daemon starts on a machine without Chromium, and its runs then fail
// with a reason that says how to install it. ctx is not retained.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	_ = ctx
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ActionIdle <= 0 {
		cfg.ActionIdle = executor.DefaultActionIdle
	}
	if cfg.SelectorTimeout <= 0 {
		cfg.SelectorTimeout = DefaultSelectorTimeout
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.BrowserAddress != "" {
		if err := CheckBrowserAddress(cfg.BrowserAddress); err != nil {
			return nil, err
		}
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, acts: map[string]*actionSession{}, http: cfg.HTTPClient}
	if e.http == nil {
		e.http = &http.Client{}
	}
	if cfg.BrowserAddress == "" {
		if _, err := browser.FindChromium(cfg.Chromium); err != nil {
			e.log.Warn("runs will fail until a browser is available", "error", err)
		}
	}
	if cfg.Record {
		path, err := record.FindFFmpeg(cfg.FFmpeg)
		if err != nil {
			e.log.Warn("runs will not be recorded", "error", err)
		} else {
			e.ffmpeg = path
		}
	}
	if cfg.Models != nil {
		e.log.Info("language model", "model", cfg.Models.Default().Info().String())
	}
	return e, nil
}

// errNoModel is the reason of work that needs a model on an engine that
// has none.
var errNoModel = fmt.Errorf("this daemon has no language model configured (configure one with %s and %s, or %s and %s)",
	llm.FlagProvider, llm.FlagModel, llm.EnvProvider, llm.EnvModel)

// model returns the model for the first model object given that names
// one, else the default.
func (e *Engine) model(choices ...client.Model) (llm.Model, error) {
	if e.cfg.Models == nil {
		return nil, errNoModel
	}
	for _, m := range choices {
		if m.Name() != "" {
			model, err := e.cfg.Models.Resolve(m)
			if err != nil {
				return nil, fmt.Errorf("model %q: %w", m.Name(), err)
			}
			return model, nil
		}
	}
	return e.cfg.Models.Default(), nil
}

// CheckBrowserAddress reports whether addr can name a CDP endpoint: an
// http, https, ws or wss URL with a host.
func CheckBrowserAddress(addr string) error {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		return fmt.Errorf("browser address %q is not a URL with a host (want http://host:9222 or ws://host:9222/devtools/browser/...)", addr)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
		return nil
	}
	return fmt.Errorf("browser address %q: the scheme must be http, https, ws or wss", addr)
}

// Close ends the open run_action sessions and closes the browsers. Runs
// still executing end with a browser error.
func (e *Engine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.EndActionSessions(ctx)
	e.poolMu.Lock()
	e.closed = true
	p := e.pool
	e.pool = nil
	e.poolMu.Unlock()
	e.wg.Wait()
	if p != nil {
		return p.Close()
	}
	return nil
}

// browserPool returns the pool, starting it (and the local browser) on
// first use. A start that fails is tried again by the next caller.
func (e *Engine) browserPool(ctx context.Context) (*browser.Pool, error) {
	for {
		e.poolMu.Lock()
		switch {
		case e.closed:
			e.poolMu.Unlock()
			return nil, errors.New("the browser engine is shut down")
		case e.pool != nil:
			p := e.pool
			e.poolMu.Unlock()
			return p, nil
		case e.starting != nil:
			ch := e.starting
			e.poolMu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			e.poolMu.Lock()
			err := e.startErr
			e.poolMu.Unlock()
			if err != nil && e.pool == nil {
				return nil, err
			}
			continue
		}
		ch := make(chan struct{})
		e.starting = ch
		e.poolMu.Unlock()

		p, err := browser.NewPool(ctx, browser.Options{
			ChromiumPath: e.cfg.Chromium, RemoteURL: e.cfg.BrowserAddress, Logger: e.log,
		})
		e.poolMu.Lock()
		e.starting = nil
		e.startErr = err
		if err == nil {
			if e.closed {
				e.poolMu.Unlock()
				close(ch)
				p.Close()
				return nil, errors.New("the browser engine is shut down")
			}
			e.pool = p
		}
		e.poolMu.Unlock()
		close(ch)
		if err != nil {
			return nil, fmt.Errorf("the browser could not be started: %w", err)
		}
		return p, nil
	}
}

// Execute implements executor.Executor.
func (e *Engine) Execute(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	if progress == nil {
		progress = nopProgress{}
	}
	if job.RunType != client.RunTypeWorkflowRun {
		return e.runTask(ctx, job, progress)
	}
	return e.runAgent(ctx, job, progress)
}

// openRun opens the browser session of a run and starts its recording.
func (e *Engine) openRun(ctx context.Context, job *executor.Job, progress executor.Progress) (*run, error) {
	pool, err := e.browserPool(ctx)
	if err != nil {
		return nil, errors.New(upperFirst(err.Error()))
	}
	sess, err := pool.Acquire(ctx, browser.SessionOptions{RunID: job.RunID, DownloadDir: job.Dir})
	if err != nil {
		return nil, errors.New("The browser session could not be opened: " + err.Error())
	}
	r := newRun(e, job.Dir, sess, progress)
	r.startRecording(ctx)
	return r, nil
}

func (e *Engine) runAgent(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	if job.Agent == nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The run has no agent definition."}
	}
	def := &job.Agent.WorkflowDefinition
	if err := checkDefinition(def, e.cfg.Models != nil); err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	// The models the blocks name must exist before any browser opens.
	if err := e.checkModels(job.Agent); err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	params, err := decodeParameters(job.Parameters)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	r, err := e.openRun(ctx, job, progress)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	r.params = params
	r.maxSteps = job.MaxSteps
	r.def = def
	r.agentModel = job.Agent.Model

	fail := r.runDefinition(ctx, def)
	if fail != nil && ctx.Err() == nil {
		r.codeFailure(ctx, fail)
	}

	status, reason := r.agentStatus(ctx, fail)
	var coded *codedError
	if fail != nil && errors.As(fail.err, &coded) {
		r.outputs.set("error", coded.code)
	}
	summary := r.summary(status, reason)
	res := r.finish(ctx)
	res.Status, res.FailureReason, res.Summary = status, reason, summary
	res.Output = r.outputs.json()
	return res
}

// agentStatus is the status and failure reason of an agent run that
// ended with fail (nil: completed).
func (r *run) agentStatus(ctx context.Context, fail *blockFailure) (client.RunStatus, string) {
	var term *terminatedError
	var limit *stepLimitError
	switch {
	case fail == nil:
		return client.RunStatusCompleted, ""
	case errors.As(fail.err, &limit):
		return client.RunStatusTimedOut, fmt.Sprintf("Block %q (%s) reached its limit of %d steps before its goal was reached.", fail.label, fail.typ, limit.limit)
	case errors.Is(fail.err, errStepLimit):
		return client.RunStatusTimedOut, fmt.Sprintf("The run reached its limit of %d steps before block %q finished.", r.maxSteps, fail.label)
	case ctx.Err() != nil:
		return client.RunStatusFailed, "The run was stopped before it finished."
	case errors.As(fail.err, &term):
		return client.RunStatusTerminated, fail.reason()
	}
	return client.RunStatusFailed, fail.reason()
}

// checkModels resolves the models an agent and its blocks name, so that a
// misnamed model fails the run before it starts.
func (e *Engine) checkModels(a *client.Agent) error {
	if e.cfg.Models == nil {
		return nil
	}
	if a.Model.Name() != "" {
		if _, err := e.model(a.Model); err != nil {
			return err
		}
	}
	var walk func(bs client.Blocks) error
	walk = func(bs client.Blocks) error {
		for _, b := range bs {
			if b == nil {
				continue
			}
			if m := b.Base().Model; m.Name() != "" {
				if _, err := e.model(m); err != nil {
					return fmt.Errorf("block %q: %w", b.Base().Label, err)
				}
			}
			if l, ok := b.(*client.ForLoopBlock); ok {
				if err := walk(l.LoopBlocks); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(a.WorkflowDefinition.Blocks)
}

// codeFailure matches a failed block against the error codes of the
// block and of the definition, when the block's own handling did not.
func (r *run) codeFailure(ctx context.Context, fail *blockFailure) {
	var coded *codedError
	if errors.As(fail.err, &coded) || !classifiable(ctx, fail.err) || len(r.def.ErrorCodeMapping) == 0 {
		return
	}
	m, err := r.e.model(r.agentModel)
	if err != nil {
		return
	}
	code := r.classify(ctx, m, r.def.ErrorCodeMapping, failureInfo{goal: "block " + fail.label + " of the agent", reason: fail.err.Error(), label: fail.label})
	if code != "" {
		fail.err = &codedError{error: fail.err, code: code}
	}
}

// summary describes what the run did: the goals' own accounts, then how
// it ended.
func (r *run) summary(status client.RunStatus, reason string) string {
	var b strings.Builder
	for _, s := range r.summaries {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(strings.TrimSpace(s))
	}
	if status != client.RunStatusCompleted && reason != "" {
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString("It ended " + string(status) + ": " + reason)
	}
	out := b.String()
	if out == "" && r.steps > 0 {
		out = fmt.Sprintf("Ran %d steps.", r.steps)
	}
	r.ag.summary = out
	return clip(out, 4000)
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

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// nopProgress is the Progress of a caller that gave none.
type nopProgress struct{}

func (nopProgress) Step(int)          {}
func (nopProgress) Screenshot(string) {}

// recordingPath is where a run's recording goes.
func recordingPath(dir string) string { return filepath.Join(dir, RecordingName) }
