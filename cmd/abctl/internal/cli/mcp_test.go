package cli

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// TestMCPCommand: `abctl mcp` serves the tools over its stdin and stdout
// against the current profile (here the test daemon, through
// ABCTL_BASE_URL and ABCTL_API_KEY); the SDK's own client creates an
// agent, runs it, waits for it and reads its output; nothing but protocol
// goes to stdout.
func TestMCPCommand(t *testing.T) {
	e := newCLIEnv(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errOut := &lockedBuffer{}
	ios := iostreams.New(inR, outW, errOut, func(k string) string { return e.vars[k] })
	f := newTestFactory(t, ios, e.vars)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- RunFactory(ctx, []string{"mcp"}, f)
		outW.Close()
	}()

	c := mcp.NewClient(&mcp.Implementation{Name: "abctl-cli-test", Version: "1"}, nil)
	s, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"skyvern_workflow_create", "skyvern_workflow_run", "skyvern_run_task", "skyvern_workflow_status"} {
		if !names[want] {
			t.Errorf("abctl mcp lacks the tool %s", want)
		}
	}
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s answered an error: %+v", name, res.Content)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		json.Unmarshal(b, &out)
		return out
	}
	created := call("skyvern_workflow_create", map[string]any{"definition": strings.Replace(scriptAgent, "title: Scripted", "title: From an assistant", 1)})
	id, _ := created["workflow_id"].(string)
	if !strings.HasPrefix(id, "wpid_") {
		t.Fatalf("workflow_create answered %v", created)
	}
	ran := call("skyvern_workflow_run", map[string]any{"workflow_id": id, "wait": true, "timeout_seconds": 30,
		"parameters": `{"script": "steps=1;output={\"answer\":42}"}`})
	b, _ := json.Marshal(ran)
	if !strings.Contains(string(b), `"answer":42`) || !strings.Contains(string(b), "completed") {
		t.Errorf("workflow_run answered %s", b)
	}
	s.Close()
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("abctl mcp exited %d; stderr:\n%s", code, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("abctl mcp did not end when its stdin closed")
	}
}

// lockedBuffer is a strings.Builder safe for concurrent writes and reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
