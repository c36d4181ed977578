package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// completionEnv is a daemon with two applied agents (alpha and beta), a
// completed run and a run still going.
type completionEnv struct {
	*cliEnv
	done, going string // run ids
}

func newCompletionEnv(t *testing.T) *completionEnv {
	t.Helper()
	e := &completionEnv{cliEnv: newCLIEnv(t)}
	t.Cleanup(e.exec.ReleaseAll) // the run still going ends before the daemon stops
	e.write("agents/alpha.yaml", "title: Alpha\n"+strings.SplitN(scriptAgent, "\n", 2)[1])
	e.write("agents/beta.yaml", "title: Beta\n"+strings.SplitN(scriptAgent, "\n", 2)[1])
	e.run("", "apply", "-f", filepath.Join(e.dir, "agents")).expect(t, 0)
	start := func(script string) string {
		r := e.run("", "run", "--agent", "alpha", "--detach", "--param", "script="+script).expect(t, 0)
		return strings.TrimSpace(r.stdout)
	}
	e.done = start("steps=1")
	e.going = start("steps=1;block")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := e.client.Runs.Wait(ctx, e.done, &client.WaitOptions{Interval: 20 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return e
}

// complete runs `abctl __complete ARGS...` (what the shell scripts call)
// and returns the candidates without their descriptions, and the
// directive.
func (e *cliEnv) complete(args ...string) (cands []string, directive string) {
	e.t.Helper()
	r := e.run("", append([]string{"__complete"}, args...)...).expect(e.t, 0)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	directive = lines[len(lines)-1]
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t")
		cands = append(cands, name)
	}
	return cands, directive
}

// TestCompleteFromTheService: the arguments that name things complete from
// the service: agent names for delete agent and tags get, run ids for runs
// watch, cancel (the runs still going) and artifacts and get run, and the
// kinds after get, their singular names included.
func TestCompleteFromTheService(t *testing.T) {
	e := newCompletionEnv(t)
	const noFiles = ":4"
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"get", ""}, []string{"agent", "agents", "folder", "folders", "run", "runs", "tag", "tags"}},
		{[]string{"get", "ru"}, []string{"run", "runs"}},
		{[]string{"get", "agent", ""}, []string{"alpha", "beta"}},
		{[]string{"get", "agent", "alpha", ""}, []string{"beta"}},
		{[]string{"run", "--agent", "al"}, []string{"alpha"}},
		{[]string{"get", "run", ""}, []string{e.done, e.going}},
		{[]string{"delete", "agent", ""}, []string{"alpha", "beta"}},
		{[]string{"delete", "agent", "alpha", ""}, []string{"beta"}},
		{[]string{"delete", "agents", "b"}, []string{"beta"}},
		{[]string{"tags", "get", ""}, []string{"alpha", "beta"}},
		{[]string{"tags", "get", "wr_"}, []string{e.done, e.going}},
		{[]string{"tags", "get", "alpha", ""}, nil},
		{[]string{"runs", "watch", ""}, []string{e.done, e.going}},
		{[]string{"runs", "watch", e.done, ""}, nil},
		{[]string{"runs", "cancel", ""}, []string{e.going}},
		{[]string{"runs", "artifacts", ""}, []string{e.done, e.going}},
		{[]string{"action", "click", "--run", ""}, []string{e.going}},
	} {
		got, directive := e.complete(tc.args...)
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) || directive != noFiles {
			t.Errorf("abctl __complete %q: %q %s, want %q %s", tc.args, got, directive, want, noFiles)
		}
	}
}

// TestCompleteQuietWithoutService: with no service to ask, completion
// offers nothing, at once, and says nothing.
func TestCompleteQuietWithoutService(t *testing.T) {
	e := newCLIEnv(t)
	e.vars["ABCTL_BASE_URL"] = "http://" + closedAddr(t)
	for _, args := range [][]string{{"delete", "agent", ""}, {"get", "agent", ""}, {"run", "--agent", ""}, {"runs", "watch", ""}, {"tags", "get", ""}} {
		start := time.Now()
		r := e.run("", append([]string{"__complete"}, args...)...).expect(t, 0)
		if r.stdout != ":4\n" {
			t.Errorf("%q with no service: %q", args, r.stdout)
		}
		if s := strings.TrimSpace(r.stderr); s != "Completion ended with directive: ShellCompDirectiveNoFileComp" {
			t.Errorf("%q with no service said: %q", args, r.stderr)
		}
		// Not a timing assertion: a refused connection is not retried,
		// and waiting out the whole timeout would mean it was.
		if d := time.Since(start); d > 5*time.Second {
			t.Logf("%q took %s", args, d)
		}
	}
}

// TestAbctlHelperProcess is abctl itself when the completion test's bash
// runs it (ABCTL_TEST_HELPER=1): the arguments after "--", the
// environment the test gave.
func TestAbctlHelperProcess(t *testing.T) {
	if os.Getenv("ABCTL_TEST_HELPER") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	vars := map[string]string{}
	for _, k := range []string{"HOME", "ABCTL_CONFIG_DIR", "ABCTL_BASE_URL", "ABCTL_API_KEY", "ABCTL_EMBED"} {
		vars[k] = os.Getenv(k)
	}
	ios := iostreams.New(os.Stdin, os.Stdout, os.Stderr, func(k string) string { return vars[k] })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	os.Exit(RunFactory(ctx, args, newTestFactory(t, ios, vars)))
}

// completionDriver sources `abctl completion bash` in a plain bash and
// completes each line as bash would on Tab: COMP_WORDS as bash splits the
// line (at blanks, and at = and :), COMP_CWORD, COMP_LINE, COMP_POINT;
// then it prints "line|candidate|candidate...".
const completionDriver = `
source "$1"
complete -p abctl >/dev/null || { echo "no completion registered for abctl" >&2; exit 1; }
sim() {
  COMP_LINE=$1; COMP_POINT=${#COMP_LINE}; shift
  COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_TYPE=9; COMPREPLY=()
  __start_abctl
  local IFS='|'
  echo "$COMP_LINE|${COMPREPLY[*]}"
}
cd "$2"
sim 'abctl get ' abctl get ''
sim 'abctl get ru' abctl get ru
sim 'abctl delete agent ' abctl delete agent ''
sim 'abctl tags get ' abctl tags get ''
sim 'abctl runs watch ' abctl runs watch ''
sim 'abctl runs cancel ' abctl runs cancel ''
sim 'abctl get agents --output=' abctl get agents --output =
sim 'abctl get agents --output=y' abctl get agents --output = y
sim 'abctl run ' abctl run ''
`

// TestBashCompletionWithoutBashCompletion: `source <(abctl completion
// bash)` works in a bash that has not loaded the bash-completion package
// (a stock Debian's non-login shells, `bash --norc`): no "command not
// found", and Tab offers what the service has, flag values after "=",
// and agent files by their extension.
func TestBashCompletionWithoutBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipped: bash is missing (it is what this test runs)")
	}
	e := newCompletionEnv(t)
	script := e.run("", "completion", "bash").expect(t, 0).stdout
	dir := t.TempDir()
	scriptFile := filepath.Join(dir, "abctl.bash")
	if err := os.WriteFile(scriptFile, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	// abctl on PATH is this test binary, as TestAbctlHelperProcess.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	wrapper := "#!" + bash + "\nexec \"$ABCTL_TEST_BINARY\" -test.run='^TestAbctlHelperProcess$' -- \"$@\"\n"
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "abctl"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	for _, f := range []string{"agent.yaml", "other.json", "notes.txt", "sub/x.yaml"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(work, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", completionDriver, "driver", scriptFile, work)
	cmd.Env = []string{
		"PATH=" + bin + string(os.PathListSeparator) + filepath.Dir(bash),
		"ABCTL_TEST_HELPER=1",
		"ABCTL_TEST_BINARY=" + self,
		// A binary built with -race waits a second as it exits, unless told.
		"GORACE=atexit_sleep_ms=0",
	}
	for k, v := range e.vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	// Calling the completion function by hand, outside a Tab, makes
	// bash's compopt complain; anything else on stderr is a failure.
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if l != "" && !strings.HasSuffix(l, "compopt: not currently executing completion function") {
			t.Errorf("bash said: %s", l)
		}
	}
	if strings.Contains(stderr.String(), "command not found") {
		t.Fatalf("the script needs what a plain bash lacks:\n%s", &stderr)
	}
	got := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		line, cands, _ := strings.Cut(l, "|")
		got[line] = nil
		if cands != "" {
			got[line] = strings.Split(cands, "|")
		}
	}
	for line, want := range map[string][]string{
		"abctl get ":                  {"agent", "agents", "folder", "folders", "run", "runs", "tag", "tags"},
		"abctl get ru":                {"run", "runs"},
		"abctl delete agent ":         {"alpha", "beta"},
		"abctl tags get ":             {"alpha", "beta"},
		"abctl runs watch ":           {e.done, e.going},
		"abctl runs cancel ":          {e.going},
		"abctl get agents --output=":  {"json", "name", "table", "wide", "yaml"},
		"abctl get agents --output=y": {"yaml"},
		"abctl run ":                  {"agent.yaml", "other.json", "sub"},
	} {
		cands, ok := got[line]
		if !ok {
			t.Errorf("%q: not completed; stdout:\n%s\nstderr:\n%s", line, &stdout, &stderr)
			continue
		}
		// Several candidates come with their descriptions, padded:
		// "agent   (List agents...)"; bash shows those.
		for i, c := range cands {
			cands[i] = strings.Fields(c)[0]
		}
		slices.Sort(cands)
		if want = slices.Sorted(slices.Values(want)); !slices.Equal(cands, want) {
			t.Errorf("%q completes to %q, want %q", line, cands, want)
		}
	}
}
