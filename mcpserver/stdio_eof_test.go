package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abctl/abctl/mcpserver"
)

// TestStdioAnswersRequestsReadBeforeEOF: when stdin ends right after the
// requests (a client that writes them and closes its side, as `printf ...
// | abctl mcp` does), every request read is answered before ServeStdio
// returns nil, including a tool call that goes to the service and back.
func TestStdioAnswersRequestsReadBeforeEOF(t *testing.T) {
	e := startEnv(t, false)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"skyvern_folder_list","arguments":{}}}`,
	}, "\n") // no newline after the last request: the end of input ends it
	var out bytes.Buffer
	if err := mcpserver.ServeStdio(t.Context(), e.c, strings.NewReader(in), &out, mcpserver.Options{}); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	answered := map[any]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout carried a line that is not JSON-RPC: %q", line)
		}
		if id, ok := msg["id"]; ok {
			answered[id] = msg
		}
	}
	for _, id := range []any{float64(1), float64(2), "three"} {
		msg, ok := answered[id]
		if !ok {
			t.Errorf("request %v was read but not answered; stdout:\n%s", id, out.String())
			continue
		}
		if msg["result"] == nil {
			t.Errorf("request %v answered without a result: %v", id, msg)
		}
	}
	if call, _ := answered["three"]["result"].(map[string]any); call != nil && call["isError"] == true {
		t.Errorf("the tool call failed: %v", call)
	}
}
