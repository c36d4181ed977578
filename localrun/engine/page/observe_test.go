package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/internal/testsite"
)

// find returns the element of an observation with that id.
func find(t *testing.T, obs *Observation, id string) *Element {
	t.Helper()
	for i := range obs.Elements {
		if obs.Elements[i].ID == id {
			return &obs.Elements[i]
		}
	}
	t.Fatalf("element %s is not in the observation", id)
	return nil
}

// resolve returns the id of the element a selector names.
func resolve(t *testing.T, tab context.Context, p *Page, sel string) string {
	t.Helper()
	id, err := p.Resolve(tctx(t, tab), sel)
	if err != nil {
		t.Fatalf("resolve %s: %v", sel, err)
	}
	return id
}

func goTo(t *testing.T, tab context.Context, p *Page, url string) {
	t.Helper()
	res, err := p.GoTo(tctx(t, tab), url)
	if err != nil || !res.OK {
		t.Fatalf("go to %s: %+v %v", url, res, err)
	}
}

func observe(t *testing.T, tab context.Context, p *Page, o ObserveOptions) *Observation {
	t.Helper()
	obs, err := p.Observe(tctx(t, tab), o)
	if err != nil {
		t.Fatalf("observe: %v", err)
	}
	return obs
}

// ok returns a func that fails the test unless an action succeeded.
func ok(t *testing.T, what string) func(Result, error) Result {
	return func(res Result, err error) Result {
		t.Helper()
		if err != nil || !res.OK {
			t.Fatalf("%s: %+v, %v", what, res, err)
		}
		return res
	}
}

func TestObserveForm(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageForm))

	// Give the password a value first: it must be masked.
	pw := resolve(t, tab, p, "#password")
	res := ok(t, "type the password")(p.InputText(tctx(t, tab), pw, "hunter2-secret"))
	if strings.Contains(res.Detail+res.Reason, "hunter2") {
		t.Errorf("the result echoes the password: %+v", res)
	}

	obs := observe(t, tab, p, ObserveOptions{Screenshot: true})
	if obs.Epoch == 0 || obs.Title != "Form — abctl test site" || !strings.HasSuffix(obs.URL, testsite.PageForm) {
		t.Errorf("header: epoch %d title %q url %q", obs.Epoch, obs.Title, obs.URL)
	}
	if len(obs.Screenshot) < 1000 || obs.Screenshot[0] != 0xFF || obs.Screenshot[1] != 0xD8 {
		t.Errorf("screenshot is not a JPEG (%d bytes)", len(obs.Screenshot))
	}
	if !strings.Contains(obs.Text, "Every input type") {
		t.Errorf("Text lacks the heading: %.200q", obs.Text)
	}
	if strings.Contains(obs.Rendered, "hunter2") || strings.Contains(obs.Text, "hunter2") {
		t.Fatalf("the password leaks into the observation")
	}

	want := []struct {
		sel, tag, typ, label, value string
	}{
		{"#text", "input", "text", "Full name", ""},
		{"#email", "input", "email", "Email", ""},
		{"#password", "input", "password", "Password", "********"},
		{"#number", "input", "number", "Quantity", ""},
		{"#range", "input", "range", "Volume", "5"},
		{"#date", "input", "date", "Date", ""},
		{"#time", "input", "time", "Time", ""},
		{"#datetime-local", "input", "datetime-local", "Appointment", ""},
		{"#month", "input", "month", "Month", ""},
		{"#week", "input", "week", "Week", ""},
		{"#color", "input", "color", "Favourite colour", "#336699"},
		{"#tel", "input", "tel", "Phone", ""},
		{"#url", "input", "url", "Website", ""},
		{"#search", "input", "search", "Search", ""},
		{"#nickname", "input", "text", "Nickname", ""},
		{"#agree", "input", "checkbox", "I agree to the terms", ""},
		{"#newsletter", "input", "checkbox", "Send me the weekly newsletter", ""},
		{"#plan-free", "input", "radio", "Free", ""},
		{"#country", "select", "", "Country", "Choose a country"},
		{"#languages", "select", "", "Languages", ""},
		{"#message", "textarea", "", "Message", ""},
		{"#editor", "div", "", "Notes", ""},
		{"#disabled-input", "input", "text", "Locked", "cannot change"},
		{"#readonly-input", "input", "text", "Reference", "fixed value"},
		{"#controlled", "input", "text", "Controlled", ""},
		{"#submit-button", "button", "submit", "", ""},
	}
	seen := map[string]bool{}
	for _, w := range want {
		id := resolve(t, tab, p, w.sel)
		e := find(t, obs, id) // Resolve gives the id the observation gave
		seen[id] = true
		if e.Tag != w.tag || (w.typ != "" && e.Type != w.typ) || e.Label != w.label || e.Value != w.value {
			t.Errorf("%s: got tag %q type %q label %q value %q; want %q %q %q %q", w.sel, e.Tag, e.Type, e.Label, e.Value, w.tag, w.typ, w.label, w.value)
		}
		if !strings.Contains(obs.Rendered, "["+id+"]") {
			t.Errorf("%s (%s) is not in Rendered", w.sel, id)
		}
	}
	if e := find(t, obs, resolve(t, tab, p, "#newsletter")); !e.Checked {
		t.Errorf("#newsletter is not checked")
	}
	if e := find(t, obs, resolve(t, tab, p, "#disabled-input")); !e.Disabled {
		t.Errorf("#disabled-input is not disabled")
	}
	if e := find(t, obs, resolve(t, tab, p, "#readonly-input")); !e.ReadOnly {
		t.Errorf("#readonly-input is not read-only")
	}
	if e := find(t, obs, resolve(t, tab, p, "#country")); len(e.Options) != 5 || e.Options[1] != "France" {
		t.Errorf("#country options: %q", e.Options)
	}
	if e := find(t, obs, resolve(t, tab, p, "#submit-button")); e.Text != "Submit" || !e.InViewport && e.Rect[1] < 720 {
		t.Errorf("#submit-button: %+v", e)
	}
	for _, hidden := range []string{"#form-id", "#token"} {
		id := resolve(t, tab, p, hidden)
		for _, e := range obs.Elements {
			if e.ID == id {
				t.Errorf("hidden input %s is in the observation", hidden)
			}
		}
	}

	// A second observation of the same DOM gives the same ids.
	again := observe(t, tab, p, ObserveOptions{})
	if len(again.Elements) != len(obs.Elements) || again.Epoch != obs.Epoch {
		t.Fatalf("re-observation: %d elements epoch %d, before %d epoch %d", len(again.Elements), again.Epoch, len(obs.Elements), obs.Epoch)
	}
	for i := range obs.Elements {
		if obs.Elements[i].ID != again.Elements[i].ID {
			t.Fatalf("id of element %d changed: %s -> %s", i, obs.Elements[i].ID, again.Elements[i].ID)
		}
	}
}

func TestObserveFrames(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageFrames))
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log(obs.Rendered)

	frames := map[string]Frame{}
	for _, f := range obs.Frames {
		frames[f.ID] = f
		if f.Error != "" {
			t.Errorf("frame %s (%s): %s", f.ID, f.URL, f.Error)
		}
	}
	// Every copy of frame-inner.html gives a field and a button, in its
	// frame: same origin, cross origin, and two deep on both origins.
	type found struct{ origin string }
	var buttons, fields []Element
	for _, e := range obs.Elements {
		switch e.Text {
		case "Frame button":
			buttons = append(buttons, e)
		}
		if e.Label == "Frame field" {
			fields = append(fields, e)
		}
	}
	if len(buttons) != 4 || len(fields) != 4 {
		t.Fatalf("want 4 frame buttons and fields, got %d and %d", len(buttons), len(fields))
	}
	cross := 0
	for i, b := range buttons {
		f, ok := frames[b.Frame]
		if b.Frame == "" || !ok {
			t.Fatalf("button %s has no frame (%q)", b.ID, b.Frame)
		}
		if fields[i].Frame != b.Frame {
			t.Errorf("field %s is in frame %s, its button in %s", fields[i].ID, fields[i].Frame, b.Frame)
		}
		if strings.HasPrefix(f.URL, "http://localhost:") {
			cross++
		}
	}
	if cross != 2 {
		t.Errorf("want 2 buttons in cross-origin frames, got %d (%+v)", cross, obs.Frames)
	}

	// Type into and click every frame's controls; each click must reach
	// its own frame.
	for i, b := range buttons {
		value := fmt.Sprintf("value-%d", i)
		ok(t, "type in frame")(p.InputText(tctx(t, tab), fields[i].ID, value))
		ok(t, "click in frame")(p.Click(tctx(t, tab), b.ID))
		ev := waitEventWith(t, site, testsite.EventFrameClick, "value", value)
		wantOrigin := strings.HasPrefix(frames[b.Frame].URL, "http://localhost:")
		if gotOther := strings.HasPrefix(ev.Form.Get("origin"), "http://localhost:"); gotOther != wantOrigin {
			t.Errorf("click %d reached origin %s, frame URL %s", i, ev.Form.Get("origin"), frames[b.Frame].URL)
		}
	}
}

// waitEventWith waits for an event of kind whose form field key is value.
func waitEventWith(t *testing.T, site *testsite.Site, kind, key, value string) testsite.Event {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for time.Now().Before(deadline) {
		for _, e := range site.Events() {
			if e.Kind == kind && (key == "" || e.Form.Get(key) == value) {
				return e
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s event with %s=%q; events: %+v", kind, key, value, site.Events())
	return testsite.Event{}
}

func TestObserveShadow(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageShadow))
	obs := observe(t, tab, p, ObserveOptions{})
	ids := map[string]string{}
	for _, e := range obs.Elements {
		ids[e.Label+e.Text] = e.ID
	}
	for _, k := range []string{"Shadow field", "Shadow button", "Inner field", "Inner button"} {
		if ids[k] == "" {
			t.Fatalf("%q is not in the observation:\n%s", k, obs.Rendered)
		}
	}
	ok(t, "type in the nested shadow root")(p.InputText(tctx(t, tab), ids["Inner field"], "deep"))
	ok(t, "click in the nested shadow root")(p.Click(tctx(t, tab), ids["Inner button"]))
	ev := waitEventWith(t, site, testsite.EventShadowClick, "button", "inner-button")
	if ev.Form.Get("value") != "deep" {
		t.Errorf("inner value %q", ev.Form.Get("value"))
	}
	ok(t, "type in the shadow root")(p.InputText(tctx(t, tab), ids["Shadow field"], "shallow"))
	ok(t, "click in the shadow root")(p.Click(tctx(t, tab), ids["Shadow button"]))
	if ev := waitEventWith(t, site, testsite.EventShadowClick, "button", "shadow-button"); ev.Form.Get("value") != "shallow" {
		t.Errorf("shadow value %q", ev.Form.Get("value"))
	}
	// CSS selectors reach into open shadow roots too.
	if id := resolve(t, tab, p, "#inner-input"); id != ids["Inner field"] {
		t.Errorf("resolve #inner-input gave %s, observation %s", id, ids["Inner field"])
	}
}

func TestObserveBig(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageBig))
	for _, budget := range []int{0, 6000} {
		obs := observe(t, tab, p, ObserveOptions{Budget: budget})
		limit := budget
		if limit == 0 {
			limit = 50000
		}
		if len(obs.Rendered) > limit {
			t.Errorf("budget %d: Rendered has %d characters", budget, len(obs.Rendered))
		}
		inView := 0
		for _, e := range obs.Elements {
			if e.InViewport {
				inView++
				if !strings.Contains(obs.Rendered, "["+e.ID+"]") {
					t.Errorf("budget %d: %s in the viewport is not in Rendered", budget, e.ID)
				}
			}
		}
		if len(obs.Elements) < testsite.BigItems || inView < 5 {
			t.Errorf("budget %d: %d elements, %d in the viewport", budget, len(obs.Elements), inView)
		}
		if budget > 0 && (obs.Truncated == 0 || !strings.Contains(obs.Rendered, "below the viewport")) {
			t.Errorf("budget %d: Truncated %d, tail %q", budget, obs.Truncated, obs.Rendered[max(0, len(obs.Rendered)-200):])
		}
		t.Logf("budget %d: %d elements, %d in the viewport, Rendered %d chars, Truncated %d", budget, len(obs.Elements), inView, len(obs.Rendered), obs.Truncated)
	}
	// An element far below is clickable: the click scrolls it into view.
	id := resolve(t, tab, p, "#bottom-button")
	ok(t, "click the last button")(p.Click(tctx(t, tab), id))
	waitEventWith(t, site, testsite.EventBigClick, "id", "bottom-button")
}

func TestLateSPA(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageLateSPA))
	// Polling with a deadline is the caller's job; Resolve does it.
	id := resolve(t, tab, p, "#open-detail")
	obs := observe(t, tab, p, ObserveOptions{})
	e := find(t, obs, id)
	if e.Text != "Show details" {
		t.Fatalf("late button: %+v", e)
	}
	res := ok(t, "open the detail")(p.Click(tctx(t, tab), id))
	if res.Navigated || !strings.HasSuffix(res.URL, "#/detail") {
		t.Errorf("client-side route: %+v", res)
	}
	waitEventWith(t, site, testsite.EventSPADetail, "item", "1")
	quiet, err := p.WaitStable(tctx(t, tab), 100*time.Millisecond)
	if err != nil || !quiet {
		t.Errorf("WaitStable: %v %v", quiet, err)
	}
	obs = observe(t, tab, p, ObserveOptions{})
	if !strings.Contains(obs.Rendered, "Back to the list") || obs.Epoch != p.Epoch() {
		t.Errorf("detail view:\n%s", obs.Rendered)
	}
}

func TestCoveredByBanner(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageCookieBanner))
	obs := observe(t, tab, p, ObserveOptions{})
	cont := resolve(t, tab, p, "#continue-button")
	accept := resolve(t, tab, p, "#accept-cookies")
	if !find(t, obs, cont).InViewport {
		t.Errorf("continue button not in the viewport")
	}
	res, err := p.Click(tctx(t, tab), cont)
	if err != nil || res.OK {
		t.Fatalf("click under the banner: %+v %v", res, err)
	}
	if !strings.HasPrefix(res.Reason, "covered by div#cookie-banner") || !strings.Contains(res.Reason, "We use cookies") {
		t.Errorf("reason %q does not name the banner", res.Reason)
	}
	time.Sleep(100 * time.Millisecond)
	for _, e := range site.Events() {
		if e.Kind == testsite.EventBannerContinue || e.Kind == testsite.EventCookieAccept {
			t.Fatalf("the covered click reached the page: %+v", e)
		}
	}
	ok(t, "accept cookies")(p.Click(tctx(t, tab), accept))
	waitEventWith(t, site, testsite.EventCookieAccept, "choice", "accept")
	ok(t, "continue")(p.Click(tctx(t, tab), cont))
	waitEventWith(t, site, testsite.EventBannerContinue, "", "")
}

func TestRerenderStale(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageRerender))
	observe(t, tab, p, ObserveOptions{})
	old := resolve(t, tab, p, "#select-item-1")
	more := resolve(t, tab, p, "#load-more")
	ok(t, "load more")(p.Click(tctx(t, tab), more))

	res, err := p.Click(tctx(t, tab), old)
	if !errors.Is(err, ErrStaleID) || res.OK || !strings.Contains(err.Error(), old) {
		t.Fatalf("click on a re-rendered node: %+v %v", res, err)
	}
	time.Sleep(100 * time.Millisecond)
	for _, e := range site.Events() {
		if e.Kind == testsite.EventRerenderClick {
			t.Fatalf("a stale id clicked something: %+v", e)
		}
	}
	obs := observe(t, tab, p, ObserveOptions{})
	fresh := resolve(t, tab, p, "#select-item-1")
	if fresh == old {
		t.Fatalf("the new node got the old id %s", old)
	}
	find(t, obs, fresh)
	ok(t, "click the new node")(p.Click(tctx(t, tab), fresh))
	waitEventWith(t, site, testsite.EventRerenderClick, "item", "Item 1")

	// An unknown id and an id from before a navigation are stale too.
	if _, err := p.Click(tctx(t, tab), "e99999"); !errors.Is(err, ErrStaleID) {
		t.Errorf("unknown id: %v", err)
	}
	epoch := p.Epoch()
	goTo(t, tab, p, site.URL(testsite.PageRerender))
	if p.Epoch() == epoch {
		t.Errorf("the epoch did not change with the navigation")
	}
	if _, err := p.Click(tctx(t, tab), fresh); !errors.Is(err, ErrStaleID) || !strings.Contains(err.Error(), "earlier page") {
		t.Errorf("id from the previous page: %v", err)
	}
}

// TestObserveNames: the names the model is shown on a page that hides
// them where a careless reader misses them (PageNames): whitespace-padded
// headlines keep their words, a <noscript> fallback is not text, CSS
// generated content names a button, an SVG widget with a role is a
// control, a checkbox in an open shadow root is there and the root's text
// reaches the page text, a row's checkbox is named by its row, and a
// multi-select lists all its options.
func TestObserveNames(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageNames))
	obs := observe(t, tab, p, ObserveOptions{})
	byID := func(sel string) *Element { t.Helper(); return find(t, obs, resolve(t, tab, p, sel)) }

	for sel, want := range map[string]string{
		"#headline-1":     "Markets rally as rates hold",
		"#headline-2":     "Storm closes the coast road",
		"#headline-3":     "Library opens on Sundays",
		"#gallery-link":   "Gallery of the week",
		"#destroy-button": "×",
		"#css-search":     "Search",
	} {
		if e := byID(sel); e.Text != want {
			t.Errorf("%s: text %q, want %q", sel, e.Text, want)
		}
	}
	if strings.Contains(obs.Rendered, "<img") || strings.Contains(obs.Rendered, "/content/dam") {
		t.Errorf("raw HTML from <noscript> reached the prompt:\n%s", obs.Rendered)
	}
	if e := byID("#volume-slider"); e.Role != "slider" || e.Label != "Volume" {
		t.Errorf("the SVG slider: role %q, label %q", e.Role, e.Label)
	}
	if e := byID("#toggle-all"); e.Type != "checkbox" || e.Label != "Mark all as complete" {
		t.Errorf("the checkbox in the shadow root: %+v", e)
	}
	for _, want := range []string{"Walk the dog", "Water the plants"} {
		if !strings.Contains(obs.Text, want) {
			t.Errorf("the shadow root's text %q is not in the page text:\n%s", want, obs.Text)
		}
	}
	for sel, want := range map[string]string{"#row-1": "Buy milk", "#row-2": "Call the plumber"} {
		if e := byID(sel); e.Label != want {
			t.Errorf("%s: label %q, want the row's text %q", sel, e.Label, want)
		}
	}
	toppings := byID("#toppings")
	line := ""
	for _, l := range strings.Split(obs.Rendered, "\n") {
		if strings.Contains(l, "["+toppings.ID+"]") {
			line = l
		}
	}
	for _, want := range []string{"Topping 01", "Topping 15", "Topping 30", "multiple"} {
		if !strings.Contains(line, want) {
			t.Errorf("the multi-select's line lacks %q: %s", want, line)
		}
	}
	// Every line of the prompt names its control: no bare "[kd] link".
	for _, l := range strings.Split(obs.Rendered, "\n") {
		if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[0], "[") && idPattern.MatchString(strings.Trim(f[0], "[]")) && (f[1] == "link" || f[1] == "button") {
			t.Errorf("a control without a name: %q", l)
		}
	}
}

// TestHostilePage: a page that replaces the built-ins page.js would use
// (PageHostile: Date.now not a function, JSON.stringify, Array.prototype.map,
// toJSON on built-in prototypes, querySelectorAll, getBoundingClientRect,
// getComputedStyle, MutationObserver, Function.prototype.toString) is
// observed and driven as any other: page.js runs in its own world, where
// the built-ins are the browser's. The page cannot see page.js either.
func TestHostilePage(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageHostile))
	obs := observe(t, tab, p, ObserveOptions{})
	for sel, want := range map[string]string{"#from": "From", "#to": "To", "#flexible": "Flexible dates"} {
		if e := find(t, obs, resolve(t, tab, p, sel)); e.Label != want {
			t.Errorf("%s: label %q, want %q", sel, e.Label, want)
		}
	}
	search := resolve(t, tab, p, "#search-fares")
	if e := find(t, obs, search); e.Text != "Search fares" || !e.InViewport {
		t.Errorf("the search button: %+v", e)
	}
	if !strings.Contains(obs.Text, "Fares include taxes and fees.") {
		t.Errorf("the page text:\n%s", obs.Text)
	}
	if !strings.Contains(obs.Rendered, `"Search fares"`) {
		t.Errorf("the prompt lacks the button:\n%s", obs.Rendered)
	}

	ok(t, "type From")(p.InputText(tctx(t, tab), resolve(t, tab, p, "#from"), "Lisbon"))
	ok(t, "type To")(p.InputText(tctx(t, tab), resolve(t, tab, p, "#to"), "Oslo"))
	ok(t, "click Search")(p.Click(tctx(t, tab), search))
	if ev := waitEventWith(t, site, testsite.EventFareSearch, "to", "Oslo"); ev.Form.Get("from") != "Lisbon" {
		t.Errorf("the search reported from=%q", ev.Form.Get("from"))
	}
	if obs := observe(t, tab, p, ObserveOptions{}); !strings.Contains(obs.Text, "Searching Lisbon to Oslo") {
		t.Errorf("the page text after the search:\n%s", obs.Text)
	}

	// The page's own world (an evaluation without a context id) has no
	// trace of page.js.
	res, err := chromedp.Call(tctx(t, tab), runtime.Evaluate, runtime.EvaluateParams{
		Expression:    `(() => { const s = Object.getOwnPropertySymbols(globalThis), o = []; for (let i = 0; i < s.length; i++) o.push(String(s[i])); return o.join(","); })()`,
		ReturnByValue: new(true),
	})
	if err != nil || res.ExceptionDetails != nil {
		t.Fatalf("evaluating in the page's world: %v %+v", err, res.ExceptionDetails)
	}
	if v := string(res.Result.Value); strings.Contains(v, jsKey) {
		t.Errorf("the page's world holds page.js: %s", v)
	}
}

// lineOf returns the line of Rendered that shows element id.
func lineOf(obs *Observation, id string) string {
	for _, l := range strings.Split(obs.Rendered, "\n") {
		if strings.HasPrefix(l, "["+id+"] ") {
			return l
		}
	}
	return ""
}

// byText returns the elements of an observation whose Text is text.
func byText(obs *Observation, text string) []Element {
	var out []Element
	for _, e := range obs.Elements {
		if e.Text == text {
			out = append(out, e)
		}
	}
	return out
}

// oneByText returns the one element whose Text is text, or fails the test.
func oneByText(t *testing.T, obs *Observation, text string) Element {
	t.Helper()
	es := byText(obs, text)
	if len(es) != 1 {
		t.Fatalf("%d elements named %q, want 1:\n%s", len(es), text, obs.Rendered)
	}
	return es[0]
}

// TestObserveNestedClickables: clickable list items inside clickable list
// items are listed one by one, each named by its own words, also when they
// appear later (a folder that opens, children made on opening); a list
// with one delegated listener lists its items; the clickable lists
// themselves are not listed; a clickable card stays one element and a
// pointer-cursor menu of links lists its links only (PageObserveTree).
func TestObserveNestedClickables(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageObserveTree))
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	for _, name := range []string{"Thaddeus", "Mallory", "Juan", "urgent", "later", "someday"} {
		if n := len(byText(obs, name)); n != 1 {
			t.Errorf("%q is listed %d times, want once", name, n)
		}
	}
	for _, e := range obs.Elements {
		if strings.Contains(e.Text, "Thaddeus") && e.Text != "Thaddeus" || strings.Contains(e.Text, "urgent later") ||
			e.Text == "Unlimited rides" || e.Text == "Home" && e.Tag != "a" {
			t.Errorf("an element that is not a control, or a concatenation: %s", lineOf(obs, e.ID))
		}
		if e.Tag == "ul" {
			t.Errorf("a list is listed: %s", lineOf(obs, e.ID))
		}
	}
	if n := len(byText(obs, "Nathalie")); n != 0 {
		t.Errorf("a hidden child is listed")
	}
	if card := byText(obs, "Premium plan Unlimited rides Free returns"); len(card) != 1 || !card[0].Clickable {
		t.Errorf("the card: %+v", card)
	}

	ok(t, "open Thaddeus")(p.Click(tctx(t, tab), resolve(t, tab, p, "#folder-1")))
	ok(t, "open Mallory")(p.Click(tctx(t, tab), resolve(t, tab, p, "#folder-2")))
	obs = observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	for _, name := range []string{"Thaddeus", "Nathalie", "Dannie", "Mallory", "Oscar", "Peggy", "Juan"} {
		if n := len(byText(obs, name)); n != 1 {
			t.Errorf("after opening: %q is listed %d times, want once", name, n)
		}
	}
	for _, name := range []string{"Peggy", "Dannie", "later"} {
		ok(t, "click "+name)(p.Click(tctx(t, tab), oneByText(t, obs, name).ID))
		waitEventWith(t, site, "tree-click", "name", name)
	}
}

// TestObserveListenerBound: controls whose only sign is a click listener
// added by script (addEventListener, an onclick property) or a pointer
// cursor on hover are listed; seven posts of four icons drawn by CSS
// content: url() give 28 elements named from their image files, each
// with its post as context; the framework root's listener lists nothing
// (PageObservePosts).
func TestObserveListenerBound(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageObservePosts))
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	icons := map[string]int{}
	for _, e := range obs.Elements {
		if e.Tag == "span" && e.Icon != "" {
			icons[e.Icon]++
			if !strings.Contains(lineOf(obs, e.ID), ` in="`) {
				t.Errorf("an icon without its post: %s", lineOf(obs, e.ID))
			}
		}
		if e.Tag == "div" && (strings.Contains(e.Text, "Posts") || strings.Contains(e.Text, "Post number")) {
			t.Errorf("a container is listed: %s", lineOf(obs, e.ID))
		}
	}
	for _, name := range []string{"reply", "share", "like", "more"} {
		if icons[name] != 7 {
			t.Errorf("%d %q icons, want 7 (all: %v)", icons[name], name, icons)
		}
	}
	like3 := find(t, obs, resolve(t, tab, p, "#like-3"))
	if l := lineOf(obs, like3.ID); !strings.Contains(l, `icon="like"`) || !strings.Contains(l, "Margaret") && !strings.Contains(l, "Linus") {
		t.Errorf("the third post's like: %s", l)
	}
	for sel, want := range map[string]string{"#archive-all": "Archive all", "#mark-read": "Mark all read"} {
		if e := find(t, obs, resolve(t, tab, p, sel)); e.Text != want || !e.Clickable {
			t.Errorf("%s: %+v", sel, e)
		}
	}
	ok(t, "like post 3")(p.Click(tctx(t, tab), like3.ID))
	if ev := waitEventWith(t, site, "post-action", "action", "like"); ev.Form.Get("post") != "3" {
		t.Errorf("liked post %s", ev.Form.Get("post"))
	}
	ok(t, "mark all read")(p.Click(tctx(t, tab), resolve(t, tab, p, "#mark-read")))
	waitEventWith(t, site, "post-bulk", "action", "read")
}

// TestObserveIcons: controls without words are named from what draws them
// (PageObserveIcons), and the name is shown as derived.
func TestObserveIcons(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageObserveIcons))
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	for sel, want := range map[string]string{
		"#b-fa":       "trash",
		"#b-bi":       "heart fill",
		"#s-icon":     "star",
		"#b-glyph":    "pencil",
		"#b-mat":      "delete forever",
		"#a-img":      "trash 2",
		"#b-use":      "settings",
		"#b-bg":       "share",
		"#dp-prev":    "prev",
		"#dp-next":    "next",
		"#b-svgtitle": "",
		"#b-aria":     "",
	} {
		e := find(t, obs, resolve(t, tab, p, sel))
		if e.Icon != want {
			t.Errorf("%s: icon %q, want %q (%s)", sel, e.Icon, want, lineOf(obs, e.ID))
		}
		if want != "" && !strings.Contains(lineOf(obs, e.ID), `icon="`+want+`"`) {
			t.Errorf("%s: the line does not show the icon: %s", sel, lineOf(obs, e.ID))
		}
		if strings.ContainsAny(e.Text, "\uf1f8\ue900") || strings.Contains(e.Text, "delete_forever") {
			t.Errorf("%s: an icon's glyph or ligature is its text: %q", sel, e.Text)
		}
	}
	if e := find(t, obs, resolve(t, tab, p, "#b-svgtitle")); e.Text != "Close" {
		t.Errorf("the SVG title: %q", e.Text)
	}
	if e := find(t, obs, resolve(t, tab, p, "#dp-prev-btn")); e.Label != "Previous month" {
		t.Errorf("the labelled Prev: %+v", e)
	}
	ok(t, "click next month")(p.Click(tctx(t, tab), resolve(t, tab, p, "#dp-next")))
	waitEventWith(t, site, "icon-click", "id", "dp-next")
}

// TestObserveListOptions: an autocomplete's suggestions are listed one by
// one as they appear, not as one list; an ARIA listbox is named by its
// label, not by its options' words (PageObserveOptions).
func TestObserveListOptions(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageObserveOptions))
	ok(t, "type")(p.InputText(tctx(t, tab), resolve(t, tab, p, "#city"), "a"))
	resolve(t, tab, p, "#suggest li") // waits for the suggestions
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	for _, name := range []string{"Paducah, KY (PAH)", "Utica, NY (UCA)"} {
		if n := len(byText(obs, name)); n != 1 {
			t.Errorf("%q is listed %d times, want once", name, n)
		}
	}
	for _, e := range obs.Elements {
		if strings.Contains(e.Text, "(PAH)") && strings.Contains(e.Text, "(UCA)") || strings.Contains(e.Text, "Red") && strings.Contains(e.Text, "Blue") {
			t.Errorf("a list named by its options: %s", lineOf(obs, e.ID))
		}
	}
	if e := find(t, obs, resolve(t, tab, p, "#lb")); e.Label != "Colour" {
		t.Errorf("the listbox: %s", lineOf(obs, e.ID))
	}
	find(t, obs, resolve(t, tab, p, "#opt-green"))
	ok(t, "pick Utica")(p.Click(tctx(t, tab), oneByText(t, obs, "Utica, NY (UCA)").ID))
	waitEventWith(t, site, "option-pick", "value", "Utica, NY (UCA)")
}

// TestObserveRepeatedContext: controls whose lines would read the same
// get the text of their row, card or field row (PageObserveRows); a
// control that appears once gets none; words of touching boxes are kept
// apart, and a word split by <b> is not.
func TestObserveRepeatedContext(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageObserveRows))
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	for sel, want := range map[string]string{
		"#sel-umber":    "umber 22 in stock",
		"#sel-yarrow":   "yarrow 4 in stock",
		"#sel-zephyr":   "zephyr none left",
		"#line-1":       "3",
		"#line-3":       "8",
		"#details-lamp": "Lamp $18.00",
		"#details-desk": "Desk $149.00",
		"#checkout":     "",
	} {
		e := find(t, obs, resolve(t, tab, p, sel))
		if e.Context != want {
			t.Errorf("%s: context %q, want %q", sel, e.Context, want)
		}
		if want != "" && !strings.Contains(lineOf(obs, e.ID), ` in="`+want+`"`) {
			t.Errorf("%s: the line lacks its context: %s", sel, lineOf(obs, e.ID))
		}
	}
	if e := find(t, obs, resolve(t, tab, p, "#item-22")); e.Text != "Item 22 yarrow 22 Select yarrow" {
		t.Errorf("touching spans: %q", e.Text)
	}
	if e := find(t, obs, resolve(t, tab, p, "#submit-b")); e.Text != "Submit" {
		t.Errorf("a word split by <b>: %q", e.Text)
	}
}

// TestObserveHoverMenus: a menu that opens on mouseenter (no click
// listener, no pointer cursor) is listed, and a menu's name leaves out the
// entries of its closed submenus.
func TestObserveHoverMenus(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageEvalMenu))
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	products := find(t, obs, resolve(t, tab, p, "#products"))
	if !strings.HasPrefix(products.Text, "Products") {
		t.Errorf("the hover menu: %s", lineOf(obs, products.ID))
	}
	account := find(t, obs, resolve(t, tab, p, "#account"))
	if strings.Contains(account.Text, "Deutsch") || strings.Contains(account.Text, "Profile") {
		t.Errorf("a closed menu's name holds its hidden entries: %s", lineOf(obs, account.ID))
	}
	ok(t, "hover Products")(p.Hover(tctx(t, tab), products.ID))
	obs = observe(t, tab, p, ObserveOptions{})
	teams := ""
	for _, e := range obs.Elements {
		if e.Text == "Pricing for teams" {
			teams = e.ID
		}
	}
	if teams == "" {
		t.Fatalf("the open menu's entry is not listed:\n%s", obs.Rendered)
	}
	ok(t, "click the entry")(p.Click(tctx(t, tab), teams))
	waitEventWith(t, site, testsite.EvalEvent(testsite.PageEvalMenu), "item", "Teams pricing")
}
