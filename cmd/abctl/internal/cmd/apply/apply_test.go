package apply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
