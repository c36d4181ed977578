package daemoncmd_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
)

// fleetExecutor is an executor with a fleet of browser endpoints, as the
// engine given --browser-endpoint has; its status is fixed.
type fleetExecutor struct{ st browser.FleetStatus }

func (fleetExecutor) Execute(context.Context, *executor.Job, executor.Progress) executor.Result {
	return executor.Result{Status: client.RunStatusFailed, FailureReason: "not in this test"}
}

func (f fleetExecutor) FleetStatus() (browser.FleetStatus, bool) { return f.st, true }

// testFleet is a fleet of two endpoints, one of them down.
var testFleet = browser.FleetStatus{
	Endpoints: []browser.EndpointStatus{
		{Name: "eu-1", URL: "http://127.0.0.1:9222", Capacity: 4, InUse: 3, Healthy: true, Placed: 12},
		{Name: "hosted", URL: "wss://cdp.example/devtools", Capacity: 10, Healthy: false,
			LastError: "GET /json/version: connection refused", Failures: 2, Placed: 1},
	},
	Queued: 1, QueueWaits: 5, QueueTimeouts: 1,
}

func TestDaemonStatusFleet(t *testing.T) {
	dir := t.TempDir()
	addr, _ := daemontest.Start(t, dir, daemon.Config{Executor: fleetExecutor{testFleet}})

	code, stdout, stderr := run(t, "daemon", "status", "--data-dir", dir)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "Daemon at http://" + addr + ": ok\n" +
		"\n" +
		"ENDPOINT  URL                         UP   RUNS  CAPACITY  FAILURES  PLACED\n" +
		"eu-1      http://127.0.0.1:9222       yes  3     4         0         12\n" +
		"hosted    wss://cdp.example/devtools  no   0     10        2         1\n" +
		"\n" +
		"hosted is down: GET /json/version: connection refused\n" +
		"Queue: 1 waiting for a browser; 5 waited and 1 gave up since the daemon started\n"
	if stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", stdout, want)
	}

	// -o json prints GET /healthz's answer.
	code, stdout, stderr = run(t, "daemon", "status", "--data-dir", dir, "-o", "json")
	if code != ExitOK || stderr != "" {
		t.Fatalf("-o json: exit %d, stderr %q", code, stderr)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	healthz, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if stdout != strings.TrimSpace(string(healthz))+"\n" {
		t.Errorf("-o json printed\n%s\nGET /healthz answers\n%s", stdout, healthz)
	}
	var h struct {
		Status   string `json:"status"`
		Browsers struct {
			Endpoints []struct {
				Name    string `json:"name"`
				Healthy bool   `json:"healthy"`
			} `json:"endpoints"`
			Queued int `json:"queued"`
		} `json:"browsers"`
	}
	if err := json.Unmarshal([]byte(stdout), &h); err != nil || h.Status != "ok" || len(h.Browsers.Endpoints) != 2 ||
		h.Browsers.Endpoints[1].Name != "hosted" || h.Browsers.Endpoints[1].Healthy || h.Browsers.Queued != 1 {
		t.Errorf("-o json: %s (%v)", stdout, err)
	}

	// A base URL given asks the daemon there, whatever the data directory.
	code, stdout, stderr = run(t, "--base-url", "http://"+addr, "daemon", "status")
	if code != ExitOK || !strings.HasPrefix(stdout, "Daemon at http://"+addr+": ok\n") || !strings.Contains(stdout, "hosted is down") {
		t.Errorf("--base-url: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestDaemonStatusWithoutFleet(t *testing.T) {
	dir := t.TempDir()
	addr, _ := daemontest.Start(t, dir, daemon.Config{})
	code, stdout, stderr := run(t, "daemon", "--data-dir", dir, "status")
	want := "Daemon at http://" + addr + ": ok\nBrowsers: the daemon's own (no fleet of browser endpoints)\n"
	if code != ExitOK || stdout != want || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	code, stdout, _ = run(t, "daemon", "--data-dir", dir, "status", "-o", "json")
	if code != ExitOK || stdout != `{"status":"ok"}`+"\n" {
		t.Errorf("-o json: exit %d, stdout %q", code, stdout)
	}
}

// TestDaemonStatusNoDaemon: when no daemon answers, status says so and
// exits 1; it never starts one.
func TestDaemonStatusNoDaemon(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := run(t, "daemon", "status", "--data-dir", dir)
	want := "no daemon is running over " + dir + " (there is no " + filepath.Join(dir, datadir.StateFileName) + ")"
	if code != ExitError || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("no state file: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("status wrote %d entries into the data directory", len(entries))
	}

	// A state file left by a daemon that died points where nothing listens.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	ln.Close()
	state := `{"addr":"` + deadAddr + `","pid":1}`
	if err := os.WriteFile(filepath.Join(dir, datadir.StateFileName), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "daemon", "status", "--data-dir", dir, "-o", "json")
	want = "no daemon answers at http://" + deadAddr + " (address from the daemon's state file " + filepath.Join(dir, datadir.StateFileName) + ")"
	if code != ExitError || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("dead daemon: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}

	code, stdout, stderr = run(t, "--base-url", "http://"+deadAddr, "daemon", "status")
	want = "no daemon answers at http://" + deadAddr + " (address from flag --base-url): dial tcp"
	if code != ExitError || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("--base-url: exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}

	code, _, stderr = run(t, "daemon", "status", "--data-dir", dir, "-o", "yaml")
	if code != ExitUsage || !strings.Contains(stderr, "--output must be text or json") {
		t.Errorf("-o yaml: exit %d, stderr %q", code, stderr)
	}
}
