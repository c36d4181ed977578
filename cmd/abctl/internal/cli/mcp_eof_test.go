package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPAnswersBeforeInputEnds: `printf '<initialize>\n<tools/list>\n' |
// abctl mcp` answers both requests, then exits 0, although its input
// ends right after them (a client that writes its requests and closes its
// side, as a shell pipe does).
func TestMCPAnswersBeforeInputEnds(t *testing.T) {
	e := newCLIEnv(t)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	r := e.run(in, "mcp").expect(t, 0)
	answered := map[float64]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line == "" {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout carried a line that is not JSON-RPC: %q", line)
		}
		if id, ok := msg["id"].(float64); ok {
			answered[id] = msg
		}
	}
	if len(answered) != 2 {
		t.Fatalf("abctl mcp answered %d of the 2 requests read before its input ended; stdout:\n%s\nstderr:\n%s", len(answered), r.stdout, r.stderr)
	}
	if info, _ := answered[1]["result"].(map[string]any)["serverInfo"].(map[string]any); info["name"] == nil {
		t.Errorf("initialize answered %v", answered[1])
	}
	tools, _ := answered[2]["result"].(map[string]any)["tools"].([]any)
	if len(tools) == 0 {
		t.Errorf("tools/list answered %v", answered[2])
	}
}
