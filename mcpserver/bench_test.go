package mcpserver_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
)

// BenchmarkWorkflowStatus compares reading a run through the tools with
// reading it through the API directly (the ceiling: the tools add their
// protocol on top of it). Compare the medians of the sub-benchmarks:
//
//	go test ./mcpserver -run XXX -bench WorkflowStatus -count 5
func BenchmarkWorkflowStatus(b *testing.B) {
	e := startEnv(b, false)
	run, err := e.c.Runs.StartTask(b.Context(), &client.TaskRunRequest{Prompt: "script: steps=1"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.c.Runs.Wait(b.Context(), run.RunID, fastPoll); err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"run_id": run.RunID}

	b.Run("api", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.c.Runs.Get(b.Context(), run.RunID); err != nil {
				b.Fatal(err)
			}
		}
	})
	tool := func(s *mcp.ClientSession) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				res, err := s.CallTool(b.Context(), &mcp.CallToolParams{Name: "skyvern_workflow_status", Arguments: args})
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
		}
	}
	b.Run("stdio_tool", tool(e.stdioSession(b)))
	b.Run("http_tool", tool(e.httpSession(b, testKey)))
}
