package blocks

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/egress/egresstest"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// sharedGuard is the guard of an organization of a daemon serving
// several, whose API listens at apiAddr (a test server playing it); allow
// are the operator's --egress-allow patterns.
func sharedGuard(t *testing.T, apiAddr string, allow ...string) *egress.Guard {
	return egresstest.Shared(t, allow, apiAddr, "the daemon's API").For("o_1")
}

// singleGuard is the guard of a daemon serving one organization, which
// reaches loopback.
func singleGuard() *egress.Guard { return egresstest.Single().For("o_1") }

// wantRefusal checks that err names the target, the address and the rule.
func wantRefusal(t *testing.T, what string, err error, target, addr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: not refused", what)
	}
	t.Logf("%s: %v", what, err)
	for _, want := range []string{"refused to reach " + target, addr, "the daemon's API is never reachable by a run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", what, err, want)
		}
	}
}

// netInterpreter is an interpreter of def, with no browser, whose blocks
// connect through guard.
func netInterpreter(def *client.WorkflowDefinition, guard *egress.Guard) *Interpreter {
	logger := slog.New(slog.DiscardHandler)
	in := &Interpreter{
		env: Env{Logger: logger, HTTP: &http.Client{}}, steps: steplog.New(noProgress{}, logger, 0),
		def: def, params: map[string]any{}, outputs: newOutputs(), labels: blockLabels(def.Blocks), guard: guard,
	}
	giveFamilies(in)
	return in
}

// TestHTTPRequestThroughGuard: an http_request block to the daemon's API
// fails naming the URL (without its query), the address and the rule, and
// so does one redirected there by a server the operator allows; a single
// organization's daemon reaches the same loopback server.
func TestHTTPRequestThroughGuard(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"tabs": ["another organization's"]}`))
	}))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, api.URL+"/json/list", http.StatusFound)
	}))
	defer other.Close()
	apiAddr, otherAddr := strings.TrimPrefix(api.URL, "http://"), strings.TrimPrefix(other.URL, "http://")
	get := func(u string) *client.WorkflowDefinition {
		return &client.WorkflowDefinition{Blocks: client.Blocks{&client.HTTPRequestBlock{BlockBase: client.BlockBase{Label: "get"}, URL: u}}}
	}

	shared := sharedGuard(t, apiAddr, otherAddr)
	in := netInterpreter(get(api.URL+"/json/list?key=s3cret"), shared)
	fail := in.Execute(t.Context())
	if fail == nil {
		t.Fatal("the daemon's API was reached")
	}
	wantRefusal(t, "direct", errors.New(fail.Reason()), api.URL+"/json/list", "("+apiAddr+")")
	if strings.Contains(fail.Reason(), "s3cret") {
		t.Errorf("%q shows the query", fail.Reason())
	}
	// The step log says so too.
	dir := t.TempDir()
	if err := in.steps.Write(dir, "steps.json"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "steps.json")); !strings.Contains(string(b), "the daemon's API is never reachable by a run") {
		t.Errorf("the step log does not hold the refusal: %s", b)
	}
	fail = netInterpreter(get(other.URL+"/start"), shared).Execute(t.Context())
	if fail == nil {
		t.Fatal("the redirect to the daemon's API was followed")
	}
	wantRefusal(t, "redirect", errors.New(fail.Reason()), api.URL+"/json/list", apiAddr)

	in = netInterpreter(get(api.URL+"/json/list"), singleGuard())
	if fail := in.Execute(t.Context()); fail != nil {
		t.Fatalf("a single organization's daemon: %s", fail.Reason())
	}
	if out := blockOutput(t, in, "get"); out["status_code"] != 200.0 {
		t.Errorf("output %v", out)
	}
}
