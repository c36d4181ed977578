package examples

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// severalDaemonsScript is the example, relative to the repository's root.
const severalDaemonsScript = "examples/several-daemons/try.sh"

// TestSeveralDaemons runs examples/several-daemons/try.sh as a person would,
// with the abctl binary this package builds and the test site served here:
// a PostgreSQL server of its own, two daemons on its database, runs started
// through both. It checks what the script says and what is certain
// whatever the timing: the agent applied through one daemon is listed
// through the other, every run started completes, each is executed by
// exactly one daemon (which one is up to the queue), and a run's file is
// read through the daemon that did not execute it.
func TestSeveralDaemons(t *testing.T) {
	if !strings.Contains(readmeText(t), "### `several-daemons/try.sh`") {
		t.Errorf("examples/README.md has no section for %s (a heading ### `several-daemons/try.sh`)", severalDaemonsScript)
	}
	needChromium(t)
	needPostgres(t)
	bash := needBash(t)
	bin := abctlBinary(t)
	site := startSite(t)

	const runs = 4
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ABCTL_") { // the user's own settings would point elsewhere
			env = append(env, kv)
		}
	}
	env = append(env, "ABCTL="+filepath.Join(bin, "abctl"), "SITE="+site.URL, "RUNS="+strconv.Itoa(runs), "NO_COLOR=1")

	res := runScript(t, env, bash, severalDaemonsScript)
	if res.code != 0 {
		t.Fatalf("%s failed\n%s", severalDaemonsScript, res)
	}
	out := res.stdout

	// One database: applied through daemon 1, listed through daemon 2.
	listed := regexp.MustCompile(`(?m)^== abctl get agents, through daemon 2:\n(?:.*\n)*?quickstart\s`)
	if !strings.Contains(out, "agent/quickstart created") || !listed.MatchString(out) {
		t.Errorf("the agent applied through daemon 1 is not listed through daemon 2\n%s", res)
	}

	// Every run started completed.
	started := map[string]bool{}
	through := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^== run (wr_\w+) started through daemon ([12])$`).FindAllStringSubmatch(out, -1) {
		started[m[1]] = true
		through[m[2]] = true
	}
	if len(started) != runs || len(through) != 2 {
		t.Fatalf("want %d runs started through both daemons, got %v through %v\n%s", runs, started, through, res)
	}
	for id := range started {
		if !regexp.MustCompile(`(?m)^== run ` + id + ` completed \(followed through daemon [12]\)$`).MatchString(out) {
			t.Errorf("run %s: not reported completed\n%s", id, res)
		}
	}

	// Each executed once, by one daemon or the other.
	executed := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^daemon [12] executed (\d+) run\(s\):(.*)$`).FindAllStringSubmatch(out, -1) {
		for _, id := range strings.Fields(m[2]) {
			executed[id]++
		}
	}
	for id := range started {
		if executed[id] != 1 {
			t.Errorf("run %s executed %d times by the daemons, want once\n%s", id, executed[id], res)
		}
	}
	if len(executed) != runs {
		t.Errorf("the daemons executed %v, want exactly the runs started %v", executed, started)
	}

	// The shared run files, read through the other daemon.
	if !regexp.MustCompile(`(?m)^== read a_\w+ \([1-9]\d* bytes\) through daemon [12]$`).MatchString(out) {
		t.Errorf("no run file read through the other daemon\n%s", res)
	}
	if !strings.Contains(out, fmt.Sprintf("== all %d runs completed, each executed by exactly one daemon", runs)) {
		t.Errorf("the script does not end saying that all runs completed\n%s", res)
	}
}

// runScript runs a script of the repository as a person would and returns
// what it did. On a timeout it gets SIGTERM, which its trap answers by
// stopping what it started, and is killed if it is still there a minute on.
func runScript(t *testing.T, env []string, bash, script string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, script)
	cmd.Dir, cmd.Env = repoRoot, env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	return collect(t, ctx, cmd, script)
}

// needPostgres skips the test when PostgreSQL's programs are missing, found
// as the examples look for them: on PATH, else in Debian's
// /usr/lib/postgresql/VERSION/bin. As root it also needs the postgres user
// to run the server as.
func needPostgres(t *testing.T) {
	t.Helper()
	found := false
	if _, err := exec.LookPath("initdb"); err == nil {
		found = true
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) > 0 {
		found = true
	}
	if !found {
		t.Skip("PostgreSQL is not installed (Debian: apt-get install postgresql): the several-daemons example runs one")
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			t.Skip("running as root without a postgres user to run PostgreSQL as (Debian's postgresql package makes one)")
		}
	}
}
