// Package executor is the seam between the daemon, which owns runs (their
// states, persistence, queueing, cancellation and webhooks), and the engine
// that executes one run in a browser (package engine). The daemon hands
// an Executor a Job and a Progress to report to; the executor returns a
// Result. The daemon's tests use a scripted executor; the engine's tests
// need no daemon.
package executor

import (
	"context"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
)

// Executor executes runs. Execute is called from several goroutines at once,
// one per run the daemon lets execute concurrently.
//
// Execute reports through executor.Started when the run starts: at once
// for a run that needs nothing to begin, once it has its browser for one
// that does; until then the daemon shows the run queued.
//
// Execute must return soon (within a second or two) after ctx is done: the
// daemon cancels ctx when the run is canceled or its wall-clock limit
// passes, and then records the run as canceled or timed_out itself, keeping
// whatever the Result holds (output, steps, files). The step limit is the
// executor's to enforce: it ends such a run with StatusTimedOut.
type Executor interface {
	Execute(ctx context.Context, job *Job, progress Progress) Result
}

// Job is one run to execute.
type Job struct {
	RunID   string
	OrgID   string
	RunType client.RunType

	// Task is the request of a task run (RunType task_v1 or task_v2).
	Task *client.TaskRunRequest
	// Agent is the version of the agent an agent run executes (RunType
	// workflow_run), and Parameters the value of each of its workflow
	// parameters: the request's, or the default.
	Agent      *client.Agent
	Parameters map[string]json.RawMessage

	// MaxSteps is the step limit; 0 leaves it to the executor's default.
	MaxSteps int
	// Dir is where the run's files go (screenshots, the recording,
	// downloads). It exists and belongs to this run only; the executor
	// names the files it writes there in Result and in Progress.
	Dir string

	// BrowserSessionID names the browser session (BrowserSessions) the
	// run executes in, "" for a browser of its own. Runs of one session
	// execute one at a time; the session outlives them.
	BrowserSessionID string

	// BrowserState is the browser state the run starts from (the JSON of
	// engine/browser.State: cookies and local storage): a browser
	// profile's, or the one its agent kept; nil for a fresh browser.
	BrowserState []byte
	// KeepBrowserState asks for the state the run ends with, in
	// Result.BrowserState (an agent with persist_browser_session).
	KeepBrowserState bool

	// Vault reads the organization's credentials and the one-time codes
	// pushed for its runs; nil when the caller keeps none. The daemon sets
	// it to its store. The executor asks for a credential only when the
	// run needs it, and never keeps or writes what it reads.
	Vault Vault

	// Human asks people the questions of the agent's human_interaction
	// blocks, pausing the run meanwhile (see HumanAsker); nil when the
	// caller has no one to ask, and those blocks then fail.
	Human HumanAsker

	// Trigger starts the runs the agent's workflow_trigger blocks ask for
	// (see AgentStarter); nil when the caller cannot start runs, and those
	// blocks then fail.
	Trigger AgentStarter

	// CustomModels are the model endpoints of the run's organization
	// (/v1/custom-llms), keys unsealed: the run's agent, blocks or task
	// may name them by id; no other organization's run sees them.
	CustomModels []CustomModel

	// Script is how an agent run uses scripts (run_with: code,
	// generate_script_on_terminal); nil for neither.
	Script *ScriptJob

	// LocalFiles opens the files that URLs of the daemon itself name (the
	// signed URLs of run files and of POST /v1/upload_file), so that a run
	// reads them from the daemon's disk: the daemon's own address is not
	// reachable by runs (package internal/egress). nil: every file URL is
	// fetched over the network.
	LocalFiles LocalFiles
}

// LocalFiles opens a file the daemon serves by a URL of its own.
type LocalFiles interface {
	// OpenURL returns the file u names and its name; ok is false when u
	// is not a URL of the daemon's files (the caller fetches it), and err
	// says why one that is cannot be read (an invalid signature, an
	// expired URL, a file that is gone).
	OpenURL(u *url.URL) (f io.ReadCloser, name string, ok bool, err error)
}

// ScriptJob is how an agent run replays and records a script (package
// script; docs/scripts.md).
type ScriptJob struct {
	// Replay is the script to replay (its script.yaml), nil when the
	// agent has none yet for the cache key: the run then records one.
	Replay []byte
	// Record asks for the script the run makes, in Result.Script, when it
	// completes.
	Record bool
	// AIFallback lets the model take over what cannot be replayed.
	AIFallback bool
	// CacheKey is the agent's cache key, rendered with the run's values.
	CacheKey string
}

// BrowserSessions is implemented by an executor that keeps browser
// sessions open between runs (POST /v1/browser_sessions): a browser context
// with its cookies and tabs, in which runs that name it execute.
type BrowserSessions interface {
	// OpenBrowserSession opens the session id of the organization.
	OpenBrowserSession(ctx context.Context, orgID, id string, o BrowserSessionOptions) error
	// CloseBrowserSession closes it, waiting for a run in it to end; with
	// keepState, it returns the browser state (as Result.BrowserState) the
	// session ended with. Closing a session that is not open is not an
	// error.
	CloseBrowserSession(ctx context.Context, orgID, id string, keepState bool) ([]byte, error)
}

// BrowserSessionOptions configure a browser session.
type BrowserSessionOptions struct {
	URL   string // a page to open, "" for none
	State []byte // a browser state to start from (Job.BrowserState), nil for none
}

// Vault gives an executor an organization's credentials (see
// client.CredentialsService) and the one-time codes pushed for its runs.
type Vault interface {
	// Credential returns a credential's type and data, the JSON of a
	// client.PasswordCredential, CreditCardCredential or SecretCredential.
	Credential(ctx context.Context, orgID, credentialID string) (client.CredentialType, []byte, error)
	// TakeTOTPCode returns, and uses up, the newest code pushed for
	// identifier that f admits and that has not expired; nil when there is
	// none.
	TakeTOTPCode(ctx context.Context, orgID, identifier string, f CodeFilter) (*client.TOTPCode, error)
	// FetchTOTPCode asks a run's totp_verification_url for a code, as the
	// hosted service does: a signed POST naming the run; "" when it has
	// none yet.
	FetchTOTPCode(ctx context.Context, orgID, runID, url string) (string, error)
}

// CodeFilter says which pushed codes a run may take: those pushed at or
// after Since, and not tied (by their workflow_run_id, task_id or
// workflow_id) to another run or agent.
type CodeFilter struct {
	Since   time.Time
	RunID   string // the run's id (wr_..., tsk_...)
	AgentID string // the run's agent (wpid_...), "" for none
}

// Progress receives what a run produces while it runs, so that a run read
// in the middle shows it, and so that a run that is canceled or cut short
// keeps it. It is safe for concurrent use.
type Progress interface {
	// Step reports that count steps have been executed so far.
	Step(count int)
	// Screenshot reports a screenshot written to Job.Dir under name.
	Screenshot(name string)
}

// StartReporter is implemented by a Progress that wants to know when the
// run starts: when it has what it needs to begin, such as its browser, as
// opposed to when the executor took it (a run waiting for a browser in the
// fleet's queue has not started). The executor calls Started once, before
// the run's work begins; a run that ends without it (its browser never
// came) never started. Executors call it through the function Started.
type StartReporter interface {
	Started()
}

// Started tells p that the run started, when p implements StartReporter.
// Calling it again is harmless for the daemon's Progress, but an executor
// calls it once.
func Started(p Progress) {
	if s, ok := p.(StartReporter); ok {
		s.Started()
	}
}

// StepReporter is implemented by a Progress that also wants the details of
// each step of the agent loop (what the model decided, what was done,
// where the time went). The executor calls StepDetail after each such step
// when its Progress implements it; a Progress that does not is unaffected.
type StepReporter interface {
	StepDetail(StepInfo)
}

// BlockReporter is implemented by a Progress that also wants to know when
// each block of an agent run starts and ends (the run's timeline). The
// executor calls Block as a block starts (Status BlockRunning) and again,
// with the same Seq, as it ends; a Progress that does not implement it is
// unaffected.
type BlockReporter interface {
	Block(BlockInfo)
}

// BlockInfo describes one execution of a block of an agent run. A block
// retried is one execution; a block inside a loop executes once per
// iteration, each execution with its own Seq.
type BlockInfo struct {
	// Seq numbers the run's block executions from 1 in the order they
	// started; ParentSeq is the loop block execution this one runs in, 0
	// at the top level.
	Seq, ParentSeq int
	Label          string
	Type           client.BlockType
	// Status is BlockRunning while the block runs, then how it ended.
	Status BlockStatus
	// Output is the block's output once it has one; FailureReason says why
	// it did not complete.
	Output        json.RawMessage
	FailureReason string
	// ContinueOnFailure is the block's setting: its failure did not end
	// the run.
	ContinueOnFailure bool
	// The block's goals as its definition writes them, templates
	// unrendered ("" when it has none): the page it starts on, what to do,
	// what to extract, the prompt of a text prompt or a task v2 block.
	URL, NavigationGoal, DataExtractionGoal, Prompt string
	// LoopValues are the values a loop block iterates over; CurrentValue
	// and CurrentIndex the iteration a block inside a loop runs in (nil
	// outside loops).
	LoopValues   []any
	CurrentValue any
	CurrentIndex *int
	// Started is when the block started; Ended when it ended (zero while
	// it runs).
	Started, Ended time.Time
}

// BlockStatus is the state of a block execution, as the hosted service's
// timeline words it.
type BlockStatus string

// Block statuses.
const (
	BlockRunning    BlockStatus = "running"
	BlockCompleted  BlockStatus = "completed"
	BlockFailed     BlockStatus = "failed"
	BlockTerminated BlockStatus = "terminated"
	BlockCanceled   BlockStatus = "canceled"
	BlockTimedOut   BlockStatus = "timed_out"
)

// StepInfo describes one step of the agent loop: one observation of the
// page, one model decision and the actions it led to.
type StepInfo struct {
	// Step is the run's step count once this step is done.
	Step int
	// Block is the label of the block the step belongs to, "" in a task
	// run; BlockSeq that block execution's BlockInfo.Seq (0 in a task run).
	Block    string
	BlockSeq int
	// URL is the page the step acted on.
	URL string
	// Thought is the model's note on the page and its plan.
	Thought string
	// Actions says, for people, what each action was and how it went:
	// `click [kd] button "Sign in": ok, loaded /account.html`.
	Actions []string
	// Decision is how the step ended: "continue", "complete",
	// "terminate", "unusable answer", ...
	Decision string
	// Settle, Observe, Model and Act are the time spent waiting for the
	// page to settle, reading it, waiting for the model, and acting.
	Settle, Observe, Model, Act time.Duration
	// InputTokens and OutputTokens are the model's token counts for the
	// step.
	InputTokens, OutputTokens int
	// Before and After name the screenshots in Job.Dir of the page the
	// step was decided on and of the page its actions left ("" for none);
	// they may have been reported by Progress.Screenshot already, and one
	// step's After may be the next one's Before.
	Before, After string
	// Element is the element the step's first action acted on; nil for
	// none.
	Element *client.StepElement
	// RecordingOffset is when the step started, from the start of the
	// run's recording; nil when the run is not recorded.
	RecordingOffset *time.Duration
}

// Result is what an execution produced.
type Result struct {
	// Status is completed, failed, terminated or timed_out. The daemon
	// overrides it with canceled or timed_out when it stopped the run
	// through ctx; an empty Status is taken as failed.
	Status client.RunStatus
	// Output is the extracted data (for an agent run, an object with a
	// "<label>_output" member per block); nil for none.
	Output json.RawMessage
	// FailureReason says, for people, why a run did not complete.
	FailureReason string
	// Errors are the run's errors as JSON objects (with error_code_mapping,
	// the mapped codes).
	Errors []json.RawMessage
	// Summary is a short description of what the run did, for the
	// "summary" of task webhooks; "" for none.
	Summary string
	// StepCount is the number of steps executed.
	StepCount int
	// Screenshots, Recording and Downloads name files in Job.Dir:
	// screenshots in the order taken (Progress may have reported some
	// already; reporting twice is harmless), the recording "" for none.
	Screenshots []string
	Recording   string
	Downloads   []string
	// Logs name the other files the run wrote in Job.Dir for people to
	// read, such as the agent's step log (steps.json).
	Logs []string
	// BrowserState is the browser state the run ended with, when
	// Job.KeepBrowserState asked for it (nil when it could not be read).
	// It signs whoever holds it in: keep it sealed.
	BrowserState []byte
	// Script is the script the run recorded (script.yaml), when
	// Job.Script asked for one and the run completed; nil otherwise.
	Script []byte
	// ScriptReplayed is set when the run replayed recorded steps, and
	// AIFallbackTriggered when the model had to take over some of them.
	ScriptReplayed, AIFallbackTriggered bool
}

// Actions runs single browser actions (POST /v1/sdk/run_action) in the
// run_action workflow runs whose browser stays open between their
// actions. The engine (package engine) implements it; the daemon owns the
// runs, the engine the browsers.
type Actions interface {
	// RunAction runs req.Action in the browser of workflow run job.RunID
	// and returns its result as JSON. Without req.WorkflowRunID it opens
	// that run's browser (its files go to job.Dir) and keeps progress and
	// end for its life: progress receives the steps and screenshots, and
	// end the run's result once the run closes (idle, browser gone,
	// shutdown). With req.WorkflowRunID, an empty req.URL means the page
	// the run's browser is on. An *ActionError is the request's (its Kind says
	// why: ActionInvalid, ActionConflict, ActionUnavailable, ActionFailed);
	// any other error is the daemon's.
	RunAction(ctx context.Context, job *Job, req *client.RunActionRequest, progress Progress, end func(Result)) (json.RawMessage, error)
	// ActionRunOpen reports whether the run_action run is open.
	ActionRunOpen(runID string) bool
	// EndActionRun closes the run_action run now (the run was
	// canceled): its end function gets status and reason. A run that
	// is not open is left alone.
	EndActionRun(ctx context.Context, runID string, status client.RunStatus, reason string)
	// EndActionRuns closes every open run_action run (their end functions
	// are called), bounded by ctx. The daemon calls it as it shuts down.
	EndActionRuns(ctx context.Context)
}

// DefaultActionIdle is how long the browser session of a run_action
// workflow run stays open without an action, unless configured otherwise.
const DefaultActionIdle = 5 * time.Minute

// MaxFileNameLen is the longest name of a run's file, in bytes: the usual
// file-system limit.
const MaxFileNameLen = 255

// maxExtLen is the longest extension CutFileName keeps, in bytes (the dot
// included): a longer "extension" is a part of the name that happens to
// follow a dot.
const maxExtLen = 16

// CutFileName returns name cut to at most max bytes, keeping its
// extension: the stem is cut, never the extension (".pdf", or a double
// one such as ".tar.gz"), and never inside a UTF-8 sequence; a cut stem
// loses its trailing dots and spaces (which ValidFileName refuses before
// the extension). A name of at most max bytes is returned as it is. A
// name whose extension leaves no room for a stem (or is longer than 16
// bytes) is cut at its end like any text. It is the one rule of every
// place that shortens a file name: uploads, downloads, saved files.
func CutFileName(name string, max int) string {
	if len(name) <= max {
		return name
	}
	ext := fileNameExt(name)
	if len(ext) >= max {
		ext = ""
	}
	stem := cutUTF8(strings.TrimSuffix(name, ext), max-len(ext))
	if ext != "" {
		stem = strings.TrimRight(stem, ". ")
	}
	return stem + ext
}

// fileNameExt is the extension of name that CutFileName keeps: its last
// ".xyz", with a ".tar" before it, when it is at most maxExtLen bytes
// and the name has a stem before it; "" otherwise.
func fileNameExt(name string) string {
	ext := filepath.Ext(name)
	if ext == "" || ext == name || len(ext) > maxExtLen || strings.ContainsAny(ext, " ") {
		return ""
	}
	stem := strings.TrimSuffix(name, ext)
	if e2 := filepath.Ext(stem); strings.EqualFold(e2, ".tar") && e2 != stem {
		return e2 + ext
	}
	return ext
}

// cutUTF8 returns s cut to at most n bytes, at the start of a rune.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ValidFileName reports whether name is acceptable as the name of a run's
// file (a download, a screenshot, a recording): one clean path element of
// 1 to MaxFileNameLen bytes of valid UTF-8 that does
// not start with a dot, does not end with a dot or a space, and contains no
// "..", no '/', '\\' or ':', no control characters and no bidirectional
// formatting characters (which could disguise the name a browser shows).
// Downloaded files keep their real names as long as they pass; the
// executor renames the others.
func ValidFileName(name string) bool {
	if name == "" || len(name) > MaxFileNameLen || !utf8.ValidString(name) {
		return false
	}
	if name[0] == '.' || strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return false
	}
	if strings.Contains(name, "..") || strings.ContainsAny(name, `/\:`) {
		return false
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	// Belt and braces: the platform's own idea of a single local element
	// (on Windows this also refuses reserved names such as NUL or COM1).
	return filepath.IsLocal(name) && filepath.Base(name) == name && filepath.Clean(name) == name
}
