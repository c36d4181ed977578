package client_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/abctl/abctl/client"
)

// BenchmarkDecodeWorkflowRun decodes a complete workflow run response (the
// reply of GET /v1/runs/{id} for a finished agent run, with output,
// downloaded files, screenshots and the request echo).
func BenchmarkDecodeWorkflowRun(b *testing.B) {
	data, err := os.ReadFile("testdata/run_workflow.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var run client.Run
		if err := json.Unmarshal(data, &run); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeWorkflowRunGeneric is the same decode into a map, the
// floor any typed decode of this document is measured against.
func BenchmarkDecodeWorkflowRunGeneric(b *testing.B) {
	data, err := os.ReadFile("testdata/run_workflow.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
