package page

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/localrun/engine/secrets"

	"github.com/abctl/abctl/internal/retry"
)

// inputTimeout bounds one mouse or key event; a JavaScript dialog that
// nobody answers blocks them.
const inputTimeout = 10 * time.Second

// located is where to press an element, in the tab's viewport.
type located struct {
	x, y    float64
	tag     string
	typ     string
	kind    string
	local   int
	focused bool
}

// wPrep is the answer of the prep operation of page.js.
type wPrep struct {
	Stale   string  `json:"stale"`
	Fail    string  `json:"fail"`
	Cover   string  `json:"cover"`
	T       string  `json:"t"`
	Y       string  `json:"y"`
	Kind    string  `json:"kind"`
	I       int     `json:"i"`
	X       float64 `json:"x"`
	Y2      float64 `json:"y2"`
	Focused int     `json:"focused"`
}

type wHost struct {
	Stale string     `json:"stale"`
	X     float64    `json:"x"`
	Y     float64    `json:"y"`
	Clip  [4]float64 `json:"clip"`
	Cover string     `json:"cover"`
	Out   int        `json:"out"`
}

// chain returns the realms from the top down to r.
func chain(r *realm) []*realm {
	var c []*realm
	for x := r; x != nil && len(c) < 16; x = x.parent {
		c = append(c, x)
	}
	for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
		c[i], c[j] = c[j], c[i]
	}
	return c
}

// locate scrolls the element of ref into view (and the frames that hold
// it), hit-tests the press point in its own realm and in every realm above
// it, and returns the point in the tab's viewport. A non-empty reason means
// the action must fail with it; an error wrapping ErrStaleID means the
// element is gone.
func (f *frames) locate(ctx context.Context, ref *elemRef, mode string) (located, string, error) {
	c := chain(ref.realm)
	for i := 0; i+1 < len(c); i++ {
		var h wHost
		if err := f.call(ctx, c[i], "host", map[string]any{"tok": c[i+1].hostTok, "i": c[i+1].hostLocal, "scroll": true}, &h); err != nil {
			return located{}, "", err
		}
		if h.Stale != "" {
			return located{}, "", staleErr(ref.id, "its frame "+ref.frame+" is gone")
		}
	}
	var w wPrep
	if err := f.call(ctx, ref.realm, "prep", map[string]any{"tok": ref.tok, "i": ref.local, "mode": mode}, &w); err != nil {
		return located{}, "", err
	}
	if w.Stale != "" {
		return located{}, "", staleErr(ref.id, w.Stale)
	}
	loc := located{x: w.X, y: w.Y2, tag: w.T, typ: w.Y, kind: w.Kind, local: ref.local, focused: w.Focused == 1}
	if w.I != 0 {
		loc.local = w.I
	}
	switch {
	case w.Fail != "":
		return loc, fmt.Sprintf("element %s is %s", ref.id, w.Fail), nil
	case w.Cover != "":
		return loc, "covered by " + w.Cover, nil
	}
	for i := len(c) - 2; i >= 0; i-- {
		var h wHost
		child := c[i+1]
		if err := f.call(ctx, c[i], "host", map[string]any{"tok": child.hostTok, "i": child.hostLocal, "lx": loc.x, "ly": loc.y}, &h); err != nil {
			return located{}, "", err
		}
		switch {
		case h.Stale != "":
			return located{}, "", staleErr(ref.id, "its frame "+ref.frame+" is gone")
		case h.Out == 1:
			return loc, fmt.Sprintf("element %s is outside the visible part of its frame", ref.id), nil
		case h.Cover != "":
			return loc, "covered by " + h.Cover, nil
		}
		loc.x += h.X
		loc.y += h.Y
	}
	return loc, "", nil
}

// DefaultActionWait is how long an action waits for its element to become
// actionable (visible with a size, enabled, not moving, not covered) when
// the context does not say otherwise (WithActionWait); never longer than
// the context allows.
const DefaultActionWait = 5 * time.Second

// coveredWait bounds the wait for an element covered by another: an overlay
// that goes away by itself (a spinner, a fading toast) does so quickly,
// while a banner waits for someone to close it, which the caller must do.
const coveredWait = time.Second

// actionPoll is how often an element that is not actionable yet is read
// again.
const actionPoll = 50 * time.Millisecond

type actionWaitKey struct{}

// WithActionWait returns a context under which actions wait up to d for
// their element to become actionable (0: not at all).
func WithActionWait(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, actionWaitKey{}, d)
}

func actionWait(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(actionWaitKey{}).(time.Duration); ok {
		return d
	}
	return DefaultActionWait
}

// locateActionable is locate for an action: it waits, within the action
// wait and the context, while the element is there but cannot take the
// action yet (not visible or without a size, disabled, moving, outside
// the visible area, covered), as a person waits for a control to appear.
// When the wait ends first, the reason says which condition was not met
// and for how long it was waited; a reason no wait can change (a read-only
// field, a stale element) returns at once.
func (f *frames) locateActionable(ctx context.Context, ref *elemRef, mode string) (located, string, error) {
	wait := actionWait(ctx)
	if dl, ok := ctx.Deadline(); ok {
		// Leave the action itself time to run.
		wait = min(wait, time.Until(dl)-4*actionPoll)
	}
	start := time.Now()
	for {
		loc, reason, err := f.locate(ctx, ref, mode)
		if err != nil || reason == "" {
			return loc, reason, err
		}
		waited := time.Since(start)
		limit := wait
		if strings.HasPrefix(reason, "covered by ") {
			limit = min(wait, coveredWait)
		}
		if !waitable(reason) || waited+actionPoll > limit {
			if waited >= actionPoll {
				reason += fmt.Sprintf(" (waited %s)", waited.Round(100*time.Millisecond))
			}
			return loc, reason, nil
		}
		if retry.Sleep(ctx, actionPoll) != nil {
			return loc, reason, nil
		}
	}
}

// waitable reports whether a reason locate gives can change by itself.
func waitable(reason string) bool {
	for _, s := range []string{"not visible", "outside the visible", "nothing at its position", "disabled", "moving", "covered by "} {
		if strings.Contains(reason, s) {
			return true
		}
	}
	return false
}

// failure turns an error of an action into its Result and the error to
// return: stale elements and frames give ErrStaleID, a navigation in the
// middle gives a failed Result without error.
func failure(id string, err error) (Result, error) {
	switch {
	case errors.Is(err, ErrStaleID):
		return Result{Reason: err.Error()}, err
	case errors.Is(err, errRealmGone):
		e := staleErr(id, "its frame is gone")
		return Result{Reason: e.Error()}, e
	case errors.Is(err, errNavRace):
		return Result{Reason: "the page navigated during the action; observe it again", Navigated: true}, nil
	case errors.Is(err, context.DeadlineExceeded):
		return Result{Reason: "the page did not answer in time (a JavaScript dialog may be open, or the page is busy)"}, err
	}
	return Result{Reason: err.Error()}, err
}

func mouse(ctx context.Context, typ input.DispatchMouseEventType, x, y float64, clicks int64) error {
	mctx, cancel := within(ctx, inputTimeout)
	defer cancel()
	p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y}
	if typ != input.DispatchMouseEventTypeMouseMoved {
		p.Button = input.MouseButtonLeft
		p.ClickCount = clicks
		if typ == input.DispatchMouseEventTypeMousePressed {
			p.Buttons = 1
		}
	}
	_, err := chromedp.Call(mctx, input.DispatchMouseEvent, p)
	return err
}

// press sends a left click at a point of the tab's viewport. It sends no
// mouseMoved first: Chromium dispatches the boundary events (mouseover,
// mouseenter) for the press itself, and a move waits for the next frame.
func press(ctx context.Context, x, y float64) error {
	if err := mouse(ctx, input.DispatchMouseEventTypeMousePressed, x, y, 1); err != nil {
		return err
	}
	return mouse(ctx, input.DispatchMouseEventTypeMouseReleased, x, y, 1)
}

// Click scrolls the element into view if needed, checks that nothing covers
// it (failing with Reason "covered by <tag#id.class "text">" otherwise) and
// clicks its centre with trusted mouse events. When the click starts a
// navigation of the tab, Click waits (bounded) for the new document and sets
// Navigated.
func (p *Page) Click(ctx context.Context, id string) (Result, error) {
	ctx, ref, done, err := p.beginOn(ctx, id)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	before := p.nav.snap()
	res, err := p.frames.clickRef(ctx, ref)
	if err != nil || !res.OK {
		return res, err
	}
	p.nav.settle(ctx, before, &res)
	return res, nil
}

// clickRef clicks an element and checks where the press landed: prep arms
// a mousedown listener in the element's window, clickSeen reads it. A press
// that reached nothing in an out-of-process frame (its hit-test data can lag
// behind a fresh load) is tried once more. The Result's URL is location.href
// of the top document when it was read on the way.
func (f *frames) clickRef(ctx context.Context, ref *elemRef) (Result, error) {
	for attempt := 0; ; attempt++ {
		loc, reason, err := f.locateActionable(ctx, ref, "click")
		if err != nil {
			return failure(ref.id, err)
		}
		if reason != "" {
			return Result{Reason: reason}, nil
		}
		if err := press(ctx, loc.x, loc.y); err != nil {
			return failure(ref.id, err)
		}
		var seen struct {
			Seen  int    `json:"seen"`
			Other string `json:"other"`
			Href  string `json:"href"`
		}
		if err := f.call(ctx, ref.realm, "clickSeen", nil, &seen); err != nil {
			if errors.Is(err, errNavRace) || errors.Is(err, errRealmGone) {
				// The click replaced the document: it landed.
				return Result{OK: true}, nil
			}
			return failure(ref.id, err)
		}
		res := Result{OK: true}
		if ref.realm == f.top {
			res.URL = seen.Href
		}
		switch seen.Seen {
		case 2:
			return Result{Reason: "the click landed on " + seen.Other + " instead (the page moved?)"}, nil
		case 0:
			if ref.realm != f.top && attempt == 0 {
				retry.Sleep(ctx, 100*time.Millisecond)
				continue
			}
			if ref.realm != f.top {
				return Result{Reason: fmt.Sprintf("the click did not reach %s in its frame", ref.id)}, nil
			}
			res.Detail = "could not confirm that the element received the click"
		}
		return res, nil
	}
}

// Hover moves the mouse over the element (scrolled into view, not covered),
// to reveal menus that open on hover.
func (p *Page) Hover(ctx context.Context, id string) (Result, error) {
	ctx, ref, done, err := p.beginOn(ctx, id)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	loc, reason, err := p.frames.locateActionable(ctx, ref, "hover")
	if err != nil {
		return failure(id, err)
	}
	if reason != "" {
		return Result{Reason: reason}, nil
	}
	if err := mouse(ctx, input.DispatchMouseEventTypeMouseMoved, loc.x, loc.y, 0); err != nil {
		return failure(id, err)
	}
	res := Result{OK: true}
	res.URL = flush(ctx)
	return res, nil
}

// keep is how many trailing characters InputText types as key events after
// inserting the rest, for pages that react to keydown/keyup.
const keep = 3

// InputText replaces the value of a text field (input, textarea,
// contenteditable, or a label or wrapper holding exactly one field): it
// focuses the field with a trusted click, selects its content, inserts the
// text with Input.insertText and types the last characters as key events, then
// reads the value back. Date, time, color and range inputs get their value
// through the native setter and input/change events. A value the page changed
// fails with the value it holds (never echoed for passwords).
func (p *Page) InputText(ctx context.Context, id, text string) (Result, error) {
	return p.inputText(ctx, id, text, false)
}

// InputSecret is InputText for a secret (a password, a one-time code, a
// credential's field): what the result says of the text is
// secrets.Mask, whatever the field, never the text, its length or what
// the field made of it.
func (p *Page) InputSecret(ctx context.Context, id, text string) (Result, error) {
	return p.inputText(ctx, id, text, true)
}

func (p *Page) inputText(ctx context.Context, id, text string, secret bool) (Result, error) {
	ctx, ref, done, err := p.beginOn(ctx, id)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	before := p.nav.snap()
	loc, reason, err := p.frames.locateActionable(ctx, ref, "focus")
	if err != nil {
		return failure(id, err)
	}
	if reason != "" {
		return Result{Reason: reason}, nil
	}
	secret = secret || loc.typ == "password"
	// A newline ending the text of a one-line field is the Enter key, as
	// a keyboard makes it (a todo list adds its item on Enter, a search
	// box submits): the rest is typed and checked, then Enter is pressed.
	// In a textarea or an editable element a newline is text.
	enter := false
	if loc.tag == "input" {
		trimmed := strings.TrimRight(text, "\r\n")
		enter, text = trimmed != text, trimmed
	}
	if !loc.focused {
		if err := press(ctx, loc.x, loc.y); err != nil {
			return failure(id, err)
		}
	}
	if enter && text == "" {
		// Only Enter: what the field holds stays.
		res := Result{OK: true, Detail: "pressed Enter"}
		if err := pressEnter(ctx); err != nil {
			return failure(id, err)
		}
		p.nav.settle(ctx, before, &res)
		return res, nil
	}
	args := map[string]any{"tok": ref.tok, "i": loc.local}
	var fs struct {
		Stale   string `json:"stale"`
		Kind    string `json:"kind"`
		Focused int    `json:"focused"`
		Len     int    `json:"len"`
		Combo   int    `json:"combo"`
	}
	if err := p.frames.call(ctx, ref.realm, "focusSelect", args, &fs); err != nil {
		return failure(id, err)
	}
	if fs.Stale != "" {
		return failure(id, staleErr(id, fs.Stale))
	}
	if fs.Kind == "setter" {
		if err := p.frames.setValue(ctx, ref, loc.local, text); err != nil {
			return failure(id, err)
		}
	} else if err := typeText(ctx, text, fs.Len > 0); err != nil {
		return failure(id, err)
	}

	got, err := p.frames.readValue(ctx, ref, loc.local)
	if err != nil {
		return failure(id, err)
	}
	res := Result{OK: true}
	switch {
	case sameValue(got, text, fs.Kind):
	case normValue(got) == normValue(text) && normValue(text) != "":
		if !secret {
			res.Detail = fmt.Sprintf("the field formatted the text as %q", oneLine(got, 80))
		}
	default:
		if fs.Kind == "text" {
			// The page swallowed the typing (some custom widgets); set the
			// value the way frameworks observe and check again.
			if err := p.frames.setValue(ctx, ref, loc.local, text); err == nil {
				if g2, err := p.frames.readValue(ctx, ref, loc.local); err == nil && sameValue(g2, text, fs.Kind) {
					res.Detail = "typing did not stick; the value was set directly"
					break
				} else if err == nil {
					got = g2
				}
			}
		}
		res.OK = false
		if secret {
			res.Reason = "the field's value differs from the text (a secret, not shown)"
		} else {
			res.Reason = fmt.Sprintf("the field holds %q instead of the text", oneLine(got, 120))
		}
		res.Reason += p.frames.refusedAdvice(ctx, ref, loc, fs.Kind, got)
	}
	if res.OK && res.Detail == "" {
		if secret {
			res.Detail = "typed " + secrets.Mask
		} else {
			res.Detail = fmt.Sprintf("typed %d characters", len([]rune(text)))
		}
	}
	if res.OK && enter {
		if err := pressEnter(ctx); err != nil {
			return failure(id, err)
		}
		res.Detail += ", then pressed Enter"
	} else if res.OK && fs.Combo == 1 {
		p.frames.waitSuggestions(ctx, ref, &res)
	}
	p.nav.settle(ctx, before, &res)
	return res, nil
}

// suggestionWait bounds the wait, after typing into a field that may show
// suggestions (a combobox, an autocomplete), for the page to show them:
// sites fetch them from their server once the typing has paused for
// 150-400 ms, and the answer takes as long again or longer.
const suggestionWait = 1500 * time.Millisecond

// waitSuggestions waits, within suggestionWait and the context, until the
// page changes outside the field just typed into (page.js watches it from
// focusSelect on), so that the next observation shows the suggestions.
// Nothing changing is no failure: many such fields suggest nothing.
func (f *frames) waitSuggestions(ctx context.Context, ref *elemRef, res *Result) {
	wait := suggestionWait
	if dl, ok := ctx.Deadline(); ok {
		// Leave the rest of the action time to finish.
		wait = min(wait, time.Until(dl)/2)
	}
	if wait <= 0 {
		return
	}
	b, err := f.callRaw(ctx, ref.realm, "suggestWait", map[string]any{"max": wait.Milliseconds()}, true)
	if err != nil {
		return // the page navigated or is gone: settle tells
	}
	var out struct {
		Shown int `json:"shown"`
	}
	if jsonUnmarshal(b, &out) == nil && out.Shown == 1 {
		addDetail(res, "a list of suggestions is showing")
	}
}

// setterFormats are the formats the browser accepts as the value of the
// inputs the engine sets directly (SETTERTYPE of page.js).
var setterFormats = map[string]string{
	"date":           "a date field takes the date as YYYY-MM-DD (such as 2026-03-14)",
	"time":           "a time field takes the time as HH:MM on 24 hours (such as 14:30)",
	"datetime-local": "a date and time field takes YYYY-MM-DDTHH:MM (such as 2026-03-14T14:30)",
	"month":          "a month field takes YYYY-MM (such as 2026-03)",
	"week":           "a week field takes YYYY-Www (such as 2026-W11)",
	"color":          "a colour field takes #rrggbb in hexadecimal (such as #ff8800)",
	"range":          "a slider takes a number between its min and max, on its step",
}

// refusedAdvice says, after a field ended with another value than the text
// typed (got), what to do instead: the format of a field the engine sets
// directly, or the picker that sets a field the page resets. It begins with
// "; " when not empty.
func (f *frames) refusedAdvice(ctx context.Context, ref *elemRef, loc located, kind, got string) string {
	if kind == "setter" {
		if f := setterFormats[loc.typ]; f != "" {
			return "; " + f + ": the engine sets it directly, so type the value in that form"
		}
		return ""
	}
	what := "the page changed it"
	if got == "" {
		what = "the page cleared it"
	}
	var out struct {
		Hint string `json:"hint"`
	}
	if err := f.call(ctx, ref.realm, "pickerAdvice", map[string]any{"tok": ref.tok, "i": loc.local}, &out); err != nil || out.Hint == "" {
		return ": " + what
	}
	return ": " + what + "; " + out.Hint
}

func sameValue(got, want, kind string) bool {
	if got == want {
		return true
	}
	if kind == "ce" {
		return strings.Join(strings.Fields(got), " ") == strings.Join(strings.Fields(want), " ")
	}
	return false
}

func normValue(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// typeText types into the focused field whose content is selected.
func typeText(ctx context.Context, text string, hadValue bool) error {
	if text == "" {
		if !hadValue {
			return nil
		}
		return sendKeys(ctx, keyEvents('\u007f', 0))
	}
	rs := []rune(text)
	split := len(rs)
	for k := 0; k < keep && split > 0 && typable(rs[split-1]); k++ {
		split--
	}
	if split > 0 {
		ictx, cancel := within(ctx, inputTimeout)
		_, err := chromedp.Call(ictx, input.InsertText, input.InsertTextParams{Text: string(rs[:split])})
		cancel()
		if err != nil {
			return err
		}
	}
	for _, r := range rs[split:] {
		if err := sendKeys(ctx, keyEvents(r, 0)); err != nil {
			return err
		}
	}
	return nil
}

// pressEnter presses and releases the Enter key in the focused element.
func pressEnter(ctx context.Context) error {
	evs, err := parseKeys("Enter")
	if err != nil {
		return err
	}
	return sendKeys(ctx, evs)
}

func sendKeys(ctx context.Context, evs []input.DispatchKeyEventParams) error {
	for _, e := range evs {
		kctx, cancel := within(ctx, inputTimeout)
		_, err := chromedp.Call(kctx, input.DispatchKeyEvent, e)
		cancel()
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *frames) setValue(ctx context.Context, ref *elemRef, local int, v string) error {
	var out struct {
		Stale string `json:"stale"`
	}
	if err := f.call(ctx, ref.realm, "setValue", map[string]any{"tok": ref.tok, "i": local, "v": v}, &out); err != nil {
		return err
	}
	if out.Stale != "" {
		return staleErr(ref.id, out.Stale)
	}
	return nil
}

func (f *frames) readValue(ctx context.Context, ref *elemRef, local int) (string, error) {
	var out struct {
		Stale string `json:"stale"`
		V     string `json:"v"`
	}
	if err := f.call(ctx, ref.realm, "readValue", map[string]any{"tok": ref.tok, "i": local}, &out); err != nil {
		return "", err
	}
	if out.Stale != "" {
		return "", staleErr(ref.id, out.Stale)
	}
	return out.V, nil
}

// optionWait bounds the wait for the options of a custom dropdown.
const optionWait = 3 * time.Second

// SelectOption chooses an option. On a native select (or a label of one) it
// matches the option by label, then value, then case-insensitively, then by
// substring, selects it and fires input and change. On anything else it
// treats the element as a custom dropdown: it clicks it, waits for a visible
// element with the option's text (preferring role=option and elements that
// were not visible before) and clicks that.
func (p *Page) SelectOption(ctx context.Context, id, option string) (Result, error) {
	ctx, ref, done, err := p.beginOn(ctx, id)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	before := p.nav.snap()
	var sn struct {
		Stale   string   `json:"stale"`
		Custom  int      `json:"custom"`
		OK      int      `json:"ok"`
		Fail    string   `json:"fail"`
		Options []string `json:"options"`
		Chosen  string   `json:"chosen"`
		Now     string   `json:"now"`
	}
	if err := p.frames.call(ctx, ref.realm, "selectNative", map[string]any{"tok": ref.tok, "i": ref.local, "opt": option}, &sn); err != nil {
		return failure(id, err)
	}
	switch {
	case sn.Stale != "":
		return failure(id, staleErr(id, sn.Stale))
	case sn.Fail != "":
		r := Result{Reason: fmt.Sprintf("%s: %q", sn.Fail, option)}
		if len(sn.Options) > 0 {
			r.Reason += "; the options are: " + strings.Join(sn.Options, " | ")
		}
		return r, nil
	case sn.OK == 1:
		if !strings.Contains(sn.Now, sn.Chosen) {
			return Result{Reason: fmt.Sprintf("selected %q but the select shows %q", sn.Chosen, sn.Now)}, nil
		}
		res := Result{OK: true, Detail: fmt.Sprintf("selected %q", sn.Chosen)}
		p.nav.settle(ctx, before, &res)
		return res, nil
	}

	// A custom dropdown: open it, then pick the option among what appeared.
	args := map[string]any{"tok": ref.tok, "i": ref.local, "text": option}
	if err := p.frames.call(ctx, ref.realm, "optMark", args, &struct{}{}); err != nil {
		return failure(id, err)
	}
	type wFound struct {
		None   int    `json:"none"`
		I      int    `json:"i"`
		Fresh  int    `json:"fresh"`
		Inside int    `json:"inside"`
		Text   string `json:"text"`
	}
	var found wFound
	// An option already showing inside a listbox needs no click to open.
	if err := p.frames.call(ctx, ref.realm, "optFind", args, &found); err != nil {
		return failure(id, err)
	}
	opened := false
	if found.None == 1 || found.Inside == 0 {
		res, err := p.frames.clickRef(ctx, ref)
		if err != nil || !res.OK {
			if res.Reason != "" {
				res.Reason = "could not open the dropdown: " + res.Reason
			}
			return res, err
		}
		opened = true
		wctx, cancel := within(ctx, optionWait)
		found = wFound{None: 1}
		for delay := 20 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
			var f wFound
			if err := p.frames.call(wctx, ref.realm, "optFind", args, &f); err != nil {
				if wctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
					break
				}
				cancel()
				return failure(id, err)
			}
			found = f
			if found.None == 0 && found.Fresh == 1 {
				break
			}
			if retry.Sleep(wctx, delay) != nil {
				break
			}
		}
		cancel()
	}
	if found.None == 1 {
		return Result{Reason: fmt.Sprintf("opened %s but no visible option %q appeared", id, option)}, nil
	}
	optRef := p.frames.ids[p.frames.register(ref.realm, ref.tok, found.I, ref.frame)]
	res, err := p.frames.clickRef(ctx, optRef)
	if err != nil || !res.OK {
		if res.Reason != "" {
			res.Reason = fmt.Sprintf("found option %q but could not click it: %s", found.Text, res.Reason)
		}
		return res, err
	}
	if opened {
		res.Detail = fmt.Sprintf("opened the dropdown and chose %q", found.Text)
	} else {
		res.Detail = fmt.Sprintf("chose %q", found.Text)
	}
	// Read the control back; custom widgets differ, so this only informs.
	if shown, err := p.frames.readValue(ctx, ref, ref.local); err == nil {
		if strings.Contains(strings.ToLower(shown), strings.ToLower(found.Text)) {
			addDetail(&res, fmt.Sprintf("it now shows %q", oneLine(shown, 60)))
		} else {
			addDetail(&res, "the control does not show the choice")
		}
	}
	p.nav.settle(ctx, before, &res)
	return res, nil
}

// chooserWait bounds the wait for the file chooser a click opens.
const chooserWait = 5 * time.Second

// UploadFile attaches local files. For an <input type=file> (or a label of
// one, or an element holding one) it uses DOM.setFileInputFiles; for a
// button that opens a file chooser it intercepts the chooser
// (Page.setInterceptFileChooserDialog), clicks, and sets the files on the
// input the chooser belongs to. Paths must name readable regular files.
func (p *Page) UploadFile(ctx context.Context, id string, paths []string) (Result, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	if len(paths) == 0 {
		err := errors.New("no files to upload")
		return Result{Reason: err.Error()}, err
	}
	abs := make([]string, len(paths))
	names := make([]string, len(paths))
	for i, pth := range paths {
		a, err := filepath.Abs(pth)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(a); err == nil && !fi.Mode().IsRegular() {
				err = errors.New("not a regular file")
			}
		}
		if err != nil {
			err = fmt.Errorf("upload %s: %w", pth, err)
			return Result{Reason: err.Error()}, err
		}
		abs[i], names[i] = a, filepath.Base(a)
	}
	ref, err := p.frames.lookup(id)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	before := p.nav.snap()
	var ft struct {
		Stale string `json:"stale"`
		None  int    `json:"none"`
		I     int    `json:"i"`
	}
	if err := p.frames.call(ctx, ref.realm, "fileTarget", map[string]any{"tok": ref.tok, "i": ref.local}, &ft); err != nil {
		return failure(id, err)
	}
	if ft.Stale != "" {
		return failure(id, staleErr(id, ft.Stale))
	}
	sctx, scancel := derive(ref.realm.sess, ctx, 0)
	defer scancel()
	var res Result
	if ft.None == 0 {
		obj, err := p.frames.object(ctx, ref.realm, ref.tok, ft.I)
		if err != nil {
			return failure(id, err)
		}
		if obj == "" {
			return failure(id, staleErr(id, "the file input is gone"))
		}
		if _, err := chromedp.Call(sctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: abs, ObjectID: obj}); err != nil {
			return failure(id, classify(err))
		}
		var fl struct {
			N     int      `json:"n"`
			Names []string `json:"names"`
		}
		if err := p.frames.call(ctx, ref.realm, "files", map[string]any{"tok": ref.tok, "i": ft.I}, &fl); err != nil {
			return failure(id, err)
		}
		p.frames.release(ctx, ref.realm)
		if fl.N != len(abs) {
			return Result{Reason: fmt.Sprintf("the file input holds %d files instead of %d", fl.N, len(abs))}, nil
		}
		res = Result{OK: true, Detail: "attached " + strings.Join(names, ", ")}
	} else {
		res, err = p.frames.uploadViaChooser(ctx, sctx, ref, abs, names)
		if err != nil || !res.OK {
			return res, err
		}
	}
	p.nav.settle(ctx, before, &res)
	return res, nil
}

func (f *frames) uploadViaChooser(ctx, sctx context.Context, ref *elemRef, abs, names []string) (Result, error) {
	if _, err := chromedp.Call(sctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		return failure(ref.id, classify(err))
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(sctx), 2*time.Second)
		_, _ = chromedp.Call(dctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: false})
		cancel()
	}()
	lctx, lcancel := within(sctx, chooserWait+inputTimeout)
	defer lcancel()
	events := chromedp.Events(lctx, page.FileChooserOpened)
	res, err := f.clickRef(ctx, ref)
	if err != nil || !res.OK {
		return res, err
	}
	wctx, wcancel := within(lctx, chooserWait)
	defer wcancel()
	var ev page.EventFileChooserOpened
	got := false
	evCh := make(chan page.EventFileChooserOpened, 1)
	go func() {
		for e, err := range events {
			if err != nil {
				return
			}
			evCh <- e
			return
		}
	}()
	select {
	case ev = <-evCh:
		got = true
	case <-wctx.Done():
	}
	lcancel()
	if !got {
		return Result{Reason: fmt.Sprintf("clicking %s opened no file chooser", ref.id)}, nil
	}
	if ev.BackendNodeID == 0 {
		return Result{Reason: "the page opened a file picker that belongs to no file input (not supported)"}, nil
	}
	if _, err := chromedp.Call(sctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: abs, BackendNodeID: ev.BackendNodeID}); err != nil {
		return failure(ref.id, classify(err))
	}
	// Read the count back from the input the chooser belongs to.
	rn, err := chromedp.Call(sctx, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: ev.BackendNodeID, ObjectGroup: "abctl-page"})
	ref.realm.objs = true
	if err == nil && rn.Object != nil {
		out, err := chromedp.Call(sctx, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: "function(){return this.files ? this.files.length : -1}",
			ObjectID:            rn.Object.ObjectID,
			ReturnByValue:       new(true),
		})
		f.release(ctx, ref.realm)
		if err == nil && out.Result != nil {
			var n int
			if jsonUnmarshal(out.Result.Value, &n) == nil && n != len(abs) {
				return Result{Reason: fmt.Sprintf("the file input holds %d files instead of %d", n, len(abs))}, nil
			}
		}
	}
	return Result{OK: true, Detail: "attached " + strings.Join(names, ", ") + " through the file chooser"}, nil
}

// wheel sends a mouse wheel event. It builds the parameters by hand: the
// typed ones drop a zero delta, and Chromium wants both.
func wheel(ctx context.Context, x, y, dx, dy float64) error {
	mctx, cancel := within(ctx, inputTimeout)
	defer cancel()
	return chromedp.Do(mctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		return t.Call(ctx, input.CommandDispatchMouseEvent, map[string]any{
			"type": input.DispatchMouseEventTypeMouseWheel, "x": x, "y": y, "deltaX": dx, "deltaY": dy,
		}, nil)
	}))
}

// Scroll scrolls by dx, dy CSS pixels. With id "" it scrolls the page with a
// mouse wheel at the viewport's centre (falling back to a script scroll when
// the wheel moves nothing); with an id it scrolls the element's nearest
// scrollable ancestor (or the page that holds it).
func (p *Page) Scroll(ctx context.Context, id string, dx, dy float64) (Result, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	if dx == 0 && dy == 0 {
		return Result{Reason: "nothing to scroll: dx and dy are 0"}, nil
	}
	if id != "" {
		ref, err := p.frames.lookup(id)
		if err != nil {
			return Result{Reason: err.Error()}, err
		}
		var out struct {
			Stale string  `json:"stale"`
			What  string  `json:"what"`
			Moved int     `json:"moved"`
			Y     float64 `json:"y"`
			H     float64 `json:"h"`
		}
		if err := p.frames.call(ctx, ref.realm, "scrollEl", map[string]any{"tok": ref.tok, "i": ref.local, "dx": dx, "dy": dy}, &out); err != nil {
			return failure(id, err)
		}
		if out.Stale != "" {
			return failure(id, staleErr(id, out.Stale))
		}
		if out.Moved == 0 {
			return Result{Reason: fmt.Sprintf("%s did not scroll (already at the end)", out.What)}, nil
		}
		return Result{OK: true, Detail: fmt.Sprintf("scrolled %s to y=%.0f of %.0f", out.What, out.Y, out.H), URL: p.nav.snap().url}, nil
	}
	type info struct {
		SX float64 `json:"sx"`
		SY float64 `json:"sy"`
		SW float64 `json:"sw"`
		SH float64 `json:"sh"`
		VW float64 `json:"vw"`
		VH float64 `json:"vh"`
	}
	var b, a info
	if err := p.frames.call(ctx, p.frames.top, "scrollInfo", nil, &b); err != nil {
		return failure(id, err)
	}
	if err := wheel(ctx, b.VW/2, b.VH/2, dx, dy); err != nil {
		return failure(id, err)
	}
	moved := false
	wctx, wcancel := within(ctx, 600*time.Millisecond)
	for delay := 10 * time.Millisecond; ; delay = min(delay*2, 80*time.Millisecond) {
		if err := p.frames.call(wctx, p.frames.top, "scrollInfo", nil, &a); err != nil {
			break
		}
		if a.SX != b.SX || a.SY != b.SY {
			moved = true
			// Let a smooth scroll finish.
			for k := 0; k < 10; k++ {
				prev := a
				if retry.Sleep(wctx, 30*time.Millisecond) != nil || p.frames.call(wctx, p.frames.top, "scrollInfo", nil, &a) != nil || a == prev {
					break
				}
			}
			break
		}
		if retry.Sleep(wctx, delay) != nil {
			break
		}
	}
	wcancel()
	detail := ""
	if !moved {
		if err := p.frames.call(ctx, p.frames.top, "pageScrollBy", map[string]any{"dx": dx, "dy": dy}, &a); err != nil {
			return failure(id, err)
		}
		moved = a.SX != b.SX || a.SY != b.SY
		detail = " (by script; the wheel moved nothing)"
	}
	if !moved {
		return Result{Reason: "the page did not scroll (already at the end)"}, nil
	}
	return Result{OK: true, Detail: fmt.Sprintf("scrolled the page to y=%.0f of %.0f%s", a.SY, max(0, a.SH-a.VH), detail), URL: p.nav.snap().url}, nil
}

// KeyPress presses a key, with modifiers joined by "+": "Enter", "Tab",
// "Escape", "ArrowDown", "PageDown", "Control+A", "Shift+Tab", or a single
// character. The key goes to the focused element. Other names give an error
// wrapping ErrUnknownKey. When the key starts a navigation (Enter in a form),
// KeyPress waits for it as Click does.
func (p *Page) KeyPress(ctx context.Context, keys string) (Result, error) {
	evs, err := parseKeys(keys)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	before := p.nav.snap()
	if err := sendKeys(ctx, evs); err != nil {
		return failure("", err)
	}
	res := Result{OK: true}
	p.nav.settle(ctx, before, &res)
	return res, nil
}

// Wait sleeps for d, at most MaxWait, or until ctx ends.
func (p *Page) Wait(ctx context.Context, d time.Duration) (Result, error) {
	if d > MaxWait {
		d = MaxWait
	}
	if d < 0 {
		d = 0
	}
	if retry.Sleep(ctx, d) != nil {
		return Result{Reason: "interrupted"}, ctx.Err()
	}
	return Result{OK: true, Detail: fmt.Sprintf("waited %s", d), URL: p.nav.snap().url}, nil
}
