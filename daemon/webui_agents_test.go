package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// agentsHostileAgent creates, in organization A, an agent whose title and
// description hold markup, with a parameter of each kind the run form
// shows: a string with a default (the scripted executor's script), a
// required integer, a boolean with a default and a required JSON value.
// It is tagged as abctl apply tags an agent (abctl.name), with a key:
// value tag and a label its file leaves out.
func agentsHostileAgent(t *testing.T, e *runsEnv) *client.Agent {
	t.Helper()
	def := &client.AgentDefinition{
		Title:       hostileTitle,
		Description: hostileTitle,
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				{Key: scripted.ParamKey, ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString, DefaultValue: json.RawMessage(`"steps=1"`)},
				{Key: "count", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterInteger, Description: "How many to take"},
				{Key: "flag", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterBoolean, DefaultValue: json.RawMessage(`true`)},
				{Key: "data", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterJSON},
			},
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}
	a, err := e.a.Agents.Create(t.Context(), def, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.a.Agents.ApplyTags(t.Context(), a.WorkflowPermanentID, &client.TagApplyRequest{Tags: []client.TagInput{
		{Key: agentfile.NameTag, Value: "hostile-agent"}, {Key: "env", Value: "prod"}, {Value: "urgent"},
	}}); err != nil {
		t.Fatal(err)
	}
	return a
}

// agentsSignIn signs tab in as organization A through the sign-in form.
func agentsSignIn(t *testing.T, tab context.Context, e *runsEnv) {
	t.Helper()
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/sign-in"))
	uiRun(t, tab, chromedp.SendKeys("#api_key", e.keyA))
	uiRun(t, tab, chromedp.Submit("#sign-in"))
	uiRun(t, tab, chromedp.WaitVisible(".sign-out"))
}

// agentsNoMarkup fails the test when a value's markup became elements of
// the page or ran.
func agentsNoMarkup(t *testing.T, tab context.Context, where string) {
	t.Helper()
	if pwned := uiRun(t, tab, chromedp.Evaluate[any]("window.pwned === undefined ? null : window.pwned")); pwned != nil {
		t.Errorf("%s: the title's markup ran: window.pwned = %v", where, pwned)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int]("document.querySelectorAll('main img, main script').length")); n != 0 {
		t.Errorf("%s: the title's markup became %d elements", where, n)
	}
}

// TestWebUIAgents: the agents list shows the organization's agents and
// finds them by title; an agent's page shows its file as get -o yaml
// writes it, its title's markup as text; a second version's page shows
// the change; the run form refuses a bad JSON value at its field, keeps
// the values, and then starts a run with the values it was given.
func TestWebUIAgents(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	ctx := t.Context()
	hostile := agentsHostileAgent(t, e)
	id := hostile.WorkflowPermanentID
	folder, err := e.a.Folders.Create(ctx, &client.FolderCreateRequest{Title: "Shop folder"})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := e.a.Agents.Create(ctx, &client.AgentDefinition{Title: "Plain agent", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
	}}, &client.CreateAgentOptions{FolderID: folder.FolderID})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.b.Agents.Create(ctx, &client.AgentDefinition{Title: "Their agent", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}

	tab := uiBrowser(t)
	agentsSignIn(t, tab, e)

	// The list: both of A's agents, not B's; the search finds one.
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/agents"))
	uiRun(t, tab, chromedp.WaitVisible("table.agents"))
	list := uiRun(t, tab, chromedp.Text("table.agents"))
	for _, want := range []string{id, plain.WorkflowPermanentID, "Plain agent", "Shop folder", "<script>window.pwned=1</script>"} {
		if !strings.Contains(list, want) {
			t.Errorf("the agents list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, theirs.WorkflowPermanentID) {
		t.Errorf("organization A's list shows B's agent %s", theirs.WorkflowPermanentID)
	}
	if cur := uiRun(t, tab, chromedp.AttributeValue(`nav a[href="/ui/agents"]`, "aria-current")); cur.Value != "page" {
		t.Errorf("the navigation marks %q on the agents page, want the agents", cur.Value)
	}
	agentsNoMarkup(t, tab, "the agents list")
	uiRun(t, tab, chromedp.SendKeys("#search", "Plain"))
	uiRun(t, tab, chromedp.Submit("#search"))
	// The attribute, unlike the typed value, is the answered page's.
	uiRun(t, tab, chromedp.WaitVisible(`#search[value="Plain"]`))
	if found := uiRun(t, tab, chromedp.Text("table.agents")); !strings.Contains(found, "Plain agent") || strings.Contains(found, id) {
		t.Errorf("searching for Plain shows:\n%s", found)
	}

	// The agent's page, where abctl open leads: the file get -o yaml
	// writes, the markup of the title as text, and its schedule.
	if _, err := e.a.Schedules.Create(ctx, id, &client.ScheduleRequest{CronExpression: "0 9 * * *", Timezone: "Europe/Paris",
		Parameters: map[string]any{"count": 1, "data": "{}"}}); err != nil {
		t.Fatal(err)
	}
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/agents/"+id))
	uiRun(t, tab, chromedp.WaitVisible("#agent-yaml"))
	sched := uiRun(t, tab, chromedp.Text("table.schedules tbody"))
	if !strings.Contains(sched, "0 9 * * *") || !strings.Contains(sched, "Europe/Paris") || !strings.Contains(sched, "yes") || strings.Count(sched, "—") > 1 {
		t.Errorf("the agent's schedule shows as %q, want its cron, time zone, enabled and next run", sched)
	}
	tags, err := e.a.Agents.BatchGetTags(ctx, []string{id})
	if err != nil {
		t.Fatal(err)
	}
	latest, err := e.a.Agents.Get(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := agentfile.RenderTagged(latest, tags[id], "yaml")
	if err != nil {
		t.Fatal(err)
	}
	shown := uiRun(t, tab, chromedp.Text("#agent-yaml"))
	if strings.TrimSpace(shown) != strings.TrimSpace(string(want)) {
		t.Errorf("the agent's file on its page:\n%s\nwant, as get -o yaml writes it:\n%s", shown, want)
	}
	for _, w := range []string{"name: hostile-agent", "env: prod", "count"} {
		if !strings.Contains(shown, w) {
			t.Errorf("the agent's file lacks %q:\n%s", w, shown)
		}
	}
	if h1 := uiRun(t, tab, chromedp.Text("#agent-title")); h1 != hostileTitle {
		t.Errorf("the agent's title shows as %q, want the text %q", h1, hostileTitle)
	}
	if left := uiRun(t, tab, chromedp.Text("main")); !strings.Contains(left, "label urgent") {
		t.Errorf("the page does not say the file leaves out the label urgent")
	}
	agentsNoMarkup(t, tab, "the agent's page")

	// A second version: its page shows what changed.
	def := latest.Definition()
	def.WorkflowDefinition.Blocks[0].(*client.GotoURLBlock).URL = "https://example.org/changed"
	if _, err := e.a.Agents.Update(ctx, id, def); err != nil {
		t.Fatal(err)
	}
	uiRun(t, tab, chromedp.Reload())
	uiRun(t, tab, chromedp.WaitVisible(`a[href$="/versions/2"]`))
	uiRun(t, tab, chromedp.Click(`a[href$="/versions/2"]`))
	uiRun(t, tab, chromedp.WaitVisible("#diff"))
	diff := uiRun(t, tab, chromedp.Text("#diff"))
	removed, added := false, false
	for _, l := range strings.Split(diff, "\n") {
		removed = removed || strings.HasPrefix(l, "-") && strings.Contains(l, "url: https://example.com/")
		added = added || strings.HasPrefix(l, "+") && strings.Contains(l, "url: https://example.org/changed")
	}
	if !removed || !added {
		t.Errorf("version 2's changes:\n%s\nwant the url's old line removed and the new one added", diff)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int]("document.querySelectorAll('#diff .diff-add, #diff .diff-del').length")); n < 2 {
		t.Errorf("the diff marks %d lines as added or removed", n)
	}
	agentsNoMarkup(t, tab, "version 2's page")

	// The run form: a required value missing and a bad JSON value, each
	// told at its field, the values kept.
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/agents/"+id+"/run"))
	uiRun(t, tab, chromedp.WaitVisible("#run-agent"))
	for _, key := range []string{scripted.ParamKey, "count", "flag", "data"} {
		label := uiRun(t, tab, chromedp.Evaluate[string](`(document.querySelector('label[for="param-`+key+`"]') || {}).textContent || ""`))
		if !strings.Contains(label, key) {
			t.Errorf("the field of %s has the label %q", key, label)
		}
	}
	if hint := uiRun(t, tab, chromedp.Text("#param-script-hint")); !strings.Contains(hint, "steps=1") {
		t.Errorf("the default of script is not shown: %q", hint)
	}
	uiRun(t, tab, chromedp.SendKeys("#param-data", `{"a": 1`))
	uiRun(t, tab, chromedp.SendKeys("#run-title", "from the form"))
	uiRun(t, tab, chromedp.Submit("#run-agent"))
	uiRun(t, tab, chromedp.WaitVisible("#param-data-problem"))
	if p := uiRun(t, tab, chromedp.Evaluate[string]("document.querySelector('#param-data').closest('.param').querySelector('.problem').textContent")); !strings.Contains(p, "does not parse") {
		t.Errorf("the problem next to data says %q", p)
	}
	if p := uiRun(t, tab, chromedp.Text("#param-count-problem")); !strings.Contains(p, "no default") {
		t.Errorf("the problem next to count says %q", p)
	}
	if desc := uiRun(t, tab, chromedp.AttributeValue("#param-data", "aria-describedby")); !strings.Contains(desc.Value, "param-data-problem") {
		t.Errorf("the data field is not described by its problem: %q", desc.Value)
	}
	if v := uiRun(t, tab, chromedp.Value("#param-data")); v != `{"a": 1` {
		t.Errorf("the data typed is not kept: %q", v)
	}
	if v := uiRun(t, tab, chromedp.Value("#run-title")); v != "from the form" {
		t.Errorf("the title typed is not kept: %q", v)
	}

	// Fixed: the run starts, the browser lands on its page, and it ends
	// with the form's values.
	uiRun(t, tab, chromedp.SetValue("#param-data", `{"a": [1, 2]}`))
	uiRun(t, tab, chromedp.SendKeys("#param-count", "7"))
	uiRun(t, tab, chromedp.SetValue("#param-flag", "false"))
	uiRun(t, tab, chromedp.SetValue("#param-script", "steps=2"))
	uiRun(t, tab, chromedp.Submit("#run-agent"))
	uiRun(t, tab, chromedp.WaitVisible("#run-status"))
	loc := uiRun(t, tab, chromedp.Location())
	_, runID, ok := strings.Cut(loc, "/ui/runs/")
	if !ok || !strings.HasPrefix(runID, "wr_") {
		t.Fatalf("after the run form, the browser is at %s, want a run's page", loc)
	}
	done := waitRun(t, e.a, runID)
	if done.Status != client.RunStatusCompleted {
		t.Errorf("the run ended %s %q", done.Status, done.GetFailureReason())
	}
	req, err := done.AgentRequest()
	if err != nil || req == nil {
		t.Fatalf("the run's request: %v %v", req, err)
	}
	got, _ := json.Marshal(req.Parameters)
	var params map[string]any
	json.Unmarshal(got, &params)
	if params["count"] != float64(7) || params["flag"] != false || params[scripted.ParamKey] != "steps=2" {
		t.Errorf("the run's parameters: %s", got)
	}
	if data, _ := json.Marshal(params["data"]); string(data) != `{"a":[1,2]}` {
		t.Errorf("the run's data parameter: %s", data)
	}
	if req.Title != "from the form" || req.AgentID != id {
		t.Errorf("the run's request: title %q agent %s", req.Title, req.AgentID)
	}
	if done.GetStepCount() != 2 {
		t.Errorf("the run took %d steps, want the 2 its script parameter asked for", done.GetStepCount())
	}

	// The agent's page lists the run.
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/agents/"+id))
	uiRun(t, tab, chromedp.WaitVisible("#agent-runs"))
	if runs := uiRun(t, tab, chromedp.Text("#agent-runs")); !strings.Contains(runs, runID) {
		t.Errorf("the agent's runs:\n%s\nwant %s", runs, runID)
	}

	// Another organization's agent is not found, whatever the page.
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/agents/"+theirs.WorkflowPermanentID))
	uiRun(t, tab, chromedp.WaitVisible(".problem"))
	if msg := uiRun(t, tab, chromedp.Text(".problem")); !strings.Contains(msg, "no such page") {
		t.Errorf("B's agent on A's page: %q", msg)
	}
	if body := uiRun(t, tab, chromedp.Text("main")); strings.Contains(body, "Their agent") {
		t.Errorf("B's agent's title shows to A: %q", body)
	}
}

// TestWebUIAgentStatuses checks what a browser does not show: the status
// of a refused run form (422) and of another organization's agent (404),
// and that a run of another organization's agent cannot be started.
func TestWebUIAgentStatuses(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	mine := agentsHostileAgent(t, e)
	theirs := agentForRuns(t, e.b, "")

	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path string, form url.Values) (int, string) {
		t.Helper()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequestWithContext(t.Context(), method, e.url+path, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", e.url)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := send(http.MethodPost, "/ui/sign-in", url.Values{"api_key": {e.keyA}}); code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", code)
	}
	code, page := send(http.MethodGet, "/ui/agents/"+mine.WorkflowPermanentID+"/run", nil)
	csrf := between(page, `name="csrf" value="`, `"`)
	if code != http.StatusOK || csrf == "" {
		t.Fatalf("the run form: %d, CSRF token %q", code, csrf)
	}
	code, page = send(http.MethodPost, "/ui/agents/"+mine.WorkflowPermanentID+"/run",
		url.Values{"csrf": {csrf}, "param.count": {"many"}, "param.data": {"[1,"}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(page, `id="param-data-problem"`) || !strings.Contains(page, `id="param-count-problem"`) {
		t.Errorf("bad values: %d, want 422 with a problem at count and at data", code)
	}
	if code, _ := send(http.MethodPost, "/ui/agents/"+mine.WorkflowPermanentID+"/run",
		url.Values{"param.count": {"1"}, "param.data": {"1"}}); code != http.StatusForbidden {
		t.Errorf("a run posted without the CSRF token: %d, want 403", code)
	}
	runs, err := e.a.Agents.ListRuns(t.Context(), &client.ListAgentRunsOptions{AgentID: mine.WorkflowPermanentID})
	if err != nil || len(runs) != 0 {
		t.Errorf("refused forms started %d runs (%v)", len(runs), err)
	}

	for _, path := range []string{"", "/run", "/versions/1"} {
		if code, _ := send(http.MethodGet, "/ui/agents/"+theirs.WorkflowPermanentID+path, nil); code != http.StatusNotFound {
			t.Errorf("GET B's agent%s as A: %d, want 404", path, code)
		}
	}
	if code, _ := send(http.MethodPost, "/ui/agents/"+theirs.WorkflowPermanentID+"/run",
		url.Values{"csrf": {csrf}, "param.count": {"1"}}); code != http.StatusNotFound {
		t.Errorf("a run of B's agent posted as A: %d, want 404", code)
	}
	if runs, err := e.b.Agents.ListRuns(t.Context(), &client.ListAgentRunsOptions{AgentID: theirs.WorkflowPermanentID}); err != nil || len(runs) != 0 {
		t.Errorf("B's agent has %d runs (%v), want none", len(runs), err)
	}
	if code, _ := send(http.MethodGet, "/ui/agents/"+mine.WorkflowPermanentID+"/versions/x", nil); code != http.StatusNotFound {
		t.Errorf("a version that is not a number: %d, want 404", code)
	}
}
