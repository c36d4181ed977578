package mcpserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.json from the tools as they are")

// TestToolListUnchanged pins what an MCP client is told about the tools,
// as the bytes of the tools/list answer: each tool's name, title,
// description, annotations and input and output schemas (with the order
// of their properties), sorted by name. A change to any of them changes
// the interface assistants were written against: make it on purpose,
// rewrite the file with -update and read the diff.
func TestToolListUnchanged(t *testing.T) {
	// Listing the tools calls nothing: the client only has to exist.
	c, err := client.New(client.WithBaseURL("http://127.0.0.1:9"), client.WithAPIKey(testKey))
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pin","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := mcpserver.ServeStdio(t.Context(), c, strings.NewReader(in), &out, mcpserver.Options{Version: "pinned"}); err != nil {
		t.Fatal(err)
	}
	var listed struct {
		ID     int `json:"id"`
		Result struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() && listed.ID != 2 {
		listed.ID = 0
		if err := json.Unmarshal(sc.Bytes(), &listed); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
	}
	if listed.ID != 2 || len(listed.Result.Tools) == 0 {
		t.Fatalf("no tools/list answer in %s", out.Bytes())
	}

	nameOf := func(tool json.RawMessage) string {
		var v struct{ Name string }
		if err := json.Unmarshal(tool, &v); err != nil {
			t.Fatal(err)
		}
		return v.Name
	}
	tools := listed.Result.Tools
	slices.SortFunc(tools, func(a, b json.RawMessage) int { return strings.Compare(nameOf(a), nameOf(b)) })
	var got bytes.Buffer
	for _, tool := range tools {
		// Indenting keeps the bytes' order: the file is the wire, readable.
		if err := json.Indent(&got, tool, "", "  "); err != nil {
			t.Fatal(err)
		}
		got.WriteByte('\n')
	}

	golden := filepath.Join("testdata", "tools.json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	gotLines, wantLines := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(gotLines), len(wantLines)) {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			t.Fatalf("the tool list differs from %s from line %d:\n got: %s\nwant: %s\n(if the change is meant, rewrite the file with -update)", golden, i+1, g, w)
		}
	}
}
