package daemon_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
)

// startDaemon runs daemon.Run on 127.0.0.1:0 over dataDir and returns its
// address and a function that stops it and returns Run's error.
func startDaemon(t *testing.T, dataDir string) (addr string, stop func() error) {
	t.Helper()
	return daemontest.Start(t, dataDir, daemon.Config{})
}

func TestRunPublishesStateAndServesAdmin(t *testing.T) {
	dir := t.TempDir()
	addr, stop := startDaemon(t, dir)

	path := filepath.Join(dir, datadir.StateFileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no state file while running: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
	}
	state, err := admin.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if state.Addr != addr || state.PID != os.Getpid() || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(state.AdminToken) {
		t.Errorf("state = %+v, want addr %s, pid %d and a 64-hex token", state, addr, os.Getpid())
	}

	ac, err := admin.NewClient(state)
	if err != nil {
		t.Fatal(err)
	}
	created, err := ac.CreateOrganization(t.Context(), "acme")
	if err != nil {
		t.Fatal(err)
	}

	// Records belong to one organization: the new key does not see the
	// default organization's agent.
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
	agent, err := def.Agents.Create(t.Context(), definition("default's agent"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acme.Agents.Get(t.Context(), agent.WorkflowPermanentID, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("the new organization gets the default one's agent: %v, want 404", err)
	}
	if list, err := acme.Agents.List(t.Context(), nil); err != nil || len(list) != 0 {
		t.Errorf("the new organization lists %d agents (%v), want none", len(list), err)
	}
	own, err := acme.Agents.Create(t.Context(), definition("acme's agent"), nil)
	if err != nil {
		t.Fatalf("the new key cannot create an agent: %v", err)
	}
	if _, err := def.Agents.Get(t.Context(), own.WorkflowPermanentID, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("the default organization gets acme's agent: %v, want 404", err)
	}

	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file after shutdown: %v, want it removed", err)
	}

	// A restart makes a fresh token; the old one no longer works.
	_, stop = startDaemon(t, dir)
	defer stop()
	state2, err := admin.ReadState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if state2.AdminToken == state.AdminToken {
		t.Error("the admin token did not change on restart")
	}
	old, err := admin.NewClient(admin.State{Addr: state2.Addr, AdminToken: state.AdminToken})
	if err != nil {
		t.Fatal(err)
	}
	var ae *admin.Error
	if _, err := old.Organizations(t.Context()); !errors.As(err, &ae) || ae.StatusCode != 403 {
		t.Errorf("the previous token: %v, want 403", err)
	}
}
