package examples

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuickstartScript runs scripts/quickstart as a new user would, in a
// fresh HOME with GOBIN off PATH: it installs abctl into GOBIN, where it
// stays, runs the quickstart agent, and ends by saying where abctl is and
// how to put its directory on PATH.
func TestQuickstartScript(t *testing.T) {
	needChromium(t)
	bash := needBash(t)
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: scripts/quickstart builds with it")
	}
	home, gobin := t.TempDir(), t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ABCTL_") { // the user's own settings would point elsewhere
			env = append(env, kv)
		}
	}
	// The go command's caches stay where they are, not under the new HOME.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", v, err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	env = append(env, "HOME="+home, "GOBIN="+gobin, "CI=true", "NO_COLOR=1")

	res := run(t, repoRoot, env, bash, filepath.Join("scripts", "quickstart"))
	abctl := filepath.Join(gobin, "abctl")
	if res.code != 0 || !strings.Contains(res.stdout, `"save_pages_output"`) {
		t.Fatalf("scripts/quickstart: want exit status 0 and the quickstart agent's output\n%s", res)
	}
	if fi, err := os.Stat(abctl); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("scripts/quickstart left no abctl to run at %s (go install's GOBIN): %v", abctl, err)
	}
	for _, want := range []string{
		"== installing abctl into " + gobin,
		"== abctl is " + abctl + ", not on your PATH",
		`export PATH="` + gobin + `:$PATH"`,
	} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("scripts/quickstart's stderr says no %q\n%s", want, res)
		}
	}
}
