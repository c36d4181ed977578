package daemon_test

// Scripts (/v1/scripts) through the client and by hand over real HTTP, on
// a real daemon (daemon.Run) and its real bbolt file: create, versions,
// the file route, the refusal of the hosted service's Python scripts, the
// runs a script starts, and organizations kept apart.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// handScript is a minimal valid script of agent wpid, written by hand:
// one block that calls the model.
func handScript(wpid, cacheKey, reason string) []byte {
	return []byte("format: abctl.script/v1\nagent: " + wpid + "\ncache_key: " + cacheKey +
		"\nblocks:\n  - label: search\n    mode: model\n    reason: " + reason + "\n")
}

// scriptsDaemon is a real daemon with two organizations, A (the default)
// and B.
type scriptsDaemon struct {
	url, dir   string
	keyA, keyB string
	a, b       *client.Client
	stop       func() error
}

func newScriptsDaemon(t *testing.T) *scriptsDaemon {
	t.Helper()
	const key = "abk_scripts_test_key_a"
	dir := t.TempDir()
	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: key, Executor: &scripted.Executor{}, Workers: 1})
	ac := admin.NewClient(admin.SocketPath(dir))
	other, err := ac.CreateOrganization(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	e := &scriptsDaemon{url: "http://" + addr, dir: dir, keyA: key, keyB: other.APIKey, stop: stop}
	for _, c := range []struct {
		key string
		out **client.Client
	}{{e.keyA, &e.a}, {e.keyB, &e.b}} {
		if *c.out, err = client.New(client.WithBaseURL(e.url), client.WithAPIKey(c.key), client.WithMaxRetries(0)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// raw sends a request with a key and a JSON body; it returns the status
// and the body of the answer.
func (e *scriptsDaemon) raw(t *testing.T, method, path, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestScripts: the life of a script through the routes, and what another
// organization sees of it.
func TestScripts(t *testing.T) {
	e := newScriptsDaemon(t)
	ctx := t.Context()
	agent := agentForSchedules(t, e.a)
	wpid := agent.WorkflowPermanentID
	v1 := handScript(wpid, "default", "recorded by hand")

	// Create: version 1, one file, its digest and size.
	created, err := e.a.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: wpid,
		Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", v1)}})
	if err != nil {
		t.Fatal(err)
	}
	node, ok := created.FileTree["script.yaml"]
	if !strings.HasPrefix(created.ScriptID, "s_") || created.Version != 1 || created.FileCount != 1 || created.RunID != nil || !ok ||
		node.Type != "file" || node.Size == nil || *node.Size != int64(len(v1)) || node.ContentHash == nil || len(*node.ContentHash) != 64 ||
		node.Children != nil || created.CreatedAt.IsZero() {
		t.Fatalf("created: %+v %+v", created, node)
	}
	id := created.ScriptID

	// Get: the latest version, with the agent, the cache key and which
	// blocks replay.
	got, err := e.a.Scripts.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got.ScriptID != id || got.Version != 1 || got.WorkflowID != wpid || got.CacheKey != "default" || got.OrganizationID == "" ||
		!strings.HasPrefix(got.ScriptRevisionID, "sr_") || got.ContentHash != *node.ContentHash || got.DeletedAt != nil ||
		len(got.Blocks) != 1 || got.Blocks[0] != (client.ScriptBlockSummary{Label: "search", Mode: "model", Reason: "recorded by hand"}) {
		t.Fatalf("get: %+v", got)
	}

	// The hosted service's Python scripts: 422 at the file, saying why.
	status, body := e.raw(t, "POST", "/v1/scripts", e.keyA,
		`{"workflow_id":"`+wpid+`","files":[{"path":"main.py","content":"cHJpbnQoIkhlbGxvIik=","encoding":"base64","mime_type":"text/x-python"}]}`)
	if status != 422 || !strings.Contains(body, `"loc":["body","files",0]`) ||
		!strings.Contains(body, "Python") || !strings.Contains(body, "script.yaml") {
		t.Errorf("a Python script: %d %s", status, body)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"no files", `{"workflow_id":"` + wpid + `"}`, "no files"},
		{"not base64", `{"files":[{"path":"script.yaml","content":"%%%"}]}`, "base64"},
		{"an unknown encoding", `{"files":[{"path":"script.yaml","content":"x","encoding":"gzip"}]}`, "'base64' or 'utf-8'"},
		{"no content", `{"files":[{"path":"script.yaml"}]}`, "Field required"},
		{"not a script", `{"files":[{"path":"script.yaml","content":"title: an agent","encoding":"utf-8"}]}`, "format"},
		{"another agent's", `{"workflow_id":"` + wpid + `","files":[{"path":"script.yaml","encoding":"utf-8","content":` + jsonString(handScript("wpid_other", "default", "x")) + `}]}`, "recorded for agent wpid_other"},
	} {
		if status, body := e.raw(t, "POST", "/v1/scripts", e.keyA, tc.body); status != 422 || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want 422 saying %q", tc.name, status, body, tc.want)
		}
	}
	if status, body := e.raw(t, "POST", "/v1/scripts", e.keyA, `{"workflow_id":"wpid_404","files":[{"path":"script.yaml","encoding":"utf-8","content":`+jsonString(handScript("", "default", "x"))+`}]}`); status != 404 {
		t.Errorf("an unknown agent: %d %s", status, body)
	}

	// Deploy: a new version, also for the same bytes; the file route
	// serves each version.
	v2 := handScript(wpid, "default", "edited by hand")
	deployed, err := e.a.Scripts.Deploy(ctx, id, &client.DeployScriptRequest{Files: []client.ScriptFile{
		{Path: "script.yaml", Content: string(v2), Encoding: client.FileEncodingUTF8}}})
	if err != nil || deployed.Version != 2 || deployed.ScriptID != id {
		t.Fatalf("deploy: %+v %v", deployed, err)
	}
	if again, err := e.a.Scripts.Deploy(ctx, id, &client.DeployScriptRequest{Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", v2)}}); err != nil || again.Version != 3 {
		t.Fatalf("deploy the same file: %+v %v", again, err)
	}
	if status, body := e.raw(t, "POST", "/v1/scripts/"+id+"/deploy", e.keyA, `{"files":[{"path":"script.yaml","encoding":"utf-8","content":`+jsonString(handScript(wpid, "eu", "x"))+`}]}`); status != 422 || !strings.Contains(body, `cache key \"eu\"`) {
		t.Errorf("deploy for another cache key: %d %s", status, body)
	}
	if status, _ := e.raw(t, "POST", "/v1/scripts/"+id+"/deploy", e.keyA, `{}`); status != 422 {
		t.Errorf("deploy without files: %d", status)
	}
	for version, want := range map[int][]byte{0: v2, 1: v1, 2: v2} {
		if b, err := e.a.Scripts.File(ctx, id, version); err != nil || !bytes.Equal(b, want) {
			t.Errorf("file of version %d: %q %v", version, b, err)
		}
	}
	if _, err := e.a.Scripts.File(ctx, id, 9); !isStatus(err, 404, "Script "+id+" has no version 9") {
		t.Errorf("file of an unknown version: %v", err)
	}
	if status, body := e.raw(t, "GET", "/v1/scripts/"+id+"/files/main.py", e.keyA, ""); status != 404 || !strings.Contains(body, "only file is script.yaml") {
		t.Errorf("another file: %d %s", status, body)
	}

	// A script of no agent; the list, newest first, by agent.
	loose, err := e.a.Scripts.Create(ctx, &client.CreateScriptRequest{Files: []client.ScriptFile{client.ScriptFileFromBytes("./script.yaml", handScript("", "default", "loose"))}})
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.a.Scripts.List(ctx, nil)
	if err != nil || len(list) != 2 || list[0].ScriptID != loose.ScriptID || list[1].ScriptID != id || list[1].Version != 3 || list[0].WorkflowID != "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if list, err := e.a.Scripts.List(ctx, &client.ListScriptsOptions{AgentID: wpid}); err != nil || len(list) != 1 || list[0].ScriptID != id {
		t.Errorf("list by agent: %+v %v", list, err)
	}
	var all []string
	for s, err := range e.a.Scripts.All(ctx, &client.ListScriptsOptions{PageSize: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s.ScriptID)
	}
	if len(all) != 2 {
		t.Errorf("all, a page at a time: %v", all)
	}
	if _, err := e.a.Scripts.Get(ctx, "s_404"); !isStatus(err, 404, "Script s_404 not found") {
		t.Errorf("an unknown script: %v", err)
	}

	// Organization B sees none of it.
	if list, err := e.b.Scripts.List(ctx, nil); err != nil || len(list) != 0 {
		t.Errorf("B's list: %+v %v", list, err)
	}
	if _, err := e.b.Scripts.Get(ctx, id); !isStatus(err, 404, "not found") {
		t.Errorf("B gets A's script: %v", err)
	}
	if _, err := e.b.Scripts.Deploy(ctx, id, &client.DeployScriptRequest{Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", v1)}}); !isStatus(err, 404, "not found") {
		t.Errorf("B deploys to A's script: %v", err)
	}
	if _, err := e.b.Scripts.Run(ctx, id, nil); !isStatus(err, 404, "not found") {
		t.Errorf("B runs A's script: %v", err)
	}
	if _, err := e.b.Scripts.File(ctx, id, 0); !isStatus(err, 404, "not found") {
		t.Errorf("B reads A's script's file: %v", err)
	}
	if _, err := e.b.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: wpid, Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", v1)}}); !isStatus(err, 404, "") {
		t.Errorf("B makes a script for A's agent: %v", err)
	}
}

// TestScriptsRun: a script's run is a run of its agent with run_with code,
// pinned to the script, answered as POST /v1/run/agents answers; and
// POST /v1/run/agents records run_with and ai_fallback.
func TestScriptsRun(t *testing.T) {
	e := newScriptsDaemon(t)
	ctx := t.Context()
	agent := agentForSchedules(t, e.a)
	wpid := agent.WorkflowPermanentID
	created, err := e.a.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: wpid,
		Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", handScript(wpid, "default", "recorded by hand"))}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.a.Scripts.Run(ctx, created.ScriptID, &client.RunScriptRequest{Parameters: map[string]any{"count": 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(run.RunID, "wr_") || run.RunType != client.RunTypeWorkflowRun {
		t.Fatalf("the run: %+v", run)
	}
	bare, err := e.a.Scripts.Run(ctx, created.ScriptID, nil)
	if err != nil {
		t.Fatalf("a run with the defaults: %v", err)
	}
	loose, err := e.a.Scripts.Create(ctx, &client.CreateScriptRequest{Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", handScript("", "default", "x"))}})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := e.raw(t, "POST", "/v1/scripts/"+loose.ScriptID+"/run", e.keyA, ""); status != 422 || !strings.Contains(body, "belongs to no agent") {
		t.Errorf("a script of no agent: %d %s", status, body)
	}
	if status, _ := e.raw(t, "POST", "/v1/scripts/s_404/run", e.keyA, ""); status != 404 {
		t.Errorf("an unknown script: %d", status)
	}
	if status, body := e.raw(t, "POST", "/v1/scripts/"+created.ScriptID+"/run", e.keyA, `{"parameters":{"count":"many"}}`); status != 400 || !strings.Contains(body, "count") {
		t.Errorf("a parameter of the wrong type: %d %s", status, body)
	}

	// POST /v1/run/agents: run_with and ai_fallback are recorded; an
	// unknown run_with is refused.
	agentRun, err := e.a.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: wpid, RunWith: "code", AIFallback: client.Ptr(false)})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := e.raw(t, "POST", "/v1/run/agents", e.keyA, `{"workflow_id":"`+wpid+`","run_with":"python"}`); status != 422 || !strings.Contains(body, "'agent' or 'code'") {
		t.Errorf("run_with python: %d %s", status, body)
	}

	// The records, read from the daemon's file once it stopped.
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(filepath.Join(e.dir, datadir.StoreFileName), store.Options{Secret: readSecret(t, e.dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, err := st.DefaultOrganization(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, runID := range []string{run.RunID, bare.RunID} {
		rec, err := st.Runs().Get(ctx, org.ID, runID)
		if err != nil {
			t.Fatal(err)
		}
		if rec.ScriptID != created.ScriptID || rec.RunWith != "code" || rec.AgentID != wpid {
			t.Errorf("run %s: script %q, run_with %q, agent %q", runID, rec.ScriptID, rec.RunWith, rec.AgentID)
		}
		if !strings.Contains(string(rec.RunRequest), `"run_with":"code"`) {
			t.Errorf("run %s echoes %s", runID, rec.RunRequest)
		}
	}
	if rec, err := st.Runs().Get(ctx, org.ID, run.RunID); err != nil || string(rec.Parameters["count"]) != "2" {
		t.Errorf("the run's parameters: %v %v", rec.Parameters, err)
	}
	rec, err := st.Runs().Get(ctx, org.ID, agentRun.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.RunWith != "code" || rec.AIFallback == nil || *rec.AIFallback || rec.ScriptID != "" {
		t.Errorf("POST /v1/run/agents's record: run_with %q, ai_fallback %v, script %q", rec.RunWith, rec.AIFallback, rec.ScriptID)
	}
}

// jsonString is b as a JSON string.
func jsonString(b []byte) string {
	out, _ := json.Marshal(string(b))
	return string(out)
}
