package metrics_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/daemon/metrics"
	"github.com/abctl/abctl/localrun/engine/browser"
)

// fleet is a FleetSource whose status the test sets.
type fleet struct {
	mu sync.Mutex
	st browser.FleetStatus
	ok bool
}

func (f *fleet) FleetStatus() (browser.FleetStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st, f.ok
}

func (f *fleet) set(st browser.FleetStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st, f.ok = st, true
}

// twoEndpoints is a fleet of two: a up with one session of 4, b down.
var twoEndpoints = browser.FleetStatus{
	Endpoints: []browser.EndpointStatus{
		{Name: "a", URL: "http://127.0.0.1:9222", Capacity: 4, InUse: 1, Healthy: true, Failures: 0, Placed: 7},
		{Name: "b", URL: "ws://10.0.0.2:9222/devtools/browser/x", Capacity: 2, InUse: 0, Healthy: false,
			LastError: "connection refused", Failures: 3, Placed: 5},
	},
	Queued: 2, QueueWaits: 9, QueueTimeouts: 1,
}

// scrape returns what srv (a Handler) answers, checking the status and the content type of the text format.
func scrape(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("%d %q, want 200 and Prometheus' text format", resp.StatusCode, ct)
	}
	return string(b)
}

// serve serves the metrics of src until the test ends.
func serve(t *testing.T, src metrics.FleetSource) *httptest.Server {
	srv := httptest.NewServer(metrics.Handler(metrics.NewFleetCollector(src)))
	t.Cleanup(srv.Close)
	return srv
}

// TestFleetCollector: the text of GET /metrics for a given fleet, every
// name, label and value exact.
func TestFleetCollector(t *testing.T) {
	src := &fleet{}
	src.set(twoEndpoints)
	srv := serve(t, src)
	want := `# HELP abctl_browser_endpoint_capacity Sessions the browser endpoint takes at once.
# TYPE abctl_browser_endpoint_capacity gauge
abctl_browser_endpoint_capacity{endpoint="a"} 4
abctl_browser_endpoint_capacity{endpoint="b"} 2
# HELP abctl_browser_endpoint_failures_total Sessions that ended because the browser endpoint failed, and connections to it that failed.
# TYPE abctl_browser_endpoint_failures_total counter
abctl_browser_endpoint_failures_total{endpoint="a"} 0
abctl_browser_endpoint_failures_total{endpoint="b"} 3
# HELP abctl_browser_endpoint_placed_total Sessions placed on the browser endpoint.
# TYPE abctl_browser_endpoint_placed_total counter
abctl_browser_endpoint_placed_total{endpoint="a"} 7
abctl_browser_endpoint_placed_total{endpoint="b"} 5
# HELP abctl_browser_endpoint_runs_in_progress Sessions (runs, run_action and browser sessions) open on the browser endpoint now.
# TYPE abctl_browser_endpoint_runs_in_progress gauge
abctl_browser_endpoint_runs_in_progress{endpoint="a"} 1
abctl_browser_endpoint_runs_in_progress{endpoint="b"} 0
# HELP abctl_browser_endpoint_up 1 while the browser endpoint is healthy and takes new sessions, 0 while it is down.
# TYPE abctl_browser_endpoint_up gauge
abctl_browser_endpoint_up{endpoint="a"} 1
abctl_browser_endpoint_up{endpoint="b"} 0
` + queueMetrics(2, 1, 9)
	if got := scrape(t, srv); got != want {
		t.Errorf("metrics\n%s\nwant\n%s", got, want)
	}

	// The numbers are read at each scrape.
	st := twoEndpoints
	st.Endpoints = []browser.EndpointStatus{twoEndpoints.Endpoints[0]}
	st.Endpoints[0].InUse = 4
	st.Queued = 0
	src.set(st)
	got := scrape(t, srv)
	for _, line := range []string{
		`abctl_browser_endpoint_runs_in_progress{endpoint="a"} 4` + "\n",
		"abctl_browser_queue_length 0\n",
	} {
		if !strings.Contains(got, line) {
			t.Errorf("after a change, the metrics lack %q:\n%s", line, got)
		}
	}
	if strings.Contains(got, `endpoint="b"`) {
		t.Errorf("an endpoint no longer in the status still has series:\n%s", got)
	}
}

// queueMetrics is the text of the queue's metrics.
func queueMetrics(length, timeouts, waits int) string {
	return `# HELP abctl_browser_queue_length Runs waiting now for a browser endpoint with room.
# TYPE abctl_browser_queue_length gauge
abctl_browser_queue_length ` + strconv.Itoa(length) + `
# HELP abctl_browser_queue_timeouts_total Runs that gave up waiting for a browser endpoint with room.
# TYPE abctl_browser_queue_timeouts_total counter
abctl_browser_queue_timeouts_total ` + strconv.Itoa(timeouts) + `
# HELP abctl_browser_queue_waits_total Runs that had to wait for a browser endpoint with room.
# TYPE abctl_browser_queue_waits_total counter
abctl_browser_queue_waits_total ` + strconv.Itoa(waits) + `
`
}

// TestFleetCollectorNoFleet: without a fleet the queue's metrics are 0 and
// there is no endpoint series.
func TestFleetCollectorNoFleet(t *testing.T) {
	for name, src := range map[string]metrics.FleetSource{"nil": nil, "not ok": &fleet{}} {
		if got, want := scrape(t, serve(t, src)), queueMetrics(0, 0, 0); got != want {
			t.Errorf("%s: metrics\n%s\nwant\n%s", name, got, want)
		}
	}
}

func TestHealth(t *testing.T) {
	if _, ok := metrics.Health(nil); ok {
		t.Error("Health(nil) is ok")
	}
	src := &fleet{}
	if _, ok := metrics.Health(src); ok {
		t.Error("Health of a source without a fleet is ok")
	}
	src.set(twoEndpoints)
	got, ok := metrics.Health(src)
	if !ok {
		t.Fatal("Health of a fleet is not ok")
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"endpoints":[` +
		`{"name":"a","url":"http://127.0.0.1:9222","capacity":4,"in_use":1,"healthy":true,"failures":0,"placed":7},` +
		`{"name":"b","url":"ws://10.0.0.2:9222/devtools/browser/x","capacity":2,"in_use":0,"healthy":false,"last_error":"connection refused","failures":3,"placed":5}],` +
		`"queued":2,"queue_waits":9,"queue_timeouts":1}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	// An empty fleet has an empty list, not null.
	if b, _ := json.Marshal(metrics.FleetOf(browser.FleetStatus{})); !strings.HasPrefix(string(b), `{"endpoints":[]`) {
		t.Errorf("empty fleet: %s", b)
	}
}
