package daemon_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// TestLargeBodiesLeaveNoHeap: five scripts of 7 MB each are taken, and
// once the garbage is collected the daemon's heap in use is back where it
// was: nothing of the bodies (a copy, a pooled buffer, a cached script) is
// kept in memory. The figures are logged (go test -v): the heap in use
// before and after, and what one request allocates on its way.
func TestLargeBodiesLeaveNoHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: sends 35 MB")
	}
	const key = "abk_body_memory_key"
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: key, Executor: &scripted.Executor{}, Workers: 1})
	file := "format: abctl.script/v1\nagent: \ncache_key: default\nblocks:\n  - label: search\n    mode: model\n    reason: " + strings.Repeat("a", 5<<20) + "\n"
	body, err := json.Marshal(map[string]any{"files": []map[string]string{{"path": "script.yaml", "content": base64.StdEncoding.EncodeToString([]byte(file))}}})
	if err != nil {
		t.Fatal(err)
	}
	file = ""
	post := func() {
		t.Helper()
		req, err := http.NewRequest("POST", "http://"+addr+"/v1/scripts", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /v1/scripts of %d bytes: %d", len(body), resp.StatusCode)
		}
	}
	heap := func() runtime.MemStats {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC() // the second collects what the first one's finalizers freed
		runtime.ReadMemStats(&m)
		return m
	}
	post() // the first request's one-time costs (connections, the store's pages)
	before := heap()
	const n = 5
	for range n {
		post()
	}
	after := heap()
	const mib = 1 << 20
	t.Logf("%d scripts of %.1f MiB: heap in use %.1f MiB before, %.1f MiB after; %.0f MiB allocated a request",
		n, float64(len(body))/mib, float64(before.HeapInuse)/mib, float64(after.HeapInuse)/mib,
		float64(after.TotalAlloc-before.TotalAlloc)/n/mib)
	// One body kept per request would be 35 MB; a few MB are the store's
	// and the runtime's own variations.
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 8*mib {
		t.Errorf("the heap in use grew by %.1f MiB over %d requests of %.1f MiB: something keeps the bodies",
			float64(grown)/mib, n, float64(len(body))/mib)
	}
}
