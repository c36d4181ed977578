package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestRunPlainLinesTellTheWholeStory: without a terminal, `abctl run FILE`
// says on stderr what it did to the agent, which run it started, one line
// per change each starting with the run's id, and the run's end with its
// id; stdout holds the output alone.
func TestRunPlainLinesTellTheWholeStory(t *testing.T) {
	e := newCLIEnv(t)
	file := e.write("lines.yaml", scriptAgent)
	r := e.run("", "run", file, "--no-tui", "--param", `script=steps=2;screenshots=1;output={"ok":true}`).expect(t, 0)
	if strings.TrimSpace(r.stdout) != `{
  "ok": true
}` {
		t.Errorf("stdout is not the output alone:\n%s", r.stdout)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) < 4 {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	if lines[0] != "agent/lines created" {
		t.Errorf("first line %q, want agent/lines created", lines[0])
	}
	m := regexp.MustCompile(`^Run (wr_\d+) started \(\w+\)\.$`).FindStringSubmatch(lines[1])
	if m == nil {
		t.Fatalf("second line %q, want Run wr_… started (status).\n%s", lines[1], r.stderr)
	}
	id := m[1]
	for _, l := range lines[2:] {
		if !strings.HasPrefix(l, id+" ") {
			t.Errorf("a line without the run's id: %q", l)
		}
	}
	contains(t, "stderr", r.stderr, id+" completed, 2 steps", id+" last screenshot: http://")
}
