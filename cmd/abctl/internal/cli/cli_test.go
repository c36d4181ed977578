package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"

	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
)

// run executes abctl with args, no stdin and an environment of its own (a
// fresh HOME, nothing else), and returns the exit code and both streams.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := newTestFactory(t, ios, map[string]string{"HOME": t.TempDir()})
	code = RunFactory(context.Background(), args, f)
	return code, out.String(), errOut.String()
}

func setBuildInfo(t *testing.T, version, commit, date string) {
	t.Helper()
	saved := [3]string{buildinfo.Version, buildinfo.Commit, buildinfo.Date}
	t.Cleanup(func() { buildinfo.Version, buildinfo.Commit, buildinfo.Date = saved[0], saved[1], saved[2] })
	buildinfo.Version, buildinfo.Commit, buildinfo.Date = version, commit, date
}

func TestVersion(t *testing.T) {
	setBuildInfo(t, "1.2.3", "0123abc", "2026-01-31T15:20:42Z")
	const want = "abctl 1.2.3 (commit 0123abc, built 2026-01-31T15:20:42Z)\n"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, args...)
			if code != ExitOK {
				t.Errorf("exit code = %d, want %d", code, ExitOK)
			}
			if stdout != want {
				t.Errorf("stdout = %q, want %q", stdout, want)
			}
			if stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
		})
	}
}

func TestVersionWithoutInjectedValues(t *testing.T) {
	setBuildInfo(t, "", "", "")
	code, stdout, _ := run(t, "--version")
	if code != ExitOK {
		t.Fatalf("exit code = %d, want %d", code, ExitOK)
	}
	// A test binary carries no module version; the exact commit and date depend on
	// how it was built, so only the shape is checked.
	if !strings.HasPrefix(stdout, "abctl dev (commit ") || !strings.Contains(stdout, ", built ") {
		t.Errorf("stdout = %q, want the dev version line", stdout)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr []string // substrings of stderr
	}{
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate" for "abctl"`, "Run 'abctl --help' for usage."}},
		{[]string{"verison"}, []string{`unknown command "verison"`, "did you mean version?"}},
		{[]string{"--frobnicate"}, []string{"unknown flag: --frobnicate", "Run 'abctl --help' for usage."}},
		{[]string{"version", "extra"}, []string{`"abctl version" takes no arguments`, "Run 'abctl version --help' for usage."}},
		{[]string{"version", "--frobnicate"}, []string{"unknown flag: --frobnicate", "Run 'abctl version --help' for usage."}},
		// The usage errors of the commands' options point at the command
		// that ran, whatever name it was called by.
		{[]string{"run"}, []string{"give an agent file, --agent NAME, or --prompt TEXT", "Run 'abctl run --help' for usage."}},
		{[]string{"get", "agent", "x", "-o", "bogus"}, []string{`-o "bogus" is not a format of "abctl get agents"`, "Run 'abctl get agents --help' for usage."}},
		{[]string{"get", "run", "--steps"}, []string{"--steps needs one run id", "Run 'abctl get runs --help' for usage."}},
		{[]string{"apply"}, []string{"give the agent files with -f", "Run 'abctl apply --help' for usage."}},
		{[]string{"diff", "-R"}, []string{"give the agent files with -f", "Run 'abctl diff --help' for usage."}},
		{[]string{"delete", "contact-form"}, []string{"say what to delete", "Run 'abctl delete --help' for usage."}},
		{[]string{"tags", "values", "env", "--create"}, []string{"--create and --color need KEY and VALUE", "Run 'abctl tags values --help' for usage."}},
		{[]string{"runs", "webhook", "retry", "agent/x"}, []string{`"agent/x" names an agent, not a run`, "Run 'abctl runs webhook retry --help' for usage."}},
		// A mistyped command is named as such even with flags after it
		// (issue 30: the parser complained about -f), a mistyped resource
		// of get gets the nearest, and so does a mistyped flag.
		{[]string{"aply", "-f", "x"}, []string{`unknown command "aply" for "abctl"; did you mean apply?`, "Run 'abctl --help' for usage."}},
		{[]string{"aply", "--recursive", "-f", "x"}, []string{`unknown command "aply" for "abctl"; did you mean apply?`}},
		{[]string{"get", "agnts"}, []string{`unknown command "agnts" for "abctl get"; did you mean agents?`, "Run 'abctl get --help' for usage."}},
		{[]string{"get", "agnts", "-o", "json"}, []string{`unknown command "agnts" for "abctl get"; did you mean agents?`}},
		{[]string{"run", "x.yaml", "--parm", "a=1"}, []string{"unknown flag: --parm; did you mean --param?", "Run 'abctl run --help' for usage."}},
		{[]string{"get", "agents", "--outptu", "json"}, []string{"unknown flag: --outptu; did you mean --output?"}},
		{[]string{"get", "agents", "--base-ulr", "x"}, []string{"did you mean --base-url?"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != ExitUsage {
				t.Errorf("exit code = %d, want %d", code, ExitUsage)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, s)
				}
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {}} {
		t.Run(fmt.Sprintf("%q", args), func(t *testing.T) {
			code, stdout, stderr := run(t, args...)
			if code != ExitOK {
				t.Errorf("exit code = %d, want %d", code, ExitOK)
			}
			for _, s := range []string{"abctl drives a browser-automation agent service", "Usage:", "version"} {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout = %q, want it to contain %q", stdout, s)
				}
			}
			if stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
		})
	}
}

func TestNilArgsIgnoresProcessArgs(t *testing.T) {
	ios, _, out, errOut := iostreams.Test()
	f := newTestFactory(t, ios, map[string]string{"HOME": t.TempDir()})
	if code := RunFactory(context.Background(), nil, f); code != ExitOK {
		t.Fatalf("exit code = %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Usage:") {
		t.Errorf("stdout = %q, want the help", out.String())
	}
}

func TestExitCode(t *testing.T) {
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		ctx        context.Context
		err        error
		want       int
		wantStderr string
	}{
		{context.Background(), nil, ExitOK, ""},
		{context.Background(), errors.New("boom"), ExitError, "abctl: boom\n"},
		{context.Background(), context.Canceled, ExitError, "abctl: context canceled\n"},
		{interrupted, fmt.Errorf("get agents: %w", context.Canceled), cmdutil.ExitInterrupt, "abctl: interrupted\n"},
		{
			context.Background(),
			fmt.Errorf("parsing: %w", &cmdutil.UsageError{CmdPath: "abctl get", Err: errors.New("bad flag")}),
			ExitUsage,
			"abctl: parsing: bad flag\nRun 'abctl get --help' for usage.\n",
		},
		{context.Background(), cmdutil.Silent(cmdutil.ExitTimedOut), cmdutil.ExitTimedOut, ""},
		{context.Background(), &cmdutil.CodeError{Code: 2, Err: errors.New("a.yaml:3:1: bad")}, ExitUsage, "abctl: a.yaml:3:1: bad\n"},
		{
			context.Background(),
			fmt.Errorf("get agent x: %w", &client.Error{StatusCode: 404, Detail: "Workflow x not found", RequestID: "r1"}),
			ExitError,
			"abctl: get agent x: the service answered 404: Workflow x not found\nrequest id: r1\n",
		},
		{
			context.Background(),
			&client.Error{StatusCode: 422, Validation: []client.ValidationError{{Loc: []any{"body", "title"}, Msg: "Field required"}}},
			ExitError,
			"abctl: the service answered 422: the request is not valid:\n  body.title: Field required\n",
		},
	}
	for _, tt := range tests {
		ios, _, _, stderr := iostreams.Test()
		f := newTestFactory(t, ios, nil)
		if got := exitCode(tt.ctx, tt.err, f); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
		if stderr.String() != tt.wantStderr {
			t.Errorf("exitCode(%v) wrote %q, want %q", tt.err, stderr.String(), tt.wantStderr)
		}
	}
}

func TestForbiddenHint(t *testing.T) {
	ios, _, _, stderr := iostreams.Test()
	f := newTestFactory(t, ios, map[string]string{"ABCTL_BASE_URL": "http://127.0.0.1:9", "ABCTL_API_KEY": "wrong", "HOME": t.TempDir()})
	err := fmt.Errorf("list the agents: %w", &client.Error{StatusCode: 403, Detail: "Invalid credentials"})
	if got := exitCode(context.Background(), err, f); got != cmdutil.ExitAuth {
		t.Errorf("exit code = %d, want %d", got, cmdutil.ExitAuth)
	}
	for _, want := range []string{"403: Invalid credentials", `profile "local"`, "environment ABCTL_API_KEY", "abctl config view"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "wrong") {
		t.Errorf("stderr shows the key:\n%s", stderr.String())
	}
}
