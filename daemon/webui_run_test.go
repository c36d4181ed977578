package daemon_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// uiWait bounds the waits of the run page's tests for something to show.
const uiWait = 20 * time.Second

// uiSignedIn returns a browser tab signed in to organization A with a
// one-time link, as `abctl open` does.
func uiSignedIn(t *testing.T, e *runsEnv) context.Context {
	t.Helper()
	tab := uiBrowser(t)
	uiRun(t, tab, chromedp.Navigate(signInLink(t, e.url, e.keyA)))
	uiRun(t, tab, chromedp.WaitVisible(".sign-out button"))
	return tab
}

// uiUntil waits, in the page, until the JavaScript expression cond is
// true, failing the test after uiWait with what.
func uiUntil(t *testing.T, tab context.Context, what, cond string) {
	t.Helper()
	end := time.Now().Add(uiWait)
	for {
		// A poll ends early when the page navigates (a form posted, a
		// redirect): poll again on the new page until the deadline.
		left := time.Until(end)
		ctx, cancel := context.WithTimeout(tab, left+5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(left)))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(end) || tab.Err() != nil {
			page, _ := chromedp.Run(tab, chromedp.Text("main"))
			t.Fatalf("waiting for %s: %v; the page shows:\n%s", what, err, page)
		}
		time.Sleep(20 * time.Millisecond) // the new page's document to exist
	}
}

// TestWebUIRunPage: a completed task run's page shows its screenshots
// (which load, in the order taken), its recording, its downloaded file,
// its steps and its output, with the output's markup as text.
func TestWebUIRunPage(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	const output = `{"note":"<script>window.pwned=1</script><img src=x onerror=window.pwned=2>"}`
	run := e.task("steps=2;screenshots=2;recording;downloads=1;details;output=" + output)
	e.progressed(run.RunID, func(r *client.Run) bool { return r.IsTerminal() && len(r.ScreenshotURLs) == 2 })

	tab := uiSignedIn(t, e)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+run.RunID))
	uiRun(t, tab, chromedp.WaitVisible("#run-status"))
	if st := uiRun(t, tab, chromedp.Text("#run-status")); st != "completed" {
		t.Errorf("status %q, want completed", st)
	}
	uiUntil(t, tab, "2 screenshots that load",
		`(() => { const s = [...document.querySelectorAll('.screenshots img')]; return s.length === 2 && s.every(i => i.complete && i.naturalWidth > 0); })()`)
	alts := uiRun(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.screenshots img')].map(i => i.alt)`))
	if strings.Join(alts, "|") != "Screenshot 1 of the run|Screenshot 2 of the run" {
		t.Errorf("the screenshots' alt texts: %q", alts)
	}
	// Oldest first: the API lists them newest first.
	srcs := uiRun(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.screenshots img')].map(i => i.src)`))
	if len(srcs) != 2 || !strings.Contains(srcs[0], scripted.ScreenshotName(1)) || !strings.Contains(srcs[1], scripted.ScreenshotName(2)) {
		t.Errorf("the screenshots in the order %q, want %s then %s", srcs, scripted.ScreenshotName(1), scripted.ScreenshotName(2))
	}
	if src := uiRun(t, tab, chromedp.Evaluate[string](`(() => { const v = document.querySelector('video[controls]'); return v ? v.src : ''; })()`)); src == "" {
		t.Error("no video with controls and a src")
	}
	links := uiRun(t, tab, chromedp.Text(".downloads"))
	if !strings.Contains(links, scripted.DownloadName(1)) {
		t.Errorf("the downloads show %q, want a link to %s", links, scripted.DownloadName(1))
	}
	if ok := uiRun(t, tab, chromedp.Evaluate[bool](`[...document.querySelectorAll('.downloads a')].some(a => a.href.startsWith(location.origin + '/'))`)); !ok {
		t.Error("the download is not a link to the daemon")
	}
	steps := uiRun(t, tab, chromedp.Text(".steps"))
	if !strings.Contains(steps, "Step 1") || !strings.Contains(steps, "Step 2") || !strings.Contains(steps, `button "Step 2"`) {
		t.Errorf("the steps show:\n%s", steps)
	}
	out := uiRun(t, tab, chromedp.Text("#run-output"))
	if !strings.Contains(out, "<script>window.pwned=1</script>") || !strings.Contains(out, "<img src=x onerror=window.pwned=2>") {
		t.Errorf("the output is not shown as text: %q", out)
	}
	if pwned := uiRun(t, tab, chromedp.Evaluate[any]("window.pwned === undefined ? null : window.pwned")); pwned != nil {
		t.Errorf("the output's markup ran: window.pwned = %v", pwned)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int]("document.querySelectorAll('#run-output *').length")); n != 0 {
		t.Errorf("the output's markup became %d elements", n)
	}
	if live := uiRun(t, tab, chromedp.Evaluate[bool](`document.getElementById('run').hasAttribute('data-live')`)); live {
		t.Error("a completed run's page still refreshes")
	}
}

// TestWebUIRunPageFollowsTheRun: the page of a running run shows it end
// without being reloaded.
func TestWebUIRunPageFollowsTheRun(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	run := e.task("steps=1;block;output={\"done\":true}")
	e.blocked(run.RunID)
	e.progressed(run.RunID, func(r *client.Run) bool { return r.Status == client.RunStatusRunning })

	tab := uiSignedIn(t, e)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+run.RunID))
	uiRun(t, tab, chromedp.WaitVisible("#run-status"))
	if st := uiRun(t, tab, chromedp.Text("#run-status")); st != "running" {
		t.Fatalf("status %q, want running", st)
	}
	if live := uiRun(t, tab, chromedp.Evaluate[string](`document.getElementById('run').getAttribute('data-live') || ''`)); live != "1000" {
		t.Fatalf("a running run's part is marked data-live=%q, want 1000", live)
	}
	// A mark that a reload would lose.
	uiRun(t, tab, chromedp.Evaluate[bool](`window.notReloaded = true`))
	e.exec.Release(run.RunID)
	uiUntil(t, tab, "the page to show the run completed",
		`document.getElementById('run-status').textContent === 'completed' && window.notReloaded === true`)
	uiUntil(t, tab, "the output to show", `(document.getElementById('run-output') || {}).textContent === '{\n  "done": true\n}'`)
	if live := uiRun(t, tab, chromedp.Evaluate[bool](`document.getElementById('run').hasAttribute('data-live')`)); live {
		t.Error("the ended run's part is still marked live")
	}
}

// TestWebUIRunPageAnswersAPerson: a run paused by a human_interaction
// block shows its question; approving it from the page lets the run go on
// to completed; an answer to a run no longer waiting is refused with the
// API's reason.
func TestWebUIRunPageAnswersAPerson(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Executor: asker{}, Workers: 1})
	ctx := t.Context()
	def := client.WorkflowDefinition{Blocks: client.Blocks{&client.HumanInteractionBlock{BlockBase: client.BlockBase{Label: "review"},
		Instructions: "Check the <b>order</b>", Recipients: []string{}}}}
	agent, err := e.a.Agents.Create(ctx, &client.AgentDefinition{Title: "Order check", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := func() string {
		t.Helper()
		run, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID})
		if err != nil {
			t.Fatal(err)
		}
		pollFor(t, "the run to pause", func() bool { return e.record(run.RunID).Status == client.RunStatusPaused })
		return run.RunID
	}

	id := start()
	tab := uiSignedIn(t, e)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+id))
	uiRun(t, tab, chromedp.WaitVisible("#approve"))
	q := uiRun(t, tab, chromedp.Text(".question"))
	if !strings.Contains(q, "Check the <b>order</b>") || !strings.Contains(q, "review") {
		t.Errorf("the question shows:\n%s", q)
	}
	if st := uiRun(t, tab, chromedp.Text("#run-status")); st != "paused" {
		t.Errorf("status %q, want paused", st)
	}
	uiRun(t, tab, chromedp.SendKeys("#approve-comment", "Looks right"))
	uiRun(t, tab, chromedp.Click("#approve button"))
	uiUntil(t, tab, "the approved run to complete", `(document.getElementById('run-status') || {}).textContent === 'completed'`)
	uiRun(t, tab, chromedp.WaitNotPresent("#approve"))
	if got := waitRun(t, e.a, id); got.Status != client.RunStatusCompleted {
		t.Fatalf("the approved run: %s %s", got.Status, got.GetFailureReason())
	}
	if ans, err := e.a.Runs.Interaction(ctx, id); err != nil || ans.State != client.HumanApproved || ans.Comment == nil || *ans.Comment != "Looks right" {
		t.Errorf("the answer recorded: %+v %v", ans, err)
	}
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+id))
	if answered := uiRun(t, tab, chromedp.Text("#interaction")); !strings.Contains(answered, "approved") || !strings.Contains(answered, "Looks right") {
		t.Errorf("the answered question shows %q", answered)
	}

	// A page open while someone else answers: its answer is refused, and
	// the page says why.
	id = start()
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+id))
	uiRun(t, tab, chromedp.WaitVisible("#reject"))
	if _, err := e.a.Runs.Approve(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	waitRun(t, e.a, id)
	uiRun(t, tab, chromedp.Click("#reject button"))
	uiRun(t, tab, chromedp.WaitVisible("main > .problem"))
	if msg := uiRun(t, tab, chromedp.Text("main > .problem")); !strings.Contains(msg, "not waiting for a person's answer") {
		t.Errorf("a refused answer: the page says %q", msg)
	}
	if got, err := e.a.Runs.Get(ctx, id); err != nil || got.Status != client.RunStatusCompleted {
		t.Errorf("after the refused rejection: %+v %v", got, err)
	}
}

// TestWebUIRunPageNotFound: another organization's run and an unknown id
// are pages that are not found.
func TestWebUIRunPageNotFound(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	theirs, err := e.b.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: "script: steps=1", Title: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, e.b, theirs.RunID)

	tab := uiSignedIn(t, e)
	for _, id := range []string{theirs.RunID, "tsk_000000000000000000"} {
		res := uiRun(t, tab, chromedp.NavigateResponse(e.url+"/ui/runs/"+id))
		if res.Status != 404 {
			t.Errorf("run %s: HTTP %d, want 404", id, res.Status)
		}
		if h := uiRun(t, tab, chromedp.Text("h1")); h != "Not Found" {
			t.Errorf("run %s: the page's heading is %q", id, h)
		}
		if body := uiRun(t, tab, chromedp.Text("main")); strings.Contains(body, "theirs") || !strings.Contains(body, "no such page") {
			t.Errorf("run %s: the page shows %q", id, body)
		}
	}
}
