package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/mcpserver"
)

// TestStdioWritesOnlyProtocol drives ServeStdio with raw JSON-RPC lines, as
// a desktop assistant does: every line it writes is a JSON-RPC message,
// a tool call with null arguments is answered (not a crash), and the end
// of stdin ends it with no error.
func TestStdioWritesOnlyProtocol(t *testing.T) {
	e := startEnv(t, false)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeStdio(context.Background(), e.c, inR, outW, mcpserver.Options{})
		outW.Close()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	// exchange sends one request and returns the answer with its id.
	exchange := func(id int, request string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, request+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("stdout ended before the answer to request %d", id)
				}
				var msg map[string]any
				if err := json.Unmarshal([]byte(line), &msg); err != nil || msg["jsonrpc"] != "2.0" {
					t.Fatalf("stdout carried a line that is not a JSON-RPC message: %q", line)
				}
				if msg["id"] == float64(id) {
					return msg
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("no answer to request %d within 30 s", id)
			}
		}
	}

	init := exchange(1, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if info, _ := init["result"].(map[string]any)["serverInfo"].(map[string]any); info["name"] != mcpserver.ServerName {
		t.Errorf("initialize answered %v", init)
	}
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	list := exchange(2, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"skyvern_folder_list","arguments":null}}`)
	result, _ := list["result"].(map[string]any)
	if result == nil || result["isError"] == true || result["structuredContent"] == nil {
		t.Errorf("tools/call with null arguments answered %v", list)
	}
	unknown := exchange(3, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"skyvern_nope","arguments":{}}}`)
	if errObj, _ := unknown["error"].(map[string]any); errObj == nil || !strings.Contains(errObj["message"].(string), "skyvern_nope") {
		t.Errorf("an unknown tool answered %v", unknown)
	}

	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio returned %v at the end of stdin, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return within 10 s of stdin ending")
	}
	for line := range lines {
		t.Errorf("stdout carried %q after the end of stdin", line)
	}
}
