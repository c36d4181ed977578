package daemoncmd_test

import (
	"context"
	"crypto/rand"
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
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/pgtest"
)

// The tests on PostgreSQL share one server, stopped after them.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// runEnv is run with these environment variables besides HOME.
func runEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	vars := map[string]string{"HOME": t.TempDir()}
	for k, v := range env {
		vars[k] = v
	}
	f := cli.NewFactory(ios, func(k string) string { return vars[k] })
	f.LocalAddr = "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code = cli.RunFactory(ctx, args, f)
	return code, out.String(), errOut.String()
}

// TestDaemonOrgsPostgres: with --store (or ABCTL_STORE) the orgs commands
// work on the PostgreSQL database directly, beside the daemons running on
// it, whatever --data-dir says; the organization they make is served by a
// running daemon at once. A database no daemon has started on is refused.
func TestDaemonOrgsPostgres(t *testing.T) {
	dbURL := pgtest.Shared(t).NewDatabase(t)

	code, stdout, stderr := run(t, "daemon", "orgs", "list", "--store", dbURL)
	if code != ExitError || stdout != "" || !strings.Contains(stderr, "has no organization yet") {
		t.Errorf("empty database: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	secret := make([]byte, store.SecretSize)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr, _ := daemontest.Start(t, dir, daemon.Config{Store: dbURL, Secret: secret})

	// --data-dir is another directory, with no store: the database is used.
	code, stdout, stderr = run(t, "daemon", "orgs", "create", "acme", "--store", dbURL, "--data-dir", t.TempDir(), "-o", "json")
	if code != ExitOK {
		t.Fatalf("create: exit %d, stderr %s", code, stderr)
	}
	created := decodeCreated(t, stdout)

	code, stdout, stderr = runEnv(t, map[string]string{daemoncmd.EnvStore: dbURL}, "daemon", "orgs", "list", "-o", "json")
	if code != ExitOK {
		t.Fatalf("list: exit %d, stderr %s", code, stderr)
	}
	var orgs []admin.Organization
	if err := json.Unmarshal([]byte(stdout), &orgs); err != nil {
		t.Fatalf("list = %q: %v", stdout, err)
	}
	if len(orgs) != 2 || orgs[0].Name != "default" || orgs[1].OrganizationID != created.OrganizationID {
		t.Errorf("list = %s", stdout)
	}

	// The running daemon serves the new organization's key.
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(created.APIKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if agents, err := c.Agents.List(t.Context(), nil); err != nil || len(agents) != 0 {
		t.Errorf("the new key on the running daemon: %d agents, %v; want none of its own", len(agents), err)
	}
	// The daemon's data directory has no store file: the records are in
	// the database.
	if _, err := os.Stat(filepath.Join(dir, datadir.StoreFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("store file in the data directory: %v", err)
	}
}

// TestDaemonBadStoreFlag: 'abctl daemon --store' with a value that is not
// a PostgreSQL URL exits 2 naming the flag, and makes nothing.
func TestDaemonBadStoreFlag(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := run(t, "daemon", "--data-dir", dir, "--store", "sqlite:///var/lib/abctl.db")
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "--store: sqlite:///var/lib/abctl.db is not a store abctl knows") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused start wrote %d entries into the data directory", len(entries))
	}
}
