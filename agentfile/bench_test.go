package agentfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/abctl/abctl/agentfile"
)

// benchFiles is how many agent files the benchmarks read: the issue's
// figure for `abctl apply` of a repository that did not change.
const benchFiles = 1000

// writeBenchFiles writes benchFiles small agent files, as a repository of
// agents holds them: a few parameters, three blocks with references.
func writeBenchFiles(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for i := range benchFiles {
		text := fmt.Sprintf(`title: Check order %[1]d
description: Opens the order page and reads its status.
webhook_callback_url: https://hooks.example.com/orders
tags:
  team: orders
workflow_definition:
  parameters:
    - key: order_id
      parameter_type: workflow
      workflow_parameter_type: string
      default_value: "%[1]d"
    - key: site
      parameter_type: workflow
      workflow_parameter_type: string
      default_value: https://shop.example.com
  blocks:
    - label: open
      block_type: goto_url
      url: "{{ site }}/orders/{{ order_id }}"
    - label: read
      block_type: extraction
      data_extraction_goal: Read the status of order {{ order_id }}
      data_schema:
        type: object
        properties:
          status: {type: string}
    - label: notify
      block_type: http_request
      method: POST
      url: https://hooks.example.com/status
      body:
        order: "{{ order_id }}"
        status: "{{ read_output.status }}"
`, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("order-%04d.yaml", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkLoadNormalize1000 is the local part of `abctl apply -f dir` of
// 1,000 unchanged agent files: load and check every file, and normalize
// every definition for the comparison with the service's.
func BenchmarkLoadNormalize1000(b *testing.B) {
	dir := writeBenchFiles(b)
	b.ReportAllocs()
	for b.Loop() {
		agents, err := agentfile.Load([]string{dir}, agentfile.LoadOptions{})
		if err != nil || len(agents) != benchFiles {
			b.Fatalf("%d agents, %v", len(agents), err)
		}
		for _, a := range agents {
			if _, err := agentfile.Normalize(a.Definition); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchFiles/1e3, "µs/file")
}

// BenchmarkReadYAML1000 is the floor of any loader that reports lines:
// read the same files and parse them into yaml.v3 node trees, nothing
// else.
func BenchmarkReadYAML1000(b *testing.B) {
	dir := writeBenchFiles(b)
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			var n yaml.Node
			if err := yaml.Unmarshal(data, &n); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchFiles/1e3, "µs/file")
}
