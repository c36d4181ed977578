package diff

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
)

func TestFlags(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DiffOptions
	cmd := NewCmdDiff(f, func(o *DiffOptions) error { got = o; return nil })
	if err := cmdtest.Exec(cmd, "-f", "agents/", "-R"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Files.Files, ",") != "agents/" || !got.Files.Recursive {
		t.Errorf("options %+v", got)
	}

	got = nil
	err := cmdtest.Exec(NewCmdDiff(f, func(o *DiffOptions) error { got = o; return nil }))
	if got != nil || !cmdtest.IsUsage(err) || cmdtest.ExitCode(err) != 2 {
		t.Errorf("without -f: %v, want a usage error before the run", err)
	}
}

// TestErrorsExitTwoOrMore: diff(1)'s statuses: 1 is "differences", so
// every error exits 2 or more.
func TestErrorsExitTwoOrMore(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"plain", errors.New("connection refused"), 2},
		{"command failed", &cmdutil.CodeError{Code: 1, Err: errors.New("failed")}, 2},
		{"service error", fmt.Errorf("x: %w", &client.Error{StatusCode: 500}), 2},
		{"usage", cmdutil.UsageErrorf("bad"), 2},
		{"agent file", &cmdutil.CodeError{Code: 2, Err: errors.New("a.yaml:1: bad")}, 2},
		{"refused key", &client.Error{StatusCode: 403}, 1},
		{"no key", &cmdutil.NoKeyError{Settings: &config.Settings{}}, 1},
		{"timed out", cmdutil.Silent(3), 3},
	} {
		got := cmdutil.DiffError(tc.err)
		if cmdtest.ExitCode(got) != tc.want {
			t.Errorf("%s: exit %d, want %d", tc.name, cmdtest.ExitCode(got), tc.want)
		}
		if got.Error() != tc.err.Error() {
			t.Errorf("%s: message %q, want %q", tc.name, got.Error(), tc.err.Error())
		}
	}
	// A refused key keeps its own status (4), decided by the root from the
	// error itself.
	var api *client.Error
	if !errors.As(cmdutil.DiffError(&client.Error{StatusCode: 401}), &api) {
		t.Error("a refused key lost its service error")
	}
}

func TestRunErrors(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	opts := &DiffOptions{IO: f.IO, Client: cmdtest.NoClient(t), Files: cmdutil.FileFlags{Files: []string{"/no/such/dir"}}}
	if err := runDiff(t.Context(), opts); cmdtest.ExitCode(err) != 2 || !strings.Contains(err.Error(), "/no/such/dir") {
		t.Errorf("a missing file: %v", err)
	}
	opts.Files.Files = []string{"-"}
	f.IO.In = strings.NewReader("name: open\ntitle: Open\nworkflow_definition:\n  blocks:\n    - block_type: goto_url\n      label: open\n      url: https://example.com/\n")
	opts.IO = f.IO
	opts.Client = func(context.Context) (*client.Client, error) { return nil, errors.New("no service here") }
	if err := runDiff(t.Context(), opts); cmdtest.ExitCode(err) != 2 || err.Error() != "no service here" {
		t.Errorf("a client that cannot be made: %v (exit %d), want exit 2", err, cmdtest.ExitCode(err))
	}
}

// TestValidation: diff checks the files as apply does, with --validate;
// its warnings go to stderr, so that stdout holds only the diff; strict
// makes them an error of exit status 2.
func TestValidation(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DiffOptions
	if err := cmdtest.Exec(NewCmdDiff(f, func(o *DiffOptions) error { got = o; return nil }), "-f", "a.yaml", "--validate=ignore"); err != nil ||
		got.Files.Validation != agentfile.ValidateIgnore {
		t.Fatalf("--validate=ignore: %v, %+v", err, got)
	}
	if err := cmdtest.Exec(NewCmdDiff(f, func(o *DiffOptions) error { got = o; return nil }), "-f", "a.yaml"); err != nil ||
		got.Files.Validation != agentfile.ValidateWarn {
		t.Fatalf("default: %v, %+v", err, got)
	}

	const exported = "name: open\ntitle: Open\ncode_artifact_metadata: {generated: true}\nworkflow_definition:\n" +
		"  blocks:\n    - block_type: goto_url\n      label: open\n      url: https://example.com/\n"
	noService := errors.New("no service here")
	for _, tc := range []struct {
		mode       agentfile.Validation
		wantErr    string
		wantStderr string
	}{
		{agentfile.ValidateWarn, noService.Error(), `<stdin>:3:1: warning: agent "open": unknown key "code_artifact_metadata"`},
		{agentfile.ValidateStrict, `<stdin>:3:1: agent "open": unknown key "code_artifact_metadata"`, ""},
		{agentfile.ValidateIgnore, noService.Error(), ""},
	} {
		f, s := cmdtest.NewFactory(t, nil)
		f.IO.In = strings.NewReader(exported)
		opts := &DiffOptions{IO: f.IO, Files: cmdutil.FileFlags{Files: []string{"-"}, Validation: tc.mode},
			Client: func(context.Context) (*client.Client, error) { return nil, noService }}
		err := runDiff(t.Context(), opts)
		if err == nil || cmdtest.ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: %v (exit %d), want exit 2 with %q", tc.mode, err, cmdtest.ExitCode(err), tc.wantErr)
		}
		if tc.wantStderr == "" && s.ErrOut.Len() != 0 || !strings.Contains(s.ErrOut.String(), tc.wantStderr) {
			t.Errorf("%s: stderr %q, want %q", tc.mode, s.ErrOut, tc.wantStderr)
		}
		if s.Out.Len() != 0 {
			t.Errorf("%s: stdout %q", tc.mode, s.Out)
		}
	}
}
