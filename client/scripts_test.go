package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// Scripts as the daemon answers them.
const (
	scriptReply = `{"script_revision_id":"sr_2","script_id":"s_1","organization_id":"o_1","run_id":"wr_1","version":2,
		"created_at":"2026-01-31T15:20:42.160725","modified_at":"2026-01-31T15:21:00","deleted_at":null,
		"workflow_id":"wpid_7","cache_key":"default","content_hash":"ab12",
		"blocks":[{"label":"search","mode":"replay","steps":3,"fields":2},{"label":"judge","mode":"model","reason":"a judgement","steps":0}]}`
	scriptCreatedReply = `{"script_id":"s_1","version":1,"run_id":null,"file_count":1,
		"file_tree":{"script.yaml":{"type":"file","size":120,"mime_type":"application/yaml","content_hash":"ab12","created_at":"2026-01-31T15:20:42","children":null}},
		"created_at":"2026-01-31T15:20:42"}`
)

// TestScriptOperations: each method's route, query and body, and what it
// decodes of the reply.
func TestScriptOperations(t *testing.T) {
	file := []byte("format: abctl.script/v1\nblocks: []\n")
	for _, op := range []operation{
		{
			name: "create", route: "POST /v1/scripts", reply: scriptCreatedReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Scripts.Create(ctx, &client.CreateScriptRequest{WorkflowID: "wpid_7", RunID: "wr_1",
					Files: []client.ScriptFile{client.ScriptFileFromBytes("script.yaml", file)}})
			},
			wantPath: "/v1/scripts",
			wantBody: `{"workflow_id":"wpid_7","run_id":"wr_1","files":[{"path":"script.yaml","content":"Zm9ybWF0OiBhYmN0bC5zY3JpcHQvdjEKYmxvY2tzOiBbXQo=","encoding":"base64"}]}`,
			check: func(t *testing.T, got any) {
				r := got.(*client.CreateScriptResponse)
				n := r.FileTree["script.yaml"]
				if r.ScriptID != "s_1" || r.Version != 1 || r.RunID != nil || r.FileCount != 1 || n.Type != "file" ||
					n.Size == nil || *n.Size != 120 || n.ContentHash == nil || *n.ContentHash != "ab12" || n.Children != nil {
					t.Errorf("created: %+v %+v", r, n)
				}
			},
		},
		{
			name: "list", route: "GET /v1/scripts", reply: "[" + scriptReply + "]",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Scripts.List(ctx, &client.ListScriptsOptions{Page: 2, PageSize: 5, AgentID: "wpid_7"})
			},
			wantPath:  "/v1/scripts",
			wantQuery: map[string][]string{"page": {"2"}, "page_size": {"5"}, "workflow_id": {"wpid_7"}},
			check: func(t *testing.T, got any) {
				if l := got.([]*client.Script); len(l) != 1 || l[0].ScriptID != "s_1" {
					t.Errorf("list: %+v", l)
				}
			},
		},
		{
			name: "get", route: "GET /v1/scripts/{id}", reply: scriptReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Scripts.Get(ctx, "s_1")
			},
			wantPath: "/v1/scripts/s_1",
			check: func(t *testing.T, got any) {
				s := got.(*client.Script)
				want := []client.ScriptBlockSummary{{Label: "search", Mode: "replay", Steps: 3, Fields: 2}, {Label: "judge", Mode: "model", Reason: "a judgement"}}
				if s.ScriptRevisionID != "sr_2" || s.Version != 2 || s.RunID == nil || *s.RunID != "wr_1" || s.WorkflowID != "wpid_7" ||
					s.CacheKey != "default" || s.ContentHash != "ab12" || s.DeletedAt != nil || !reflect.DeepEqual(s.Blocks, want) {
					t.Errorf("script: %+v", s)
				}
			},
		},
		{
			name: "deploy", route: "POST /v1/scripts/{id}/deploy", reply: scriptCreatedReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Scripts.Deploy(ctx, "s_1", &client.DeployScriptRequest{Files: []client.ScriptFile{
					{Path: "script.yaml", Content: "format: abctl.script/v1\n", Encoding: client.FileEncodingUTF8}}})
			},
			wantPath: "/v1/scripts/s_1/deploy",
			wantBody: `{"files":[{"path":"script.yaml","content":"format: abctl.script/v1\n","encoding":"utf-8"}]}`,
		},
		{
			name: "run with parameters", route: "POST /v1/scripts/{id}/run", reply: `{"run_id":"wr_9","status":"queued","run_type":"workflow_run"}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Scripts.Run(ctx, "s_1", &client.RunScriptRequest{Parameters: map[string]any{"query": "shoes"}})
			},
			wantPath: "/v1/scripts/s_1/run",
			wantBody: `{"parameters":{"query":"shoes"}}`,
			check: func(t *testing.T, got any) {
				if r := got.(*client.Run); r.RunID != "wr_9" || r.RunType != client.RunTypeWorkflowRun {
					t.Errorf("run: %+v", r)
				}
			},
		},
		{
			name: "run with the defaults", route: "POST /v1/scripts/{id}/run", reply: `{"run_id":"wr_9","status":"queued","run_type":"workflow_run"}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Scripts.Run(ctx, "s_1", nil)
			},
			wantPath: "/v1/scripts/s_1/run",
		},
	} {
		t.Run(op.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.reply(op.route, http.StatusOK, op.reply)
			got, err := op.call(t.Context(), ts.client)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			req := ts.only()
			if want := strings.Fields(op.route)[0]; req.Method != want {
				t.Errorf("method %s, want %s", req.Method, want)
			}
			if req.Path != op.wantPath {
				t.Errorf("path %s, want %s", req.Path, op.wantPath)
			}
			wantQuery := op.wantQuery
			if wantQuery == nil {
				wantQuery = map[string][]string{}
			}
			if !reflect.DeepEqual(req.Query, wantQuery) {
				t.Errorf("query %v, want %v", req.Query, wantQuery)
			}
			if op.wantBody == "" {
				if len(req.Body) != 0 {
					t.Errorf("unexpected body %s", req.Body)
				}
			} else {
				assertJSONEqual(t, "body", req.Body, op.wantBody)
			}
			if op.check != nil {
				op.check(t, got)
			}
		})
	}
}

// TestScriptFile: the file comes back as its bytes, for the latest
// version or the one asked for; errors are *client.Error.
func TestScriptFile(t *testing.T) {
	ts := newTestServer(t)
	ts.mux.HandleFunc("GET /v1/scripts/{id}/files/script.yaml", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "s_1" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"detail":"Script s_2 not found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.Write([]byte("format: abctl.script/v1\n# version " + r.URL.Query().Get("version") + "\n"))
	})
	ctx := t.Context()
	if b, err := ts.client.Scripts.File(ctx, "s_1", 0); err != nil || string(b) != "format: abctl.script/v1\n# version \n" {
		t.Errorf("latest: %q %v", b, err)
	}
	if b, err := ts.client.Scripts.File(ctx, "s_1", 3); err != nil || string(b) != "format: abctl.script/v1\n# version 3\n" {
		t.Errorf("version 3: %q %v", b, err)
	}
	if _, err := ts.client.Scripts.File(ctx, "s_2", 0); !errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), "Script s_2 not found") {
		t.Errorf("unknown: %v", err)
	}
	reqs := ts.requests()
	if len(reqs) != 3 || reqs[0].Path != "/v1/scripts/s_1/files/script.yaml" || len(reqs[0].Query) != 0 ||
		!reflect.DeepEqual(url.Values(reqs[1].Query), url.Values{"version": {"3"}}) || reqs[0].Header.Get("X-Api-Key") != testAPIKey {
		t.Errorf("requests: %+v", reqs)
	}
}

// TestScriptChecks: requests that cannot be right are refused before
// anything is sent.
func TestScriptChecks(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	c := ts.client
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"create nil", func() error { _, err := c.Scripts.Create(ctx, nil); return err }, "Scripts.Create: nil request"},
		{"get without an id", func() error { _, err := c.Scripts.Get(ctx, " "); return err }, "script id must not be empty"},
		{"deploy nil", func() error { _, err := c.Scripts.Deploy(ctx, "s_1", nil); return err }, "Scripts.Deploy: nil request"},
		{"run without an id", func() error { _, err := c.Scripts.Run(ctx, "", nil); return err }, "script id must not be empty"},
		{"file of version -1", func() error { _, err := c.Scripts.File(ctx, "s_1", -1); return err }, "the version must be 1 or more"},
	} {
		if err := tc.call(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if reqs := ts.requests(); len(reqs) != 0 {
		t.Errorf("%d requests were sent", len(reqs))
	}
}
