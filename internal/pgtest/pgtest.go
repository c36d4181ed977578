// Package pgtest starts a throwaway PostgreSQL server for a test: a real
// server (Debian's postgresql package), in a directory of its own, that
// listens on a Unix socket in that directory and on no TCP port at all,
// so that tests never compete for ports or meet a server the user runs.
//
// The server is made with initdb and started with postgres directly (no
// pg_ctl, no cluster of the system's): it lives as long as the test and
// its directory is removed after it. Durability is off (fsync, full page
// writes, synchronous commit): a test's database need not survive a
// power cut, and a test suite runs several times faster without it.
//
// PostgreSQL refuses to run as root; a test running as root (CI) starts
// the server as the postgres user the Debian package made, and the
// directory is theirs.
//
// A test that needs a server of its own calls Start; the tests of a
// package share one with Shared (their TestMain calls Main, which stops it
// after them), each in a database of its own (NewDatabase). Where
// PostgreSQL is not installed the test is skipped, saying so and how to
// install it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startTimeout bounds initdb and the server's start together; a loaded
// machine takes a few seconds.
const startTimeout = 2 * time.Minute

// Server is a running PostgreSQL server of a test.
type Server struct {
	dir   string // the server's own directory: data/ and the socket
	user  string // the superuser initdb made
	dbSeq atomic.Int64
}

// Start starts a PostgreSQL server for tb and stops it (and removes its
// files) when tb ends. It skips tb when PostgreSQL is not installed.
//
// Starting a server takes seconds (initdb above all); a package with many
// tests shares one instead (Shared).
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, stop, err := start()
	if err != nil {
		var missing *missingError
		if errors.As(err, &missing) {
			tb.Skip(err.Error())
		}
		tb.Fatal(err.Error())
	}
	tb.Cleanup(stop)
	return s
}

// shared is the server of a test binary (Shared), stopped by Main.
var shared struct {
	mu      sync.Mutex
	inMain  bool // Main runs the tests
	started bool
	s       *Server
	stop    func()
	err     error
}

// Main runs a package's tests (call it from TestMain:
// os.Exit(pgtest.Main(m))) and then stops the server that Shared started
// for them, if any.
func Main(m *testing.M) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.stop != nil {
		shared.stop()
	}
	return code
}

// Shared returns the server that the test binary's tests share, starting
// it on first use; each test then takes a database of its own
// (NewDatabase). It needs the package's TestMain to call Main, which stops
// the server after the tests. It skips tb when PostgreSQL is not
// installed.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.inMain {
		tb.Fatal("pgtest.Shared: the package's TestMain must run its tests with pgtest.Main, which stops the shared server")
	}
	if !shared.started {
		shared.started = true
		shared.s, shared.stop, shared.err = start()
	}
	if shared.err != nil {
		var missing *missingError
		if errors.As(shared.err, &missing) {
			tb.Skip(shared.err.Error())
		}
		tb.Fatal(shared.err.Error())
	}
	return shared.s
}

// missingError is the error of a machine without PostgreSQL: tests skip.
type missingError struct{ err error }

func (e *missingError) Error() string {
	return fmt.Sprintf("pgtest: %v: these tests need a real PostgreSQL server (Debian: apt-get install postgresql)", e.err)
}

// start starts a server and returns it with the function that stops it
// and removes its files.
func start() (_ *Server, stop func(), err error) {
	bin, err := binDir()
	if err != nil {
		return nil, nil, &missingError{err}
	}
	owner, err := serverUser()
	if err != nil {
		return nil, nil, fmt.Errorf("pgtest: %v", err)
	}
	// Not tb.TempDir: its parents are private to root, and the server
	// may run as another user.
	dir, err := os.MkdirTemp("", "abctl-pg-")
	if err != nil {
		return nil, nil, fmt.Errorf("pgtest: %v", err)
	}
	var stops []func() // in reverse order
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	stops = append(stops, func() { os.RemoveAll(dir) })
	if owner != nil {
		if err := os.Chown(dir, owner.uid, owner.gid); err != nil {
			return nil, nil, fmt.Errorf("pgtest: give %s to the postgres user: %v", dir, err)
		}
	}
	s := &Server{dir: dir, user: "abctl"}

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"--pgdata", data, "--username", s.user, "--auth", "trust",
		"--encoding", "UTF8", "--locale", "C", "--no-sync", "--no-instructions")
	if out, err := run(initdb, owner); err != nil {
		return nil, nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}

	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, fmt.Errorf("pgtest: %v", err)
	}
	srv := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-k", dir, // the socket's directory
		"-c", "listen_addresses=", // no TCP at all
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	srv.Stdout, srv.Stderr = logFile, logFile
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if owner != nil {
		srv.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(owner.uid), Gid: uint32(owner.gid)}
	}
	if err := srv.Start(); err != nil {
		logFile.Close()
		return nil, nil, fmt.Errorf("pgtest: start postgres: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait(); logFile.Close() }()
	stops = append(stops, func() {
		// SIGINT is PostgreSQL's fast shutdown: it rolls back what is
		// open and stops; a server that does not is killed.
		srv.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})

	if err := s.waitReady(ctx, exited); err != nil {
		log, _ := os.ReadFile(logPath)
		return nil, nil, fmt.Errorf("pgtest: the server did not start: %v\nits log:\n%s", err, log)
	}
	return s, stop, nil
}

// URL is the connection string of database db on the server, as pgx and
// libpq read it (a postgres:// URL with the socket's directory as host).
func (s *Server) URL(db string) string {
	q := url.Values{"host": {s.dir}, "sslmode": {"disable"}}
	return (&url.URL{Scheme: "postgres", User: url.User(s.user), Path: "/" + db, RawQuery: q.Encode()}).String()
}

// NewDatabase makes an empty database of its own for tb on the server and
// returns its connection string; tests sharing a server keep apart so.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := "test_" + strconv.FormatInt(s.dbSeq.Add(1), 10)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.URL(name)
}

// waitReady waits until the server takes connections, or exits, or ctx
// ends.
func (s *Server) waitReady(ctx context.Context, exited <-chan error) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := pgx.Connect(cctx, s.URL("postgres"))
		cancel()
		if err == nil {
			return conn.Close(ctx)
		}
		last = err
		select {
		case err := <-exited:
			return fmt.Errorf("postgres exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s: %v", startTimeout, last)
		case <-tick.C:
		}
	}
}

// binDir finds the directory of initdb and postgres: on PATH, else the
// newest of Debian's /usr/lib/postgresql/VERSION/bin.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("postgres"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("no initdb and postgres on PATH nor in /usr/lib/postgresql/*/bin")
}

// version is the major version in a /usr/lib/postgresql/VERSION/bin path.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// owner is the user the server runs as when the test runs as root.
type owner struct{ uid, gid int }

// serverUser returns nil when the test is not root (the server runs as
// the test's user), else the postgres user.
func serverUser() (*owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, and PostgreSQL refuses to: no postgres user to run it as (%v); "+
			"Debian's postgresql package makes one", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("the postgres user's ids %q and %q are not numbers", u.Uid, u.Gid)
	}
	return &owner{uid: uid, gid: gid}, nil
}

// run runs cmd as o (nil: as this process's user) and returns its output.
func run(cmd *exec.Cmd, o *owner) (string, error) {
	if o != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(o.uid), Gid: uint32(o.gid)}}
		// initdb reads the current directory; root's may be closed to the
		// postgres user.
		cmd.Dir = "/"
	}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
