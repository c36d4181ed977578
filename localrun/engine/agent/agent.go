// Package agent is the work a language model does in a run: the agent loop
// that pursues a goal on a page (Pursue), and the single model calls the
// blocks and the run_action runs make (Extract, Judge, Locate, Prompt,
// JudgeStatement, Classify), with their prompts, answer schemas, data
// extraction and error codes. What the loop does is described in
// docs/blocks.md (the agent loop, how a goal ends, safety of the prompts).
//
// The loop never touches the browser itself: it reads and acts on the
// page through Browser, a handful of operations that package
// engine/runbrowser implements. Every model call and every step is
// recorded in the run's step log (package engine/steplog).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// Browser is the run's browser as the agent loop sees it: the active tab,
// read and acted on. Package engine/runbrowser implements it over the run's
// browser context and engine/page.
type Browser interface {
	// Observe reads the active tab, once it has settled when settle is set
	// (settled is how long that took). The observation's screenshot is
	// kept as the run's screenshot of the moment; the tabs are listed with
	// short ids (t1, t2) when there are several.
	Observe(ctx context.Context, settle bool) (obs *page.Observation, settled time.Duration, err error)
	// Act does one action on the page of the last observation. A page that
	// refuses it says why in the Result's Reason; the error of an action
	// that failed carries that reason too.
	Act(ctx context.Context, a Action) (page.Result, error)
	// TabChanged reports whether another tab than the one last observed is
	// active, waiting briefly for a tab the page is opening.
	TabChanged(ctx context.Context) bool
	// Downloads is the number of downloads the run completed so far.
	Downloads() int
	// DownloadsSince returns the names of the files downloaded after the
	// first n downloads.
	DownloadsSince(n int) []string
	// DownloadDone reports whether a download completed after the first n,
	// waiting up to timeout for one in progress.
	DownloadDone(ctx context.Context, n int, timeout time.Duration) (bool, error)
	// StartedPrivate reports whether the run itself (not the model) loaded
	// a local or private address, which lets the model go to such addresses.
	StartedPrivate() bool
}

// Action is one action the loop asks of the Browser, checked against the
// page before.
type Action struct {
	// Type is click, input_text, select_option, upload_file, hover,
	// press_key, scroll, wait, goto_url, go_back, switch_tab or close_tab.
	Type string
	// ID is the element's id in the observation ("" scrolls the page).
	ID string
	// Text is the value to type, the option's label, the key, the URL of
	// the file to upload, the URL to load or the tab's short id.
	Text string
	// DY is how far to scroll, in CSS pixels (negative: up).
	DY float64
	// Wait is how long a wait action waits.
	Wait time.Duration
}

// ActionTimeout bounds one action on a page.
const ActionTimeout = 30 * time.Second

// ActionWait is how long an action of the agent loop waits for its element
// to become actionable (see page.WithActionWait).
const ActionWait = 2 * time.Second

// Agent does the model's work on one run's browser. Its methods are not
// safe for concurrent use.
type Agent struct {
	browser      Browser
	steps        *steplog.Log
	tag          string
	logger       *slog.Logger
	allowPrivate bool
}

// Config configures an Agent.
type Config struct {
	// Tag is the random tag of the run's page markers in prompts.
	Tag string
	// Logger receives the diagnostics.
	Logger *slog.Logger
	// AllowPrivateURLs lets the model go to loopback, private and
	// link-local addresses even when the run did not start on one.
	AllowPrivateURLs bool
}

// New returns the agent of a run that works on b and records in steps.
func New(b Browser, steps *steplog.Log, cfg Config) *Agent {
	return &Agent{browser: b, steps: steps, tag: cfg.Tag, logger: cfg.Logger, allowPrivate: cfg.AllowPrivateURLs}
}

// Goal is what one run of the loop must achieve.
type Goal struct {
	// Label names the block ("" for a task run or a run_action).
	Label string
	// Navigation says what to do; "" when there is only something to
	// extract.
	Navigation string
	// CompleteCriterion and TerminateCriterion are the block's conditions.
	CompleteCriterion, TerminateCriterion string
	// Verify checks a completion against CompleteCriterion.
	Verify bool
	// Extraction says what to extract once the navigation is done, and
	// Schema how the data must look (nil: free form).
	Extraction string
	Schema     *Schema
	// ErrorCodes are the user's codes for a goal that is not reached.
	ErrorCodes map[string]string
	// Details are the user's values the model may use.
	Details map[string]any
	// MaxSteps is the goal's step budget.
	MaxSteps int
	// CompleteOnDownload completes the goal when a download finishes,
	// waiting up to DownloadTimeout for one in progress.
	CompleteOnDownload bool
	DownloadTimeout    time.Duration
	// HistoryInVerify shows the steps to the completion check.
	HistoryInVerify bool
	Model           llm.Model
	// Record asks for the goal's actions as script steps, in
	// Outcome.Steps; nil records nothing.
	Record *Recording
}

// what names the goal in messages.
func (g *Goal) what() string {
	if g.Label == "" {
		return "the task"
	}
	return fmt.Sprintf("block %q", g.Label)
}

// Outcome is what a goal produced.
type Outcome struct {
	// Summary is the model's account of what it did.
	Summary string
	// Data is the extracted data, or the data the model gave when it
	// completed (nil for none).
	Data json.RawMessage
	// URL is the page the goal ended on.
	URL string
	// Downloads are the files downloaded while pursuing the goal.
	Downloads []string
	// Steps are the actions that reached the goal, as a script records
	// them, when Goal.Record asked for them; Unreplayable says why they
	// cannot be replayed ("" when they can).
	Steps        []script.Step
	Unreplayable string
	// Replayed is set when the outcome came from a script's replay;
	// FallbackTriggered when the model had to take over a replay.
	Replayed, FallbackTriggered bool
}

// TerminatedError is a goal the model judged unreachable, or a condition
// that ends it: the run ends terminated.
type TerminatedError struct{ Reason string }

func (e *TerminatedError) Error() string { return e.Reason }

// StepLimitError is a goal that ran out of steps: the run ends timed_out.
type StepLimitError struct {
	Limit int
	What  string // "the task", `block "x"`
}

func (e *StepLimitError) Error() string {
	return fmt.Sprintf("%s reached its limit of %d steps before the goal was reached", e.What, e.Limit)
}

// Is makes a goal's step limit count as the run's (steplog.ErrLimit).
func (e *StepLimitError) Is(target error) bool { return target == steplog.ErrLimit }

// ModelError is a model call that failed after the llm package's retries
// (unreachable, refused, rate limited): infrastructure trouble, the run
// fails.
type ModelError struct{ Err error }

func (e *ModelError) Error() string {
	return "the language model could not be used: " + strings.TrimPrefix(e.Err.Error(), "llm: ")
}

func (e *ModelError) Unwrap() error { return e.Err }

// wrapModelErr turns a failed call into a *ModelError, keeping context
// errors as they are.
func wrapModelErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return &ModelError{err}
	}
	return err
}

// CodedError is a failure the user's error_code_mapping matched: the code
// goes to the run's output.error.
type CodedError struct {
	Err  error
	Code string
}

func (e *CodedError) Error() string { return e.Err.Error() }
func (e *CodedError) Unwrap() error { return e.Err }

// ErrNoModel is the reason of work that needs a model on an engine that
// has none.
var ErrNoModel = fmt.Errorf("this daemon has no language model configured (configure one with %s and %s, or %s and %s)",
	llm.FlagProvider, llm.FlagModel, llm.EnvProvider, llm.EnvModel)

// Models chooses the model of a piece of work from the engine's registry
// and the custom models of the run's organization.
type Models struct {
	// Registry holds the configured models; nil when there are none.
	Registry *llm.Registry
	// Custom are the custom models of the run's organization by id
	// (executor.Job.CustomModels); nil when it has none.
	Custom map[string]CustomModel
}

// CustomModel is one custom model of a run's organization: the model, or
// why its configuration makes none.
type CustomModel struct {
	Model llm.Model
	Err   error
}

// Configured reports whether the engine has a model at all.
func (m Models) Configured() bool { return m.Registry != nil || len(m.Custom) > 0 }

// Pick returns the model of the first choice that names one, else the
// default. A name with the custom models' id prefix is one of the
// organization's custom models, or an error: never the registry's.
func (m Models) Pick(choices ...client.Model) (llm.Model, error) {
	for _, c := range choices {
		name := strings.TrimSpace(c.Name())
		if cm, ok := m.Custom[name]; ok {
			return cm.Model, cm.Err
		}
		if strings.HasPrefix(name, executor.CustomModelIDPrefix) {
			return nil, fmt.Errorf("model %q: this organization has no custom model with this id (GET /v1/custom-llms lists them)", name)
		}
		if name != "" && m.Registry == nil {
			return nil, ErrNoModel
		}
		if name != "" {
			model, err := m.Registry.Resolve(c)
			if err != nil {
				return nil, fmt.Errorf("model %q: %w", c.Name(), err)
			}
			return model, nil
		}
	}
	if m.Registry == nil {
		return nil, ErrNoModel
	}
	return m.Registry.Default(), nil
}
