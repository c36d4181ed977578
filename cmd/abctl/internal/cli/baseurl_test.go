package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
)

// TestGivenBaseURLIsUsedAsGiven: a base URL given explicitly (flag,
// ABCTL_BASE_URL, a profile's base_url) is where the command goes. Nothing
// answers there: the error names that address and where it came from, and
// abctl does not start a daemon of its own instead, even though a daemon
// holds the default data directory (as the README's walk leaves one).
func TestGivenBaseURLIsUsedAsGiven(t *testing.T) {
	home := t.TempDir()
	dataDir := filepath.Join(home, ".local", "share", "abctl") // the default data directory
	running, _ := daemontest.Start(t, dataDir, daemon.Config{})
	closed := "http://" + closedAddr(t)
	configDir := filepath.Join(home, "config")
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// "lab" is a local daemon's profile (it has a data_dir) at an address of
	// its own; "up" is the same at the running daemon's address.
	conf := "profiles:\n" +
		"  lab:\n    base_url: " + closed + "\n    data_dir: " + dataDir + "\n" +
		"  up:\n    base_url: http://" + running + "\n    data_dir: " + dataDir + "\n"
	if err := os.WriteFile(filepath.Join(configDir, "config.yaml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := func(extra ...string) map[string]string {
		m := map[string]string{"HOME": home, "ABCTL_CONFIG_DIR": configDir}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		from string
	}{
		{"flag", vars(), []string{"--base-url", closed}, "flag --base-url"},
		{"environment", vars("ABCTL_BASE_URL", closed), nil, "environment ABCTL_BASE_URL"},
		{"profile", vars(), []string{"--profile", "lab"}, `profile "lab"`},
		{"profile from the environment", vars("ABCTL_PROFILE", "lab"), nil, `profile "lab"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, out, errOut := iostreams.Test()
			f := newTestFactory(t, ios, tc.vars)
			code := RunFactory(t.Context(), append(tc.args, "get", "agents"), f)
			r := result{code: code, stdout: out.String(), stderr: errOut.String()}
			r.expect(t, ExitError)
			contains(t, "stderr", r.stderr, closed, "came from "+tc.from)
			for _, bad := range []string{"locked", "runs one", "start the local daemon"} {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("stderr mentions %q: abctl tried to start a daemon of its own:\n%s", bad, r.stderr)
				}
			}
		})
	}

	// Where a daemon does answer, the given base URL works, with the key
	// file of the profile's data directory.
	ios, _, out, errOut := iostreams.Test()
	f := newTestFactory(t, ios, vars())
	if code := RunFactory(t.Context(), []string{"--profile", "up", "get", "agents", "-o", "name"}, f); code != ExitOK {
		t.Errorf("profile up (%s): exit %d, stderr %s", running, code, errOut.String())
	} else if out.String() != "" || strings.Contains(errOut.String(), "runs one") {
		t.Errorf("profile up: stdout %q, stderr %q", out.String(), errOut.String())
	}
}

// TestNoDaemonNamesTheAddress: when the local daemon's state file names an
// address where nothing answers and abctl may not start one, the error
// names that address.
func TestNoDaemonNamesTheAddress(t *testing.T) {
	home := t.TempDir()
	dataDir := filepath.Join(home, "data")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	dead := closedAddr(t)
	state := `{"addr":"` + dead + `","pid":1}`
	if err := os.WriteFile(filepath.Join(dataDir, datadir.StateFileName), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	ios, _, _, errOut := iostreams.Test()
	f := newTestFactory(t, ios, map[string]string{"HOME": home, "ABCTL_DATA_DIR": dataDir, "ABCTL_EMBED": "false"})
	if code := RunFactory(t.Context(), []string{"get", "agents"}, f); code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	contains(t, "stderr", errOut.String(), "does not answer at "+dead, datadir.StateFileName, "ABCTL_EMBED")
}
