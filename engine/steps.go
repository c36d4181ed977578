package engine

// The agent's log: what each step of the loop saw, decided and did, where
// its time went, and every model call with its tokens; and what each step of
// a model-free block did (startStep, endStep): every step the run counts is
// in it. It is written to StepsName in the run's directory when the run
// ends, logged step by step, and reported to a Progress that implements
// executor.StepReporter.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/executor"
	"github.com/abctl/abctl/llm"
)

// StepsName is the file name of a run's step log (JSON) in its directory.
const StepsName = "steps.json"

// agentLog collects the steps and model calls of a run.
type agentLog struct {
	mu      sync.Mutex
	steps   []*stepRecord
	calls   []callRecord
	usage   llm.Usage
	models  []string
	summary string
}

// stepRecord is one step of the loop.
type stepRecord struct {
	Step     int            `json:"step"`
	Block    string         `json:"block,omitempty"`
	URL      string         `json:"url"`
	Thought  string         `json:"thought,omitempty"`
	Actions  []actionRecord `json:"actions"`
	Decision string         `json:"decision"`
	// PromptChars is the size of the planning prompt (system and user
	// text), a measure of its tokens (about 4 characters each).
	PromptChars int         `json:"prompt_chars"`
	Timings     stepTimings `json:"timings_ms"`
	Usage       llm.Usage   `json:"usage"`
	At          time.Time   `json:"at"`
}

// stepTimings are the phases of a step, in milliseconds. Total is the
// wall time of the step; what Total has beyond Model is the engine's own
// time (settle, observe, act and bookkeeping).
type stepTimings struct {
	Settle  float64 `json:"settle"`
	Observe float64 `json:"observe"`
	Model   float64 `json:"model"`
	Act     float64 `json:"act"`
	Total   float64 `json:"total"`
}

// actionRecord is one action the model asked for and what came of it.
type actionRecord struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	// Element is the element's line in the observation.
	Element string `json:"element,omitempty"`
	// Text is the action's text argument (masked for password fields).
	Text    string `json:"text,omitempty"`
	OK      bool   `json:"ok"`
	Skipped bool   `json:"skipped,omitempty"`
	// Result says what happened, for the model's history and for people.
	Result string `json:"result,omitempty"`
}

// callRecord is one model call.
type callRecord struct {
	Kind       string    `json:"kind"`
	Model      string    `json:"model"`
	Step       int       `json:"step,omitempty"`
	Block      string    `json:"block,omitempty"`
	DurationMS float64   `json:"duration_ms"`
	Attempts   int       `json:"attempts,omitempty"`
	Usage      llm.Usage `json:"usage"`
	Error      string    `json:"error,omitempty"`
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// describe is the action as one line for people and for the model's
// history: `click [e5] button "Sign in": ok, loaded /account.html`.
func (a *actionRecord) describe() string {
	var b strings.Builder
	b.WriteString(a.Type)
	if a.ID != "" {
		b.WriteString(" ")
		if a.Element != "" {
			b.WriteString(clip(a.Element, 120))
		} else {
			b.WriteString("[" + a.ID + "]")
		}
	}
	if a.Text != "" {
		fmt.Fprintf(&b, " %q", clip(a.Text, 120))
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
	b.WriteString(clip(a.Result, 300))
	return b.String()
}

// call records a model call.
func (l *agentLog) call(kind string, m llm.Model, step int, block string, resp *llm.Response, err error) {
	c := callRecord{Kind: kind, Model: m.Info().Model, Step: step, Block: block}
	if resp != nil {
		c.DurationMS = millis(resp.Duration)
		c.Attempts = resp.Attempts
		c.Usage = resp.Usage
	}
	if err != nil {
		c.Error = err.Error()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
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

func (l *agentLog) addStep(s *stepRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, s)
}

// historyOf returns the actions of the steps of a block (of the task
// run, for ""), one line each.
func (l *agentLog) historyOf(block string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.steps {
		if s.Block != block {
			continue
		}
		for i := range s.Actions {
			out = append(out, fmt.Sprintf("step %d: %s", s.Step, s.Actions[i].describe()))
		}
	}
	return out
}

// empty reports whether nothing was recorded (a run that took no step).
func (l *agentLog) empty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.steps) == 0 && len(l.calls) == 0
}

// write writes the log to dir/name.
func (l *agentLog) write(dir, name string) error {
	l.mu.Lock()
	doc := struct {
		Models  []string      `json:"models"`
		Usage   llm.Usage     `json:"usage"`
		Summary string        `json:"summary,omitempty"`
		Steps   []*stepRecord `json:"steps"`
		Calls   []callRecord  `json:"calls"`
	}{l.models, l.usage, l.summary, l.steps, l.calls}
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

// reportStep logs a finished step and hands it to the Progress when it
// wants step details.
func (r *run) reportStep(s *stepRecord) {
	r.ag.addStep(s)
	acts := make([]string, len(s.Actions))
	for i := range s.Actions {
		acts[i] = s.Actions[i].describe()
	}
	r.e.log.Info("agent step", "step", s.Step, "block", s.Block, "url", s.URL, "decision", s.Decision,
		"actions", strings.Join(acts, "; "), "settle_ms", s.Timings.Settle, "observe_ms", s.Timings.Observe,
		"model_ms", s.Timings.Model, "act_ms", s.Timings.Act, "total_ms", s.Timings.Total,
		"input_tokens", s.Usage.InputTokens, "output_tokens", s.Usage.OutputTokens)
	if sr, ok := r.progress.(executor.StepReporter); ok {
		sr.StepDetail(executor.StepInfo{
			Step: s.Step, Block: s.Block, URL: s.URL, Thought: s.Thought, Actions: acts, Decision: s.Decision,
			Settle:      time.Duration(s.Timings.Settle * float64(time.Millisecond)),
			Observe:     time.Duration(s.Timings.Observe * float64(time.Millisecond)),
			Model:       time.Duration(s.Timings.Model * float64(time.Millisecond)),
			Act:         time.Duration(s.Timings.Act * float64(time.Millisecond)),
			InputTokens: s.Usage.InputTokens, OutputTokens: s.Usage.OutputTokens,
		})
	}
}

// startStep counts a step that no model decides (a model-free block's
// navigation, click, wait, request, print or download, or the action of a
// run_action) and begins its record: block is the block's label ("" in
// run_action), act what the step does (its type and target). endStep
// reports it, so that every step counted is a step listed. It fails with
// errStepLimit when the run has no step left.
func (r *run) startStep(block string, act actionRecord) (*stepRecord, error) {
	if err := r.step(); err != nil {
		return nil, err
	}
	return &stepRecord{Step: r.steps, Block: block, At: time.Now(), Actions: []actionRecord{act}}, nil
}

// endStep completes and reports a step startStep began, as it ended with
// err: url is the page it left ("" when it did not touch one), result what
// came of it when it did not fail ("downloaded report.csv").
func (r *run) endStep(rec *stepRecord, url, result string, err error) {
	if rec == nil {
		return // startStep failed
	}
	a := &rec.Actions[0]
	a.OK = err == nil
	rec.URL = url
	rec.Decision = "done"
	a.Result = result
	if err != nil {
		rec.Decision = "failed"
		a.Result = err.Error()
	}
	rec.Timings.Act = millis(time.Since(rec.At))
	rec.Timings.Total = rec.Timings.Act
	r.reportStep(rec)
}

// shownURL is a URL as a step shows it: without the password it may carry.
func shownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}

// downloaded says which files a step downloaded.
func downloaded(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "downloaded " + strings.Join(names, ", ")
}

// loaded says where an action led, when it loaded a page.
func loaded(res page.Result) string {
	if !res.Navigated || res.URL == "" {
		return ""
	}
	return "loaded " + res.URL
}

// clip cuts s to n bytes (on a rune boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
