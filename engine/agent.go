package engine

// The agent loop: observe the page, ask the model for actions, do them,
// decide; until the goal is reached, judged unreachable, or out of steps.
//
// A step is one model decision. The observation taken after a step's
// actions (once the page has settled) is the next step's: the page is read
// once per step. Within a step the actions run in order; the rest of the
// batch is dropped as soon as one of them loads another document, switches
// the tab or changes the URL, since the ids the model chose belong to the
// page it saw. "complete" and "terminate" count only alone: mixed with
// other actions they are dropped, and the model decides again on the page
// those actions produced. A completion is checked with a separate model
// call when the goal has a complete_criterion.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/llm"
)

// Limits of the loop.
const (
	// DefaultMaxSteps is the step budget of a goal that sets none (a task
	// run without max_steps, a block without max_steps_per_run), as the
	// hosted service's open-source default.
	DefaultMaxSteps = 10
	// maxActionsPerStep caps the actions of one model decision.
	maxActionsPerStep = 5
	// maxUnusable is how many answers in a row may be unusable (no JSON,
	// no action) before the goal fails.
	maxUnusable = 3
	// maxRepeats is how many times in a row the same actions may leave
	// the page unchanged before the goal fails.
	maxRepeats = 4
	// settleQuiet is how long the DOM must stay quiet after an action
	// before the page is read; settleCap bounds the wait.
	settleQuiet = 40 * time.Millisecond
	settleCap   = 2 * time.Second
	// maxModelWait caps a "wait" action.
	maxModelWait = 5 * time.Second
)

// goal is what one run of the loop must achieve.
type goal struct {
	// label names the block ("" for a task run).
	label string
	// navigation says what to do; "" when there is only something to
	// extract.
	navigation string
	// completeCriterion and terminateCriterion are the block's conditions.
	completeCriterion, terminateCriterion string
	// verify checks a completion against completeCriterion (default true).
	verify bool
	// extraction says what to extract once the navigation is done, and
	// schema how the data must look (nil: free form).
	extraction string
	schema     *dataSchema
	// errorCodes are the user's codes for a goal that is not reached.
	errorCodes map[string]string
	// details are the user's values the model may use.
	details map[string]any
	// maxSteps is the goal's step budget.
	maxSteps int
	// completeOnDownload completes the goal when a download finishes.
	completeOnDownload bool
	downloadTimeout    time.Duration
	// historyInVerify shows the steps to the completion check.
	historyInVerify bool
	model           llm.Model
}

// outcome is what a reached goal produced.
type outcome struct {
	// summary is the model's account of what it did.
	summary string
	// data is the extracted data, or the data the model gave when it
	// completed (nil for none).
	data json.RawMessage
	// url is the page the goal ended on.
	url string
	// downloads are the files downloaded while pursuing the goal.
	downloads []string
}

// terminatedError is a goal the model judged unreachable: the run ends
// terminated.
type terminatedError struct{ reason string }

func (e *terminatedError) Error() string { return e.reason }

// stepLimitError is a goal that ran out of steps: the run ends timed_out.
type stepLimitError struct {
	limit int
	what  string // "the task", `block "x"`
}

func (e *stepLimitError) Error() string {
	return fmt.Sprintf("%s reached its limit of %d steps before the goal was reached", e.what, e.limit)
}

func (e *stepLimitError) Is(target error) bool { return target == errStepLimit }

// modelError is a model call that failed after the model package's
// retries (unreachable, refused, rate limited): infrastructure trouble, the
// run fails.
type modelError struct{ err error }

func (e *modelError) Error() string {
	return "the language model could not be used: " + strings.TrimPrefix(e.err.Error(), "llm: ")
}

func (e *modelError) Unwrap() error { return e.err }

// wrapModelErr turns a failed call into a *modelError, keeping context
// errors as they are.
func wrapModelErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var le *llm.Error
	if errors.As(err, &le) {
		return &modelError{err}
	}
	return err
}

// codedError is a failure the user's error_code_mapping matched: the code
// goes to the run's output.error.
type codedError struct {
	error
	code string
}

func (e *codedError) Unwrap() error { return e.error }

// newTag returns the random tag of the run's page markers.
func newTag() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// plan is a planning answer.
type plan struct {
	Thought string          `json:"thought"`
	Actions []planAction    `json:"actions"`
	Data    json.RawMessage `json:"data"`
}

type planAction struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Text string `json:"text"`
}

// UnmarshalJSON reads an action leniently: the id or text as a number,
// and the names some models use for the fields.
func (a *planAction) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			raw, ok := m[k]
			if !ok {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				return s
			}
			if raw := strings.TrimSpace(string(raw)); raw != "null" {
				return raw
			}
		}
		return ""
	}
	a.Type = normalizeActionType(str("type", "action", "action_type", "name"))
	a.ID = strings.Trim(strings.TrimSpace(str("id", "element_id", "element", "target")), "[]")
	a.Text = str("text", "value", "url", "key", "option", "reason", "direction", "seconds")
	return nil
}

// normalizeActionType maps the names models use to the engine's.
func normalizeActionType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	t = strings.NewReplacer("-", "_", " ", "_").Replace(t)
	switch t {
	case "click_element", "tap", "press", "check":
		return "click"
	case "type", "fill", "input", "type_text", "enter_text", "input_text":
		return "input_text"
	case "select", "choose", "select_option":
		return "select_option"
	case "upload", "upload_file":
		return "upload_file"
	case "key", "keypress", "press_key", "send_keys":
		return "press_key"
	case "goto", "navigate", "open_url", "goto_url", "go_to_url":
		return "goto_url"
	case "back", "go_back", "navigate_back":
		return "go_back"
	case "done", "finish", "complete", "completed", "success":
		return "complete"
	case "fail", "abort", "stop", "terminate", "give_up":
		return "terminate"
	case "sleep", "wait":
		return "wait"
	}
	return t
}

// parsePlan reads a planning answer: an object with actions, or a bare
// list of actions, or one action.
func parsePlan(raw json.RawMessage) (*plan, error) {
	var p plan
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	switch {
	case len(raw) == 0:
		return nil, errors.New("the answer is empty")
	case raw[0] == '[':
		if err := json.Unmarshal(raw, &p.Actions); err != nil {
			return nil, fmt.Errorf("the answer is not a list of actions: %v", err)
		}
	case raw[0] == '{':
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("the answer is not a JSON object: %v", err)
		}
		if _, ok := probe["actions"]; ok {
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, fmt.Errorf("the answer does not have the expected fields: %v", err)
			}
		} else if one, ok := probe["action"]; ok {
			var a planAction
			if err := json.Unmarshal(one, &a); err != nil {
				var list []planAction
				if json.Unmarshal(one, &list) != nil {
					return nil, fmt.Errorf("the answer's action is not an object: %v", err)
				}
				p.Actions = list
			} else {
				p.Actions = []planAction{a}
			}
			if t, ok := probe["thought"]; ok {
				json.Unmarshal(t, &p.Thought)
			}
			p.Data = probe["data"]
		} else if _, ok := probe["type"]; ok {
			var a planAction
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, err
			}
			p.Actions = []planAction{a}
		} else {
			return nil, errors.New(`the answer has no "actions"`)
		}
	default:
		return nil, errors.New("the answer is not a JSON object")
	}
	if len(p.Actions) == 0 {
		return nil, errors.New("the answer has no action")
	}
	if string(p.Data) == "null" {
		p.Data = nil
	}
	return &p, nil
}

// loopState is what the loop keeps between steps.
type loopState struct {
	g       *goal
	history []string // one line per action, oldest first
	notes   []string // said once in the next prompt
	thought string   // the model's last thought
	// page, obs: the current tab and its observation.
	pg  *page.Page
	obs *page.Observation
	// lookStart is when the current observation began; settle and
	// observe are the time it took.
	lookStart       time.Time
	settle, observe time.Duration
	// repeat detection
	lastSig string
	repeats int
}

func (st *loopState) note(format string, args ...any) {
	st.notes = append(st.notes, fmt.Sprintf(format, args...))
}

// what names the goal in messages.
func (g *goal) what() string {
	if g.label == "" {
		return "the task"
	}
	return fmt.Sprintf("block %q", g.label)
}

// pursue runs the loop for g on the run's active tab.
func (r *run) pursue(ctx context.Context, g *goal) (*outcome, error) {
	st := &loopState{g: g}
	// The page may still be loading what an earlier block or the start
	// URL began.
	if err := r.refresh(ctx, st, true); err != nil {
		return nil, err
	}
	startDone := len(r.sess.Downloads())
	unusable := 0
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if n > g.maxSteps {
			return r.endOutcome(st), &stepLimitError{limit: g.maxSteps, what: g.what()}
		}
		if err := r.step(); err != nil {
			return r.endOutcome(st), err
		}
		// A step's time runs from the start of the look at the page its
		// decision is made on to the end of its actions.
		t0 := st.lookStart
		rec := &stepRecord{Step: r.steps, Block: g.label, URL: st.obs.URL, At: t0}
		rec.Timings.Settle, rec.Timings.Observe = millis(st.settle), millis(st.observe)

		p, resp, promptChars, err := r.plan(ctx, st, n)
		rec.PromptChars = promptChars
		if resp != nil {
			rec.Timings.Model = millis(resp.Duration)
			rec.Usage = resp.Usage
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var me *modelError
			if errors.As(err, &me) {
				rec.Decision = "model failed"
				rec.Timings.Total = millis(time.Since(t0))
				r.reportStep(rec)
				return nil, err
			}
			unusable++
			rec.Decision = "unusable answer"
			rec.Timings.Total = millis(time.Since(t0))
			r.reportStep(rec)
			if unusable >= maxUnusable {
				return nil, fmt.Errorf("the model's answers could not be used %d times in a row; the last one: %v", unusable, err)
			}
			st.note("Your previous answer could not be used (%v). Answer with the JSON object described in the instructions.", err)
			continue
		}
		unusable = 0
		rec.Thought = p.Thought
		st.thought = p.Thought

		// A decision alone.
		if len(p.Actions) == 1 && (p.Actions[0].Type == "complete" || p.Actions[0].Type == "terminate") {
			a := p.Actions[0]
			rec.Actions = []actionRecord{{Type: a.Type, Text: a.Text, OK: true}}
			if a.Type == "terminate" {
				rec.Decision = "terminate"
				rec.Timings.Total = millis(time.Since(t0))
				r.reportStep(rec)
				reason := strings.TrimSpace(a.Text)
				if reason == "" {
					reason = strings.TrimSpace(p.Thought)
				}
				if reason == "" {
					reason = "the agent judged the goal unreachable"
				}
				return r.endOutcome(st), &terminatedError{reason: reason}
			}
			out, verdict, err := r.complete(ctx, st, a, p, rec)
			rec.Timings.Total = millis(time.Since(t0))
			switch {
			case err != nil:
				rec.Decision = "complete (not verified)"
				r.reportStep(rec)
				return nil, err
			case verdict.Status == "terminate":
				rec.Decision = "terminate (completion check)"
				r.reportStep(rec)
				return r.endOutcome(st), &terminatedError{reason: verdict.Reasoning}
			case verdict.Status == "continue":
				rec.Decision = "completion rejected"
				r.reportStep(rec)
				st.history = append(st.history, fmt.Sprintf("step %d: complete: rejected by the completion check: %s", rec.Step, clip(verdict.Reasoning, 300)))
				st.note("Your completion was checked and rejected: %s", clip(verdict.Reasoning, 500))
				continue
			}
			rec.Decision = "complete"
			r.reportStep(rec)
			out.downloads = r.downloadsSince(startDone)
			return out, nil
		}

		// Act.
		actStart := time.Now()
		results, touched := r.act(ctx, st, p.Actions)
		rec.Timings.Act = millis(time.Since(actStart))
		rec.Actions = results
		for i := range results {
			st.history = append(st.history, fmt.Sprintf("step %d: %s", rec.Step, results[i].describe()))
		}
		rec.Timings.Total = millis(time.Since(t0))
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before, beforeURL := obsSignature(st.obs), st.obs.URL
		if err := r.refresh(ctx, st, touched); err != nil {
			rec.Decision = "browser failed"
			r.reportStep(rec)
			return nil, err
		}
		rec.Decision = "continue"
		if st.obs.URL != beforeURL && !strings.Contains(strings.Join(st.history[len(st.history)-len(results):], "\n"), "loaded ") {
			// The page moved after the actions (a script's redirect).
			st.history = append(st.history, fmt.Sprintf("step %d: then the page became %s", rec.Step, shortURL(st.obs.URL, beforeURL)))
		}

		// The same actions, to no effect, again and again.
		sig := actionsSignature(results) + "|" + before
		if sig == st.lastSig && before == obsSignature(st.obs) {
			st.repeats++
		} else {
			st.repeats = 0
		}
		st.lastSig = sig
		if st.repeats+1 >= maxRepeats {
			rec.Decision = "stuck"
			r.reportStep(rec)
			return nil, fmt.Errorf("the agent repeated the same actions %d times without any effect on the page (%s)", maxRepeats, results[len(results)-1].describe())
		}
		if st.repeats > 0 {
			st.note("You did the same as in the previous step and the page did not change. Do something else, or terminate if the goal cannot be reached.")
		}

		// A download can complete the goal.
		if g.completeOnDownload {
			if done, err := r.downloadCompleted(ctx, startDone, g.downloadTimeout); err != nil {
				st.note("A download did not complete: %v", err)
			} else if done {
				rec.Decision = "complete (download)"
				r.reportStep(rec)
				out := r.endOutcome(st)
				out.summary = "Downloaded " + strings.Join(r.downloadsSince(startDone), ", ") + "."
				out.downloads = r.downloadsSince(startDone)
				return out, nil
			}
		}
		r.reportStep(rec)
	}
}

// endOutcome is the outcome of a goal that ends now, for what it leaves
// (its URL).
func (r *run) endOutcome(st *loopState) *outcome {
	o := &outcome{}
	if st.obs != nil {
		o.url = st.obs.URL
	}
	return o
}

// complete handles a lone "complete": the check against the complete
// criterion, then the extraction.
func (r *run) complete(ctx context.Context, st *loopState, a planAction, p *plan, rec *stepRecord) (*outcome, verdict, error) {
	g := st.g
	v := verdict{Status: "complete"}
	if g.verify && strings.TrimSpace(g.completeCriterion) != "" {
		var resp *llm.Response
		var err error
		v, resp, err = r.verify(ctx, st, g.completeCriterion, g.terminateCriterion)
		if resp != nil {
			rec.Timings.Model += millis(resp.Duration)
			rec.Usage = rec.Usage.Add(resp.Usage)
		}
		var me *modelError
		switch {
		case err != nil && (ctx.Err() != nil || errors.As(err, &me)):
			return nil, v, err
		case err != nil:
			// An answer that cannot be read confirms nothing.
			return nil, verdict{Status: "continue", Reasoning: "the check's answer could not be used (" + err.Error() + "); make sure the page shows the goal reached"}, nil
		case v.Status != "complete":
			return nil, v, nil
		}
	}
	out := &outcome{summary: strings.TrimSpace(a.Text), url: st.obs.URL, data: p.Data}
	if out.summary == "" {
		out.summary = strings.TrimSpace(p.Thought)
	}
	if g.extraction != "" || g.schema != nil {
		what := g.extraction
		if what == "" {
			what = g.navigation
		}
		data, _, resp, err := r.extract(ctx, g.model, what, g.schema, g.details, st.obs, g.label)
		if resp != nil {
			rec.Timings.Model += millis(resp.Duration)
			rec.Usage = rec.Usage.Add(resp.Usage)
		}
		if err != nil {
			return nil, v, err
		}
		out.data = data
	}
	return out, v, nil
}

// refresh settles the active page after actions (when touched) and reads
// it again: the next step's observation. Its screenshot is kept as the
// run's screenshot of the step.
func (r *run) refresh(ctx context.Context, st *loopState, touched bool) error {
	t := time.Now()
	st.lookStart = t
	pg, err := r.page(ctx)
	if err != nil {
		return r.browserErr(ctx, err)
	}
	if touched {
		r.settle(ctx, pg, r.watches[r.tab])
	}
	st.settle = time.Since(t)
	t = time.Now()
	obs, err := r.look(ctx, pg)
	if err != nil {
		return r.browserErr(ctx, err)
	}
	st.observe = time.Since(t)
	st.pg, st.obs = pg, obs
	return nil
}

// look observes the page with a screenshot (kept as a run screenshot),
// the tabs when there are several, and the dialogs answered since the last
// look.
func (r *run) look(ctx context.Context, pg *page.Page) (*page.Observation, error) {
	opts := page.ObserveOptions{Screenshot: true, Budget: planElementBudget}
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	tabs, err := r.sess.Tabs(tctx)
	cancel()
	r.tabIDs = nil
	if err == nil && len(tabs) > 1 {
		r.tabIDs = map[string]string{}
		for _, t := range tabs {
			short := fmt.Sprintf("t%d", t.Index+1)
			r.tabIDs[short] = t.ID
			opts.Tabs = append(opts.Tabs, page.Tab{ID: short, Title: t.Title, URL: t.URL, Active: t.Active})
		}
	}
	for _, d := range r.sess.Dialogs() {
		msg := d.Type + ": " + d.Message
		if d.Type == "prompt" || d.Type == "confirm" {
			if d.Accepted {
				msg += " (accepted)"
			} else {
				msg += " (dismissed)"
			}
		}
		opts.Dialogs = append(opts.Dialogs, msg)
	}
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	obs, err := pg.Observe(octx, opts)
	if err != nil {
		return nil, err
	}
	if len(obs.Screenshot) > 0 {
		r.keepScreenshot(obs.Screenshot)
	}
	return obs, nil
}

// browserErr says why the page could not be read: the session ended, or
// the page failed.
func (r *run) browserErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// A browser that went away fails the page first; the session learns why
	// a moment later.
	if serr := r.sess.Ended(ctx); serr != nil {
		return fmt.Errorf("the browser session ended: %w", serr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("the page could not be read: %w", err)
}

// downloadCompleted reports whether a download finished since the goal
// began, waiting (up to timeout) for one in progress.
func (r *run) downloadCompleted(ctx context.Context, doneBefore int, timeout time.Duration) (bool, error) {
	if len(r.sess.Downloads()) > doneBefore && r.sess.PendingDownloads() == 0 {
		r.syncDownloads()
		return true, nil
	}
	if r.sess.PendingDownloads() == 0 {
		return false, nil
	}
	if _, err := r.waitDownload(ctx, doneBefore, len(r.sess.FailedDownloads()), timeout); err != nil {
		return false, err
	}
	return true, nil
}

// downloadsSince returns the names of the files downloaded after the
// first n downloads of the session.
func (r *run) downloadsSince(n int) []string {
	r.syncDownloads()
	all := r.sess.Downloads()
	var out []string
	for _, d := range all[min(n, len(all)):] {
		if name := r.seen[d.Path]; name != "" {
			out = append(out, name)
		}
	}
	return out
}

// obsSignature identifies what an observation shows (the URL, elements,
// values and scroll position).
func obsSignature(obs *page.Observation) string {
	if obs == nil {
		return ""
	}
	h := fnv.New64a()
	h.Write([]byte(obs.URL))
	h.Write([]byte(obs.Rendered))
	return fmt.Sprintf("%x", h.Sum64())
}

func actionsSignature(rs []actionRecord) string {
	var b strings.Builder
	for _, a := range rs {
		fmt.Fprintf(&b, "%s|%s|%s;", a.Type, a.ID, a.Text)
	}
	return b.String()
}
