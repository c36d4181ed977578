package run

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
)

func TestRunWithFlags(t *testing.T) {
	o, err := parse(t, "--agent", "search", "--with", "code", "--ai-fallback=false")
	if err != nil || o.With != "code" || o.AIFallback == nil || *o.AIFallback {
		t.Fatalf("--with code --ai-fallback=false: %+v %v", o, err)
	}
	if o, err := parse(t, "--agent", "search", "--ai-fallback"); err != nil || o.AIFallback == nil || !*o.AIFallback || o.With != "" {
		t.Errorf("--ai-fallback alone: %+v %v", o, err)
	}
	// Left out, both keep the agent's own settings.
	if o, err := parse(t, "--agent", "search"); err != nil || o.With != "" || o.AIFallback != nil {
		t.Errorf("neither flag: %+v %v", o, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "x", "--with", "python"}, `--with "python": use code`},
		{[]string{"--prompt", "p", "--with", "code"}, "--with and --ai-fallback are for agents"},
		{[]string{"--prompt", "p", "--ai-fallback=true"}, "--with and --ai-fallback are for agents"},
		{[]string{"--agent", "x", "--ai-fallback=maybe"}, "ai-fallback"},
	} {
		o, err := parse(t, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: %v, want the usage error %q before the run", tc.args, err, tc.want)
		}
	}
}

// TestRunWithReachesTheRequest: --with and --ai-fallback are the agent
// run request's run_with and ai_fallback, and are left out when not
// given.
func TestRunWithReachesTheRequest(t *testing.T) {
	var bodies [][]byte
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agents/wpid_1", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"workflow_id":"w_1","organization_id":"o_1","title":"Search","workflow_permanent_id":"wpid_1","version":1,
			"workflow_definition":{"parameters":[],"blocks":[]}}`)
	})
	mux.HandleFunc("POST /v1/run/agents", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, b)
		io.WriteString(w, `{"run_id":"wr_1","status":"queued","run_type":"workflow_run"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("abk_test"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) map[string]any {
		t.Helper()
		f, _ := cmdtest.NewFactory(t, nil)
		err := cmdtest.Exec(NewCmdRun(f, func(o *RunOptions) error {
			o.Client = func(context.Context) (*client.Client, error) { return c, nil }
			o.Embedded = func() bool { return false }
			return runRun(t.Context(), o)
		}), append([]string{"--agent", "wpid_1", "--detach"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var req map[string]any
		if err := json.Unmarshal(bodies[len(bodies)-1], &req); err != nil {
			t.Fatal(err)
		}
		return req
	}
	if req := run("--with", "code", "--ai-fallback=false"); req["run_with"] != "code" || req["ai_fallback"] != false {
		t.Errorf("--with code --ai-fallback=false sent %v", req)
	}
	if req := run("--with", "agent"); req["run_with"] != "agent" || req["ai_fallback"] != nil {
		t.Errorf("--with agent sent %v", req)
	}
	if req := run(); req["run_with"] != nil || req["ai_fallback"] != nil {
		t.Errorf("no flag sent %v", req)
	}
}
