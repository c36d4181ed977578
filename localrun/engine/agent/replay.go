package agent

// Replaying a block's recorded steps (a script.Block) without the model.
//
// Each step: the page's address is read, once it has stopped loading (and,
// after an action that changed the page in place, once its DOM is quiet);
// the page must be the one the step was recorded on (its path); the
// element is found by the first of its locators that finds one (waiting
// briefly for late content, and found again when the page replaced it
// before the action); the action is done and checked as the loop's are
// (the value read back, the click landing); and when the recorded action
// moved the page, the page must move to the same path. A step that fails
// any of these is broken.
//
// A broken step with fallback allowed costs one model call: the model
// locates the element the step was about on the page as it is now
// (Locate), the action is done there, and the step is recorded again with
// the new element's locators. When that does not work either, or the step
// does not act on an element, the agent loop takes over the block's goal
// from the page where the replay stopped, recording what it does. Without
// fallback, a broken step fails the block with a *ReplayError that names
// the step and what each locator gave.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// Waits of a replay. They bound how long a replay waits for what the
// recorded run saw; a page that is slow beyond them breaks the step.
const (
	// ReplayFindWait is how long a step waits for a locator to find its
	// element.
	ReplayFindWait = 5 * time.Second
	// ReplayPageWait is how long a step waits for the page to be (or to
	// move to) the one recorded.
	ReplayPageWait = 10 * time.Second
)

// Replay is how a block replays.
type Replay struct {
	// Block is the block's recording.
	Block *script.Block
	// Render renders a step's templates with the run's values.
	Render func(string) (string, error)
	// Fallback lets the model take over a broken step (ai_fallback); the
	// goal's Model is used, and its Record is what the model's steps are
	// recorded with. NoFallback says why it cannot, for the error of a
	// broken step ("ai_fallback is off").
	Fallback   bool
	NoFallback string
}

// ReplayError is a step that could not be replayed, without fallback.
type ReplayError struct {
	Block  string
	Step   int // from 1
	What   string
	Reason string
	// NoFallback says why the model did not take over.
	NoFallback string
}

func (e *ReplayError) Error() string {
	where := "the task"
	if e.Block != "" {
		where = fmt.Sprintf("block %q", e.Block)
	}
	msg := fmt.Sprintf("step %d of %s's script (%s) could not be replayed: %s", e.Step, where, e.What, e.Reason)
	if e.NoFallback != "" {
		msg += "; the model did not take over: " + e.NoFallback
	}
	return msg
}

// Replay replays r.Block's steps for g on the active tab. The outcome's
// Steps are the block's steps as they ran (the broken ones recorded
// again), and Replayed and FallbackTriggered say what happened.
//
// A replay reads no more of the page than it needs, as the model-free
// blocks do: before a step it reads the page's address once no navigation
// is pending and the network is quiet (Locating.Settle), and waits for
// the DOM to be quiet only after an action of the replay changed the page
// in place (a click, a key, an option, without a new document), where a
// page may still re-render; a new document the action waited for, and
// typing, leave the page ready for the next step. It finds elements with
// queries, and reads the elements (an observation) only for a role
// locator or a check that needs them. One screenshot is kept at the end
// of the block, as a model-free block keeps one.
func (a *Agent) Replay(ctx context.Context, g *Goal, r Replay) (*Outcome, error) {
	loc := a.locating()
	if loc == nil {
		return nil, errors.New("this browser cannot replay scripts")
	}
	out := &Outcome{Replayed: true}
	rec := &recorder{rec: g.Record}
	if rec.rec == nil {
		rec.rec = &Recording{}
	}
	downloadsBefore := a.browser.Downloads()
	// url is the page's address as last read; "" when the last action
	// may have changed it since. inPlace says that the last action may
	// have changed the page without a new document: its DOM must be quiet
	// before the next step reads it.
	url, inPlace := "", false
	for i := range r.Block.Steps {
		st := r.Block.Steps[i]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if url == "" {
			var err error
			if url, err = loc.Settle(ctx, inPlace); err != nil {
				return nil, err
			}
		}
		healed, broken, after, err := a.replayStep(ctx, g, loc, url, &st, r)
		if err != nil {
			return nil, err
		}
		// Typing into a field leaves the page where it was, and the next
		// step acts at once, as the actions of one model step do (its
		// element is still waited for); a step that moved the page read
		// the new page's address; other actions may start a navigation or
		// a re-render, so the page settles first.
		switch {
		case broken != "":
			url, inPlace = "", true
		case after != "":
			url, inPlace = after, false
		case !keepsPage(st.Action):
			url, inPlace = "", true
		}
		if broken == "" {
			out.Steps = append(out.Steps, healed)
			continue
		}
		what := describeStep(&st)
		if !r.Fallback {
			return out, &ReplayError{Block: g.Label, Step: i + 1, What: what, Reason: broken, NoFallback: r.NoFallback}
		}
		out.FallbackTriggered = true
		a.logger.Info("a script step could not be replayed; the model takes over", "block", g.Label, "step", i+1, "reason", broken)
		if step, ok := a.healStep(ctx, g, &st, broken, rec, r.Render); ok {
			out.Steps = append(out.Steps, step)
			continue
		}
		// The loop pursues the goal from here, recording.
		return a.takeOver(ctx, g, rec, out.Steps, fmt.Sprintf("step %d (%s) could not be replayed: %s", i+1, what, broken))
	}
	if g.CompleteOnDownload {
		if done, err := a.browser.DownloadDone(ctx, downloadsBefore, g.DownloadTimeout); err != nil || !done {
			reason := "no download completed"
			if err != nil {
				reason = err.Error()
			}
			if !r.Fallback {
				return out, &ReplayError{Block: g.Label, Step: len(r.Block.Steps), What: "the download", Reason: reason, NoFallback: r.NoFallback}
			}
			out.FallbackTriggered = true
			return a.takeOver(ctx, g, rec, out.Steps, "the download did not complete: "+reason)
		}
		out.Downloads = a.browser.DownloadsSince(downloadsBefore)
	}
	if url == "" {
		var err error
		if url, err = loc.Settle(ctx, inPlace); err != nil {
			return nil, err
		}
	}
	loc.Snapshot(ctx)
	out.URL = url
	out.Summary = fmt.Sprintf("Replayed %d recorded action%s without a model.", len(r.Block.Steps), plural(len(r.Block.Steps)))
	return out, nil
}

// keepsPage reports whether an action leaves the page as it is, so that
// the next step need not wait for it to settle.
func keepsPage(action string) bool { return action == "input_text" || action == "hover" }

// takeOver has the agent loop pursue g from the page where a replay
// stopped, recording; done are the steps replayed before, why says why the
// replay stopped (for the error when the loop fails too).
func (a *Agent) takeOver(ctx context.Context, g *Goal, rec *recorder, done []script.Step, why string) (*Outcome, error) {
	pg := *g
	if pg.Record == nil {
		pg.Record = rec.rec
	}
	o, err := a.Pursue(ctx, &pg)
	if o != nil {
		o.Steps = append(slices.Clone(done), o.Steps...)
		o.Replayed, o.FallbackTriggered = true, true
	}
	if err != nil && ctx.Err() == nil {
		err = &TakeOverError{Replay: why, Err: err}
	}
	return o, err
}

// TakeOverError is a goal the agent loop failed after it took over a
// replay: why the replay stopped, and how the loop failed (Unwrap, so
// that a terminated or timed-out loop ends the run as such).
type TakeOverError struct {
	Replay string
	Err    error
}

func (e *TakeOverError) Error() string {
	return e.Replay + "; the model took over and failed: " + e.Err.Error()
}

func (e *TakeOverError) Unwrap() error { return e.Err }

// replayStep does a step on the page at url (as last read). broken says why the
// step could not be replayed ("" when it was); after is the page's address
// when the step read it after its action ("" when it did not); err is an
// error of the run (stopped, browser gone, no step left).
func (a *Agent) replayStep(ctx context.Context, g *Goal, loc Locating, url string, st *script.Step, r Replay) (done script.Step, broken, after string, err error) {
	s, err := a.steps.Start(g.Label, steplog.Action{Type: st.Action, Element: st.Element})
	if err != nil {
		return done, "", "", err
	}
	s.URL = url
	s.Thought = "Replayed from the script, without the model."
	report := func(ok bool, result string) {
		s.Actions[0].OK, s.Actions[0].Result = ok, result
		s.Decision = "replayed"
		if !ok {
			s.Decision = "replay failed"
		}
		s.Timings.Act = steplog.Millis(time.Since(s.At))
		s.Timings.Total = s.Timings.Act
		a.steps.Report(s)
	}
	if st.Before != nil {
		if _, why := a.waitPath(ctx, loc, st.Before.URL, r.Render, url, false, false); why != "" {
			report(false, why)
			return done, "the page is not the one recorded: " + why, "", ctx.Err()
		}
	}
	in := Action{Type: st.Action}
	if st.Value != "" {
		v, err := r.Render(st.Value)
		if err != nil {
			report(false, err.Error())
			return done, "its value could not be rendered: " + err.Error(), "", nil
		}
		in.Text = v
	}
	s.Actions[0].Text = maskedValue(st, in.Text)
	var obs *page.Observation // read only when needed
	switch st.Action {
	case "scroll":
		if obs, _, err = a.browser.Observe(ctx, false); err != nil {
			return done, "", "", err
		}
		in.DY = obs.Viewport[1] * 0.8
		if in.DY <= 0 {
			in.DY = 600
		}
		if strings.EqualFold(in.Text, "up") {
			in.DY = -in.DY
		}
		in.Text = ""
	case "wait":
		sec, _ := strconv.ParseFloat(in.Text, 64)
		in.Wait = min(time.Duration(sec*float64(time.Second)), maxModelWait)
	}
	var res page.Result
	var why string
	for attempt := 0; ; attempt++ {
		if len(st.Locators) > 0 {
			id, used, err := loc.Find(ctx, obs, st.Locators, ReplayFindWait)
			if err != nil {
				report(false, err.Error())
				if ctx.Err() != nil {
					return done, "", "", ctx.Err()
				}
				return done, err.Error(), "", nil
			}
			in.ID = id
			s.Actions[0].ID = id
			s.Thought = "Replayed from the script, without the model (found by " + st.Locators[used].String() + ")."
		}
		var err error
		res, why, err = a.replayAct(ctx, in)
		// The page replaced the element between finding it and acting on
		// it (a re-render): it is found again, once, as a selector
		// block's element is.
		if attempt > 0 || len(st.Locators) == 0 || !errors.Is(err, page.ErrStaleID) || ctx.Err() != nil {
			break
		}
		obs = nil
	}
	if why != "" {
		report(false, why)
		return done, "the action failed: " + why, "", ctx.Err()
	}
	if st.After != nil && (st.Before == nil || st.After.URL != st.Before.URL) {
		// The page is read again: the action moved it. An action that
		// waited for the new document it started leaves nothing to settle
		// but what the new page still loads.
		seen, why := a.waitPath(ctx, loc, st.After.URL, r.Render, "", true, res.Navigated)
		if why != "" {
			report(false, why)
			return done, "the page did not move where it moved when recorded: " + why, "", ctx.Err()
		}
		after = seen
	}
	report(true, strings.TrimSpace(res.Detail))
	return *st, "", after, nil
}

// replayAct does an action, as the loop's are done; why says why it
// failed ("" when it did), err is the action's error when it had one.
func (a *Agent) replayAct(ctx context.Context, in Action) (res page.Result, why string, err error) {
	actx, cancel := context.WithTimeout(ctx, ActionTimeout)
	defer cancel()
	actx = page.WithActionWait(actx, ActionWait)
	res, err = a.browser.Act(actx, in)
	switch {
	case err != nil:
		return res, err.Error(), err
	case !res.OK:
		if res.Reason == "" {
			return res, "the action had no effect", nil
		}
		return res, res.Reason, nil
	}
	return res, "", nil
}

// waitPath waits, up to ReplayPageWait (a short look when moving is false),
// for the active page's path to be the rendered pattern, and returns the
// address it saw; why says what the page is instead. url is the page's
// address as last read ("" to read it first); loaded says that the first
// read need not wait for the DOM to be quiet (the action waited for the
// new document it started). The reads after the first let the page settle.
func (a *Agent) waitPath(ctx context.Context, loc Locating, pattern string, render func(string) (string, error), url string, moving, loaded bool) (seen, why string) {
	want, err := render(pattern)
	if err != nil {
		return "", "the page's path could not be rendered: " + err.Error()
	}
	want = URLPath(want)
	wait := ActionWait
	if moving {
		wait = ReplayPageWait
	}
	deadline := time.Now().Add(wait)
	for delay := time.Duration(0); ; delay = min(max(2*delay, 25*time.Millisecond), 250*time.Millisecond) {
		if url != "" && URLPath(url) == want {
			return url, ""
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		// The first look is at once: settling waits for the page (a
		// navigation included).
		if delay > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
		}
		if url, err = loc.Settle(ctx, delay > 0 || !loaded); err != nil {
			return "", err.Error()
		}
	}
	got := "?"
	if url != "" {
		got = URLPath(url)
	}
	return "", fmt.Sprintf("expected %s, the page is %s", want, got)
}

// healStep asks the model, in one call, for the element a broken step was
// about, on the page as it is now, and does the action there. It returns
// the step recorded again (the new element's locators) and whether that
// worked.
func (a *Agent) healStep(ctx context.Context, g *Goal, st *script.Step, broken string, rec *recorder, render func(string) (string, error)) (script.Step, bool) {
	if !script.NeedsElement(st.Action) || g.Model == nil {
		return script.Step{}, false
	}
	obs, _, err := a.browser.Observe(ctx, true)
	if err != nil {
		return script.Step{}, false
	}
	want := fmt.Sprintf("The element to %s: when the script was recorded it was %s", strings.ReplaceAll(st.Action, "_", " "), st.Element)
	instruction := g.Navigation
	if instruction == "" {
		instruction = g.Extraction
	}
	s, err := a.steps.Start(g.Label, steplog.Action{Type: st.Action, Element: st.Element})
	if err != nil {
		return script.Step{}, false
	}
	s.URL = obs.URL
	start := time.Now()
	l, err := a.Locate(ctx, g.Model, obs, instruction, want, "", nil)
	s.Timings.Model = steplog.Millis(time.Since(start))
	el := FindElement(obs, l.ID)
	fail := func(why string) (script.Step, bool) {
		s.Thought = "The script's step could not be replayed (" + broken + "); the model looked for the element: " + why
		s.Decision = "ai fallback failed"
		s.Actions[0].Result = why
		s.Timings.Total = steplog.Millis(time.Since(s.At))
		a.steps.Report(s)
		return script.Step{}, false
	}
	if err != nil {
		return fail(err.Error())
	}
	if el == nil {
		return fail("the model found no such element")
	}
	in := Action{Type: st.Action, ID: el.ID}
	if st.Value != "" {
		v, err := render(st.Value)
		if err != nil {
			return fail(err.Error())
		}
		in.Text = v
	}
	step := rec.before(ctx, a, obs, in, el, ElementLine(obs, el))
	if step == nil {
		return fail(rec.unreplayable)
	}
	step.Value = st.Value // the recorded template, not what it rendered to
	res, why, _ := a.replayAct(ctx, in)
	if why != "" {
		return fail(why)
	}
	after, _, err := a.browser.Observe(ctx, true)
	if err == nil {
		step.After = rec.pageOf(after.URL, after.Title)
	} else if res.URL != "" {
		step.After = rec.pageOf(res.URL, "")
	}
	s.Actions[0].ID, s.Actions[0].Element, s.Actions[0].OK = el.ID, ElementLine(obs, el), true
	s.Actions[0].Text = maskedValue(st, in.Text)
	s.Thought = "The script's step could not be replayed (" + broken + "); the model found the element, and the script is recorded again."
	s.Decision = "ai fallback"
	s.Timings.Total = steplog.Millis(time.Since(s.At))
	a.steps.Report(s)
	return *step, true
}

// maskedValue is the value of a step as the step log shows it: the
// template when the value came from one (a parameter, a credential), the
// value itself otherwise.
func maskedValue(st *script.Step, v string) string {
	if strings.Contains(st.Value, "{{") || strings.Contains(st.Value, "<secret:") {
		return st.Value
	}
	return v
}

// describeStep names a step for people: `click button "Search"`.
func describeStep(st *script.Step) string {
	if st.Element != "" {
		return st.Action + " " + st.Element
	}
	if st.Value != "" {
		return fmt.Sprintf("%s %q", st.Action, st.Value)
	}
	return st.Action
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
