package engine_test

// The egress of the runs' browsers: with a policy, every navigation a run
// asks for is checked first, and the page's own requests go through the
// run's proxy; what the policy refuses fails with its reason and reaches
// nothing.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/chromiumtest"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/egress/egresstest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// countingServer serves on loopback and counts the requests it receives.
type countingServer struct {
	*httptest.Server
	n atomic.Int32
}

func newCountingServer(t *testing.T, body string) *countingServer {
	t.Helper()
	c := &countingServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *countingServer) hostPort() string { return strings.TrimPrefix(c.URL, "http://") }

func (c *countingServer) port() string {
	_, p, _ := net.SplitHostPort(c.hostPort())
	return p
}

// egressSite is the run's site: pages, a redirect to target, and a page
// that asks target for things the page's own way (fetch, an image, a
// websocket, a form post in an iframe).
func egressSite(t *testing.T, target string) *countingServer {
	t.Helper()
	c := &countingServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>egress site</title><h1>hello</h1>")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/admin", http.StatusFound)
	})
	mux.HandleFunc("/redirect-https", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https"+strings.TrimPrefix(target, "http")+"/admin", http.StatusFound)
	})
	mux.HandleFunc("/probe", func(w http.ResponseWriter, r *http.Request) {
		ws := "ws" + strings.TrimPrefix(target, "http")
		fmt.Fprintf(w, `<!doctype html><title>probe</title>
<img src="%[1]s/img.png">
<iframe src="%[1]s/frame"></iframe>
<script>
fetch(%[1]q + "/fetch").catch(() => {});
fetch(%[1]q + "/metrics", {mode: "no-cors"}).catch(() => {});
const x = new XMLHttpRequest(); x.open("GET", %[1]q + "/xhr"); x.send();
try { new WebSocket(%[2]q + "/ws"); } catch (e) {}
</script>`, target, ws)
	})
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// gotoRun runs an agent of one goto_url block to u, and of a wait after
// it, and returns the result and the run's step log.
func gotoRun(t *testing.T, e *engine.Engine, u string) (executor.Result, steps) {
	t.Helper()
	def := client.WorkflowDefinition{Blocks: client.Blocks{
		gotoBlock("go", u),
		&client.WaitBlock{BlockBase: base("pause"), WaitSec: 1},
	}}
	j := job(t, def, nil)
	res := e.Execute(t.Context(), j, &progress{})
	var st steps
	if b, err := os.ReadFile(filepath.Join(j.Dir, "steps.json")); err == nil {
		json.Unmarshal(b, &st)
	}
	return res, st
}

type steps struct {
	Refused []string `json:"refused"`
}

func (s steps) has(sub string) bool {
	for _, l := range s.Refused {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// TestEgressSharedPolicy: the daemon serves several organizations; the
// test site is allowed by the operator's pattern, a loopback server
// stands for the daemon's API (protected), another loopback server is
// merely private.
func TestEgressSharedPolicy(t *testing.T) {
	needBrowser(t)
	daemonAPI := newCountingServer(t, "<!doctype html><title>daemon</title><p>admin token</p>")
	private := newCountingServer(t, "<!doctype html><title>private</title>")
	site := egressSite(t, daemonAPI.URL)

	policy := egresstest.Shared(t, []string{site.hostPort()}, daemonAPI.hostPort(), "the daemon's API")
	e := newEngine(t, engine.Config{Egress: policy})

	res, _ := gotoRun(t, e, site.URL+"/")
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("the allowed site: %s %q", res.Status, res.FailureReason)
	}

	for _, c := range []struct{ name, url, want string }{
		{"file", "file:///etc/hostname", "refused to reach file:///etc/hostname: the file: scheme is not reachable by a run (only http, https)"},
		{"data", "data:text/html,<h1>x</h1>", "the data: scheme is not reachable by a run"},
		{"javascript", "javascript:alert(1)", "the javascript: scheme is not reachable by a run"},
		{"chrome", "chrome://version", "the chrome: scheme is not reachable by a run"},
		{"view-source", "view-source:" + site.URL + "/", "the view-source: scheme is not reachable by a run"},
		{"daemon", daemonAPI.URL + "/admin", "refused to reach " + daemonAPI.URL + "/admin (127.0.0.1:" + daemonAPI.port() + "): the daemon's API is never reachable by a run"},
		{"private", private.URL + "/", "refused to reach " + private.URL + "/ (127.0.0.1:" + private.port() + "): a loopback address is refused because the daemon serves several organizations"},
		{"mapped", "http://[::ffff:127.0.0.1]:" + daemonAPI.port() + "/admin", "the daemon's API is never reachable by a run"},
		{"localhost", "http://localhost:" + daemonAPI.port() + "/", "refused to reach http://localhost:" + daemonAPI.port() + "/ (it resolves to "},
		{"redirect", site.URL + "/redirect", "refused to reach " + daemonAPI.URL + "/admin (127.0.0.1:" + daemonAPI.port() + "): the daemon's API is never reachable by a run"},
		{"redirect-https", site.URL + "/redirect-https", "refused to reach " + site.URL + "/redirect-https, which led to 127.0.0.1:" + daemonAPI.port() + " (127.0.0.1:" + daemonAPI.port() + "): the daemon's API is never reachable by a run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, st := gotoRun(t, e, c.url)
			if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, c.want) {
				t.Fatalf("%s: %s %q, want a failure with %q", c.url, res.Status, res.FailureReason, c.want)
			}
			if !st.has("refused to reach") {
				t.Errorf("the step log has no refusal: %q", st.Refused)
			}
		})
	}
	if n := private.n.Load(); n != 0 {
		t.Errorf("the private server received %d requests", n)
	}

	// The page's own requests: nothing reaches the daemon, the run goes on,
	// and its step log names the refusal (once).
	res, st := gotoRun(t, e, site.URL+"/probe")
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("the probe page: %s %q", res.Status, res.FailureReason)
	}
	if !st.has("refused to reach 127.0.0.1:"+daemonAPI.port()) || !st.has("the daemon's API is never reachable by a run") {
		t.Errorf("the step log's refusals: %q", st.Refused)
	}
	t.Logf("refused: %q", st.Refused)
	if len(st.Refused) > 3 {
		t.Errorf("the same refusal is listed several times: %q", st.Refused)
	}
	if n := daemonAPI.n.Load(); n != 0 {
		t.Errorf("the daemon's API received %d requests", n)
	}

	// A kept browser session: its start URL is checked, its proxy serves
	// its runs and closes with it.
	ctx := t.Context()
	err := e.OpenBrowserSession(ctx, "o_1", "pbs_refused", executor.BrowserSessionOptions{URL: daemonAPI.URL + "/"})
	if err == nil || !strings.Contains(err.Error(), "the daemon's API is never reachable by a run") {
		t.Fatalf("a browser session starting at the daemon's API: %v", err)
	}
	if err := e.OpenBrowserSession(ctx, "o_1", "pbs_1", executor.BrowserSessionOptions{URL: site.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	if n := runProxies(policy); n != 1 {
		t.Errorf("%d run proxies while the browser session is open: %q", n, policy.Protected())
	}
	for range 2 {
		j := job(t, client.WorkflowDefinition{Blocks: client.Blocks{
			gotoBlock("go", site.URL+"/probe"),
			&client.WaitBlock{BlockBase: base("pause"), WaitSec: 1},
		}}, nil)
		j.BrowserSessionID = "pbs_1"
		if res := e.Execute(ctx, j, &progress{}); res.Status != client.RunStatusCompleted {
			t.Fatalf("a run in the browser session: %s %q", res.Status, res.FailureReason)
		}
		var st steps
		b, _ := os.ReadFile(filepath.Join(j.Dir, "steps.json"))
		json.Unmarshal(b, &st)
		if !st.has("the daemon's API is never reachable by a run") {
			t.Errorf("the step log of a run in the browser session: %q", st.Refused)
		}
	}
	if n := runProxies(policy); n != 1 {
		t.Errorf("%d run proxies after runs in the browser session: %q", n, policy.Protected())
	}
	if _, err := e.CloseBrowserSession(ctx, "o_1", "pbs_1", false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute) // catches a hang only
	for runProxies(policy) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("run proxies left open: %q", policy.Protected())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := daemonAPI.n.Load(); n != 0 {
		t.Errorf("the daemon's API received %d requests", n)
	}
}

// runProxies counts the run proxies open (each protects its address).
func runProxies(p *egress.Policy) int {
	n := 0
	for _, s := range p.Protected() {
		if strings.Contains(s, "a run's egress proxy") {
			n++
		}
	}
	return n
}

// TestEgressSingleOrganization: one organization: loopback servers are
// reached as without a policy, the schemes stay refused.
func TestEgressSingleOrganization(t *testing.T) {
	needBrowser(t)
	private := newCountingServer(t, "<!doctype html><title>private</title>")
	site := egressSite(t, private.URL)
	e := newEngine(t, engine.Config{Egress: egress.New(egress.Config{Shared: func() bool { return false }})})

	for _, u := range []string{site.URL + "/", private.URL + "/", site.URL + "/redirect"} {
		if res, st := gotoRun(t, e, u); res.Status != client.RunStatusCompleted || len(st.Refused) != 0 {
			t.Errorf("%s: %s %q, refused %q", u, res.Status, res.FailureReason, st.Refused)
		}
	}
	before := private.n.Load()
	if res, _ := gotoRun(t, e, site.URL+"/probe"); res.Status != client.RunStatusCompleted {
		t.Fatalf("the probe page: %s %q", res.Status, res.FailureReason)
	}
	if private.n.Load() == before {
		t.Error("the page's own requests did not reach the private server")
	}
	if res, _ := gotoRun(t, e, "file:///etc/hostname"); res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "the file: scheme is not reachable") {
		t.Errorf("file: %s %q", res.Status, res.FailureReason)
	}

	// Without a policy: the schemes are refused all the same.
	plain := newEngine(t, engine.Config{})
	if res, _ := gotoRun(t, plain, "file:///etc/hostname"); res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "the file: scheme is not reachable") {
		t.Errorf("file: without a policy: %s %q", res.Status, res.FailureReason)
	}
	if res, _ := gotoRun(t, plain, private.URL+"/"); res.Status != client.RunStatusCompleted {
		t.Errorf("without a policy: %s %q", res.Status, res.FailureReason)
	}
}

// TestEgressFleetDevTools: the DevTools endpoint of a fleet browser is
// refused to its runs even when the daemon serves one organization, and a
// run_action cannot name it as its own browser_address.
func TestEgressFleetDevTools(t *testing.T) {
	b := chromiumtest.Start(t)
	site := egressSite(t, b.URL())
	policy := egress.New(egress.Config{})
	e := newEngine(t, engine.Config{Egress: policy, BrowserEndpoints: []browser.Endpoint{{URL: b.URL(), Name: "b1", Capacity: 2}}})

	res, _ := gotoRun(t, e, b.URL()+"/json/list")
	want := `the DevTools of browser endpoint "b1" is never reachable by a run`
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, want) {
		t.Fatalf("goto_url %s: %s %q", b.URL()+"/json/list", res.Status, res.FailureReason)
	}
	res, st := gotoRun(t, e, site.URL+"/probe")
	if res.Status != client.RunStatusCompleted || !st.has(want) {
		t.Errorf("the probe page on the fleet: %s %q, refused %q", res.Status, res.FailureReason, st.Refused)
	}
	// The page ran on the fleet browser, through the proxy: the site is reached.
	if site.n.Load() == 0 {
		t.Error("the site was not reached")
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	j := &executor.Job{RunID: "wr_action", OrgID: "o_1", RunType: client.RunTypeWorkflowRun, Dir: t.TempDir()}
	_, err := e.RunAction(ctx, j, &client.RunActionRequest{URL: site.URL + "/", BrowserAddress: b.URL(),
		Action: client.Action{Type: client.ActionClick, Selector: "h1"}}, &progress{}, func(executor.Result) {})
	var ae *executor.ActionError
	if !errors.As(err, &ae) || ae.Kind != executor.ActionInvalid || !strings.Contains(ae.Msg, want) {
		t.Fatalf("run_action with the fleet's browser as its browser_address: %v", err)
	}
}

// TestEgressModelAndTask: the task's starting url and the model's own
// goto_url are checked as the blocks' are; the model hears the refusal.
func TestEgressModelAndTask(t *testing.T) {
	needBrowser(t)
	daemonAPI := newCountingServer(t, "<!doctype html><title>daemon</title>")
	site := egressSite(t, daemonAPI.URL)
	policy := egresstest.Shared(t, []string{site.hostPort()}, daemonAPI.hostPort(), "the daemon's API")
	want := "the daemon's API is never reachable by a run"
	srv := llmtest.New(t,
		llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.JSON(map[string]any{
			"thought": "Open the admin page.", "actions": []any{map[string]string{"type": "goto_url", "text": daemonAPI.URL + "/admin"}}})},
		decide(regexp.QuoteMeta(want), "terminate", "The admin page is refused.", nil),
	)
	e := modelEngine(t, srv, engine.Config{Egress: policy})
	j := taskJob(t, &client.TaskRunRequest{Prompt: "Open the admin page.", URL: site.URL + "/"})
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusTerminated {
		calls := srv.Calls()
		t.Fatalf("status %s: %s\nlast prompt:\n%s", res.Status, res.FailureReason, calls[len(calls)-1].LastUserText())
	}
	steps := readSteps(t, j.Dir).Steps
	if len(steps) == 0 || len(steps[0].Actions) == 0 || steps[0].Actions[0].OK || !strings.Contains(steps[0].Actions[0].Result, want) {
		t.Errorf("the model's goto_url: %+v", steps)
	}

	j = taskJob(t, &client.TaskRunRequest{Prompt: "Read the metrics.", URL: daemonAPI.URL + "/metrics"})
	res = e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, want) {
		t.Errorf("a task starting at the daemon's API: %s %q", res.Status, res.FailureReason)
	}
	if n := daemonAPI.n.Load(); n != 0 {
		t.Errorf("the daemon's API received %d requests", n)
	}
}

// TestEgressProtectsBrowserAddresses: the fleet's DevTools addresses are
// protected as the engine is made; one whose host does not resolve yet
// does not stop the engine.
func TestEgressProtectsBrowserAddresses(t *testing.T) {
	policy := egress.New(egress.Config{})
	newEngine(t, engine.Config{Egress: policy, BrowserEndpoints: []browser.Endpoint{
		{URL: "http://127.0.0.1:1234", Name: "a"},
		{URL: "ws://127.0.0.1/devtools/browser/x"},
		{URL: "http://browser.invalid:9222", Name: "later"},
	}})
	got := strings.Join(policy.Protected(), "\n")
	for _, want := range []string{`this machine:1234 (the DevTools of browser endpoint "a")`, `this machine:80 (the DevTools of browser endpoint "ws://127.0.0.1/devtools/browser/x")`} {
		if !strings.Contains(got, want) {
			t.Errorf("protected:\n%s\nlacks %s", got, want)
		}
	}
	err := policy.For("o_1").CheckURL(t.Context(), "http://localhost:1234/json/list")
	if err == nil || !strings.Contains(err.Error(), `the DevTools of browser endpoint "a" is never reachable by a run`) {
		t.Errorf("the endpoint through localhost: %v", err)
	}
}

// TestEgressRemoteBrowser: a fleet browser that is not on this machine's
// loopback runs without the proxy when the proxies listen on 127.0.0.1
// (it could not reach them), with one warning; with EgressProxyHost set,
// it runs through the proxy. The browser is a local Chromium reached
// through a non-loopback address of this machine.
func TestEgressRemoteBrowser(t *testing.T) {
	b := chromiumtest.Start(t)
	ip := nonLoopbackIPv4(t)
	far := forward(t, ip, b.Port())
	private := newCountingServer(t, "<!doctype html><title>private</title>")
	site := egressSite(t, private.URL)
	shared := func() *egress.Policy { return egresstest.Shared(t, []string{site.hostPort(), far}) }
	endpoints := []browser.Endpoint{{URL: "http://" + far, Name: "far"}}

	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newEngine(t, engine.Config{Egress: shared(), BrowserEndpoints: endpoints, Logger: logger})
	for range 2 {
		if res, st := gotoRun(t, e, site.URL+"/probe"); res.Status != client.RunStatusCompleted || len(st.Refused) != 0 {
			t.Fatalf("without the proxy: %s %q, refused %q", res.Status, res.FailureReason, st.Refused)
		}
	}
	if n := strings.Count(string(logs.Bytes()), "runs without the egress proxy"); n != 1 || !strings.Contains(string(logs.Bytes()), "browser=far") {
		t.Errorf("%d warnings:\n%s", n, string(logs.Bytes()))
	}
	// Without the proxy, the page reached the private server: what the
	// warning is about.
	if private.n.Load() == 0 {
		t.Error("the page's requests did not go out without the proxy")
	}

	private.n.Store(0)
	e = newEngine(t, engine.Config{Egress: shared(), BrowserEndpoints: endpoints, EgressProxyHost: "127.0.0.1"})
	res, st := gotoRun(t, e, site.URL+"/probe")
	if res.Status != client.RunStatusCompleted || !st.has("a loopback address is refused") {
		t.Errorf("with the proxy host: %s %q, refused %q", res.Status, res.FailureReason, st.Refused)
	}
	if n := private.n.Load(); n != 0 {
		t.Errorf("the private server received %d requests through the proxy", n)
	}
}

// nonLoopbackIPv4 is an IPv4 address of this machine that is not loopback;
// the test skips without one.
func nonLoopbackIPv4(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
				return n.IP.String()
			}
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address")
	return ""
}

// forward relays connections from ip (a port of its own) to port on
// 127.0.0.1 until the test ends, and returns ip:port.
func forward(t *testing.T, ip string, port int) string {
	ln, err := net.Listen("tcp4", ip+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", ip, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	return ln.Addr().String()
}
