// Package localrun is the execution engine of `abctl daemon`: it executes
// runs in Chromium (package localrun/browser) and implements the daemon's
// executor seam (daemon/executor) and its single-action seam
// (POST /v1/sdk/run_action, see RunAction).
//
// # What runs without a language model (part 1)
//
// An agent run executes the blocks of the agent's definition in order. The
// engine checks every block (loop blocks included) before it opens a
// browser: a block that needs a language model (navigation, extraction,
// task, validation, task_v2, text_prompt, login, an action without a
// selector, a file_download without a url, ...) or that the engine does not
// implement fails the run at once, naming its label and type. Task runs
// (a prompt) need a model too and fail the same way; the agent loop arrives
// with localrun part 2.
//
// Text fields are templates: {{ name }}, {{ name.field }} and
// {{ name.list[0] }} read the run's parameters (decoded JSON) and the
// outputs of the blocks that finished before ({{ <label>_output }}). A
// reference that names nothing fails the block with an error that names it
// (package localrun/tmpl); nothing renders silently as "".
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
//     "downloaded_files"}. An action without a selector needs a model.
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
//     download it starts (download_timeout seconds, default 60). Without a
//     url it needs a model to find the download.
//
// Every block's output is stored as <label>_output in the run's output
// object (a block inside a loop holds its last iteration's; a block that
// failed has one only when it produced something, such as the response of
// an http_request or the click of an action whose download did not come).
// A block with
// max_retries is tried up to that many more times before it fails; a failed
// block fails the run, with a reason naming its label, unless it has
// continue_on_failure. next_block_label jumps to another block of the same
// list, and finally_block_label names a top-level block that runs last
// whatever happened before.
//
// Step count: every block attempt that does something (navigate, wait,
// click, request, print, download) is one step. A job's MaxSteps ends the
// run timed_out when it is reached.
//
// # Files
//
// All files are written into the run's directory (Job.Dir) under names the
// daemon's artifact store accepts: a JPEG screenshot of the active tab after
// every block that touched the page (screenshot-0001.jpg, ...), reported
// through Progress as it is taken; a WebM recording of the whole run from
// the DevTools screencast when ffmpeg is found (recording.webm); and the
// downloaded files under their real names, with the PDFs of print_page and
// the files of http_request.
package localrun

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
	"github.com/abctl/abctl/daemon/executor"
	"github.com/abctl/abctl/localrun/browser"
	"github.com/abctl/abctl/localrun/record"
)

// Defaults of Config.
const (
	// DefaultActionIdle is how long the browser session of a run_action
	// workflow run stays open without an action.
	DefaultActionIdle = 5 * time.Minute
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
	// open without an action; 0 means DefaultActionIdle.
	ActionIdle time.Duration
	// SelectorTimeout is how long an action block waits for its selector;
	// 0 means DefaultSelectorTimeout.
	SelectorTimeout time.Duration
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

var _ executor.Executor = (*Engine)(nil)

// New returns an engine. It does not start a browser: the first run does,
// so the daemon starts on a machine without Chromium, and its runs then fail
// with a reason that says how to install it. ctx is not retained.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	_ = ctx
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ActionIdle <= 0 {
		cfg.ActionIdle = DefaultActionIdle
	}
	if cfg.SelectorTimeout <= 0 {
		cfg.SelectorTimeout = DefaultSelectorTimeout
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
	return e, nil
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
		return executor.Result{
			Status: client.RunStatusFailed,
			FailureReason: fmt.Sprintf("A %s run is driven by a prompt and needs a language model, which this daemon does not have yet "+
				"(the agent loop arrives with localrun part 2). Agents made of model-free blocks "+
				"(goto_url, wait, action with a selector, for_loop, http_request, print_page, file_download with a url) run now.", job.RunType),
		}
	}
	return e.runAgent(ctx, job, progress)
}

func (e *Engine) runAgent(ctx context.Context, job *executor.Job, progress executor.Progress) executor.Result {
	if job.Agent == nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The run has no agent definition."}
	}
	def := &job.Agent.WorkflowDefinition
	if err := checkDefinition(def); err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The agent cannot run: " + err.Error() + "."}
	}
	params, err := decodeParameters(job.Parameters)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: err.Error()}
	}
	pool, err := e.browserPool(ctx)
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: upperFirst(err.Error())}
	}
	sess, err := pool.Acquire(ctx, browser.SessionOptions{RunID: job.RunID, DownloadDir: job.Dir})
	if err != nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "The browser session could not be opened: " + err.Error()}
	}
	r := newRun(e, job.Dir, sess, progress)
	r.params = params
	r.maxSteps = job.MaxSteps
	r.startRecording(ctx)

	fail := r.runDefinition(ctx, def)

	res := r.finish(ctx)
	res.Output = r.outputs.json()
	switch {
	case fail == nil:
		res.Status = client.RunStatusCompleted
	case errors.Is(fail.err, errStepLimit):
		res.Status = client.RunStatusTimedOut
		res.FailureReason = fmt.Sprintf("The run reached its limit of %d steps before block %q finished.", r.maxSteps, fail.label)
	case ctx.Err() != nil:
		res.Status = client.RunStatusFailed
		res.FailureReason = "The run was stopped before it finished."
	default:
		res.Status = client.RunStatusFailed
		res.FailureReason = fail.reason()
	}
	return res
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
