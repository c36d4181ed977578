package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
)

// run executes abctl with args and returns the exit code and both streams.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, &out, &errOut)
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
	var out, errOut bytes.Buffer
	if code := Run(context.Background(), nil, &out, &errOut); code != ExitOK {
		t.Fatalf("exit code = %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Usage:") {
		t.Errorf("stdout = %q, want the help", out.String())
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err        error
		want       int
		wantStderr string
	}{
		{nil, ExitOK, ""},
		{errors.New("boom"), ExitError, "abctl: boom\n"},
		{context.Canceled, ExitError, "abctl: context canceled\n"},
		{
			fmt.Errorf("parsing: %w", &usageError{cmdPath: "abctl get", err: errors.New("bad flag")}),
			ExitUsage,
			"abctl: parsing: bad flag\nRun 'abctl get --help' for usage.\n",
		},
	}
	for _, tt := range tests {
		var stderr bytes.Buffer
		if got := exitCode(tt.err, &stderr); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
		if stderr.String() != tt.wantStderr {
			t.Errorf("exitCode(%v) wrote %q, want %q", tt.err, stderr.String(), tt.wantStderr)
		}
	}
}
