package daemon_test

// The web UI's read-only pages (daemon/webui/resources.go) in a real
// Chromium, against a real daemon (daemon.Run) on loopback with its bbolt
// file in a temporary directory: schedules, credentials, browser sessions
// and profiles, scripts and the browser fleet, each for the signed-in
// organization only.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// uiDaemon is a real daemon with two organizations, A and B, for the web
// UI's tests, with a client of the API for each.
type uiDaemon struct {
	url  string
	keyA string
	a, b *client.Client
}

// newUIDaemon starts a daemon with cfg (its API key is set here) and makes
// organization B beside A.
func newUIDaemon(t *testing.T, cfg daemon.Config) *uiDaemon {
	t.Helper()
	const key = "abk_webui_resources_key_a"
	cfg.APIKey = key
	dir := t.TempDir()
	addr, _ := daemontest.Start(t, dir, cfg)
	other, err := admin.NewClient(admin.SocketPath(dir)).CreateOrganization(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	d := &uiDaemon{url: "http://" + addr, keyA: key}
	for _, c := range []struct {
		key string
		out **client.Client
	}{{key, &d.a}, {other.APIKey, &d.b}} {
		if *c.out, err = client.New(client.WithBaseURL(d.url), client.WithAPIKey(c.key), client.WithMaxRetries(0)); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// signedIn returns a Chromium tab signed in to organization A with a
// one-time link, as `abctl open` does.
func (d *uiDaemon) signedIn(t *testing.T) context.Context {
	t.Helper()
	tab := uiBrowser(t)
	uiRun(t, tab, chromedp.Navigate(signInLink(t, d.url, d.keyA)))
	uiRun(t, tab, chromedp.WaitVisible(".sign-out button"))
	return tab
}

// open goes to the page at path and waits for its main part to be shown;
// it returns the text of main.
func (d *uiDaemon) open(t *testing.T, tab context.Context, path string) string {
	t.Helper()
	uiRun(t, tab, chromedp.Navigate(d.url+path))
	uiRun(t, tab, chromedp.WaitVisible("main h1"))
	return uiRun(t, tab, chromedp.Text("main"))
}

// current is the text of the navigation's link marked as the current page.
func current(t *testing.T, tab context.Context) string {
	t.Helper()
	return uiRun(t, tab, chromedp.Evaluate[string](`(() => { const a = document.querySelector('nav a[aria-current="page"]'); return a ? a.textContent : ''; })()`))
}

// noMarkupRan fails the test when a hostile value's markup became elements
// of the page's main part or ran.
func noMarkupRan(t *testing.T, tab context.Context, page string) {
	t.Helper()
	if pwned := uiRun(t, tab, chromedp.Evaluate[any]("window.pwned === undefined ? null : window.pwned")); pwned != nil {
		t.Errorf("%s: a value's markup ran: window.pwned = %v", page, pwned)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int]("document.querySelectorAll('main img, main script').length")); n != 0 {
		t.Errorf("%s: a value's markup became %d elements", page, n)
	}
}

// TestWebUIReadOnlyPages: before anything is made, each page says what
// its records are and which command makes one; then each lists what
// organization A made through the API and nothing of B's, shows names
// holding markup as text, never shows a credential's secret, and a
// script's page shows its file as text.
func TestWebUIReadOnlyPages(t *testing.T) {
	d := newUIDaemon(t, daemon.Config{Executor: &scripted.Executor{}, Sessions: &openedSessions{}, Workers: 1})
	ctx := t.Context()
	tab := d.signedIn(t)

	for _, p := range []struct{ path, nav, says, command string }{
		{"/ui/schedules", "Schedules", "has no schedules", "abctl schedules create"},
		{"/ui/credentials", "Credentials", "has no credentials", "abctl credentials create"},
		{"/ui/browser-sessions", "Browser sessions", "has no browser sessions", "abctl browser-sessions create"},
		{"/ui/browser-profiles", "Browser profiles", "has no browser profiles", "abctl browser-profiles create"},
		{"/ui/scripts", "Scripts", "has no scripts", "abctl run --agent AGENT --with code"},
		{"/ui/fleet", "Fleet", "has no fleet of browser endpoints", "--browser-endpoint"},
	} {
		text := d.open(t, tab, p.path)
		if !strings.Contains(text, p.says) || !strings.Contains(text, p.command) {
			t.Errorf("%s with nothing made shows:\n%s\nwant %q and the command %q", p.path, text, p.says, p.command)
		}
		if nav := current(t, tab); nav != p.nav {
			t.Errorf("%s marks %q as the current section, want %q", p.path, nav, p.nav)
		}
	}

	// What A makes, and what B makes.
	agentA, agentB := agentForSchedules(t, d.a), agentForSchedules(t, d.b)
	mine := createSchedule(t, d.a, agentA.WorkflowPermanentID, &client.ScheduleRequest{
		CronExpression: "0 9 * * MON-FRI", Timezone: "Europe/Berlin", Name: client.Ptr("weekday mornings")})
	paused := createSchedule(t, d.a, agentA.WorkflowPermanentID, &client.ScheduleRequest{
		CronExpression: "@hourly", Timezone: "UTC", Enabled: client.Ptr(false)})
	theirs := createSchedule(t, d.b, agentB.WorkflowPermanentID, &client.ScheduleRequest{CronExpression: "@daily", Timezone: "UTC"})

	const password, totpSecret = "pw-Zq9-unlikely-7781", "JBSWY3DPEHPK3PXPWEBUIRESOURCE"
	credA, err := d.a.Credentials.Create(ctx, &client.CredentialRequest{Name: hostileTitle, Credential: &client.PasswordCredential{
		Username: "ada@example.com", Password: password, TOTP: totpSecret, TOTPType: client.TOTPTypeAuthenticator}})
	if err != nil {
		t.Fatal(err)
	}
	credB, err := d.b.Credentials.Create(ctx, &client.CredentialRequest{Name: "theirs-credential", Credential: &client.SecretCredential{SecretValue: "theirs-secret"}})
	if err != nil {
		t.Fatal(err)
	}

	sessA, err := d.a.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{Timeout: 30})
	if err != nil {
		t.Fatal(err)
	}
	sessB, err := d.b.BrowserSessions.Create(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}

	profA, err := d.a.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: hostileTitle, Description: "made empty"})
	if err != nil {
		t.Fatal(err)
	}
	profB, err := d.b.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "theirs-profile"})
	if err != nil {
		t.Fatal(err)
	}

	const hostileReason = `<img src=x onerror=window.pwned=3>`
	scriptFile := handScript(agentA.WorkflowPermanentID, "default", hostileReason)
	scriptA, err := d.a.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: agentA.WorkflowPermanentID,
		Files: []client.ScriptFile{client.ScriptFileFromBytes(client.ScriptFileName, scriptFile)}})
	if err != nil {
		t.Fatal(err)
	}
	scriptB, err := d.b.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: agentB.WorkflowPermanentID,
		Files: []client.ScriptFile{client.ScriptFileFromBytes(client.ScriptFileName, handScript(agentB.WorkflowPermanentID, "default", "theirs"))}})
	if err != nil {
		t.Fatal(err)
	}

	// Schedules: A's two, with their agent linked, and a next fire time
	// at 09:00 in Berlin for the enabled one; none of B's.
	text := d.open(t, tab, "/ui/schedules")
	for _, want := range []string{mine.Schedule.WorkflowScheduleID, paused.Schedule.WorkflowScheduleID, "weekday mornings",
		"0 9 * * MON-FRI", "Europe/Berlin", "Scripted agent", "none while paused"} {
		if !strings.Contains(text, want) {
			t.Errorf("the schedules page lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, theirs.Schedule.WorkflowScheduleID) {
		t.Errorf("organization A's schedules page shows B's schedule %s", theirs.Schedule.WorkflowScheduleID)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	next := mine.NextRuns[0].Time.In(berlin)
	if !strings.Contains(text, next.Format("2006-01-02 15:04")) || next.Format("15:04") != "09:00" {
		t.Errorf("the schedules page does not show the next fire time %v in Berlin:\n%s", next, text)
	}
	links := uiRun(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#schedules a')].map(a => a.getAttribute('href'))`))
	if !strings.Contains(strings.Join(links, " "), "/ui/agents/"+agentA.WorkflowPermanentID) {
		t.Errorf("the schedules page's links %q do not lead to the agent %s", links, agentA.WorkflowPermanentID)
	}

	// Credentials: A's, its name as text, and never its secrets.
	text = d.open(t, tab, "/ui/credentials")
	if !strings.Contains(text, credA.CredentialID) || !strings.Contains(text, "password") || !strings.Contains(text, "ada@example.com") ||
		!strings.Contains(text, hostileTitle) || strings.Contains(text, credB.CredentialID) || strings.Contains(text, "theirs-credential") {
		t.Errorf("organization A's credentials page shows:\n%s\nwant %s named %q, and not B's %s", text, credA.CredentialID, hostileTitle, credB.CredentialID)
	}
	noMarkupRan(t, tab, "the credentials page")
	html := uiRun(t, tab, chromedp.OuterHTML("html"))
	for _, secret := range []string{password, totpSecret, "theirs-secret"} {
		if strings.Contains(html, secret) {
			t.Errorf("the credentials page holds the secret %q", secret)
		}
	}

	// Browser sessions: A's, open, with its timeout.
	text = d.open(t, tab, "/ui/browser-sessions")
	if !strings.Contains(text, sessA.BrowserSessionID) || !strings.Contains(text, "running") || !strings.Contains(text, "30 min") ||
		strings.Contains(text, sessB.BrowserSessionID) {
		t.Errorf("organization A's browser sessions page shows:\n%s\nwant %s, running, 30 min, and not B's %s", text, sessA.BrowserSessionID, sessB.BrowserSessionID)
	}

	// Browser profiles: A's, its name as text.
	text = d.open(t, tab, "/ui/browser-profiles")
	if !strings.Contains(text, profA.BrowserProfileID) || !strings.Contains(text, hostileTitle) || !strings.Contains(text, "made empty") ||
		strings.Contains(text, profB.BrowserProfileID) || strings.Contains(text, "theirs-profile") {
		t.Errorf("organization A's browser profiles page shows:\n%s\nwant %s named %q, and not B's %s", text, profA.BrowserProfileID, hostileTitle, profB.BrowserProfileID)
	}
	noMarkupRan(t, tab, "the browser profiles page")

	// Scripts: A's in the list, and its page with its file as text.
	text = d.open(t, tab, "/ui/scripts")
	if !strings.Contains(text, scriptA.ScriptID) || strings.Contains(text, scriptB.ScriptID) {
		t.Errorf("organization A's scripts page shows:\n%s\nwant %s and not B's %s", text, scriptA.ScriptID, scriptB.ScriptID)
	}
	uiRun(t, tab, chromedp.Click(`a[href="/ui/scripts/`+scriptA.ScriptID+`"]`))
	uiRun(t, tab, chromedp.WaitVisible("#script-file"))
	if file := uiRun(t, tab, chromedp.Text("#script-file")); strings.TrimSpace(file) != strings.TrimSpace(string(scriptFile)) {
		t.Errorf("the script's page shows the file\n%s\nwant\n%s", file, scriptFile)
	}
	if blocks := uiRun(t, tab, chromedp.Text("#script-blocks")); !strings.Contains(blocks, "search") || !strings.Contains(blocks, "the model") {
		t.Errorf("the script's blocks: %q", blocks)
	}
	if nav := current(t, tab); nav != "Scripts" {
		t.Errorf("a script's page marks %q as the current section", nav)
	}
	noMarkupRan(t, tab, "the script's page")

	// Another organization's script is not found, as in the API.
	text = d.open(t, tab, "/ui/scripts/"+scriptB.ScriptID)
	if !strings.Contains(text, "There is no such page in your organization") || strings.Contains(text, "theirs") {
		t.Errorf("B's script %s, seen by A, shows:\n%s", scriptB.ScriptID, text)
	}
}

// TestWebUIFleetPage: the fleet page shows the endpoints' count and state,
// the slots in use and the runs waiting, as GET /healthz reports them,
// and never an endpoint's DevTools address, name or error.
func TestWebUIFleetPage(t *testing.T) {
	exec := &fleetExecutor{st: browser.FleetStatus{
		Endpoints: []browser.EndpointStatus{
			// An endpoint given no name is named by its URL.
			{Name: "http://10.9.8.7:9333", URL: "http://10.9.8.7:9333", Capacity: 4, InUse: 3, Healthy: true, Placed: 12},
			{Name: "hosted-chromium", URL: "wss://browsers.example/devtools", Capacity: 2, Healthy: false,
				LastError: "dial tcp browsers.example:443: connect: connection refused ws://browsers.example/devtools", Failures: 2, Placed: 1},
			{Name: "ws://10.9.8.6:9444/chromium", URL: "ws://10.9.8.6:9444/chromium", Capacity: 6, InUse: 1, Healthy: true, Placed: 5},
		},
		Queued: 2, QueueWaits: 5, QueueTimeouts: 1,
	}}
	d := newUIDaemon(t, daemon.Config{Executor: exec, Workers: 1})
	tab := d.signedIn(t)

	text := d.open(t, tab, "/ui/fleet")
	for _, want := range []string{"3 browser endpoints: 2 up, 4 of their 12 browser slots in use, 2 runs waiting"} {
		if !strings.Contains(text, want) {
			t.Errorf("the fleet page lacks %q:\n%s", want, text)
		}
	}
	rows := uiRun(t, tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#fleet-endpoints tbody tr')].map(r => r.innerText.replace(/\s+/g, ' ').trim())`))
	want := []string{"Endpoint 1 up 3 of 4 12 0", "Endpoint 2 down 0 of 2 1 2", "Endpoint 3 up 1 of 6 5 0"}
	if strings.Join(rows, "|") != strings.Join(want, "|") {
		t.Errorf("the fleet's rows:\n%q\nwant\n%q", rows, want)
	}
	html := uiRun(t, tab, chromedp.OuterHTML("html"))
	for _, secret := range []string{"ws://", "wss://", "http://10.", "9333", "9444", "10.9.8", "browsers.example", "hosted-chromium", "connection refused"} {
		if strings.Contains(html, secret) {
			t.Errorf("the fleet page holds %q, a part of an endpoint's address, name or error", secret)
		}
	}

	// The page follows the fleet while it is open.
	exec.set(browser.FleetStatus{Endpoints: []browser.EndpointStatus{{Name: "a", URL: "http://10.9.8.7:9333", Capacity: 4, InUse: 4, Healthy: true}}, Queued: 7})
	uiUntil(t, tab, "the fleet page to show the new queue", `document.querySelector('#fleet-queued') && document.querySelector('#fleet-queued').textContent === '7'`)
}
