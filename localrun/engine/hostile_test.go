package engine_test

// The hostile organization: a real daemon serving two organizations on a
// fleet of two Chromium endpoints, with the egress policy of a shared
// daemon. Organization A keeps a tab open whose URL holds a token;
// organization B aims every channel a run has (the browser's navigations,
// the page's own requests, http_request, file URLs, webhooks, run_action,
// browser sessions, a run's own browser address) at A's files, the
// daemon's files and port, the fleet's DevTools, a metadata address and a
// loopback server, directly and through a redirect from a site it may
// reach. Each is refused with a reason that names the rule, no refused
// server is ever contacted, and afterwards nothing of A's appears in any
// byte B can read.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/internal/chromiumtest"
	"github.com/abctl/abctl/internal/egress/egresstest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
)

// canary is a loopback server no run may reach: it counts the
// connections it accepts, whatever protocol they speak.
type canary struct {
	ln    net.Listener
	conns atomic.Int64
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nConnection: close\r\n\r\ncanary-reply")
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *canary) URL() string { return "http://" + c.ln.Addr().String() }

func randomHex(t *testing.T) string {
	t.Helper()
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

func TestHostileOrganization(t *testing.T) {
	needBrowser(t)
	ctx := t.Context()
	members := []*chromiumtest.Member{chromiumtest.StartMember(t), chromiumtest.StartMember(t)}
	var endpoints []browser.Endpoint
	for i, m := range members {
		endpoints = append(endpoints, browser.Endpoint{URL: m.URL(), Name: string(rune('a' + i)), Capacity: 4})
	}
	hold := newHoldSite(t)
	outside := newCanary(t)   // a loopback service nobody allowed
	protected := newCanary(t) // stands for a protected port that can count
	// The site B may reach: pages, a redirector, and a page that loads a
	// target on its own (an image, fetch, a websocket, a frame).
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/loads":
			target := r.URL.Query().Get("target")
			ws := "ws" + strings.TrimPrefix(target, "http")
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><title>loads</title><p>page</p>
<img src=%q><iframe src=%q></iframe>
<script>fetch(%q).catch(()=>{}); try { new WebSocket(%q) } catch (e) {}</script>`, target+"/img", target+"/frame", target+"/fetch", ws+"/ws")
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<!doctype html><title>site</title><p>an allowed site</p>")
		}
	}))
	defer site.Close()
	policy := egresstest.Shared(t, []string{hostOf(site.URL), hostOf(hold.URL)}, hostOf(protected.URL()), "a protected test server")
	e := newEngine(t, engine.Config{BrowserEndpoints: endpoints, Egress: policy})
	dataDir := t.TempDir()
	keyA := "abk_hostile_a_" + randomHex(t)
	addr, _ := daemontest.Start(t, dataDir, daemon.Config{APIKey: keyA, Executor: e, Workers: 6, EgressPolicy: policy})
	newClient := func(key string) *client.Client {
		c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a := newClient(keyA)
	ac := admin.NewClient(admin.SocketPath(dataDir))
	orgB, err := ac.CreateOrganization(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	b := newClient(orgB.APIKey)

	// A's run holds a tab open on a page whose URL carries a token: the
	// page loads at once, and the run then waits on the hold site, as long
	// as the attacks take (a page load held instead would end at the
	// navigation's timeout on a busy machine).
	tokenA := "reset-" + randomHex(t)
	agentA, err := a.Agents.Create(ctx, &client.AgentDefinition{Title: "A's form", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{
			gotoBlock("open", site.URL+"/account?reset_token="+tokenA),
			&client.HTTPRequestBlock{BlockBase: base("hold"), URL: hold.URL + "/hold?run=a", Timeout: 600},
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	runA, err := a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agentA.WorkflowPermanentID})
	if err != nil {
		t.Fatal(err)
	}
	hold.waitArrivals(t, 1)

	daemonURL := "http://" + addr
	redirect := func(to string) string { return site.URL + "/redirect?to=" + url.QueryEscape(to) }
	type target struct {
		url, rule string
		browser   bool // the browser channel: Chromium refuses some on its own
	}
	targets := []target{
		{"file://" + filepath.Join(dataDir, datadir.StoreFileName), "file: scheme", true},
		{"file://" + filepath.Join(dataDir, datadir.StateFileName), "file: scheme", true},
		{"file://" + filepath.Join(dataDir, datadir.SecretFileName), "file: scheme", true},
		{daemonURL + "/metrics", "the daemon's API", true},
		{daemonURL + "/v1/runs", "the daemon's API", true},
		{strings.Replace(daemonURL, "127.0.0.1", "[::ffff:127.0.0.1]", 1) + "/metrics", "the daemon's API", true},
		{members[0].URL() + "/json/list", "DevTools", true},
		{members[1].URL() + "/json/new?about:blank", "DevTools", true},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata", true},
		{outside.URL() + "/", "loopback address is refused", true},
		{protected.URL() + "/", "a protected test server", true},
		{redirect(daemonURL + "/metrics"), "the daemon's API", true},
		{redirect(members[0].URL() + "/json/list"), "DevTools", true},
		{redirect("http://169.254.169.254/latest/meta-data/"), "cloud metadata", true},
		{redirect(outside.URL() + "/"), "loopback address is refused", true},
		{redirect("file://" + filepath.Join(dataDir, datadir.SecretFileName)), "file: scheme", false},
	}
	type attempt struct {
		channel string
		target  target
		runID   string
	}
	var attempts []attempt
	start := func(channel string, tg target, blocks client.Blocks) {
		t.Helper()
		ag, err := b.Agents.Create(ctx, &client.AgentDefinition{Title: channel + " " + tg.url, WorkflowDefinition: client.WorkflowDefinition{Blocks: blocks}}, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", channel, tg.url, err)
		}
		r, err := b.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: ag.WorkflowPermanentID})
		if err != nil {
			t.Fatalf("%s %s: %v", channel, tg.url, err)
		}
		attempts = append(attempts, attempt{channel, tg, r.RunID})
	}
	for _, tg := range targets {
		if tg.browser {
			start("goto_url", tg, client.Blocks{gotoBlock("go", tg.url)})
		}
		start("http_request", tg, client.Blocks{&client.HTTPRequestBlock{BlockBase: base("call"), URL: tg.url}})
		start("file_url_parser", tg, client.Blocks{&client.FileURLParserBlock{BlockBase: base("parse"), FileURL: tg.url, FileType: "csv"}})
	}
	// The page's own requests: it loads, and what it asks for on its own
	// is refused.
	var pageRuns []string
	for _, tg := range []string{outside.URL(), protected.URL(), daemonURL, members[0].URL()} {
		ag, err := b.Agents.Create(ctx, &client.AgentDefinition{Title: "loads " + tg, WorkflowDefinition: client.WorkflowDefinition{
			Blocks: client.Blocks{gotoBlock("go", site.URL+"/loads?target="+url.QueryEscape(tg)), &client.WaitBlock{BlockBase: base("wait"), WaitSec: 1}},
		}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: ag.WorkflowPermanentID})
		if err != nil {
			t.Fatal(err)
		}
		pageRuns = append(pageRuns, r.RunID)
	}
	// What a refused page shows, printed as Chromium renders it.
	printed, err := b.Agents.Create(ctx, &client.AgentDefinition{Title: "print", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "go1", ContinueOnFailure: true}, URL: members[0].URL() + "/json/list"},
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "go2", ContinueOnFailure: true}, URL: redirect(daemonURL + "/metrics")},
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "go3", ContinueOnFailure: true}, URL: "file://" + filepath.Join(dataDir, datadir.StateFileName)},
			&client.PrintPageBlock{BlockBase: base("print")},
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	printRun, err := b.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: printed.WorkflowPermanentID})
	if err != nil {
		t.Fatal(err)
	}
	pageRuns = append(pageRuns, printRun.RunID)

	// A task run on a browser of the fleet, named as its own.
	// A webhook aimed at a loopback service: the run fails saying why.
	hooked, err := b.Agents.Create(ctx, &client.AgentDefinition{Title: "hooked", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{gotoBlock("go", site.URL)},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, hook := range []string{outside.URL() + "/hook", daemonURL + "/v1/runs", "http://169.254.169.254/hook"} {
		r, err := b.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: hooked.WorkflowPermanentID, WebhookURL: hook})
		if err != nil {
			t.Fatal(err)
		}
		attempts = append(attempts, attempt{"webhook", target{hook, "refused to reach", true}, r.RunID})
	}

	// run_action on a browser of the fleet named as the run's own.
	for _, m := range members {
		_, err := b.Actions.Run(ctx, &client.RunActionRequest{URL: site.URL, BrowserAddress: m.URL(), Action: client.Action{Type: client.ActionClick, Selector: "body"}})
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "refused to reach") || !strings.Contains(err.Error(), "DevTools") {
			t.Errorf("run_action with browser_address %s: %v, want a refusal", m.URL(), err)
		}
	}

	// run_action and browser sessions start on pages too.
	for _, u := range []string{"file://" + filepath.Join(dataDir, datadir.StateFileName), members[0].URL() + "/json/list", daemonURL + "/metrics"} {
		_, err := b.Actions.Run(ctx, &client.RunActionRequest{URL: u, Action: client.Action{Type: client.ActionClick, Selector: "body"}})
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "refused to reach") {
			t.Errorf("run_action on %s: %v, want a refusal", u, err)
		}
		s, err := b.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{URL: u})
		if err == nil {
			b.BrowserSessions.Close(ctx, s.BrowserSessionID)
		}
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "refused to reach") {
			t.Errorf("browser session on %s: %v, want a refusal", u, err)
		}
	}

	for _, at := range attempts {
		r, err := waitRun(ctx, b, at.runID)
		if err != nil {
			t.Fatalf("%s %s: %v", at.channel, at.target.url, err)
		}
		if at.channel == "webhook" {
			// A run ends, then its webhook is sent; a webhook that cannot
			// be sent fails the run after that.
			r = waitWebhookFailure(t, b, at.runID)
		}
		reason := r.GetFailureReason()
		if r.Status != client.RunStatusFailed {
			t.Errorf("%s %s: %s, want failed (%s)", at.channel, at.target.url, r.Status, reason)
			continue
		}
		if at.target.browser || at.channel != "goto_url" {
			if !strings.Contains(reason, "refused to reach") || !strings.Contains(reason, at.target.rule) {
				t.Errorf("%s %s: the reason %q does not name the refusal (%s)", at.channel, at.target.url, reason, at.target.rule)
			}
		}
	}
	for _, id := range pageRuns {
		r, err := waitRun(ctx, b, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != client.RunStatusCompleted {
			t.Errorf("run %s: %s (%s), want completed: what a page loads on its own does not fail the run", id, r.Status, r.GetFailureReason())
		}
	}
	if n := outside.conns.Load() + protected.conns.Load(); n != 0 {
		t.Errorf("the refused servers were contacted %d times", n)
	}

	// Nothing of A's in any byte B can read.
	hold.release()
	if r, err := waitRun(ctx, a, runA.RunID); err != nil || r.Status != client.RunStatusCompleted {
		t.Fatalf("A's run: %v %v", r, err)
	}
	secretFile, err := os.ReadFile(filepath.Join(dataDir, datadir.SecretFileName))
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{
		"A's API key":         keyA,
		"A's tab token":       tokenA,
		"A's run id":          runA.RunID,
		"the daemon's secret": strings.TrimSpace(string(secretFile)),
		"A's hold page":       "/hold?run=a",
		"the canary's reply":  "canary-reply",
	}
	var seen bytes.Buffer
	var ids []string
	for _, at := range attempts {
		ids = append(ids, at.runID)
	}
	ids = append(ids, pageRuns...)
	httpc := &http.Client{Timeout: 30 * time.Second}
	for _, id := range ids {
		r, err := b.Runs.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(r)
		seen.Write(j)
		if tl, err := b.Runs.Timeline(ctx, id); err == nil {
			j, _ := json.Marshal(tl)
			seen.Write(j)
		}
		if steps, err := b.Runs.Steps(ctx, id); err == nil {
			j, _ := json.Marshal(steps)
			seen.Write(j)
		}
		arts, err := b.Runs.ListArtifacts(ctx, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, art := range arts {
			if art.SignedURL == nil {
				continue
			}
			resp, err := httpc.Get(*art.SignedURL)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			seen.Write(body)
			if bytes.HasPrefix(body, []byte("%PDF")) {
				seen.WriteString(pdfText(t, body))
			}
		}
	}
	list, err := b.Runs.List(ctx, &client.ListRunsOptions{PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(list)
	seen.Write(j)
	if seen.Len() < 1000 {
		t.Fatalf("read only %d bytes of B's: the scan would prove nothing", seen.Len())
	}
	for what, s := range secrets {
		if s != "" && bytes.Contains(seen.Bytes(), []byte(s)) {
			t.Errorf("%s appears in what B can read", what)
		}
	}
}

// waitWebhookFailure waits until the run records that its webhook could
// not be sent, and returns the run; its deadline (3 minutes) only catches a
// hang.
func waitWebhookFailure(t *testing.T, c *client.Client, id string) *client.Run {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r, err := c.Runs.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.GetWebhookFailureReason() != "" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pdfText is the text of a PDF as pdftotext reads it; "" without
// pdftotext (the test's byte scan still covers the file).
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdftotext"); err != nil {
		return ""
	}
	f := filepath.Join(t.TempDir(), "p.pdf")
	if err := os.WriteFile(f, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(context.Background(), "pdftotext", f, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}
