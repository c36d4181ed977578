package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
)

func TestApplyDir(t *testing.T) {
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: "example-key"})
	env := map[string]string{"ABCTL_BASE_URL": "http://" + addr, "ABCTL_API_KEY": "example-key"}
	getenv := func(k string) string { return env[k] }
	// The project's own example agents, and one more to change.
	dir := t.TempDir()
	examples, err := filepath.Glob("../../agents/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example agents found (%v)", err)
	}
	for _, src := range examples {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, filepath.Base(src)), string(b))
	}
	write(t, filepath.Join(dir, "sub", "pause.yaml"), "title: Pause\nworkflow_definition:\n  blocks:\n    - {block_type: wait, label: pause, wait_sec: 1}\n")

	var out bytes.Buffer
	if err := run(t.Context(), []string{dir}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), " created\n"); n != len(examples)+1 {
		t.Errorf("first run:\n%s", out.String())
	}
	out.Reset()
	if err := run(t.Context(), []string{dir}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), " unchanged\n"); n != len(examples)+1 {
		t.Errorf("second run:\n%s", out.String())
	}
	write(t, filepath.Join(dir, "sub", "pause.yaml"), "title: Pause\nworkflow_definition:\n  blocks:\n    - {block_type: wait, label: pause, wait_sec: 2}\n")
	out.Reset()
	if err := run(t.Context(), []string{dir}, getenv, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pause updated\n") || strings.Count(out.String(), "updated") != 1 {
		t.Errorf("after a change:\n%s", out.String())
	}
	c, _ := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey("example-key"))
	agents, err := c.Agents.List(t.Context(), &client.ListAgentsOptions{PageSize: 100})
	if err != nil || len(agents) != len(examples)+1 {
		t.Errorf("%d agents (%v), want %d", len(agents), err, len(examples)+1)
	}
	// A broken file: every problem, nothing applied.
	write(t, filepath.Join(dir, "broken.yaml"), "title: Broken\nworkflow_definition:\n  blocks:\n    - {block_type: goto_url, label: x, urll: y}\n")
	err = run(t.Context(), []string{dir}, getenv, &out)
	if err == nil || !strings.Contains(err.Error(), "broken.yaml:4") {
		t.Errorf("a broken file gave %v", err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
