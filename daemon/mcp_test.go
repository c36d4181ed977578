package daemon_test

// Tests of the daemon's /mcp route: authenticated like every v1 route, and
// its tools acting as the key of the MCP request (its organization, its
// address). The tools themselves are tested in package mcpserver.

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor/scripted"
	"github.com/abctl/abctl/mcpserver"
)

const mcpTestKey = "abk_mcp_route_test_key"

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestMCPRequiresAPIKey(t *testing.T) {
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: mcpTestKey, Executor: &scripted.Executor{}})
	for _, tc := range []struct{ method, path, key string }{
		{"POST", "/mcp", ""},
		{"POST", "/mcp", "abk_wrong"},
		{"POST", "/mcp/", ""},
		{"GET", "/mcp", ""},
		{"DELETE", "/mcp", "abk_wrong"},
	} {
		req, err := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader(mcpInitialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.key != "" {
			req.Header.Set("X-Api-Key", tc.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || string(body) != `{"detail":"Invalid credentials"}` {
			t.Errorf("%s %s with key %q: %d %s, want 403 Invalid credentials", tc.method, tc.path, tc.key, resp.StatusCode, body)
		}
	}

	// With the key, the same request is answered by the MCP server.
	req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(mcpInitialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Api-Key", mcpTestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"serverInfo"`) || !strings.Contains(string(body), `"abctl"`) {
		t.Errorf("initialize with the key: %d %s", resp.StatusCode, body)
	}
}

// TestMCPActsAsTheCallersKey: two organizations reach the same /mcp; each
// one's tools see and make only its own agents and runs.
func TestMCPActsAsTheCallersKey(t *testing.T) {
	dir := t.TempDir()
	addr, _ := daemontest.Start(t, dir, daemon.Config{APIKey: mcpTestKey, Executor: &scripted.Executor{}})
	admin := admin.NewClient(admin.SocketPath(dir))
	other, err := admin.CreateOrganization(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	ours := mcpSession(t, "http://"+addr+"/mcp", mcpTestKey)
	theirs := mcpSession(t, "http://"+addr+"/mcp", other.APIKey)
	ourClient, theirClient := apiClient(t, addr, mcpTestKey), apiClient(t, addr, other.APIKey)

	created := mcpCall[mcpserver.AgentDetail](t, ours, "skyvern_workflow_create", map[string]any{"definition": `{
		"title": "Ours",
		"workflow_definition": {"parameters": [], "blocks": [{"block_type": "navigation", "label": "go", "navigation_goal": "Open it", "url": "https://example.com"}]}
	}`})
	if a, err := ourClient.Agents.Get(t.Context(), created.WorkflowID, nil); err != nil || a.Title != "Ours" {
		t.Fatalf("the agent, read with our key: %+v (%v)", a, err)
	}
	if _, err := theirClient.Agents.Get(t.Context(), created.WorkflowID, nil); err == nil {
		t.Error("the other organization reads our agent")
	}
	if l := mcpCall[mcpserver.WorkflowList](t, theirs, "skyvern_workflow_list", nil); len(l.Workflows) != 0 {
		t.Errorf("the other organization's workflow_list shows %+v", l.Workflows)
	}
	if msg := mcpCallError(t, theirs, "skyvern_workflow_get", map[string]any{"workflow_id": created.WorkflowID}); !strings.Contains(msg, "404") {
		t.Errorf("the other organization's workflow_get: %s", msg)
	}

	run := mcpCall[mcpserver.RunResult](t, theirs, "skyvern_run_task", map[string]any{"prompt": "script: steps=1", "wait": false})
	if _, err := theirClient.Runs.Get(t.Context(), run.RunID); err != nil {
		t.Errorf("their run, read with their key: %v", err)
	}
	if _, err := ourClient.Runs.Get(t.Context(), run.RunID); err == nil {
		t.Error("we read the other organization's run")
	}
	// The run list says the MCP tools started it.
	if items, err := theirClient.Runs.List(t.Context(), nil); err != nil || len(items) != 1 || items[0].RunID != run.RunID ||
		items[0].TriggerType == nil || *items[0].TriggerType != client.RunTriggerMCP {
		t.Errorf("their run list: %+v (%v)", items, err)
	}
}

// TestMCPAnswersWithTheCallersAddress: URLs in the tools' answers point
// where the MCP client reached the daemon, here through localhost and the
// /mcp/ form, and they serve the files.
func TestMCPAnswersWithTheCallersAddress(t *testing.T) {
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: mcpTestKey, Executor: &scripted.Executor{}})
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	base := "http://localhost:" + port
	s := mcpSession(t, base+"/mcp/", mcpTestKey)

	run := mcpCall[mcpserver.RunResult](t, s, "skyvern_run_task", map[string]any{"prompt": "script: steps=2;screenshots=2;recording"})
	if run.Status != "completed" || len(run.ScreenshotURLs) != 2 || !strings.HasPrefix(run.RecordingURL, base+"/") {
		t.Fatalf("run_task = %+v", run)
	}
	for _, u := range append(run.ScreenshotURLs, run.RecordingURL) {
		if !strings.HasPrefix(u, base+"/") {
			t.Errorf("URL %s does not start with %s", u, base)
		}
		if len(fetch(t, u)) == 0 {
			t.Errorf("%s served nothing", u)
		}
	}
}

func apiClient(t *testing.T, addr, key string) *client.Client {
	t.Helper()
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// mcpSession connects the SDK's client to endpoint, sending key as an
// assistant's configuration does.
func mcpSession(t *testing.T, endpoint, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "daemon-test", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: endpoint, HTTPClient: &http.Client{Transport: keyHeader(key)}, MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type keyHeader string

func (k keyHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Api-Key", string(k))
	return http.DefaultTransport.RoundTrip(r)
}

func mcpCall[Out any](t *testing.T, s *mcp.ClientSession, name string, args map[string]any) Out {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %v", name, err, mcpText(res))
	}
	var out Out
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %s: %v", name, b, err)
	}
	return out
}

func mcpCallError(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || !res.IsError {
		t.Fatalf("%s: %v %v, want a tool error", name, err, mcpText(res))
	}
	return mcpText(res)
}

func mcpText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
