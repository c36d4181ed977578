package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
)

// fleetExecutor is an executor that places runs on a fleet of browser
// endpoints, as the engine given endpoints does; its status is the
// test's.
type fleetExecutor struct {
	mu sync.Mutex
	st browser.FleetStatus
}

func (*fleetExecutor) Execute(context.Context, *executor.Job, executor.Progress) executor.Result {
	return executor.Result{Status: client.RunStatusFailed, FailureReason: "not in this test"}
}

func (f *fleetExecutor) FleetStatus() (browser.FleetStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st, true
}

func (f *fleetExecutor) set(st browser.FleetStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st = st
}

// get sends GET path to the daemon at addr without an API key and returns
// the status and the body.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestMetricsAndHealthzOfAFleet: with an executor that has a fleet, GET
// /metrics (no key) gives its endpoints and queue, and GET /healthz shows
// them under "browsers", both as they are at the request.
func TestMetricsAndHealthzOfAFleet(t *testing.T) {
	exec := &fleetExecutor{st: browser.FleetStatus{
		Endpoints: []browser.EndpointStatus{
			{Name: "eu-1", URL: "http://127.0.0.1:9222", Capacity: 4, InUse: 3, Healthy: true, Placed: 12},
			{Name: "eu-2", URL: "wss://browsers.example/devtools", Capacity: 2, Healthy: false, LastError: "connection refused", Failures: 2, Placed: 1},
		},
		Queued: 1, QueueWaits: 5, QueueTimeouts: 1,
	}}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{Executor: exec})

	code, body := get(t, addr, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	for _, line := range []string{
		`abctl_browser_endpoint_capacity{endpoint="eu-1"} 4`,
		`abctl_browser_endpoint_runs_in_progress{endpoint="eu-1"} 3`,
		`abctl_browser_endpoint_up{endpoint="eu-1"} 1`,
		`abctl_browser_endpoint_up{endpoint="eu-2"} 0`,
		`abctl_browser_endpoint_failures_total{endpoint="eu-2"} 2`,
		`abctl_browser_endpoint_placed_total{endpoint="eu-1"} 12`,
		`abctl_browser_queue_length 1`,
		`abctl_browser_queue_waits_total 5`,
		`abctl_browser_queue_timeouts_total 1`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("GET /metrics lacks %q:\n%s", line, body)
		}
	}

	code, body = get(t, addr, "/healthz")
	want := `{"browsers":{"endpoints":[` +
		`{"name":"eu-1","url":"http://127.0.0.1:9222","capacity":4,"in_use":3,"healthy":true,"failures":0,"placed":12},` +
		`{"name":"eu-2","url":"wss://browsers.example/devtools","capacity":2,"in_use":0,"healthy":false,"last_error":"connection refused","failures":2,"placed":1}],` +
		`"queued":1,"queue_waits":5,"queue_timeouts":1},"status":"ok"}`
	if code != http.StatusOK || strings.TrimSpace(body) != want {
		t.Errorf("GET /healthz: %d\n%s\nwant\n%s", code, body, want)
	}

	// Both read the fleet at each request.
	exec.set(browser.FleetStatus{Endpoints: []browser.EndpointStatus{{Name: "eu-1", URL: "http://127.0.0.1:9222", Capacity: 4, Healthy: true, Placed: 13}}})
	if _, body := get(t, addr, "/metrics"); !strings.Contains(body, `abctl_browser_endpoint_placed_total{endpoint="eu-1"} 13`+"\n") ||
		strings.Contains(body, "eu-2") || !strings.Contains(body, "abctl_browser_queue_length 0\n") {
		t.Errorf("GET /metrics after a change:\n%s", body)
	}
	var h struct {
		Browsers struct {
			Endpoints []map[string]any `json:"endpoints"`
		} `json:"browsers"`
	}
	if _, body := get(t, addr, "/healthz"); json.Unmarshal([]byte(body), &h) != nil || len(h.Browsers.Endpoints) != 1 || h.Browsers.Endpoints[0]["placed"] != 13.0 {
		t.Errorf("GET /healthz after a change: %s", body)
	}

	// The SDK reads it, without an API key.
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey("abk_not_a_key"))
	if err != nil {
		t.Fatal(err)
	}
	health, err := c.Health(t.Context())
	if err != nil || health.Status != "ok" || health.Browsers == nil || len(health.Browsers.Endpoints) != 1 ||
		health.Browsers.Endpoints[0] != (client.BrowserEndpointStatus{Name: "eu-1", URL: "http://127.0.0.1:9222", Capacity: 4, Healthy: true, Placed: 13}) {
		t.Errorf("Client.Health: %+v %v", health, err)
	}
}

// TestMetricsAndHealthzWithoutAFleet: a daemon without a fleet answers GET
// /metrics with the queue at 0 and no endpoint, and GET /healthz as
// before.
func TestMetricsAndHealthzWithoutAFleet(t *testing.T) {
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{})
	code, body := get(t, addr, "/metrics")
	if code != http.StatusOK || !strings.Contains(body, "abctl_browser_queue_length 0\n") ||
		!strings.Contains(body, "abctl_browser_queue_waits_total 0\n") || !strings.Contains(body, "abctl_browser_queue_timeouts_total 0\n") ||
		strings.Contains(body, "abctl_browser_endpoint_") {
		t.Errorf("GET /metrics: %d\n%s", code, body)
	}
	code, body = get(t, addr, "/healthz")
	if code != http.StatusOK || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
	// Only GET: the route is no open door for other methods.
	resp, err := http.Post("http://"+addr+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("POST /metrics: %d", resp.StatusCode)
	}
}

// startEndpointChromium starts a Chromium for the fleet, on a free port,
// and returns its http://127.0.0.1:PORT. The test skips when there is no
// Chromium.
func startEndpointChromium(t *testing.T) string {
	t.Helper()
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s to be a browser endpoint: %v", chromium, err)
	}
	profile := t.TempDir()
	cmd := exec.Command(chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-port=0", "--user-data-dir="+profile, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // to kill its helpers too
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	// Chromium writes its port in the profile once it listens.
	deadline := time.Now().Add(30 * time.Second)
	for range 3000 {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if port, _, ok := strings.Cut(string(b), "\n"); err == nil && ok && port != "" {
			return "http://127.0.0.1:" + port
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("Chromium did not write DevToolsActivePort within 30s")
	return ""
}

// TestMetricsAndHealthzOfARealFleet: `abctl daemon` given a browser
// endpoint places runs on it, and /healthz and /metrics say so.
func TestMetricsAndHealthzOfARealFleet(t *testing.T) {
	endpoint := startEndpointChromium(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<title>fleet</title><p>placed</p>")
	}))
	defer site.Close()
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: "abk_fleet", Workers: 1, Engine: &daemon.EngineConfig{
		NoRecording:      true,
		BrowserEndpoints: []daemon.BrowserEndpoint{{URL: endpoint, Name: "local", Capacity: 2, Headers: map[string]string{"X-Abctl-Test": "1"}}},
	}})

	// Before any run the endpoint shows, with nothing on it.
	var h struct {
		Browsers struct {
			Endpoints []struct {
				Name     string `json:"name"`
				URL      string `json:"url"`
				Capacity int    `json:"capacity"`
				InUse    int    `json:"in_use"`
				Healthy  bool   `json:"healthy"`
				Placed   int    `json:"placed"`
			} `json:"endpoints"`
		} `json:"browsers"`
	}
	_, body := get(t, addr, "/healthz")
	if err := json.Unmarshal([]byte(body), &h); err != nil || len(h.Browsers.Endpoints) != 1 {
		t.Fatalf("GET /healthz: %s (%v)", body, err)
	}
	if ep := h.Browsers.Endpoints[0]; ep.Name != "local" || ep.URL != endpoint || ep.Capacity != 2 || ep.InUse != 0 || ep.Placed != 0 {
		t.Errorf("before a run: %+v", ep)
	}

	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey("abk_fleet"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := c.Agents.Create(t.Context(), &client.AgentDefinition{
		Title: "fleet",
		WorkflowDefinition: client.WorkflowDefinition{
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: site.URL}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.Runs.StartAgent(t.Context(), &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done, err := c.Runs.Wait(ctx, run.RunID, &client.WaitOptions{Interval: 20 * time.Millisecond, MaxInterval: 200 * time.Millisecond})
	if err != nil || done.Status != client.RunStatusCompleted {
		t.Fatalf("the run: %v, %+v", err, done)
	}

	_, body = get(t, addr, "/metrics")
	for _, line := range []string{
		`abctl_browser_endpoint_capacity{endpoint="local"} 2`,
		`abctl_browser_endpoint_up{endpoint="local"} 1`,
		`abctl_browser_endpoint_placed_total{endpoint="local"} 1`,
		`abctl_browser_endpoint_failures_total{endpoint="local"} 0`,
		`abctl_browser_queue_length 0`,
	} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("GET /metrics lacks %q:\n%s", line, body)
		}
	}
}
