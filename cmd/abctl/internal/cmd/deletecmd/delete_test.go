package deletecmd

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

func parse(t *testing.T, args ...string) (*DeleteOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DeleteOptions
	err := cmdtest.Exec(NewCmdDelete(f, func(o *DeleteOptions) error { got = o; return nil }), args...)
	return got, err
}

func TestArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		refs string
	}{
		{[]string{"agent", "a", "wpid_1"}, "a wpid_1"},
		{[]string{"agents", "a"}, "a"},
		{[]string{"agent/a", "agent/b"}, "agent/a agent/b"},
		{[]string{"agent"}, ""},
		{[]string{"-f", "old/", "-R", "--yes", "--ignore-not-found"}, ""},
	} {
		o, err := parse(t, tc.args...)
		if err != nil {
			t.Errorf("delete %q: %v", tc.args, err)
			continue
		}
		if strings.Join(o.Refs, " ") != tc.refs {
			t.Errorf("delete %q: refs %q, want %q", tc.args, o.Refs, tc.refs)
		}
	}
	o, err := parse(t, "-f", "old/", "-f", "x.yaml", "-R", "-y", "--ignore-not-found")
	if err != nil || strings.Join(o.Files.Files, ",") != "old/,x.yaml" || !o.Files.Recursive || !o.Yes || !o.IgnoreMissing {
		t.Errorf("flags: %+v %v", o, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"contact-form"}, "say what to delete: 'abctl delete agent NAME', or -f FILE"},
		{[]string{"run/wr_1"}, `"run/wr_1" names a run, not an agent`},
		{[]string{"--nope"}, "unknown flag"},
	} {
		o, err := parse(t, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("delete %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

// TestRunChecksBeforeTheService: nothing to delete, or no way to confirm,
// is a usage error before the service is asked anything.
func TestRunChecksBeforeTheService(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	opts := &DeleteOptions{IO: f.IO, Client: cmdtest.NoClient(t)}
	if err := runDelete(t.Context(), opts); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "name the agents to delete") {
		t.Errorf("nothing named: %v", err)
	}
	opts.Refs = []string{"a"}
	if err := runDelete(t.Context(), opts); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "delete needs --yes") {
		t.Errorf("no terminal, no --yes: %v", err)
	}
	opts.Files = cmdutil.FileFlags{Files: []string{"/no/such/file.yaml"}}
	if err := runDelete(t.Context(), opts); cmdtest.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), "/no/such/file.yaml") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestShown(t *testing.T) {
	for ref, want := range map[string]string{"a": "agent/a", "agent/a": "agent/a", "agents/wpid_1": "agent/wpid_1"} {
		if got := shown(ref); got != want {
			t.Errorf("shown(%q) = %q, want %q", ref, got, want)
		}
	}
}
