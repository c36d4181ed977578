//go:build !windows

package daemon_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/internal/pgtest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// dbPassword is put in the test databases' URLs (the test server trusts
// every local connection, so it is not checked): it must never show in a
// log or an error.
const dbPassword = "pw-never-printed"

// newPostgresStore returns the URL, with a password, of a fresh empty
// database on the package's PostgreSQL server.
func newPostgresStore(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(pgtest.Shared(t).NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), dbPassword)
	return u.String()
}

func newSecret(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, store.SecretSize)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// keyOf is the key in dir's key file.
func keyOf(t *testing.T, dir string) string {
	t.Helper()
	key, err := readKeyFile(dir) // contract_test.go
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestDaemonsSharePostgres: two daemons on one PostgreSQL database, each
// with its own data directory, the same secret and the same artifacts
// directory, serve the same records: the first's organization and key work
// on the second, which makes no organization and writes no key file, and
// an agent made through one is read through the other. The database's
// password shows in no log.
func TestDaemonsSharePostgres(t *testing.T) {
	dbURL := newPostgresStore(t)
	secret := newSecret(t)
	shared := t.TempDir()
	dir1, dir2 := t.TempDir(), t.TempDir()
	var logs1, logs2, stderr1, stderr2 syncBuffer
	cfg := func(logs, stderr *syncBuffer) daemon.Config {
		return daemon.Config{Store: dbURL, Secret: secret, ArtifactsDir: shared,
			Logger: slog.New(slog.NewTextHandler(logs, nil)), Stderr: stderr}
	}
	addr1, _ := daemontest.Start(t, dir1, cfg(&logs1, &stderr1))
	addr2, _ := daemontest.Start(t, dir2, cfg(&logs2, &stderr2))

	key := keyOf(t, dir1)
	if !strings.Contains(stderr1.String(), key) {
		t.Errorf("the first daemon did not announce its key: %q", stderr1.String())
	}
	if _, err := os.Stat(filepath.Join(dir2, datadir.KeyFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the second daemon wrote a key file: %v", err)
	}
	if s := stderr2.String(); strings.Contains(s, "created organization") {
		t.Errorf("the second daemon announced an organization: %q", s)
	}
	// The run files go to the shared directory, not the data directories.
	for _, dir := range []string{dir1, dir2} {
		if _, err := os.Stat(filepath.Join(dir, datadir.ArtifactsDirName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s has an artifacts directory beside --artifacts: %v", dir, err)
		}
	}

	c1, c2 := apiClient(t, addr1, key), apiClient(t, addr2, key)
	agent, err := c1.Agents.Create(t.Context(), &client.AgentDefinition{
		Title: "made on the first daemon",
		WorkflowDefinition: client.WorkflowDefinition{
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c2.Agents.Get(t.Context(), agent.WorkflowPermanentID, nil)
	if err != nil {
		t.Fatalf("the second daemon does not find the first's agent: %v", err)
	}
	if got.Title != "made on the first daemon" {
		t.Errorf("the second daemon answers title %q", got.Title)
	}
	// An organization made through the store (as `abctl daemon orgs`
	// does) is known to both.
	st, err := pgstore.Open(t.Context(), dbURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orgs, err := st.Organizations(t.Context())
	if err != nil || len(orgs) != 1 {
		t.Fatalf("organizations: %v, %v; want exactly one", orgs, err)
	}
	_, otherKey, err := st.CreateOrganization(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := apiClient(t, addr2, otherKey).Agents.Get(t.Context(), agent.WorkflowPermanentID, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another organization's key gets the agent on the second daemon: %v, want 404", err)
	}

	for name, logs := range map[string]*syncBuffer{"first": &logs1, "second": &logs2} {
		s := logs.String()
		if strings.Contains(s, dbPassword) {
			t.Errorf("the %s daemon's log shows the database's password:\n%s", name, s)
		}
		if !strings.Contains(s, pgstore.Redact(dbURL)) {
			t.Errorf("the %s daemon's log does not name its store %s:\n%s", name, pgstore.Redact(dbURL), s)
		}
	}
}

// TestDaemonOtherSecretRefused: a daemon whose secret is not the one the
// database was first opened with does not start, and says what to do.
func TestDaemonOtherSecretRefused(t *testing.T) {
	dbURL := newPostgresStore(t)
	daemontest.Start(t, t.TempDir(), daemon.Config{Store: dbURL, Secret: newSecret(t)})

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	err := daemon.Run(ctx, daemon.Config{DataDir: dir, Addr: "127.0.0.1:0", Store: dbURL, Secret: newSecret(t),
		Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard})
	if err == nil {
		t.Fatal("a daemon with another secret started")
	}
	msg := err.Error()
	for _, want := range []string{"secret is not the one", pgstore.Redact(dbURL), "ABCTL_DAEMON_SECRET", filepath.Join(dir, datadir.SecretFileName)} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, dbPassword) {
		t.Errorf("error shows the database's password: %q", msg)
	}
}

// TestDaemonBadStore: a store that is not a PostgreSQL URL is refused
// before anything is made, naming it without its password.
func TestDaemonBadStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	err := daemon.Run(t.Context(), daemon.Config{DataDir: dir, Store: "mysql://me:" + dbPassword + "@db.example/abctl",
		Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "mysql://me:xxxxx@db.example/abctl") ||
		!strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), dbPassword) {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused start made the data directory: %v", err)
	}
}

// TestDaemonsStartTogether: daemons that start at the same moment on an
// empty database make exactly one default organization between them, and
// only one of them announces its key and writes the key file.
func TestDaemonsStartTogether(t *testing.T) {
	dbURL := newPostgresStore(t)
	secret := newSecret(t)
	const n = 3
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	dirs := make([]string, n)
	stderrs := make([]*syncBuffer, n)
	ready := make(chan string, n)
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		dirs[i], stderrs[i] = t.TempDir(), &syncBuffer{}
		cfg := daemon.Config{DataDir: dirs[i], Addr: "127.0.0.1:0", Store: dbURL, Secret: secret,
			Logger: slog.New(slog.DiscardHandler), Stderr: stderrs[i], Ready: func(a string) { ready <- a }}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := daemon.Run(ctx, cfg); err != nil {
				errs <- err
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	close(start)
	for range n {
		select {
		case <-ready:
		case err := <-errs:
			t.Fatalf("a daemon did not start: %v", err)
		case <-time.After(2 * time.Minute):
			t.Fatal("the daemons did not start within 2 minutes")
		}
	}

	st, err := pgstore.Open(t.Context(), dbURL, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orgs, err := st.Organizations(t.Context())
	if err != nil || len(orgs) != 1 {
		t.Fatalf("organizations %+v, %v; want exactly one", orgs, err)
	}
	var keyFiles, announced int
	for i := range n {
		if _, err := os.Stat(filepath.Join(dirs[i], datadir.KeyFileName)); err == nil {
			keyFiles++
			key := keyOf(t, dirs[i])
			if org, err := st.Authenticate(t.Context(), key); err != nil || org.ID != orgs[0].ID {
				t.Errorf("the key file's key: %+v, %v", org, err)
			}
		}
		if strings.Contains(stderrs[i].String(), "created organization") {
			announced++
		}
	}
	if keyFiles != 1 || announced != 1 {
		t.Errorf("%d key files and %d announcements, want 1 and 1", keyFiles, announced)
	}
}

// TestSessionRunsExecuteOnTheSessionsDaemon: with two daemons on one
// database, the runs that execute in a browser session opened through
// the first daemon are executed by the first, whichever daemon they were
// started through; runs without a session go to either.
func TestSessionRunsExecuteOnTheSessionsDaemon(t *testing.T) {
	dbURL := newPostgresStore(t)
	secret := newSecret(t)
	shared := t.TempDir()
	exec1, exec2 := &scripted.Executor{}, &scripted.Executor{}
	cfg := func(exec *scripted.Executor) daemon.Config {
		return daemon.Config{Store: dbURL, Secret: secret, ArtifactsDir: shared, Executor: exec,
			Sessions: &openedSessions{}, Workers: 2}
	}
	dir1 := t.TempDir()
	addr1, _ := daemontest.Start(t, dir1, cfg(exec1))
	addr2, _ := daemontest.Start(t, t.TempDir(), cfg(exec2))
	key := keyOf(t, dir1)
	c1, c2 := apiClient(t, addr1, key), apiClient(t, addr2, key)

	bs, err := c1.BrowserSessions.Create(t.Context(), &client.BrowserSessionCreateRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 6 {
		run, err := c2.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=1", BrowserSessionID: bs.BrowserSessionID})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.RunID)
	}
	for _, id := range ids {
		run := waitTerminal(t, c2, id)
		if run.Status != client.RunStatusCompleted {
			t.Errorf("run %s in the session ended %s (%s)", id, run.Status, run.GetFailureReason())
		}
	}
	for _, id := range ids {
		if !slices.Contains(exec1.Order(), id) || slices.Contains(exec2.Order(), id) {
			t.Errorf("run %s in the first daemon's session executed on the first: %v, on the second: %v",
				id, slices.Contains(exec1.Order(), id), slices.Contains(exec2.Order(), id))
		}
	}
}

// waitTerminal polls a run until it ends.
func waitTerminal(t *testing.T, c *client.Client, id string) *client.Run {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		run, err := c.Runs.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.IsTerminal() {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s still %s after a minute", id, run.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
