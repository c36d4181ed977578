package agent

// Recording what the agent loop does as a script (package script), and
// the browser operations that recording and replay need beyond Browser.
//
// A goal records when its Recording is set: every action that succeeded
// becomes a script.Step before it is done (the element's locators are
// worked out while it is still there), its values written with the run's
// parameters as references, the pages before and after it as paths. What
// cannot be replayed (a tab switch) makes the block a model block with the
// reason. Extracted data is recorded as the places on the page its values
// were read from (RecordExtract); data the page does not show as text
// makes the extraction the model's every time.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/localrun/engine/page"
)

// Locating is a Browser that can also find elements without a model: the
// run's browser (package engine/runbrowser) implements it. Recording and replaying scripts need it.
type Locating interface {
	// Locators returns the locators that find el on the page of obs,
	// each checked to find that very element, most stable first.
	Locators(ctx context.Context, obs *page.Observation, el *page.Element) []script.Locator
	// Find returns the id of the element the first working locator finds,
	// waiting up to wait for one to; obs is the page as last observed, nil
	// when it was not (role locators are matched against an observation,
	// made when needed).
	// The error is a *FindError.
	Find(ctx context.Context, obs *page.Observation, locs []script.Locator, wait time.Duration) (id string, used int, err error)
	// Settle waits for the active tab to settle and returns its address,
	// without reading the page; the actions that follow act on that tab.
	// With domQuiet it waits as Observe does (no navigation pending, the
	// network quiet, then the DOM quiet for a moment); without, only for a
	// pending navigation and the requests in flight, which costs nothing
	// on a page that is idle.
	Settle(ctx context.Context, domQuiet bool) (url string, err error)
	// Snapshot keeps a screenshot of the active tab as the run's.
	Snapshot(ctx context.Context)
	// FindTexts and ReadTexts are page.Page's, on the active tab.
	FindTexts(ctx context.Context, wants []page.TextWant) ([]string, error)
	ReadTexts(ctx context.Context, selectors []string) ([]page.TextRead, error)
}

// FindError is an element no locator found: what each one gave.
type FindError struct {
	Tried []string // `role button "Search": nothing`, ...
}

func (e *FindError) Error() string {
	if len(e.Tried) == 0 {
		return "the step has no locator"
	}
	return "no locator found the element (" + strings.Join(e.Tried, "; ") + ")"
}

// Recording asks a goal to record its actions.
type Recording struct {
	// Params are the run's values as text (script.ParamText), by key:
	// what the model typed from one is recorded as a reference to it.
	Params map[string]string
}

// recorder builds the steps of a goal that records.
type recorder struct {
	rec   *Recording
	steps []script.Step
	// unreplayable says why the goal's actions cannot be replayed; "" while
	// they can.
	unreplayable string
	// fresh is set when the loop's current step added a step.
	fresh bool
}

// locating returns the browser's Locating, nil when it has none.
func (a *Agent) locating() Locating {
	l, _ := a.browser.(Locating)
	return l
}

// before makes the step of action in (checked, about to be done) on the
// page of obs, with the element el it acts on (nil for none).
func (r *recorder) before(ctx context.Context, a *Agent, obs *page.Observation, in Action, el *page.Element, elLine string) *script.Step {
	switch in.Type {
	case "switch_tab", "close_tab":
		r.unreplayable = "the agent switched tabs, which a script cannot replay (tab ids differ from run to run)"
		return nil
	}
	st := &script.Step{Action: in.Type, Before: r.pageOf(obs.URL, obs.Title)}
	if el != nil {
		st.Element = elLine
		if loc := a.locating(); loc != nil {
			st.Locators = loc.Locators(ctx, obs, el)
		}
		if script.NeedsElement(in.Type) && len(st.Locators) == 0 {
			r.unreplayable = fmt.Sprintf("no locator could be recorded for the element %s", elLine)
			return nil
		}
	}
	switch in.Type {
	case "scroll":
		st.Value = "down"
		if in.DY < 0 {
			st.Value = "up"
		}
	case "wait":
		st.Value = fmt.Sprintf("%g", in.Wait.Seconds())
	case "go_back", "hover", "click":
	default:
		st.Value = script.Templatize(in.Text, r.rec.Params)
	}
	return st
}

// done keeps st, an action that succeeded, with the page it led to.
func (r *recorder) done(st *script.Step, res pageResultURL) {
	if st == nil {
		return
	}
	after := st.Before
	if u := string(res); u != "" {
		after = r.pageOf(u, "")
	}
	if after != nil {
		c := *after
		st.After = &c
	}
	r.steps = append(r.steps, *st)
	r.fresh = true
}

// settled completes the last step with the page the step's actions left
// (once it settled).
func (r *recorder) settled(obs *page.Observation) {
	if !r.fresh || obs == nil {
		return
	}
	r.fresh = false
	r.steps[len(r.steps)-1].After = r.pageOf(obs.URL, obs.Title)
}

type pageResultURL string

// pageOf is a page as a step expects it: the path of its address and its
// title, with the run's values as references.
func (r *recorder) pageOf(rawURL, title string) *script.Page {
	return &script.Page{URL: script.Templatize(URLPath(rawURL), r.rec.Params), Title: script.Templatize(title, r.rec.Params)}
}

// URLPath is the path of an address ("/" for none); a URL that does not
// parse is kept whole.
func URLPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Path == "" {
		return "/"
	}
	return u.Path
}

// RecordExtract records where the values of data (the block's extracted
// data) are on the current page: the fields of a script.Extract. reason
// says why the extraction cannot replay (a value the page does not show as
// text, a browser that cannot look) when it cannot; ext is then nil.
//
// A field's type comes from schema (the block's data schema, nil for
// none) when it says what the values at that path are: a price the schema
// calls a number replays 24.50 even when the values recorded were whole.
// Where the schema says nothing, the values decide: a number is an integer
// only when it is whole, the model did not write it as a decimal, and the
// page does not show it as one ("$149.00").
func (a *Agent) RecordExtract(ctx context.Context, data json.RawMessage, schema *Schema, rec *Recording) (ext *script.Extract, reason string) {
	loc := a.locating()
	if loc == nil {
		return nil, "this browser cannot record where data is on the page"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "the extracted data is not JSON"
	}
	leaves := script.Leaves(v)
	ext = &script.Extract{}
	var wants []page.TextWant
	var wantAt []int
	// guessed are the fields typed integer from their values alone: the
	// page's text may show them as decimals.
	guessed := map[int]bool{}
	for _, l := range leaves {
		f := script.Field{Path: l.Path, Type: l.Type}
		if l.Type == script.TypeInteger || l.Type == script.TypeNumber {
			switch st := schema.numberTypeAt(l.Path); {
			case st == script.TypeNumber:
				f.Type = script.TypeNumber
			case st == script.TypeInteger && l.Type == script.TypeInteger:
			case l.Type == script.TypeInteger:
				guessed[len(ext.Fields)] = true
			}
		}
		text := script.ParamText(l.Value)
		switch {
		case l.Type == script.TypeNull || l.Type == script.TypeArray || l.Type == script.TypeObject:
		case l.Type == script.TypeBoolean:
			f.Value = &text
		case l.Type == script.TypeString && isParam(text, rec.Params):
			// The value is a parameter's: the replay gives the new run's.
			t := script.Templatize(text, rec.Params)
			f.Value = &t
		case l.Type == script.TypeString && strings.TrimSpace(text) == "":
			f.Value = &text
		case l.Type == script.TypeString:
			wants = append(wants, page.TextWant{Text: text})
			wantAt = append(wantAt, len(ext.Fields))
		default:
			n := l.Value.(float64)
			wants = append(wants, page.TextWant{Number: &n})
			wantAt = append(wantAt, len(ext.Fields))
		}
		ext.Fields = append(ext.Fields, f)
	}
	if len(wants) > 0 {
		css, err := loc.FindTexts(ctx, wants)
		if err != nil {
			return nil, "the page could not be read: " + err.Error()
		}
		var guessedSels []string
		var guessedAt []int
		for i, c := range css {
			f := &ext.Fields[wantAt[i]]
			if c == "" {
				return nil, fmt.Sprintf("the extracted value %s (%s) is not text the page shows, so the model extracts it every time",
					f.Path, clipValue(wants[i]))
			}
			f.CSS = c
			if guessed[wantAt[i]] {
				guessedSels = append(guessedSels, c)
				guessedAt = append(guessedAt, wantAt[i])
			}
		}
		if len(guessedSels) > 0 {
			reads, err := loc.ReadTexts(ctx, guessedSels)
			if err != nil {
				return nil, "the page could not be read: " + err.Error()
			}
			for i, r := range reads {
				if r.Found && script.DecimalWritten(r.Text) {
					ext.Fields[guessedAt[i]].Type = script.TypeNumber
				}
			}
		}
	}
	return ext, ""
}

// isParam reports whether text is the value of one of params.
func isParam(text string, params map[string]string) bool {
	for _, v := range params {
		if v == text {
			return true
		}
	}
	return false
}

func clipValue(w page.TextWant) string {
	if w.Number != nil {
		return fmt.Sprintf("%g", *w.Number)
	}
	if len(w.Text) > 60 {
		return fmt.Sprintf("%q…", w.Text[:60])
	}
	return fmt.Sprintf("%q", w.Text)
}

// ReplayExtract reads the data of ext from the current page and checks it
// against schema. It fails, naming the field, when a place is gone or its
// text no longer holds a value of the field's type, or the data does not
// fit the schema: the model then extracts instead.
func (a *Agent) ReplayExtract(ctx context.Context, ext *script.Extract, schema *Schema, render func(string) (string, error)) (json.RawMessage, error) {
	loc := a.locating()
	if loc == nil {
		return nil, fmt.Errorf("this browser cannot read the page without a model")
	}
	var sels []string
	var at []int
	for i, f := range ext.Fields {
		if f.CSS != "" {
			sels = append(sels, f.CSS)
			at = append(at, i)
		}
	}
	// Where one more item of each list would be: a list that grew would
	// be read short.
	probes := ext.Probes()
	for _, p := range probes {
		sels = append(sels, p.CSS)
	}
	texts := map[int]page.TextRead{}
	if len(sels) > 0 {
		reads, err := loc.ReadTexts(ctx, sels)
		if err != nil {
			return nil, err
		}
		for i, r := range reads[:len(at)] {
			texts[at[i]] = r
		}
		for i, r := range reads[len(at):] {
			if r.Found {
				return nil, fmt.Errorf("the list %s shows more items than when the script was recorded (%s matches)", probes[i].List, probes[i].CSS)
			}
		}
	}
	v, err := ext.Build(func(i int) (string, bool) { r := texts[i]; return r.Text, r.Found }, render)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if errs := schema.validate(data); len(errs) > 0 {
		return nil, fmt.Errorf("the data read does not fit the schema: %s", strings.Join(errs, "; "))
	}
	return data, nil
}
