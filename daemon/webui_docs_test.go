package daemon_test

// The pictures of the web UI in docs/web-ui.md are taken by this test, from
// the real pages of a real daemon, in a real Chromium. Every run of the
// test visits each page of docsShots and checks that it answers and can be
// pictured; with -update-docs it also writes the pictures to
// docs/images/web-ui/:
//
//	go test ./daemon -run TestWebUIDocsScreenshots -count 1 -update-docs
//
// A page added to the web UI gets its picture by adding a line to
// docsShots, running the command above, and adding the image to
// docs/web-ui.md (TestWebUIDocsImages fails until both are done).

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

var updateDocs = flag.Bool("update-docs", false, "write the web UI's screenshots to docs/images/web-ui/ (TestWebUIDocsScreenshots)")

// The documentation's pictures: where they go, the page that shows them,
// and the size of the browser window they are taken in.
const (
	docsImageDir  = "../docs/images/web-ui"
	docsPage      = "../docs/web-ui.md"
	docsWidth     = 1280
	docsHeight    = 800
	docsImageLink = "images/web-ui/" // how docs/web-ui.md names them
)

// docsData is what the pictured pages show: the ids of what the test made
// in organization A.
type docsData struct {
	completed string // a task run with steps, their screenshots and a recording
	waiting   string // an agent run waiting for a person's answer
	agent     string // an agent with two versions, runs and a schedule
	script    string // a script of that agent
}

// docsShot is one picture of the documentation.
type docsShot struct {
	name  string // the file's name in docs/images/web-ui, without .png
	path  func(d *docsData) string
	ready string // JavaScript, true once the page shows what is pictured
	// before, when set, is JavaScript run once the page is ready and
	// before the picture (to scroll to the part pictured).
	before string
}

// docsLoaded is true once the page is loaded with all its images.
const docsLoaded = `document.readyState === "complete" && [...document.images].every(i => i.complete)`

// has is true once the element sel is on the page and its images loaded.
func has(sel string) string {
	b, _ := json.Marshal(sel)
	return `!!document.querySelector(` + string(b) + `) && ` + docsLoaded
}

// docsShots are the pictures of docs/web-ui.md, one per page, in the
// order the document describes the pages. The sign-in page comes first:
// it is pictured before the browser signs in.
var docsShots = []docsShot{
	{name: "sign-in", path: func(*docsData) string { return "/ui/sign-in" }, ready: has("#api_key")},
	{name: "runs", path: func(*docsData) string { return "/ui/runs" }, ready: has("table.runs")},
	{name: "run", path: func(d *docsData) string { return "/ui/runs/" + d.completed },
		ready: has("#run-status") + ` && document.getElementById("recording").readyState >= 1`},
	{name: "run-steps", path: func(d *docsData) string { return "/ui/runs/" + d.completed },
		ready:  has("#step-1 .step-shots img") + ` && document.getElementById("recording").readyState >= 1`,
		before: `[...document.querySelectorAll("main h2")].find(h => h.textContent === "Timeline").scrollIntoView({block: "start"})`},
	{name: "run-waiting", path: func(d *docsData) string { return "/ui/runs/" + d.waiting }, ready: has("#approve")},
	{name: "agents", path: func(*docsData) string { return "/ui/agents" }, ready: has("table.agents")},
	{name: "agent", path: func(d *docsData) string { return "/ui/agents/" + d.agent }, ready: has("#agent-yaml")},
	{name: "agent-version", path: func(d *docsData) string { return "/ui/agents/" + d.agent + "/versions/2" }, ready: has("#diff")},
	{name: "agent-run", path: func(d *docsData) string { return "/ui/agents/" + d.agent + "/run" }, ready: has("#run-agent")},
	{name: "schedules", path: func(*docsData) string { return "/ui/schedules" }, ready: has("#schedules")},
	{name: "credentials", path: func(*docsData) string { return "/ui/credentials" }, ready: has("#credentials")},
	{name: "browser-sessions", path: func(*docsData) string { return "/ui/browser-sessions" }, ready: has("#browser-sessions")},
	{name: "browser-profiles", path: func(*docsData) string { return "/ui/browser-profiles" }, ready: has("#browser-profiles")},
	{name: "scripts", path: func(*docsData) string { return "/ui/scripts" }, ready: has("#scripts")},
	{name: "script", path: func(d *docsData) string { return "/ui/scripts/" + d.script }, ready: has("#script-file")},
	{name: "fleet", path: func(*docsData) string { return "/ui/fleet" }, ready: has("#fleet-endpoints")},
}

// TestWebUIDocsImages: every picture of docsShots is in docs/images/web-ui
// and shown by docs/web-ui.md, and that directory holds no other picture.
// It needs no browser, so it holds where Chromium is missing too.
func TestWebUIDocsImages(t *testing.T) {
	doc, err := os.ReadFile(docsPage)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range docsShots {
		file := s.name + ".png"
		names = append(names, file)
		if !strings.Contains(string(doc), "]("+docsImageLink+file+")") {
			t.Errorf("docs/web-ui.md does not show the picture of the page %s: add ![what it shows](%s%s) to its section", s.name, docsImageLink, file)
		}
		if _, err := os.Stat(filepath.Join(docsImageDir, file)); err != nil {
			t.Errorf("the picture of the page %s is missing (%v): run go test ./daemon -run TestWebUIDocsScreenshots -update-docs", s.name, err)
		}
	}
	files, err := os.ReadDir(docsImageDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !slices.Contains(names, f.Name()) {
			t.Errorf("docs/images/web-ui/%s is no page's picture of docsShots: remove it, or add its page", f.Name())
		}
	}
}

// TestWebUIDocsScreenshots visits every page of docsShots in a Chromium
// window of 1280×800, with realistic records in organization A, and takes
// its picture; with -update-docs it writes them to docs/images/web-ui.
func TestWebUIDocsScreenshots(t *testing.T) {
	d := newUIDaemon(t, daemon.Config{Executor: docsExec{&scripted.Executor{}}, Sessions: &openedSessions{}, Workers: 2})
	data := docsRecords(t, d)

	tab := uiBrowser(t)
	uiRun(t, tab, chromedp.EmulateViewport(docsWidth, docsHeight))
	if *updateDocs {
		if err := os.MkdirAll(docsImageDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range docsShots {
		if i == 1 {
			// Every page after the sign-in page is a signed-in one.
			uiRun(t, tab, chromedp.SendKeys("#api_key", d.keyA))
			uiRun(t, tab, chromedp.Submit("#sign-in"))
			uiRun(t, tab, chromedp.WaitVisible(".sign-out button"))
		}
		url := d.url + s.path(data)
		res := uiRun(t, tab, chromedp.NavigateResponse(url))
		if res.Status != 200 {
			t.Fatalf("the page %s (%s) answered HTTP %d, want 200", s.name, url, res.Status)
		}
		uiUntil(t, tab, "the page "+s.name+" to be ready", s.ready)
		if s.before != "" {
			uiRun(t, tab, chromedp.Evaluate[any](s.before+", null"))
		}
		shot := uiRun(t, tab, chromedp.CaptureScreenshot())
		cfg, format, err := image.DecodeConfig(bytes.NewReader(shot))
		if err != nil || format != "png" || cfg.Width != docsWidth || cfg.Height != docsHeight {
			t.Fatalf("the picture of %s: %s %dx%d (%v), want a PNG of %dx%d", s.name, format, cfg.Width, cfg.Height, err, docsWidth, docsHeight)
		}
		if _, err := png.Decode(bytes.NewReader(shot)); err != nil {
			t.Fatalf("the picture of %s does not decode: %v", s.name, err)
		}
		if *updateDocs {
			file := filepath.Join(docsImageDir, s.name+".png")
			if err := os.WriteFile(file, shot, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s (%d KB)", file, len(shot)>>10)
		}
	}
}

// docsFleet is the fleet the fleet page's picture shows: three endpoints,
// one of them down, and runs waiting for a browser.
var docsFleet = browser.FleetStatus{
	Endpoints: []browser.EndpointStatus{
		{Name: "a", URL: "http://10.0.0.11:9222", Capacity: 4, InUse: 3, Healthy: true, Placed: 128},
		{Name: "b", URL: "http://10.0.0.12:9222", Capacity: 4, InUse: 4, Healthy: true, Placed: 131},
		{Name: "c", URL: "http://10.0.0.13:9222", Capacity: 4, Healthy: false, LastError: "connection refused", Failures: 3, Placed: 40},
	},
	Queued: 2, QueueWaits: 17, QueueTimeouts: 1,
}

// docsExec executes the pictured runs: an agent whose first block asks a
// person waits for the answer (asker); the rest follow their scripts, with
// a recording that plays (withVideo). Its fleet is docsFleet.
type docsExec struct{ scripted *scripted.Executor }

func (x docsExec) Execute(ctx context.Context, job *executor.Job, p executor.Progress) executor.Result {
	if job.Agent != nil && len(job.Agent.WorkflowDefinition.Blocks) > 0 {
		if _, ok := job.Agent.WorkflowDefinition.Blocks[0].(*client.HumanInteractionBlock); ok {
			return asker{}.Execute(ctx, job, p)
		}
	}
	return withVideo{x.scripted}.Execute(ctx, job, p)
}

func (docsExec) FleetStatus() (browser.FleetStatus, bool) { return docsFleet, true }

// docsRecords makes, in organization A, what the pictured pages show: an
// agent with two versions, runs of it and a schedule; a completed task run
// with steps, screenshots and a recording, and a failed one; a run waiting
// for a person; a credential, a browser session and profile; a script.
func docsRecords(t *testing.T, d *uiDaemon) *docsData {
	t.Helper()
	ctx := t.Context()
	c := d.a
	var data docsData

	str := func(key, def, desc string) client.Parameter {
		return client.Parameter{Key: key, ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString,
			DefaultValue: json.RawMessage(`"` + def + `"`), Description: desc}
	}
	def := &client.AgentDefinition{
		Title:       "Download the monthly invoices",
		Description: "Signs in to the supplier portal, downloads the month's invoices and lists their totals.",
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{
				str("month", "2026-03", "The month, as YYYY-MM"),
				str("portal_url", "https://portal.example.com", "The supplier portal"),
				{Key: "notify", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterBoolean,
					DefaultValue: json.RawMessage(`true`), Description: "Mail the totals to accounting"},
				{Key: "filters", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterJSON,
					DefaultValue: json.RawMessage(`{"suppliers":"all"}`), Description: "Which suppliers, as JSON"},
			},
			Blocks: client.Blocks{
				&client.NavigationBlock{BlockBase: client.BlockBase{Label: "sign_in"}, URL: "{{portal_url}}/login",
					NavigationGoal: "Sign in with the stored credential."},
				&client.NavigationBlock{BlockBase: client.BlockBase{Label: "open_invoices"},
					NavigationGoal: "Open the invoices of {{month}} and download each as a PDF."},
				&client.ExtractionBlock{BlockBase: client.BlockBase{Label: "totals"},
					DataExtractionGoal: "List each invoice's number, date and total."},
			},
		},
	}
	agent, err := c.Agents.Create(ctx, def, nil)
	if err != nil {
		t.Fatal(err)
	}
	data.agent = agent.WorkflowPermanentID
	// Version 2: the totals are checked, and the download waits for the files.
	v2 := agent.Definition()
	v2.WorkflowDefinition.Blocks[1].(*client.NavigationBlock).CompleteCriterion = "Every invoice of the month is downloaded."
	v2.WorkflowDefinition.Blocks[2].(*client.ExtractionBlock).DataExtractionGoal = "List each invoice's number, date, supplier and total."
	if _, err := c.Agents.Update(ctx, data.agent, v2); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Schedules.Create(ctx, data.agent, &client.ScheduleRequest{CronExpression: "0 7 1 * *", Timezone: "Europe/Berlin",
		Name: client.Ptr("first of the month")}); err != nil {
		t.Fatal(err)
	}

	// The runs, oldest first: two of the agent, a failed task run, a
	// question to a person, and the task run whose page is pictured.
	var ids []string
	for _, month := range []string{"2026-01", "2026-02"} {
		ids = append(ids, startAgentRun(t, c, &client.AgentRunRequest{AgentID: data.agent, Title: "Invoices of " + month,
			Parameters: map[string]any{"month": month}}))
	}
	failed, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Title: "Check the delivery dates",
		Prompt: scripted.Prefix + " steps=2;details;status=failed;reason=The portal refused the sign-in: the password has expired"})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, failed.RunID)
	asks, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Approve the payment run", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{&client.HumanInteractionBlock{BlockBase: client.BlockBase{Label: "approve_payments"},
			Instructions: "Check the 14 invoices of March (12 480.50 EUR in all) before they are paid.", Recipients: []string{}}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data.waiting = startAgentRun(t, c, &client.AgentRunRequest{AgentID: asks.WorkflowPermanentID, Title: "Pay the March invoices"})
	completed, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Title: "Collect the March invoices",
		Prompt: scripted.Prefix + ` steps=3;details;stepshots;recording;downloads=1;output={"invoices":14,"total":"12480.50 EUR"}`})
	if err != nil {
		t.Fatal(err)
	}
	data.completed = completed.RunID
	for _, id := range append(ids, data.completed) {
		waitRun(t, c, id)
	}
	pollFor(t, "the run to wait for a person", func() bool {
		r, err := c.Runs.Get(ctx, data.waiting)
		return err == nil && r.Status == client.RunStatusPaused
	})

	if _, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "supplier-portal", Credential: &client.PasswordCredential{
		Username: "accounts@example.com", Password: "not-shown-anywhere", TOTP: "JBSWY3DPEHPK3PXP", TOTPType: client.TOTPTypeAuthenticator}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "bank-api-token", Credential: &client.SecretCredential{
		SecretValue: "not-shown-either", SecretLabel: "API token"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{Timeout: 60}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "supplier-portal-signed-in",
		Description: "Signed in to the supplier portal, cookies kept"}); err != nil {
		t.Fatal(err)
	}
	script, err := c.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: data.agent,
		Files: []client.ScriptFile{client.ScriptFileFromBytes(client.ScriptFileName, docsScript(data.agent))}})
	if err != nil {
		t.Fatal(err)
	}
	data.script = script.ScriptID
	// A run started a moment ago may still be writing what the pictures
	// show: its screenshots come after its end.
	pollFor(t, "the completed run's screenshots and recording", func() bool {
		r, err := c.Runs.Get(ctx, data.completed)
		return err == nil && r.IsTerminal() && len(r.ScreenshotURLs) > 0 && r.GetRecordingURL() != ""
	})
	return &data
}

// startAgentRun starts a run of an agent with c.
func startAgentRun(t *testing.T, c *client.Client, req *client.AgentRunRequest) string {
	t.Helper()
	run, err := c.Runs.StartAgent(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	return run.RunID
}

// docsScript is the script of the invoices agent the script page's
// picture shows: two blocks replayed, one the model runs every time.
func docsScript(wpid string) []byte {
	return []byte(`format: abctl.script/v1
agent: ` + wpid + `
cache_key: default
blocks:
  - label: sign_in
    mode: replay
    steps:
      - action: input_text
        element: '[e4] input:email "Email"'
        locators:
          - {by: id, value: email}
          - {by: label, value: Email, tag: input}
        value: '<secret:supplier-portal.username>'
        before: {url: /login, title: Supplier portal — sign in}
        after: {url: /login, title: Supplier portal — sign in}
      - action: click
        element: '[e7] button "Sign in"'
        locators:
          - {by: role, role: button, value: Sign in}
        before: {url: /login, title: Supplier portal — sign in}
        after: {url: /invoices, title: Supplier portal — invoices}
  - label: open_invoices
    mode: replay
    steps:
      - action: click
        element: '[e12] link "{{ month }}"'
        locators:
          - {by: role, role: link, value: '{{ month }}'}
        before: {url: /invoices, title: Supplier portal — invoices}
        after: {url: '/invoices/{{ month }}', title: Supplier portal — invoices}
  - label: totals
    mode: model
    reason: an extraction is read by the model every time
`)
}
