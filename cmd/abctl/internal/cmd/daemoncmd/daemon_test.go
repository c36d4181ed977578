package daemoncmd_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cli"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/daemoncmd"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/localrun/llm"
)

// These tests run abctl's whole command line (package cli), so that exit
// codes and messages are the ones users get.

const (
	ExitOK    = cmdutil.ExitOK
	ExitError = cmdutil.ExitError
	ExitUsage = cmdutil.ExitUsage
)

// run executes abctl with args, no stdin and an environment of its own (a
// fresh HOME, nothing else), and returns the exit code and both streams.
// The local daemon's own address is a free port, never the user's.
func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	vars := map[string]string{"HOME": t.TempDir()}
	f := cli.NewFactory(ios, func(k string) string { return vars[k] })
	f.LocalAddr = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code = cli.RunFactory(ctx, args, f)
	return code, out.String(), errOut.String()
}

// initDataDir makes a data directory as a first daemon start leaves it: a
// store holding the default organization. It returns the default key.
func initDataDir(t *testing.T) (dir, key string) {
	t.Helper()
	dir = t.TempDir()
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, key, err = st.CreateOrganization(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	return dir, key
}

// authenticate opens the (stopped) store in dir and returns the
// organization key belongs to.
func authenticate(t *testing.T, dir, key string) (store.Organization, error) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return st.Authenticate(t.Context(), key)
}

// decodeCreated checks that out is exactly one JSON object with exactly
// organization_id and api_key, and a newline.
func decodeCreated(t *testing.T, out string) admin.CreatedOrganization {
	t.Helper()
	if !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 {
		t.Fatalf("stdout = %q, want one JSON object and a newline", out)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(out), &fields); err != nil {
		t.Fatalf("stdout = %q: %v", out, err)
	}
	id, _ := fields["organization_id"].(string)
	key, _ := fields["api_key"].(string)
	if len(fields) != 2 || !strings.HasPrefix(id, "o_") || !strings.HasPrefix(key, store.APIKeyPrefix) {
		t.Fatalf("stdout = %s, want exactly organization_id and api_key", out)
	}
	return admin.CreatedOrganization{OrganizationID: id, APIKey: key}
}

func TestDaemonOrgsCreateStoppedJSON(t *testing.T) {
	dir, _ := initDataDir(t)
	code, stdout, stderr := run(t, "daemon", "orgs", "create", "acme", "--data-dir", dir, "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if stderr != "" {
		t.Errorf("stderr = %q, want nothing with -o json", stderr)
	}
	created := decodeCreated(t, stdout)
	org, err := authenticate(t, dir, created.APIKey)
	if err != nil {
		t.Fatalf("the printed key does not authenticate: %v", err)
	}
	if org.ID != created.OrganizationID || org.Name != "acme" {
		t.Errorf("the key belongs to %+v, want %s named acme", org, created.OrganizationID)
	}
}

func TestDaemonOrgsCreateStoppedText(t *testing.T) {
	dir, _ := initDataDir(t)
	// The flag before the subcommand works too: --data-dir belongs to daemon.
	code, stdout, stderr := run(t, "daemon", "--data-dir", dir, "orgs", "create", "  Team B ")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	key := strings.TrimSuffix(stdout, "\n")
	if !strings.HasPrefix(key, store.APIKeyPrefix) || strings.ContainsAny(key, " \n") {
		t.Fatalf("stdout = %q, want the key alone on a line", stdout)
	}
	org, err := authenticate(t, dir, key)
	if err != nil {
		t.Fatalf("the printed key does not authenticate: %v", err)
	}
	if org.Name != "Team B" {
		t.Errorf("name %q, want the trimmed %q", org.Name, "Team B")
	}
	if !strings.Contains(stderr, "Created organization "+org.ID+` "Team B"`) || strings.Contains(stderr, key) {
		t.Errorf("stderr = %q, want a sentence naming %s and not the key", stderr, org.ID)
	}

	code, stdout, stderr = run(t, "daemon", "orgs", "list", "--data-dir", dir)
	if code != ExitOK {
		t.Fatalf("list: exit %d, stderr %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ORGANIZATION_ID") || !strings.Contains(lines[1], "default") ||
		!strings.HasPrefix(lines[2], org.ID) || !strings.Contains(lines[2], "Team B") {
		t.Errorf("list = %q", stdout)
	}
}

func TestDaemonOrgsUsageErrors(t *testing.T) {
	dir, _ := initDataDir(t)
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no name", []string{"create"}, "takes exactly one argument"},
		{"two names", []string{"create", "a", "b"}, "takes exactly one argument"},
		{"empty", []string{"create", ""}, "organization name is empty"},
		{"blank", []string{"create", "   "}, "organization name is empty"},
		{"too long", []string{"create", strings.Repeat("x", 256)}, "at most 255"},
		{"newline", []string{"create", "a\nb"}, "control character U+000A"},
		{"NUL", []string{"create", "a\x00b"}, "control character U+0000"},
		{"bad output", []string{"create", "acme", "-o", "yaml"}, "--output must be text or json"},
		{"list argument", []string{"list", "x"}, "takes no arguments"},
		{"unknown subcommand", []string{"crate"}, `unknown command "crate" for "abctl daemon orgs"; did you mean create?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"daemon", "orgs", "--data-dir", dir}, tc.args...)
			code, stdout, stderr := run(t, args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, ExitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.Contains(stderr, tc.wantErr) || !strings.Contains(stderr, "--help' for usage") {
				t.Errorf("stderr = %q, want %q and the usage hint", stderr, tc.wantErr)
			}
		})
	}
	// None of them created anything.
	code, stdout, _ := run(t, "daemon", "orgs", "list", "--data-dir", dir, "-o", "json")
	if code != ExitOK || strings.Count(stdout, "organization_id") != 1 {
		t.Errorf("after usage errors: exit %d, %s", code, stdout)
	}
}

func TestDaemonOrgsNeedAStore(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := run(t, "daemon", "orgs", "create", "acme", "--data-dir", dir)
	if code != ExitError || stdout != "" || !strings.Contains(stderr, "no abctl store in "+dir) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, datadir.StoreFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a store was created: %v", err)
	}
}

// startDaemon runs daemon.Run on 127.0.0.1:0 over dir until the test ends.
func startDaemon(t *testing.T, dir string) (addr string, stop func() error) {
	t.Helper()
	return daemontest.Start(t, dir, daemon.Config{})
}

func TestDaemonOrgsThroughRunningDaemon(t *testing.T) {
	dir := t.TempDir()
	addr, stop := startDaemon(t, dir)

	code, stdout, stderr := run(t, "daemon", "orgs", "create", "acme", "--data-dir", dir, "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	created := decodeCreated(t, stdout)

	code, stdout, stderr = run(t, "daemon", "orgs", "create", "other", "--data-dir", dir)
	if code != ExitOK || !strings.HasPrefix(stdout, store.APIKeyPrefix) || !strings.Contains(stderr, "Created organization") {
		t.Fatalf("text create: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	code, stdout, stderr = run(t, "daemon", "orgs", "list", "--data-dir", dir, "-o", "json")
	if code != ExitOK {
		t.Fatalf("list: exit %d, stderr %s", code, stderr)
	}
	var orgs []admin.Organization
	if err := json.Unmarshal([]byte(stdout), &orgs); err != nil {
		t.Fatalf("list = %q: %v", stdout, err)
	}
	if len(orgs) != 3 || orgs[0].Name != "default" || orgs[1].OrganizationID != created.OrganizationID || orgs[2].Name != "other" {
		t.Errorf("list = %s", stdout)
	}

	// The key works against the daemon, and sees only its organization.
	defaultKey, err := os.ReadFile(filepath.Join(dir, datadir.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	mk := func(key string) *client.Client {
		c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key), client.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	def, acme := mk(strings.TrimSpace(string(defaultKey))), mk(created.APIKey)
	agent, err := def.Agents.Create(t.Context(), &client.AgentDefinition{
		Title: "default's agent",
		WorkflowDefinition: client.WorkflowDefinition{
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acme.Agents.Get(t.Context(), agent.WorkflowPermanentID, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("acme's key gets the default organization's agent: %v, want 404", err)
	}
	if _, err := def.Agents.Get(t.Context(), agent.WorkflowPermanentID, nil); err != nil {
		t.Errorf("the default key cannot get its own agent: %v", err)
	}

	// Once the daemon stops, the same command works on the store directly.
	stop()
	if _, err := os.Stat(filepath.Join(dir, datadir.StateFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file after shutdown: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, datadir.AdminSocketName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("admin socket after shutdown: %v", err)
	}
	code, stdout, stderr = run(t, "daemon", "orgs", "create", "after", "--data-dir", dir, "-o", "json")
	if code != ExitOK {
		t.Fatalf("after stop: exit %d, stderr %s", code, stderr)
	}
	if org, err := authenticate(t, dir, decodeCreated(t, stdout).APIKey); err != nil || org.Name != "after" {
		t.Errorf("after stop: %+v, %v", org, err)
	}
}

func TestDaemonOrgsStaleStateFile(t *testing.T) {
	dir, _ := initDataDir(t)
	// Another process holds the store, and daemon.json says a daemon runs,
	// but nothing answers on the admin socket: a daemon that crashed, say.
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	state := `{"addr":"127.0.0.1:1","pid":1}`
	if err := os.WriteFile(filepath.Join(dir, datadir.StateFileName), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "daemon", "orgs", "create", "acme", "--data-dir", dir)
	want := "a daemon holds " + dir + " but does not answer on its admin socket " + filepath.Join(dir, datadir.AdminSocketName)
	if code != ExitError || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, stdout, stderr, want)
	}
}

func TestDaemonOrgsLockedWithoutStateFile(t *testing.T) {
	daemoncmd.SetLockedWait(t, 300*time.Millisecond)
	dir, _ := initDataDir(t)
	st, err := boltstore.Open(filepath.Join(dir, datadir.StoreFileName), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	code, stdout, stderr := run(t, "daemon", "orgs", "list", "--data-dir", dir)
	if code != ExitError || stdout != "" || !strings.Contains(stderr, "is locked by another process") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestDaemonFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"daemon", "--data-dir", dir, "--workers", "-1"}, "--workers must be 1 or more"},
		{[]string{"daemon", "--data-dir", dir, "--webhook-timeout", "-5s"}, "--webhook-timeout must be positive"},
		{[]string{"daemon", "--data-dir", dir, "--workers", "two"}, "invalid argument"},
		{[]string{"daemon", "--data-dir", dir, "--action-idle", "200ms"}, "--action-idle must be at least 1s"},
		{[]string{"daemon", "--data-dir", dir, "--chromium", filepath.Join(dir, "no-such-chromium")}, "is not an executable file"},
		{[]string{"daemon", "--data-dir", dir, "--browser-address", "127.0.0.1:9222"}, "is not a URL with a host"},
		{[]string{"daemon", "--data-dir", dir, "--browser-address", "ftp://127.0.0.1:9222"}, "the scheme must be http, https, ws or wss"},
		{[]string{"daemon", "--data-dir", dir, "--browser-address", "http://127.0.0.1:9222", "--chromium", "/bin/sh"}, "cannot be combined"},
	} {
		code, stdout, stderr := run(t, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	// Nothing was created by the refused starts.
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused start wrote %d entries into the data directory", len(entries))
	}
}

// TestDaemonHelpModelDefault: 'abctl daemon --help' gives the model's
// default that the code uses.
func TestDaemonHelpModelDefault(t *testing.T) {
	code, stdout, stderr := run(t, "daemon", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	if want := "a local Ollama at " + llm.DefaultOllamaBaseURL; !strings.Contains(stdout, want) {
		t.Errorf("daemon --help lacks %q:\n%s", want, stdout)
	}
}
