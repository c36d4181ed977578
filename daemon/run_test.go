package daemon_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
	if state != (admin.State{Addr: addr, PID: os.Getpid()}) {
		t.Errorf("state = %+v, want addr %s and pid %d", state, addr, os.Getpid())
	}
	// It holds no secret.
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "token") {
		t.Errorf("the state file holds %s", b)
	}

	socket := filepath.Join(dir, datadir.AdminSocketName)
	fi, err = os.Lstat(socket)
	if err != nil {
		t.Fatalf("no admin socket while running: %v", err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("admin socket mode %v, want a socket with mode 0600", fi.Mode())
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, ".admin-*")); len(entries) != 0 {
		t.Errorf("the private directory of the socket is left: %v", entries)
	}

	ac := admin.NewClient(admin.SocketPath(dir))
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
	if _, err := os.Lstat(socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("admin socket after shutdown: %v, want it removed", err)
	}

	// A restart serves the admin socket again.
	_, stop = startDaemon(t, dir)
	defer stop()
	if orgs, err := admin.NewClient(socket).Organizations(t.Context()); err != nil || len(orgs) != 2 || orgs[1].Name != "acme" {
		t.Errorf("after a restart: %+v, %v; want default and acme", orgs, err)
	}
}

// The security property: the admin routes cannot be reached over the TCP
// port, where the runs' own requests (an http_request block, a browser
// page) come from. From loopback, with an organization's valid API key and
// the header that used to carry the admin token, /admin/organizations is
// 404 as any unknown path, and creates nothing.
func TestRunServesNoAdminOverTCP(t *testing.T) {
	dir := t.TempDir()
	addr, _ := startDaemon(t, dir)
	key, err := os.ReadFile(filepath.Join(dir, datadir.KeyFileName))
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string) (int, string) {
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(`{"name":"intruder"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", strings.TrimSpace(string(key)))
		req.Header.Set("X-Admin-Token", strings.Repeat("0f", 32))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, method := range []string{"GET", "POST"} {
		if code, body := do(method, "/admin/organizations"); code != 404 || body != `{"detail":"Not Found"}` {
			t.Errorf("%s /admin/organizations over TCP: %d %s, want 404 Not Found", method, code, body)
		}
	}
	orgs, err := admin.NewClient(admin.SocketPath(dir)).Organizations(t.Context())
	if err != nil || len(orgs) != 1 {
		t.Errorf("organizations: %+v, %v; want the default one only", orgs, err)
	}
}

// runDaemon runs daemon.Run over dir and returns its error, for starts
// that must fail (daemontest.Start fails the test on them).
func runDaemon(t *testing.T, dir string) error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	return daemon.Run(ctx, daemon.Config{
		DataDir: dir, Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard,
		// A start that gets through would serve until the test ends:
		// stop it as soon as it is ready.
		Ready: func(string) { cancel() },
	})
}

// A socket left by a daemon that crashed is replaced.
func TestRunReplacesStaleAdminSocket(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, datadir.AdminSocketName)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // the file stays, nothing listens: as after a crash
	if _, err := os.Lstat(socket); err != nil {
		t.Fatalf("no stale socket to test with: %v", err)
	}
	startDaemon(t, dir)
	fi, err := os.Lstat(socket)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin socket: %v, %v", fi, err)
	}
	if orgs, err := admin.NewClient(socket).Organizations(t.Context()); err != nil || len(orgs) != 1 {
		t.Errorf("organizations over the new socket: %+v, %v", orgs, err)
	}
}

// A socket something answers on is not taken over: the daemon does not
// start, and says where.
func TestRunRefusesLiveAdminSocket(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, datadir.AdminSocketName)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = runDaemon(t, dir)
	if err == nil || !strings.Contains(err.Error(), "something already answers on the admin socket "+socket) {
		t.Fatalf("Run over a live admin socket: %v", err)
	}
	// The other one still has its socket, and the state file was not written.
	if conn, err := net.Dial("unix", socket); err != nil {
		t.Errorf("the live socket no longer answers: %v", err)
	} else {
		conn.Close()
	}
	if _, err := os.Stat(filepath.Join(dir, datadir.StateFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file after a refused start: %v", err)
	}

	// Nor is a file that is not a socket.
	ln.Close()
	if err := os.WriteFile(socket, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := runDaemon(t, dir); err == nil || !strings.Contains(err.Error(), socket) || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Run over a regular file at the socket's path: %v", err)
	}
	if b, err := os.ReadFile(socket); err != nil || string(b) != "mine" {
		t.Errorf("the file at the socket's path: %q, %v; want it untouched", b, err)
	}
}

// A data directory too long for a Unix socket is refused before anything
// is made in it.
func TestRunRefusesDataDirTooLongForTheSocket(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, strings.Repeat("d", admin.MaxSocketPath()-len(base)))
	err := runDaemon(t, dir)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "too long for the admin socket") {
		t.Fatalf("Run over a data directory of %d bytes: %v", len(dir), err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the data directory was made: %v", err)
	}
}
