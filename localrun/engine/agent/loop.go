package agent

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
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// Limits of the loop.
const (
	// maxActionsPerStep caps the actions of one model decision.
	maxActionsPerStep = 5
	// maxUnusable is how many answers in a row may be unusable (no JSON,
	// no action) before the goal fails.
	maxUnusable = 3
	// maxRepeats is how many times in a row the same actions may leave
	// the page unchanged before the goal fails.
	maxRepeats = 4
	// maxModelWait caps a "wait" action.
	maxModelWait = 5 * time.Second
)

// loop is one pursuit of a goal: what it keeps between steps.
type loop struct {
	a       *Agent
	g       *Goal
	history []string // one line per action, oldest first
	notes   []string // said once in the next prompt
	thought string   // the model's last thought
	// obs is the page the next decision is made on; lookStart is when it
	// began to be read, settle and observe the time that took.
	obs             *page.Observation
	lookStart       time.Time
	settle, observe time.Duration
	downloadsBefore int // the downloads the run completed before the goal
	unusable        int // unusable answers in a row
	lastSig         string
	repeats         int // the same actions to no effect, in a row
	// rec records the actions when the goal asks for it; nil otherwise.
	rec *recorder
}

// ending is how a step ended.
type ending struct {
	// decision is the step's decision in the log; "" leaves the step out
	// of it (the run was stopped).
	decision string
	// at is when the step's work ended, its Total; zero: when it closes.
	at time.Time
	// last ends the goal with out and err.
	last bool
	out  *Outcome
	err  error
}

// Pursue runs the loop for g on the browser's active tab. It returns the
// goal's outcome, or why it was not reached (a *TerminatedError, a
// *StepLimitError, a *ModelError, ...) with what it left (its URL) when
// there is something to say.
func (a *Agent) Pursue(ctx context.Context, g *Goal) (*Outcome, error) {
	l := &loop{a: a, g: g}
	if g.Record != nil {
		l.rec = &recorder{rec: g.Record}
	}
	// The page may still be loading what an earlier block or the start
	// URL began.
	if err := l.refresh(ctx, true); err != nil {
		return nil, err
	}
	l.downloadsBefore = a.browser.Downloads()
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if n > g.MaxSteps {
			return l.leave(), &StepLimitError{Limit: g.MaxSteps, What: g.what()}
		}
		num, err := a.steps.Next()
		if err != nil {
			return l.leave(), err
		}
		// A step's time runs from the start of the look at the page its
		// decision is made on to the end of its actions.
		s := &steplog.Step{Step: num, Block: g.Label, URL: l.obs.URL, At: l.lookStart, Before: l.obs.Kept}
		s.Timings.Settle, s.Timings.Observe = steplog.Millis(l.settle), steplog.Millis(l.observe)
		e := l.step(ctx, s, n)
		if e.decision != "" {
			l.close(s, e)
		}
		if e.last {
			l.recorded(e.out)
			return e.out, e.err
		}
	}
}

// step makes step n of the loop: the model decides on the current page,
// the loop does what it decided.
func (l *loop) step(ctx context.Context, s *steplog.Step, n int) ending {
	p, err := l.plan(ctx, s, n)
	if err != nil {
		return l.unusableAnswer(ctx, err)
	}
	l.unusable = 0
	s.Thought, l.thought = p.Thought, p.Thought
	if len(p.Actions) == 1 && (p.Actions[0].Type == "complete" || p.Actions[0].Type == "terminate") {
		return l.decide(ctx, s, p)
	}
	return l.act(ctx, s, p.Actions)
}

// close completes the step's record as it ended and reports it.
func (l *loop) close(s *steplog.Step, e ending) {
	end := e.at
	if end.IsZero() {
		end = time.Now()
	}
	s.Decision = e.decision
	s.Timings.Total = steplog.Millis(end.Sub(s.At))
	l.a.steps.Report(s)
}

// unusableAnswer ends a step whose planning call gave nothing to do: the
// model could not be reached (the goal fails), or its answer could not be
// used (the next step asks again, up to maxUnusable times in a row).
func (l *loop) unusableAnswer(ctx context.Context, err error) ending {
	var me *ModelError
	switch {
	case ctx.Err() != nil:
		return ending{last: true, err: ctx.Err()}
	case errors.As(err, &me):
		return ending{decision: "model failed", last: true, err: err}
	}
	l.unusable++
	if l.unusable >= maxUnusable {
		return ending{decision: "unusable answer", last: true,
			err: fmt.Errorf("the model's answers could not be used %d times in a row; the last one: %v", l.unusable, err)}
	}
	l.note("Your previous answer could not be used (%v). Answer with the JSON object described in the instructions.", err)
	return ending{decision: "unusable answer"}
}

// decide ends a step whose decision is a lone complete or terminate.
func (l *loop) decide(ctx context.Context, s *steplog.Step, p *plan) ending {
	a := p.Actions[0]
	s.Actions = []steplog.Action{{Type: a.Type, Text: a.Text, OK: true}}
	if a.Type == "terminate" {
		reason := strings.TrimSpace(a.Text)
		if reason == "" {
			reason = strings.TrimSpace(p.Thought)
		}
		if reason == "" {
			reason = "the agent judged the goal unreachable"
		}
		return ending{decision: "terminate", last: true, out: l.leave(), err: &TerminatedError{Reason: reason}}
	}
	out, v, err := l.complete(ctx, s, a, p)
	done := time.Now()
	switch {
	case err != nil:
		return ending{decision: "complete (not verified)", at: done, last: true, err: err}
	case v.Status == "terminate":
		return ending{decision: "terminate (completion check)", at: done, last: true, out: l.leave(), err: &TerminatedError{Reason: v.Reasoning}}
	case v.Status == "continue":
		l.history = append(l.history, fmt.Sprintf("step %d: complete: rejected by the completion check: %s", s.Step, text.Clip(v.Reasoning, 300)))
		l.note("Your completion was checked and rejected: %s", text.Clip(v.Reasoning, 500))
		return ending{decision: "completion rejected", at: done}
	}
	out.Downloads = l.a.browser.DownloadsSince(l.downloadsBefore)
	return ending{decision: "complete", at: done, last: true, out: out}
}

// act ends a step of actions: they are done, the page they leave is read
// (the next step's), and the loop checks that it is not stuck and whether
// a download completed the goal.
func (l *loop) act(ctx context.Context, s *steplog.Step, actions []planAction) ending {
	start := time.Now()
	results, touched := l.doAll(ctx, actions)
	done := time.Now()
	s.Timings.Act = steplog.Millis(done.Sub(start))
	s.Actions = results
	s.Element = actedOn(l.obs, results)
	for i := range results {
		l.history = append(l.history, fmt.Sprintf("step %d: %s", s.Step, results[i].Describe()))
	}
	if err := ctx.Err(); err != nil {
		return ending{last: true, err: err}
	}
	before, beforeURL := obsSignature(l.obs), l.obs.URL
	if err := l.refresh(ctx, touched); err != nil {
		return ending{decision: "browser failed", at: done, last: true, err: err}
	}
	s.After = l.obs.Kept
	if l.rec != nil {
		l.rec.settled(l.obs)
	}
	if l.obs.URL != beforeURL && !strings.Contains(strings.Join(l.history[len(l.history)-len(results):], "\n"), "loaded ") {
		// The page moved after the actions (a script's redirect).
		l.history = append(l.history, fmt.Sprintf("step %d: then the page became %s", s.Step, shortURL(l.obs.URL, beforeURL)))
	}
	if err := l.stuck(results, before); err != nil {
		return ending{decision: "stuck", at: done, last: true, err: err}
	}
	if out := l.downloaded(ctx); out != nil {
		return ending{decision: "complete (download)", at: done, last: true, out: out}
	}
	return ending{decision: "continue", at: done}
}

// actedOn is the element of obs that the first action done of results
// acted on, with its box, for the step's record; nil when none was done
// on an element in the viewport (whose box would not be on the
// screenshot).
func actedOn(obs *page.Observation, results []steplog.Action) *client.StepElement {
	for _, r := range results {
		if r.Skipped || r.ID == "" {
			continue
		}
		el := FindElement(obs, r.ID)
		if el == nil || !el.InViewport || obs.Viewport[0] <= 0 || obs.Viewport[1] <= 0 {
			return nil
		}
		return &client.StepElement{
			Name:     ElementLine(obs, el),
			Box:      client.StepBox{X: el.Rect[0], Y: el.Rect[1], Width: el.Rect[2], Height: el.Rect[3]},
			Viewport: client.StepSize{Width: obs.Viewport[0], Height: obs.Viewport[1]},
		}
	}
	return nil
}

// stuck counts the steps in a row that did the same actions to no effect
// on the page (whose signature was before), failing at maxRepeats.
func (l *loop) stuck(results []steplog.Action, before string) error {
	sig := actionsSignature(results) + "|" + before
	if sig == l.lastSig && before == obsSignature(l.obs) {
		l.repeats++
	} else {
		l.repeats = 0
	}
	l.lastSig = sig
	if l.repeats+1 >= maxRepeats {
		return fmt.Errorf("the agent repeated the same actions %d times without any effect on the page (%s)", maxRepeats, results[len(results)-1].Describe())
	}
	if l.repeats > 0 {
		l.note("You did the same as in the previous step and the page did not change. Do something else, or terminate if the goal cannot be reached.")
	}
	return nil
}

// downloaded returns the outcome of a goal that a download completes, nil
// while none did.
func (l *loop) downloaded(ctx context.Context) *Outcome {
	if !l.g.CompleteOnDownload {
		return nil
	}
	done, err := l.a.browser.DownloadDone(ctx, l.downloadsBefore, l.g.DownloadTimeout)
	if err != nil {
		l.note("A download did not complete: %v", err)
		return nil
	}
	if !done {
		return nil
	}
	out := l.leave()
	out.Downloads = l.a.browser.DownloadsSince(l.downloadsBefore)
	out.Summary = "Downloaded " + strings.Join(out.Downloads, ", ") + "."
	return out
}

// complete handles a lone "complete": the check against the complete
// criterion, then the extraction.
func (l *loop) complete(ctx context.Context, s *steplog.Step, a planAction, p *plan) (*Outcome, Verdict, error) {
	g := l.g
	v := Verdict{Status: "complete"}
	if g.Verify && strings.TrimSpace(g.CompleteCriterion) != "" {
		var err error
		v, err = l.verify(ctx, s)
		var me *ModelError
		switch {
		case err != nil && (ctx.Err() != nil || errors.As(err, &me)):
			return nil, v, err
		case err != nil:
			// An answer that cannot be read confirms nothing.
			return nil, Verdict{Status: "continue", Reasoning: "the check's answer could not be used (" + err.Error() + "); make sure the page shows the goal reached"}, nil
		case v.Status != "complete":
			return nil, v, nil
		}
	}
	// Data the model gave with its decision has no schema (a goal with one
	// extracts below): it is brought to the data shape the prompt asks for.
	out := &Outcome{Summary: strings.TrimSpace(a.Text), URL: l.obs.URL, Data: normalizeData(p.Data)}
	if out.Summary == "" {
		out.Summary = strings.TrimSpace(p.Thought)
	}
	if g.Extraction != "" || g.Schema != nil {
		what := g.Extraction
		if what == "" {
			what = g.Navigation
		}
		data, _, resp, err := l.a.Extract(ctx, g.Model, what, g.Schema, g.Details, l.obs, g.Label)
		s.AddModel(resp)
		if err != nil {
			return nil, v, err
		}
		out.Data = data
	}
	return out, v, nil
}

// refresh reads the active page again, once it has settled when touched:
// the next step's observation.
func (l *loop) refresh(ctx context.Context, touched bool) error {
	l.lookStart = time.Now()
	obs, settled, err := l.a.browser.Observe(ctx, touched)
	if err != nil {
		return err
	}
	l.obs, l.settle, l.observe = obs, settled, time.Since(l.lookStart)-settled
	return nil
}

// leave is the outcome of a goal that ends now, for what it leaves (its
// URL).
func (l *loop) leave() *Outcome {
	o := &Outcome{}
	if l.obs != nil {
		o.URL = l.obs.URL
	}
	return o
}

// recorded gives out the steps the goal recorded.
func (l *loop) recorded(out *Outcome) {
	if l.rec == nil || out == nil {
		return
	}
	out.Steps, out.Unreplayable = l.rec.steps, l.rec.unreplayable
}

func (l *loop) note(format string, args ...any) {
	l.notes = append(l.notes, fmt.Sprintf(format, args...))
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

func actionsSignature(rs []steplog.Action) string {
	var b strings.Builder
	for _, a := range rs {
		fmt.Fprintf(&b, "%s|%s|%s;", a.Type, a.ID, a.Text)
	}
	return b.String()
}
