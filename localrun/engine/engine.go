// Package engine is the browser engine of `abctl daemon`: it executes in
// Chromium the runs the daemon hands it through the executor seam. Engine
// implements executor.Executor (task and agent runs), executor.Actions
// (the single actions of POST /v1/sdk/run_action, each workflow run's
// browser kept open between them) and executor.BrowserSessions (browsers a
// user opens with POST /v1/browser_sessions and that runs reuse). A
// language model (package llm, Config.Models) drives task runs, the blocks
// that need one and the single actions that name an intention.
//
// What a run does (the agent loop, each block and its output, how runs
// end, their steps and their files) is described in docs/blocks.md; single
// actions in docs/daemon.md.
//
// This package is the adapter between the executor seam and the parts
// that do the work, each in its own package and depending only on those
// listed after it:
//
//	engine             assembles and finishes runs, keeps run_action runs
//	                   and browser sessions open
//	engine/blocks      the block interpreter of agent runs
//	engine/runbrowser  the browser of one run: the active tab and its
//	                   settling, navigation, screenshots, the recording,
//	                   the run's files and downloads
//	engine/agent       the model's work: the agent loop and the single
//	                   model calls, with their prompts, data schemas and
//	                   error codes
//	engine/steplog     the step log: counting and reporting steps, model
//	                   calls, the run's errors and summary, steps.json
//
// under which engine/browser (the Chromium pool and its browser contexts),
// engine/page (observing and acting on a page) and engine/record (the
// recording) do the browser's part.
//
// A run is a runbrowser.Browser over a browser context of the pool, a
// steplog.Log, and an agent.Agent that works on the run's browser through
// the narrow agent.Browser view and records into the log. A task run gives
// its prompt to the agent as one goal; an agent run gives its definition
// to a blocks.Interpreter, which drives the browser itself and hands the
// goals of its model blocks to the agent; a run_action run keeps its
// browser open between actions.
//
// BenchmarkAgentStep measures the engine's time per step outside the model
// call, with a scripted model that answers at once, beside raw chromedp
// doing the same action, screenshot and page read.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/record"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// Defaults and limits.
const (
	// DefaultSelectorTimeout is how long an action block waits for its
	// selector to match.
	DefaultSelectorTimeout = 10 * time.Second
	// DefaultActionTimeout is the timeout of a single action
	// (run_action) that gives none, as the hosted service's runtime
	// default (5000 ms).
	DefaultActionTimeout = 5 * time.Second
	// DefaultMaxSteps is the step budget of a goal that sets none (a task
	// run without max_steps, a block without max_steps_per_run). It is 25,
	// the hosted service's default for task_v2, rather than its
	// open-source default of 10: a real flow over several pages (sign in,
	// a one-time code, search, pick a result, fill a form, confirm) takes
	// 15 to 25 steps of one to five actions each, and at 10 such runs
	// ended timed_out just short of the goal. The budget only bounds a
	// run that is lost; one that repeats itself to no effect fails sooner
	// (the agent's repeat check), and max_steps, max_steps_per_run and
	// x-max-steps-override still set any other budget.
	DefaultMaxSteps = 25
	// DefaultTaskV2MaxSteps is the step budget of a task_v2 block that
	// sets none, as the hosted service's default.
	DefaultTaskV2MaxSteps = blocks.DefaultTaskV2MaxSteps
	// MaxWaitSec caps a wait block.
	MaxWaitSec = blocks.MaxWaitSec
	// RecordingName is the file name of a run's recording.
	RecordingName = runbrowser.RecordingName
	// StepsName is the file name of a run's step log (JSON) in its
	// directory.
	StepsName = steplog.FileName
)

// Config configures an Engine. The zero value is usable.
type Config struct {
	// Chromium is the browser binary; "" looks for one (see
	// browser.FindChromium).
	Chromium string
	// BrowserAddress is a remote browser reached over CDP
	// (http://host:9222 or ws://...) used instead of a local Chromium.
	BrowserAddress string
	// BrowserEndpoints are the remote browsers of a fleet: a run without
	// a browser address of its own is placed on one of them, and no local
	// browser starts (browser.Options.Endpoints). FleetStatus shows them.
	BrowserEndpoints []browser.Endpoint
	// BrowserQueueTimeout and BrowserQueueMax bound the fleet's queue of
	// runs waiting for an endpoint (browser.Options.QueueTimeout and
	// MaxQueue; 0: their defaults).
	BrowserQueueTimeout time.Duration
	BrowserQueueMax     int
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
	// SMTP is the mail server of send_email blocks that name none.
	SMTP blocks.SMTP
	// S3 is the S3-compatible storage of upload_to_s3, download_to_s3 and
	// file_upload blocks that name none.
	S3 blocks.S3Config
	// Code says whether and how code blocks run (off by default).
	Code blocks.CodeConfig
	// SheetsEndpoint is the Google Sheets API of the Google Sheets blocks;
	// "" means blocks.DefaultSheetsEndpoint (tests give their own).
	SheetsEndpoint string
	// IMAP is where email_inbox blocks read mail; the zero value uses the
	// providers' servers (Gmail, Outlook).
	IMAP blocks.IMAPConfig
	// Vault reads the organizations' credentials, which agents name in
	// credential parameters, for jobs that bring none (executor.Job.Vault
	// wins); nil means such jobs cannot use credentials.
	Vault executor.Vault
	// AllowPrivateURLs lets the model navigate (goto_url) to loopback,
	// private and link-local addresses even when the run did not start on
	// one.
	AllowPrivateURLs bool
	// Egress is what runs may reach (package internal/egress): every
	// connection a run causes, the browser's through a proxy per run, is
	// decided by the guard of the run's organization. Nil: runs reach
	// anything but the schemes egress refuses (tests, embedded engines).
	Egress *egress.Policy
	// EgressProxyHost is the address the runs' proxies listen on, which
	// the browsers must reach; "" means 127.0.0.1 (local Chromium and
	// browsers on this machine).
	EgressProxyHost string
}

// guard returns the egress guard of an organization's runs; nil without a
// policy.
func (e *Engine) guard(orgID string) *egress.Guard {
	if e.cfg.Egress == nil {
		return nil
	}
	return e.cfg.Egress.For(orgID)
}

// Engine executes runs in Chromium. Build it with New; it is safe for
// concurrent use.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	ffmpeg string // "" when runs are not recorded
	http   *http.Client
	models agent.Models
	env    blocks.Env // what the block interpreter takes from the engine

	poolMu   sync.Mutex
	pool     *browser.Pool
	starting chan struct{} // closed when the pool start in progress ends
	startErr error
	closed   bool

	actMu sync.Mutex
	acts  map[string]*actionRun // open run_action runs by run id
	wg    sync.WaitGroup        // run_action runs ending in the background

	browserSessionsMu sync.Mutex
	browserSessions   map[string]*browserSession // open browser sessions by id

	// modelClients are the HTTP clients of the organizations' custom
	// models, through their guards, by organization id (custommodels.go).
	modelClients sync.Map

	// frameRuns are the browsers of the executing runs by run id, for
	// Frame (frames.go).
	frameRuns sync.Map

	unproxied sync.Map // remote browsers warned of running without the egress proxy (egress.go)

	protectMu    sync.Mutex
	unprotected  []protection // browser DevTools addresses whose host did not resolve yet (egress.go)
	protectTried time.Time
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
	e := &Engine{cfg: cfg, log: cfg.Logger, acts: map[string]*actionRun{}, http: cfg.HTTPClient,
		models: agent.Models{Registry: cfg.Models}}
	if e.http == nil {
		e.http = &http.Client{}
	}
	e.env = blocks.Env{Models: e.models, HTTP: e.http, Logger: e.log, SelectorTimeout: cfg.SelectorTimeout, MaxSteps: cfg.MaxSteps,
		SMTP: cfg.SMTP, S3: cfg.S3, Code: cfg.Code, IMAP: cfg.IMAP, SheetsEndpoint: cfg.SheetsEndpoint}
	for _, ep := range cfg.BrowserEndpoints {
		if err := CheckBrowserAddress(ep.URL); err != nil {
			return nil, fmt.Errorf("a browser endpoint of the fleet: %w", err)
		}
	}
	if err := e.protectBrowsers(); err != nil {
		return nil, err
	}
	if cfg.BrowserAddress == "" && len(cfg.BrowserEndpoints) == 0 {
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

// Close ends the open run_action runs and closes the browsers. Runs
// still executing end with a browser error.
func (e *Engine) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.EndActionRuns(ctx)
	e.closeBrowserSessions(ctx)
	e.poolMu.Lock()
	e.closed = true
	p := e.pool
	e.pool = nil
	e.poolMu.Unlock()
	e.wg.Wait()
	e.modelClients.Range(func(_, c any) bool {
		c.(*http.Client).CloseIdleConnections()
		return true
	})
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
			ChromiumPath: e.cfg.Chromium, RemoteURL: e.cfg.BrowserAddress, Endpoints: e.cfg.BrowserEndpoints, Logger: e.log,
			QueueTimeout: e.cfg.BrowserQueueTimeout, MaxQueue: e.cfg.BrowserQueueMax,
			DevTools: e.protectDevTools,
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

// FleetStatus is the state of the fleet of browser endpoints
// (Config.BrowserEndpoints) and of the runs queued for them; ok is false
// when the engine has no fleet. Before the first run it starts the pool
// (no local browser starts with a fleet), so that the endpoints' health is
// checked from then on.
func (e *Engine) FleetStatus() (status browser.FleetStatus, ok bool) {
	if len(e.cfg.BrowserEndpoints) == 0 {
		return browser.FleetStatus{}, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := e.browserPool(ctx)
	if err != nil {
		e.log.Warn("the fleet of browser endpoints cannot start", "error", err)
		return browser.FleetStatus{}, true
	}
	return p.Status(), true
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

// nopProgress is the Progress of a caller that gave none.
type nopProgress struct{}

func (nopProgress) Step(int)          {}
func (nopProgress) Screenshot(string) {}
