// Package steplog is the step log of a run: it counts the run's steps
// against the run's limit and reports each one to the run's Progress (with
// its details when the Progress implements executor.StepReporter), and it
// records what each step saw, decided and did, where its time went, every
// model call with its tokens, the run's errors and its summary. The log is
// written to FileName in the run's directory when the run ends.
//
// Every step the run counts is a step listed: a step of the agent loop is
// reported with Report once it is decided and done, a step no model decides
// (a model-free block's navigation, click, wait, request, print or
// download, or a run_action) with Start and End.
package steplog

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// FileName is the file name of a run's step log (JSON) in its directory.
const FileName = "steps.json"

// ErrLimit is the error of a step the run has no room left for.
var ErrLimit = errors.New("the step limit is reached")

// Log is the step log of one run. It is safe for concurrent use.
type Log struct {
	progress executor.Progress
	logger   *slog.Logger

	mu        sync.Mutex
	limit     int // 0: no limit
	count     int // the steps counted
	steps     []*Step
	calls     []Call
	usage     llm.Usage
	models    []string
	summaries []string          // what the goals did, for the run's summary
	summary   string            // the run's summary, once it is made
	errs      []json.RawMessage // the run's errors
	blockSeq  int               // the block executions begun so far
	running   []int             // the Seq of the block executions running, innermost last
	refused   []string          // the egress's refusals, each line once (AddRefusal)
	refusedN  int               // refusals beyond MaxRefusals
	recStart  time.Time         // when the run's recording starts; zero: not recorded
}

// SetRecordingStart tells the log when the run's recording starts, so
// that each step reported after says where it starts in the video.
func (l *Log) SetRecordingStart(t time.Time) {
	l.mu.Lock()
	l.recStart = t
	l.mu.Unlock()
}

// MaxRefusals bounds the refusals a step log lists: a page that asks for
// the same refused address a thousand times makes one line, and beyond
// MaxRefusals lines only a count remains.
const MaxRefusals = 50

// AddRefusal records that the run's egress refused a connection (a
// navigation, a request of the page, a block's call): one line, the
// refusal's text, listed once however often it came.
func (l *Log) AddRefusal(line string) {
	l.mu.Lock()
	for _, r := range l.refused {
		if r == line {
			l.mu.Unlock()
			return
		}
	}
	if len(l.refused) >= MaxRefusals {
		l.refusedN++
		l.mu.Unlock()
		return
	}
	l.refused = append(l.refused, line)
	l.mu.Unlock()
	l.logger.Info("egress refused", "refusal", line)
}

// Refusals returns the lines AddRefusal recorded.
func (l *Log) Refusals() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.refused...)
}

// New returns the log of a run that reports to progress and logs to
// logger. limit bounds the steps of the whole run (0: no bound).
func New(progress executor.Progress, logger *slog.Logger, limit int) *Log {
	return &Log{progress: progress, logger: logger, limit: limit}
}

// Limit is the run's step limit, 0 when it has none.
func (l *Log) Limit() int { return l.limit }

// Count is the number of steps counted so far.
func (l *Log) Count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// Next counts one step, reports the count and returns the step's number.
// It fails with ErrLimit when the run has no step left.
func (l *Log) Next() (int, error) {
	l.mu.Lock()
	if l.limit > 0 && l.count >= l.limit {
		l.mu.Unlock()
		return 0, ErrLimit
	}
	l.count++
	n := l.count
	l.mu.Unlock()
	l.progress.Step(n)
	return n, nil
}

// BeginBlock numbers a block execution that starts, reports it to the
// Progress when it implements executor.BlockReporter, and returns it as
// reported (with its Seq, ParentSeq, Status and Started). Steps reported
// until EndBlock belong to it. Blocks run one at a time; a block that
// begins while another runs (a loop's inner block) runs inside it.
func (l *Log) BeginBlock(info executor.BlockInfo) executor.BlockInfo {
	l.mu.Lock()
	l.blockSeq++
	info.Seq, info.ParentSeq = l.blockSeq, 0
	if n := len(l.running); n > 0 {
		info.ParentSeq = l.running[n-1]
	}
	l.running = append(l.running, info.Seq)
	l.mu.Unlock()
	info.Status, info.Started, info.Ended = executor.BlockRunning, time.Now(), time.Time{}
	l.reportBlock(info)
	return info
}

// EndBlock reports the end of a block execution BeginBlock returned, with
// its final Status, Output and FailureReason set by the caller.
func (l *Log) EndBlock(info executor.BlockInfo) {
	l.mu.Lock()
	for i := len(l.running) - 1; i >= 0; i-- {
		if l.running[i] == info.Seq {
			l.running = append(l.running[:i], l.running[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	info.Ended = time.Now()
	l.reportBlock(info)
}

func (l *Log) reportBlock(info executor.BlockInfo) {
	if br, ok := l.progress.(executor.BlockReporter); ok {
		br.Block(info)
	}
}

// currentBlock is the Seq of the innermost block execution running, 0
// when none is (a task run, run_action).
func (l *Log) currentBlock() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.running); n > 0 {
		return l.running[n-1]
	}
	return 0
}

// Step is one step of the run.
type Step struct {
	Step  int    `json:"step"`
	Block string `json:"block,omitempty"`
	// BlockSeq is the block execution the step belongs to
	// (executor.BlockInfo.Seq); 0 outside blocks.
	BlockSeq int      `json:"block_seq,omitempty"`
	URL      string   `json:"url"`
	Thought  string   `json:"thought,omitempty"`
	Actions  []Action `json:"actions"`
	Decision string   `json:"decision"`
	// PromptChars is the size of the planning prompt (system and user
	// text), a measure of its tokens (about 4 characters each).
	PromptChars int       `json:"prompt_chars"`
	Timings     Timings   `json:"timings_ms"`
	Usage       llm.Usage `json:"usage"`
	At          time.Time `json:"at"`
	// Before and After name the screenshots, in the run's directory, of
	// the page the step was decided on and of the page its actions left
	// ("" for none).
	Before string `json:"screenshot_before,omitempty"`
	After  string `json:"screenshot_after,omitempty"`
	// Element is the element the step's first action acted on, with its
	// box on Before; nil for none.
	Element *client.StepElement `json:"element,omitempty"`
}

// AddModel adds the time and tokens of a model call to the step. A nil
// response (a call that got none) adds nothing.
func (s *Step) AddModel(resp *llm.Response) {
	if resp == nil {
		return
	}
	s.Timings.Model += Millis(resp.Duration)
	s.Usage = s.Usage.Add(resp.Usage)
}

// Timings are the phases of a step, in milliseconds. Total is the wall
// time of the step; what Total has beyond Model is the engine's own time
// (settle, observe, act and bookkeeping).
type Timings struct {
	Settle  float64 `json:"settle"`
	Observe float64 `json:"observe"`
	Model   float64 `json:"model"`
	Act     float64 `json:"act"`
	Total   float64 `json:"total"`
}

// Action is one action of a step and what came of it.
type Action struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	// Element is the element's line in the observation.
	Element string `json:"element,omitempty"`
	// Text is the action's text argument; a secret typed (a placeholder,
	// any text typed into a password field) is secrets.Mask.
	Text    string `json:"text,omitempty"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped,omitempty"`
	// Result says what happened, for the model's history and for people.
	Result string `json:"result,omitempty"`
}

// Describe is the action as one line for people and for the model's
// history: `click [kd] button "Sign in": ok, loaded /account.html`.
func (a *Action) Describe() string {
	var b strings.Builder
	b.WriteString(a.Type)
	if a.ID != "" {
		b.WriteString(" ")
		if a.Element != "" {
			b.WriteString(text.Clip(a.Element, 120))
		} else {
			b.WriteString("[" + a.ID + "]")
		}
	}
	if a.Text != "" {
		fmt.Fprintf(&b, " %q", text.Clip(a.Text, 120))
	}
	switch {
	case a.Skipped:
		b.WriteString(": not done, ")
	case a.OK:
		b.WriteString(": ok")
		if a.Result != "" {
			b.WriteString(", ")
		}
	default:
		b.WriteString(": FAILED, ")
	}
	b.WriteString(text.Clip(a.Result, 300))
	return b.String()
}

// Call is one model call.
type Call struct {
	Kind       string    `json:"kind"`
	Model      string    `json:"model"`
	Step       int       `json:"step,omitempty"`
	Block      string    `json:"block,omitempty"`
	DurationMS float64   `json:"duration_ms"`
	Attempts   int       `json:"attempts,omitempty"`
	Usage      llm.Usage `json:"usage"`
	Error      string    `json:"error,omitempty"`
}

// Millis is d in milliseconds, to the microsecond.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Call records a model call of kind, made during the current step for
// block ("" outside blocks).
func (l *Log) Call(kind string, m llm.Model, block string, resp *llm.Response, err error) {
	c := Call{Kind: kind, Model: m.Info().Model, Block: block}
	if resp != nil {
		c.DurationMS = Millis(resp.Duration)
		c.Attempts = resp.Attempts
		c.Usage = resp.Usage
	}
	if err != nil {
		c.Error = err.Error()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c.Step = l.count
	l.calls = append(l.calls, c)
	l.usage = l.usage.Add(c.Usage)
	name := m.Info().String()
	for _, s := range l.models {
		if s == name {
			return
		}
	}
	l.models = append(l.models, name)
}

// Report logs a finished step and hands it to the Progress when it wants
// step details.
func (l *Log) Report(s *Step) {
	if s.BlockSeq == 0 {
		s.BlockSeq = l.currentBlock()
	}
	l.mu.Lock()
	l.steps = append(l.steps, s)
	recStart := l.recStart
	l.mu.Unlock()
	var offset *time.Duration
	if !recStart.IsZero() && !s.At.IsZero() {
		d := max(s.At.Sub(recStart), 0)
		offset = &d
	}
	acts := make([]string, len(s.Actions))
	for i := range s.Actions {
		acts[i] = s.Actions[i].Describe()
	}
	l.logger.Info("agent step", "step", s.Step, "block", s.Block, "url", s.URL, "decision", s.Decision,
		"actions", strings.Join(acts, "; "), "settle_ms", s.Timings.Settle, "observe_ms", s.Timings.Observe,
		"model_ms", s.Timings.Model, "act_ms", s.Timings.Act, "total_ms", s.Timings.Total,
		"input_tokens", s.Usage.InputTokens, "output_tokens", s.Usage.OutputTokens)
	if sr, ok := l.progress.(executor.StepReporter); ok {
		sr.StepDetail(executor.StepInfo{
			Step: s.Step, Block: s.Block, BlockSeq: s.BlockSeq, URL: s.URL, Thought: s.Thought, Actions: acts, Decision: s.Decision,
			Settle:      time.Duration(s.Timings.Settle * float64(time.Millisecond)),
			Observe:     time.Duration(s.Timings.Observe * float64(time.Millisecond)),
			Model:       time.Duration(s.Timings.Model * float64(time.Millisecond)),
			Act:         time.Duration(s.Timings.Act * float64(time.Millisecond)),
			InputTokens: s.Usage.InputTokens, OutputTokens: s.Usage.OutputTokens,
			Before: s.Before, After: s.After, Element: s.Element, RecordingOffset: offset,
		})
	}
}

// Start counts a step that no model decides and begins its record: block
// is the block's label ("" in run_action), a what the step does (its type
// and target). End reports it. It fails with ErrLimit when the run has no
// step left.
func (l *Log) Start(block string, a Action) (*Step, error) {
	n, err := l.Next()
	if err != nil {
		return nil, err
	}
	return &Step{Step: n, Block: block, BlockSeq: l.currentBlock(), At: time.Now(), Actions: []Action{a}}, nil
}

// End completes and reports a step Start began, as it ended with err: url
// is the page it left ("" when it did not touch one), result what came of
// it when it did not fail ("downloaded report.csv"). A nil step (Start
// failed) is left alone.
func (l *Log) End(s *Step, url, result string, err error) {
	if s == nil {
		return
	}
	a := &s.Actions[0]
	a.OK = err == nil
	s.URL = url
	s.Decision = "done"
	a.Result = result
	if err != nil {
		s.Decision = "failed"
		a.Result = err.Error()
	}
	s.Timings.Act = Millis(time.Since(s.At))
	s.Timings.Total = s.Timings.Act
	l.Report(s)
}

// EndCall completes and reports a step of one model call (an extraction,
// a validation) with the call's response and the step's decision.
func (l *Log) EndCall(s *Step, resp *llm.Response, decision string) {
	if resp != nil {
		s.Timings.Model = Millis(resp.Duration)
		s.Usage = resp.Usage
	}
	s.Timings.Total = Millis(time.Since(s.At))
	s.Decision = decision
	l.Report(s)
}

// History returns the actions of the steps of a block (of the task run,
// for ""), one line each.
func (l *Log) History(block string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.steps {
		if s.Block != block {
			continue
		}
		for i := range s.Actions {
			out = append(out, fmt.Sprintf("step %d: %s", s.Step, s.Actions[i].Describe()))
		}
	}
	return out
}

// AddSummary records a goal's own account of what it did.
func (l *Log) AddSummary(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.summaries = append(l.summaries, s)
}

// Summarize makes the run's summary: the goals' own accounts, then how it
// ended. The log keeps it whole; the result is cut to 4000 bytes.
func (l *Log) Summarize(status client.RunStatus, reason string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, s := range l.summaries {
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
	if out == "" && l.count > 0 {
		out = fmt.Sprintf("Ran %d steps.", l.count)
	}
	l.summary = out
	return text.Clip(out, 4000)
}

// AddError records an error object in the run's errors. An empty
// block_label is left out.
func (l *Log) AddError(obj map[string]any) {
	if s, ok := obj["block_label"].(string); ok && s == "" {
		delete(obj, "block_label")
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, b)
}

// Errors returns the run's errors.
func (l *Log) Errors() []json.RawMessage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]json.RawMessage(nil), l.errs...)
}

// Empty reports whether nothing was recorded (a run that took no step).
func (l *Log) Empty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.steps) == 0 && len(l.calls) == 0 && len(l.refused) == 0
}

// Write writes the log to dir/name.
func (l *Log) Write(dir, name string) error {
	l.mu.Lock()
	doc := struct {
		Models  []string  `json:"models"`
		Usage   llm.Usage `json:"usage"`
		Summary string    `json:"summary,omitempty"`
		Steps   []*Step   `json:"steps"`
		Calls   []Call    `json:"calls"`
		// Refused are the egress's refusals, one line each; RefusedMore
		// counts those beyond MaxRefusals.
		Refused     []string `json:"refused,omitempty"`
		RefusedMore int      `json:"refused_more,omitempty"`
	}{l.models, l.usage, l.summary, l.steps, l.calls, l.refused, l.refusedN}
	b, err := json.MarshalIndent(doc, "", "  ")
	l.mu.Unlock()
	if err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	tmp := path + ".part"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ShownURL is a URL as a step shows it: without the password it may carry.
func ShownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}
