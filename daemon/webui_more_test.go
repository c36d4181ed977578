package daemon_test

// More tests of the web UI's run page, in a real Chromium: an agent run's
// blocks nested as the run executed them, the script and webhook parts of
// a run, a question to a person rejected from the page, and markup in a
// run's output and failure reason shown as text.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// uiExec executes the runs of the web UI's tests: an agent whose first
// block is a human_interaction block asks a person (asker); an agent whose
// first block is a for_loop reports a timeline of nested blocks
// (loopTeller); everything else follows its script (scripted).
type uiExec struct{ scripted *scripted.Executor }

func (x uiExec) Execute(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
	if job.Agent != nil && len(job.Agent.WorkflowDefinition.Blocks) > 0 {
		switch job.Agent.WorkflowDefinition.Blocks[0].(type) {
		case *client.HumanInteractionBlock:
			return asker{}.Execute(ctx, job, p)
		case *client.ForLoopBlock:
			return loopTeller{}.Execute(ctx, job, p)
		}
	}
	return x.scripted.Execute(ctx, job, p)
}

// newUIEnv is newRunsEnv with uiExec.
func newUIEnv(t *testing.T) *runsEnv {
	t.Helper()
	return newRunsEnv(t, runsEnvConfig{Workers: 2, Executor: uiExec{scripted: &scripted.Executor{}}})
}

// loopFailure is the failure reason of the second iteration of
// loopTeller's loop: markup that must stay text.
const loopFailure = `The page <b>moved</b><img src=x onerror="window.pwned=3">`

// loopTeller executes an agent run as the engine reports a for_loop of two
// iterations: the loop "each" (execution 1) runs block "visit" twice
// (executions 2 and 3), the first completing with a step, the second
// failing (it continues on failure), then block "report" (execution 4)
// completes. The run completes.
type loopTeller struct{}

func (loopTeller) Execute(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
	executor.Started(p)
	blocks, _ := p.(executor.BlockReporter)
	steps, _ := p.(executor.StepReporter)
	if blocks == nil || steps == nil {
		return executor.Result{Status: client.RunStatusFailed, FailureReason: "the progress takes no blocks or steps"}
	}
	report := func(b executor.BlockInfo, end executor.BlockStatus, reason string) executor.BlockInfo {
		b.Status, b.Started = executor.BlockRunning, time.Now()
		blocks.Block(b)
		return executor.BlockInfo{Seq: b.Seq, ParentSeq: b.ParentSeq, Label: b.Label, Type: b.Type, Status: end,
			FailureReason: reason, ContinueOnFailure: b.ContinueOnFailure, Started: b.Started}
	}
	end := func(b executor.BlockInfo) { b.Ended = time.Now(); blocks.Block(b) }
	step := func(n int, label string, seq int) {
		p.Step(n)
		steps.StepDetail(executor.StepInfo{Step: n, Block: label, BlockSeq: seq, URL: "https://example.com/item",
			Thought: "Open the item.", Actions: []string{`click [e1] button "Open": ok`}, Decision: "complete"})
	}
	loop := report(executor.BlockInfo{Seq: 1, Label: "each", Type: client.BlockTypeForLoop}, executor.BlockCompleted, "")
	first := report(executor.BlockInfo{Seq: 2, ParentSeq: 1, Label: "visit", Type: client.BlockTypeNavigation}, executor.BlockCompleted, "")
	step(1, "visit", 2)
	end(first)
	second := report(executor.BlockInfo{Seq: 3, ParentSeq: 1, Label: "visit", Type: client.BlockTypeNavigation, ContinueOnFailure: true},
		executor.BlockFailed, loopFailure)
	end(second)
	end(loop)
	last := report(executor.BlockInfo{Seq: 4, Label: "report", Type: client.BlockTypeTextPrompt}, executor.BlockCompleted, "")
	end(last)
	return executor.Result{Status: client.RunStatusCompleted, StepCount: 1, Output: json.RawMessage(`{"visited":1}`)}
}

// loopAgent creates the agent loopTeller executes and returns its id.
func loopAgent(t *testing.T, e *runsEnv) string {
	t.Helper()
	def := &client.AgentDefinition{Title: "Visit each", WorkflowDefinition: client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: "count", ParameterType: client.ParameterTypeWorkflow,
			WorkflowParameterType: client.WorkflowParameterInteger, DefaultValue: json.RawMessage(`2`)}},
		Blocks: client.Blocks{
			&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopOverParameterKey: "count",
				LoopBlocks: client.Blocks{&client.NavigationBlock{BlockBase: client.BlockBase{Label: "visit", ContinueOnFailure: true}, NavigationGoal: "Open it."}}},
			&client.TextPromptBlock{BlockBase: client.BlockBase{Label: "report"}, Prompt: "Say what was visited."},
		},
	}}
	agent, err := e.a.Agents.Create(t.Context(), def, nil)
	if err != nil {
		t.Fatal(err)
	}
	return agent.WorkflowPermanentID
}

// humanAgent creates an agent whose one block asks a person (asker
// executes it) and returns its id.
func humanAgent(t *testing.T, e *runsEnv) string {
	t.Helper()
	def := client.WorkflowDefinition{Blocks: client.Blocks{&client.HumanInteractionBlock{BlockBase: client.BlockBase{Label: "review"},
		Instructions: "Check the order", Recipients: []string{}}}}
	agent, err := e.a.Agents.Create(t.Context(), &client.AgentDefinition{Title: "Order check", WorkflowDefinition: def}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return agent.WorkflowPermanentID
}

// startAgent starts a run of agent in organization A.
func startAgent(t *testing.T, e *runsEnv, req *client.AgentRunRequest) string {
	t.Helper()
	run, err := e.a.Runs.StartAgent(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return run.RunID
}

// blockSeen is one block of the run page's timeline as a person reads it.
type blockSeen struct {
	Type     string      `json:"type"`
	Label    string      `json:"label"`
	Status   string      `json:"status"`
	Problem  string      `json:"problem"`
	Steps    int         `json:"steps"`
	Children []blockSeen `json:"children"`
}

// readBlocks is JavaScript that reads the timeline's blocks, nested as
// the page nests them.
const readBlocks = `(() => {
  const read = (ol) => [...ol.children].filter(li => li.matches('li.block')).map(li => {
    const h = li.querySelector(':scope > h3');
    const st = h.querySelector('.status');
    const p = li.querySelector(':scope > .problem');
    const sub = li.querySelector(':scope > ol.blocks');
    const steps = li.querySelector(':scope > ol.steps');
    return {
      type: h.querySelector('.mono').textContent.trim(),
      label: h.childNodes[2] ? h.childNodes[2].textContent.trim() : '',
      status: st ? st.textContent.trim() : '',
      problem: p ? p.textContent : '',
      steps: steps ? steps.children.length : 0,
      children: sub ? read(sub) : null,
    };
  });
  const top = document.querySelector('#run > ol.blocks');
  return top ? read(top) : [];
})()`

// TestWebUIBlockTimeline: an agent run with a loop shows its blocks as the
// run executed them, the loop's iterations inside the loop, each with its
// status, its steps and its failure reason (markup shown as text), in the
// order the blocks ran.
func TestWebUIBlockTimeline(t *testing.T) {
	e := newUIEnv(t)
	id := startAgent(t, e, &client.AgentRunRequest{AgentID: loopAgent(t, e)})
	if got := waitRun(t, e.a, id); got.Status != client.RunStatusCompleted {
		t.Fatalf("the run: %s %s", got.Status, got.GetFailureReason())
	}

	tab := uiSignedIn(t, e)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+id))
	uiRun(t, tab, chromedp.WaitVisible("#run-status"))
	got := uiRun(t, tab, chromedp.Evaluate[[]blockSeen](readBlocks))
	want := []blockSeen{
		{Type: "for_loop", Label: "each", Status: "completed", Children: []blockSeen{
			{Type: "navigation", Label: "visit", Status: "completed", Steps: 1},
			{Type: "navigation", Label: "visit", Status: "failed", Problem: loopFailure},
		}},
		{Type: "text_prompt", Label: "report", Status: "completed"},
	}
	if g, w := mustJSON(got), mustJSON(want); g != w {
		t.Errorf("the timeline reads\n%s\nwant\n%s", g, w)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('.blocks img, .blocks b').length`)); n != 0 {
		t.Errorf("the failure reason's markup became %d elements", n)
	}
	if step := uiRun(t, tab, chromedp.Text("#run .blocks .blocks .step")); !strings.Contains(step, "Step 1") || !strings.Contains(step, "Open the item.") {
		t.Errorf("the loop's step shows %q", step)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('#run > ol.steps').length`)); n != 0 {
		t.Error("the step placed in its block is listed outside the blocks too")
	}
}

// TestWebUIRunScriptAndWebhook: a run's page says how the run was asked to
// run (its script part), and where its webhook went without the query
// string, which may carry a token, and that the delivery failed.
func TestWebUIRunScriptAndWebhook(t *testing.T) {
	e := newUIEnv(t)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(hook.Close)
	const secret = "tok-6f1d2a"
	// An agent run (task runs have no run_with), asked to run its script.
	id := startAgent(t, e, &client.AgentRunRequest{AgentID: loopAgent(t, e), RunWith: "code",
		WebhookURL: hook.URL + "/hooks/runs?token=" + secret})
	got := e.progressed(id, func(r *client.Run) bool { return r.IsTerminal() && r.GetWebhookFailureReason() != "" })
	if got.RunWith == nil || *got.RunWith != "code" {
		t.Fatalf("the API says the run ran with %v, want code", got.RunWith)
	}

	tab := uiSignedIn(t, e)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+id))
	uiRun(t, tab, chromedp.WaitVisible("#run-status"))
	main := uiRun(t, tab, chromedp.Text("main"))
	if strings.Contains(main, secret) {
		t.Errorf("the page shows the webhook's token:\n%s", main)
	}
	sec := uiSection(t, tab, "Webhook")
	if !strings.Contains(sec, hook.URL+"/hooks/runs") || strings.Contains(sec, "token") {
		t.Errorf("the webhook part shows %q, want %s/hooks/runs without its query", sec, hook.URL)
	}
	// The API's reason names the URL with its query: the page names it
	// without.
	reason := strings.TrimSpace(strings.ReplaceAll(got.GetWebhookFailureReason(), "?token="+secret, ""))
	if !strings.Contains(sec, "Not delivered: "+reason) {
		t.Errorf("the webhook part shows %q, want the API's failure reason %q", sec, reason)
	}

	// The script part says what the API says of it.
	sec = uiSection(t, tab, "Script")
	want := "Run with" + *got.RunWith + "Script"
	if sid := got.ScriptID; sid != nil && *sid != "" {
		want += *sid
	} else if sr := got.ScriptRun; sr != nil && sr.ScriptID != nil {
		want += *sr.ScriptID
	} else {
		want += "—"
	}
	if !strings.HasPrefix(sec, want) {
		t.Errorf("the script part shows %q, want it to begin %q (the API: script_id %v, script_run %s)", sec, want, got.ScriptID, mustJSON(got.ScriptRun))
	}
	if sr := got.ScriptRun; sr != nil && sr.ScriptRevisionID != nil && !strings.Contains(sec, "Revision"+*sr.ScriptRevisionID) {
		t.Errorf("the script part shows %q, want the revision %s", sec, *sr.ScriptRevisionID)
	}
}

// uiSection returns the text of the run-facts list after the heading h2
// named title, failing when there is none.
func uiSection(t *testing.T, tab context.Context, title string) string {
	t.Helper()
	js := `(() => { const h = [...document.querySelectorAll('main h2')].find(h => h.textContent === ` + jsString(title) + `);
  const dl = h && h.nextElementSibling; return dl && dl.matches('dl') ? dl.innerText : null; })()`
	s := uiRun(t, tab, chromedp.Evaluate[*string](js))
	if s == nil {
		page := uiRun(t, tab, chromedp.Text("main"))
		t.Fatalf("no %s part on the page:\n%s", title, page)
	}
	return strings.ReplaceAll(strings.ReplaceAll(*s, "\t", ""), "\n", "")
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestWebUIRunPageRejects: a person rejects a run's question from the
// page with a comment; the run ends as the API says a rejection ends it
// (failed, here), and the page shows the answer and the comment.
func TestWebUIRunPageRejects(t *testing.T) {
	e := newUIEnv(t)
	id := startAgent(t, e, &client.AgentRunRequest{AgentID: humanAgent(t, e)})
	pollFor(t, "the run to pause", func() bool { return e.record(id).Status == client.RunStatusPaused })

	tab := uiSignedIn(t, e)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+id))
	uiRun(t, tab, chromedp.WaitVisible("#reject"))
	if label := uiRun(t, tab, chromedp.Text("#reject button")); label != "Reject" {
		t.Errorf("the rejecting button says %q", label)
	}
	uiRun(t, tab, chromedp.SendKeys("#reject-comment", "Wrong <b>address</b>"))
	uiRun(t, tab, chromedp.Click("#reject button"))
	got := waitRun(t, e.a, id)
	uiUntil(t, tab, "the page to show the run "+string(got.Status),
		`(document.getElementById('run-status') || {}).textContent === `+jsString(string(got.Status)))
	if got.Status != client.RunStatusFailed {
		t.Errorf("the rejected run: %s, want failed", got.Status)
	}
	uiRun(t, tab, chromedp.WaitNotPresent("#reject"))
	ans, err := e.a.Runs.Interaction(t.Context(), id)
	if err != nil || ans.State != client.HumanRejected || ans.Comment == nil || *ans.Comment != "Wrong <b>address</b>" {
		t.Fatalf("the answer recorded: %+v %v", ans, err)
	}
	shown := uiRun(t, tab, chromedp.Text("#interaction"))
	if !strings.Contains(shown, string(client.HumanRejected)) || !strings.Contains(shown, "Wrong <b>address</b>") {
		t.Errorf("the answered question shows %q", shown)
	}
	if reason := got.GetFailureReason(); reason != "" {
		if why := uiRun(t, tab, chromedp.Text("#run .problem")); !strings.Contains(why, reason) {
			t.Errorf("the page gives the failure reason %q, the API %q", why, reason)
		}
	}
}

// TestWebUIMarkupAsText: markup in a run's output and in its failure
// reason is shown as text: no element is made of it and no script of it
// runs.
func TestWebUIMarkupAsText(t *testing.T) {
	e := newUIEnv(t)
	const markup = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">`
	out := `{"note":"` + strings.ReplaceAll(markup, `"`, `\"`) + `"}`
	run := e.task("steps=1;status=failed;reason=" + markup + ";output=" + out)
	got := waitRun(t, e.a, run.RunID)
	if got.GetFailureReason() != markup {
		t.Fatalf("the run's failure reason is %q, want %q", got.GetFailureReason(), markup)
	}

	tab := uiSignedIn(t, e)
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs/"+run.RunID))
	uiRun(t, tab, chromedp.WaitVisible("#run-output"))
	if o := uiRun(t, tab, chromedp.Text("#run-output")); !strings.Contains(o, `<script>window.pwned=1</script>`) {
		t.Errorf("the output shows %q", o)
	}
	why := uiRun(t, tab, chromedp.Evaluate[string](`(() => { const h = [...document.querySelectorAll('h2')].find(h => h.textContent === 'Why it failed');
  return h ? h.nextElementSibling.textContent : ''; })()`))
	if why != markup {
		t.Errorf("the failure reason shows %q, want %q as text", why, markup)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int](`document.querySelectorAll('main script, main img:not(.screenshots img)').length`)); n != 0 {
		t.Errorf("the markup became %d elements", n)
	}
	if pwned := uiRun(t, tab, chromedp.Evaluate[any]("window.pwned === undefined ? null : window.pwned")); pwned != nil {
		t.Errorf("the markup ran: window.pwned = %v", pwned)
	}
}
