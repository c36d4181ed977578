package daemon_test

// The web UI for keyboard and screen reader users: every control of every
// page has a role and a name, as the engine's own observation of a page
// (package localrun/engine/page, what a model is shown) reads them, and
// every control can be reached with the Tab key.
//
// A page added to the web UI is held to this by adding a line to
// a11yPages.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/page"
)

// a11yRuns are the runs the accessibility test's pages show.
type a11yRuns struct {
	completed string // a task run with steps, screenshots, a recording, a file and a webhook
	failed    string // a task run that failed, with errors
	loop      string // an agent run with a loop, completed
	waiting   string // an agent run waiting for a person's answer
	answered  string // an agent run whose question was approved
	theirs    string // a run of organization B
	agent     string // an agent with a parameter (the human_interaction one)
}

// a11yPage is a page the accessibility test visits.
type a11yPage struct {
	name     string
	signedIn bool
	path     func(r *a11yRuns) string
	status   int // the HTTP status the page answers with
}

// a11yPages are the pages of the web UI, in the states a person meets
// them in.
var a11yPages = []a11yPage{
	{"sign-in", false, func(*a11yRuns) string { return "/ui/sign-in" }, http.StatusOK},
	{"runs", true, func(*a11yRuns) string { return "/ui/runs" }, http.StatusOK},
	{"runs, filtered", true, func(*a11yRuns) string { return "/ui/runs?status=completed&status=failed&search=tsk" }, http.StatusOK},
	{"runs, a search too short", true, func(*a11yRuns) string { return "/ui/runs?search=ab" }, http.StatusUnprocessableEntity},
	{"runs, a page past the last", true, func(*a11yRuns) string { return "/ui/runs?page=3" }, http.StatusOK},
	{"a completed run", true, func(r *a11yRuns) string { return "/ui/runs/" + r.completed }, http.StatusOK},
	{"a failed run", true, func(r *a11yRuns) string { return "/ui/runs/" + r.failed }, http.StatusOK},
	{"an agent run with a loop", true, func(r *a11yRuns) string { return "/ui/runs/" + r.loop }, http.StatusOK},
	{"a run waiting for a person", true, func(r *a11yRuns) string { return "/ui/runs/" + r.waiting }, http.StatusOK},
	{"a run a person answered", true, func(r *a11yRuns) string { return "/ui/runs/" + r.answered }, http.StatusOK},
	{"another organization's run", true, func(r *a11yRuns) string { return "/ui/runs/" + r.theirs }, http.StatusNotFound},
	{"no such page", true, func(*a11yRuns) string { return "/ui/no-such-page" }, http.StatusNotFound},
	{"agents", true, func(*a11yRuns) string { return "/ui/agents" }, http.StatusOK},
	{"an agent", true, func(r *a11yRuns) string { return "/ui/agents/" + r.agent }, http.StatusOK},
	{"an agent's first version", true, func(r *a11yRuns) string { return "/ui/agents/" + r.agent + "/versions/1" }, http.StatusOK},
	{"an agent's run form", true, func(r *a11yRuns) string { return "/ui/agents/" + r.agent + "/run" }, http.StatusOK},
	{"schedules", true, func(*a11yRuns) string { return "/ui/schedules" }, http.StatusOK},
	{"credentials", true, func(*a11yRuns) string { return "/ui/credentials" }, http.StatusOK},
	{"browser sessions", true, func(*a11yRuns) string { return "/ui/browser-sessions" }, http.StatusOK},
	{"browser profiles", true, func(*a11yRuns) string { return "/ui/browser-profiles" }, http.StatusOK},
	{"scripts", true, func(*a11yRuns) string { return "/ui/scripts" }, http.StatusOK},
	{"fleet", true, func(*a11yRuns) string { return "/ui/fleet" }, http.StatusOK},
}

// TestWebUIAccessible visits every page of a11yPages in a real Chromium,
// observes it as the engine observes a page for a model, and fails naming
// every control without a role or without a name, and every control the
// Tab key does not reach.
func TestWebUIAccessible(t *testing.T) {
	e := newUIEnv(t)
	ctx := t.Context()
	var runs a11yRuns
	runs.completed = e.task("steps=2;screenshots=2;recording;downloads=1;details;output={\"rows\":2}", func(r *client.TaskRunRequest) {
		r.Title = "Collect the invoices"
		r.WebhookURL = "http://127.0.0.1:9/hook?token=x"
	}).RunID
	runs.failed = e.task(`steps=1;details;status=failed;reason=The sign-in was refused;errors=[{"code":"denied"}]`).RunID
	runs.loop = startAgent(t, e, &client.AgentRunRequest{AgentID: loopAgent(t, e)})
	human := humanAgent(t, e)
	runs.agent = human
	runs.waiting = startAgent(t, e, &client.AgentRunRequest{AgentID: human})
	runs.answered = startAgent(t, e, &client.AgentRunRequest{AgentID: human})
	theirs, err := e.b.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "script: steps=1", Title: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	runs.theirs = theirs.RunID
	for _, id := range []string{runs.waiting, runs.answered} {
		pollFor(t, "the run to pause", func() bool { return e.record(id).Status == client.RunStatusPaused })
	}
	if _, err := e.a.Runs.Approve(ctx, runs.answered, &client.HumanAnswerRequest{Comment: "Fine"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{runs.completed, runs.failed, runs.loop, runs.answered} {
		waitRun(t, e.a, id)
	}
	e.progressed(runs.completed, func(r *client.Run) bool { return len(r.ScreenshotURLs) == 2 })
	waitRun(t, e.b, runs.theirs)

	out := uiBrowser(t)
	in := uiSignedIn(t, e)
	// One Page per tab: it follows the tab's documents as it navigates.
	pages := map[bool]*page.Page{false: page.New(out), true: page.New(in)}
	tabs := map[bool]context.Context{false: out, true: in}
	for _, pg := range a11yPages {
		t.Run(pg.name, func(t *testing.T) {
			tab := tabs[pg.signedIn]
			url := e.url + pg.path(&runs)
			res := uiRun(t, tab, chromedp.NavigateResponse(url))
			if res.Status != int64(pg.status) {
				t.Errorf("GET %s: HTTP %d, want %d", url, res.Status, pg.status)
			}
			uiRun(t, tab, chromedp.WaitVisible("main"))
			// What a closed <details> holds is reached by opening it, and
			// the engine's observation lists it as if it were shown: open
			// them all, so that what they hold is checked as shown.
			uiRun(t, tab, chromedp.Evaluate[int](`(() => { const ds = document.querySelectorAll('details:not([open])'); ds.forEach(d => { d.open = true; }); return ds.length; })()`))
			// A part that refreshes itself (a list with runs not over)
			// is replaced by its next copy every second, which would take
			// the elements being walked with Tab from under the walk: stop
			// the refreshes (ui.js finds the part by its id) before
			// observing. What is checked is the page's controls, not the
			// refresh.
			uiRun(t, tab, chromedp.Evaluate[int](`(() => { const ls = document.querySelectorAll('[data-live][id]'); ls.forEach(e => e.removeAttribute('id')); return ls.length; })()`))
			octx, cancel := context.WithTimeout(tab, uiWait)
			obs, err := pages[pg.signedIn].Observe(octx, page.ObserveOptions{NoText: true})
			cancel()
			if err != nil {
				t.Fatalf("observe %s: %v", url, err)
			}
			if len(obs.Elements) == 0 {
				t.Fatalf("the observation of %s lists no control", url)
			}
			var problems []string
			for _, el := range obs.Elements {
				if el.Role == "" {
					problems = append(problems, "no role: "+describe(el))
				}
				if accessibleName(el) == "" {
					problems = append(problems, "no name: "+describe(el))
				}
			}
			reached := tabReached(t, tab, obs)
			for i, el := range obs.Elements {
				if !el.Disabled && !reached[i] {
					problems = append(problems, "not reached with Tab: "+describe(el))
				}
			}
			if len(problems) > 0 {
				t.Errorf("%s (%s), %d controls:\n%s\nthe observation:\n%s", pg.name, url, len(obs.Elements),
					strings.Join(problems, "\n"), obs.Rendered)
			}
		})
	}
}

// accessibleName is the name the observation gives an element: the label
// of a field, the text of a link or a button (or the alt text of its
// image).
func accessibleName(el page.Element) string {
	if s := strings.TrimSpace(el.Label); s != "" {
		return s
	}
	return strings.TrimSpace(el.Text)
}

// describe names an element for a failure message.
func describe(el page.Element) string {
	s := fmt.Sprintf("<%s> role=%q name=%q", el.Tag, el.Role, accessibleName(el))
	if el.Type != "" {
		s += " type=" + el.Type
	}
	if el.Name != "" {
		s += " name-attribute=" + el.Name
	}
	if el.Href != "" {
		s += " href=" + el.Href
	}
	if el.Icon != "" {
		s += " icon=" + el.Icon
	}
	return s + fmt.Sprintf(" at %.0f,%.0f", el.Rect[0], el.Rect[1])
}

// tabReached presses Tab from the top of the page until the focus comes
// back to where it started, marking each element it lands on; then it
// reports, for each element of obs, whether the element (or the control
// holding the point at its centre) was among them.
func tabReached(t *testing.T, tab context.Context, obs *page.Observation) []bool {
	t.Helper()
	uiRun(t, tab, chromedp.Evaluate[bool](`(() => { const a = document.activeElement; if (a && a.blur) a.blur(); window.scrollTo(0, 0); return true; })()`))
	// Each stop is marked in the DOM (the walk's own attribute), and the
	// walk ends at the first stop seen twice, or at the document's end.
	const step = `(() => {
  const a = document.activeElement;
  if (!a || a === document.body || a === document.documentElement) return 'end';
  if (a.hasAttribute('data-a11y-tab')) return 'again';
  a.setAttribute('data-a11y-tab', '');
  return 'new';
})()`
	limit := 2*len(obs.Elements) + 20
	for i := 0; ; i++ {
		if i == limit {
			t.Fatalf("after %d presses of Tab the focus has not come round", limit)
		}
		uiRun(t, tab, chromedp.KeyEvent(kb.Tab))
		if r := uiRun(t, tab, chromedp.Evaluate[string](step)); r != "new" && i > 0 {
			break
		}
	}
	// Each element is found again at the centre of its box, as the
	// observation placed it in the document.
	points := make([][2]float64, len(obs.Elements))
	for i, el := range obs.Elements {
		points[i] = [2]float64{el.Rect[0] + el.Rect[2]/2 + obs.Scroll[0], el.Rect[1] + el.Rect[3]/2 + obs.Scroll[1]}
	}
	js := fmt.Sprintf(`((points) => points.map(([x, y]) => {
  window.scrollTo(Math.max(0, x - innerWidth / 2), Math.max(0, y - innerHeight / 2));
  const at = document.elementFromPoint(x - scrollX, y - scrollY);
  return !!(at && at.closest('[data-a11y-tab]'));
}))(%s)`, mustJSON(points))
	return uiRun(t, tab, chromedp.Evaluate[[]bool](js))
}
