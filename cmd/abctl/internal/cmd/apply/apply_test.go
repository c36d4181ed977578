package apply

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

const agentFile = `title: Open a page
workflow_definition:
  parameters: []
  blocks:
    - block_type: goto_url
      label: open
      url: https://example.com/
`

// parse runs `abctl apply args...` up to the options, and returns them
// (nil when runF was not reached) and the error.
func parse(t *testing.T, args ...string) (*ApplyOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	var got *ApplyOptions
	err := cmdtest.Exec(NewCmdApply(f, func(o *ApplyOptions) error { got = o; return nil }), args...)
	return got, err
}

func TestFlags(t *testing.T) {
	o, err := parse(t, "-f", "a.yaml", "--filename", "agents/", "-R", "--dry-run", "--prune", "-y")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Files.Files, " ") != "a.yaml agents/" || !o.Files.Recursive || !o.DryRun || !o.Prune || !o.Yes {
		t.Errorf("options %+v", o)
	}
	if o.IO == nil || o.Client == nil {
		t.Error("the options lack the streams or the client")
	}
	o, err = parse(t, "-f", "a.yaml")
	if err != nil || o.DryRun || o.Prune || o.Yes || o.Files.Recursive {
		t.Errorf("defaults: %+v %v", o, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give the agent files with -f"},
		{[]string{"--dry-run"}, "give the agent files with -f"},
		{[]string{"agents/"}, "takes no arguments"},
		{[]string{"-f"}, "flag needs an argument"},
	} {
		o, err := parse(t, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("apply %q: %v (reached the run: %v), want a usage error %q", tc.args, err, o != nil, tc.want)
		}
	}
}

// TestRunChecksBeforeTheService: the agent files, and --prune without a
// terminal or --yes, are refused before the service is asked anything.
func TestRunChecksBeforeTheService(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "open.yaml")
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(good, []byte(agentFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("title: x\nworkflow_definition: {blocks: [{block_type: nope}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := cmdtest.NewFactory(t, nil)
	opts := &ApplyOptions{IO: f.IO, Client: cmdtest.NoClient(t), Files: cmdutil.FileFlags{Files: []string{good, bad}}}
	err := runApply(t.Context(), opts)
	if cmdtest.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "bad.yml") {
		t.Errorf("a bad file: %v (exit %d), want exit 2 naming it", err, cmdtest.ExitCode(err))
	}

	opts.Files.Files, opts.Prune = []string{good}, true
	err = runApply(t.Context(), opts)
	if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "--prune deletes agents: add --yes") {
		t.Errorf("--prune without --yes: %v", err)
	}
}

// exported is an agent file as the hosted service exports one: a key it
// ignores (cache_actions), a block type newer than abctl, a reference to a
// name the agent does not declare.
const exported = `title: Download invoices
workflow_definition:
  parameters: []
  blocks:
    - block_type: goto_url
      label: open
      url: https://example.com/invoices
      cache_actions: true
    - block_type: browser_task
      label: fetch
      prompt: Download the invoice of {{ invoice_date }}
`

func TestValidateFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want agentfile.Validation
	}{
		{nil, agentfile.ValidateWarn},
		{[]string{"--validate=strict"}, agentfile.ValidateStrict},
		{[]string{"--validate"}, agentfile.ValidateStrict}, // as kubectl's
		{[]string{"--validate=ignore"}, agentfile.ValidateIgnore},
		{[]string{"--validate=false"}, agentfile.ValidateIgnore},
		{[]string{"--validate=warn"}, agentfile.ValidateWarn},
	} {
		o, err := parse(t, append([]string{"-f", "a.yaml"}, tc.args...)...)
		if err != nil || o.Files.Validation != tc.want {
			t.Errorf("apply %q: %v, validation %v; want %v", tc.args, err, o, tc.want)
		}
	}
	o, err := parse(t, "-f", "a.yaml", "--validate=loose")
	if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "strict, warn or ignore") {
		t.Errorf("--validate=loose: %v (reached the run: %v)", err, o != nil)
	}
	// As with kubectl's flag, a mode is given with "=": a word after a
	// bare --validate is an argument.
	if o, err := parse(t, "-f", "a.yaml", "--validate", "ignore"); o != nil || !cmdtest.IsUsage(err) {
		t.Errorf("--validate ignore: %v (reached the run: %v)", err, o != nil)
	}
}

// TestRunValidation: an exported definition applies with its warnings on
// stderr (file, line, key) and nothing on stdout by default; strict
// refuses it before the service is asked; ignore says nothing.
func TestRunValidation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "invoices.yaml")
	if err := os.WriteFile(file, []byte(exported), 0o644); err != nil {
		t.Fatal(err)
	}
	noService := errors.New("no service here")
	run := func(v agentfile.Validation) (*cmdtest.Streams, error) {
		f, s := cmdtest.NewFactory(t, nil)
		opts := &ApplyOptions{IO: f.IO, Files: cmdutil.FileFlags{Files: []string{file}, Validation: v},
			Client: func(context.Context) (*client.Client, error) { return nil, noService }}
		if v == agentfile.ValidateStrict {
			opts.Client = cmdtest.NoClient(t)
		}
		return s, runApply(t.Context(), opts)
	}

	s, err := run(agentfile.ValidateWarn)
	if !errors.Is(err, noService) {
		t.Fatalf("warn: %v, want the files loaded and the service asked", err)
	}
	for _, want := range []string{
		file + `:8:7: warning: agent "invoices", block "open": unknown key "cache_actions"`,
		file + `:9:19: warning: agent "invoices", block "fetch": block_type "browser_task"`,
		file + `:11:15: warning: agent "invoices", block "fetch": {{ invoice_date }} in "prompt" is not defined`,
	} {
		if !strings.Contains(s.ErrOut.String(), want) {
			t.Errorf("warn: stderr lacks %q:\n%s", want, s.ErrOut)
		}
	}
	if s.Out.Len() != 0 {
		t.Errorf("warn: stdout %q", s.Out)
	}

	s, err = run(agentfile.ValidateStrict)
	if cmdtest.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), `unknown key "cache_actions"`) ||
		strings.Contains(err.Error(), "warning:") || s.ErrOut.Len() != 0 {
		t.Errorf("strict: %v (exit %d), stderr %q", err, cmdtest.ExitCode(err), s.ErrOut)
	}

	s, err = run(agentfile.ValidateIgnore)
	if !errors.Is(err, noService) || s.ErrOut.Len() != 0 || s.Out.Len() != 0 {
		t.Errorf("ignore: %v, stderr %q, stdout %q", err, s.ErrOut, s.Out)
	}
}
