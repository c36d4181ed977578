package cli

import (
	"bytes"
	"context"
	"flag"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

var update = flag.Bool("update", false, "rewrite the golden files of the command tests")

const testKey = "abk_command_tests_key_0123456789"

// cliEnv is a real daemon (bbolt in a temporary directory, scripted
// executor) and the environment abctl commands run with against it.
type cliEnv struct {
	t       *testing.T
	baseURL string
	exec    *scripted.Executor
	vars    map[string]string
	dir     string // a scratch directory for agent files
	client  *client.Client
}

func newCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	exec := &scripted.Executor{}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: exec})
	home := t.TempDir()
	e := &cliEnv{
		t: t, baseURL: "http://" + addr, exec: exec, dir: t.TempDir(),
		vars: map[string]string{
			"HOME":             home,
			"ABCTL_CONFIG_DIR": filepath.Join(home, "config"),
			"ABCTL_BASE_URL":   "http://" + addr,
			"ABCTL_API_KEY":    testKey,
			"ABCTL_EMBED":      "false",
		},
	}
	c, err := client.New(client.WithBaseURL(e.baseURL), client.WithAPIKey(testKey))
	if err != nil {
		t.Fatal(err)
	}
	e.client = c
	return e
}

// newTestFactory returns the Factory of one abctl invocation in a test,
// which can reach nothing of the user's: vars is the whole environment
// (HOME, XDG_*, ABCTL_*, NO_COLOR, CI... of the process are never read),
// and the local daemon's own address, where `abctl daemon` listens and a
// command would start one inside itself, is a port the kernel gave this
// test instead of 127.0.0.1:8780. That port is guarded: a command that
// connects to it fails the test. Tests that need something else there set
// f.LocalAddr. The rest is abctl's own wiring (NewFactory).
func newTestFactory(t *testing.T, ios *iostreams.IOStreams, vars map[string]string) *cmdutil.Factory {
	t.Helper()
	f := NewFactory(ios, func(k string) string { return vars[k] })
	f.LocalAddr = guardedAddr(t)
	// The check that a daemon answers is not what these tests time: a
	// loaded machine must not turn a running daemon into a missing one.
	f.HealthTimeout = time.Minute
	return f
}

// guardedAddr listens on a loopback port of the kernel's choosing until
// the test ends, and fails the test if anything connected to it.
func guardedAddr(t *testing.T) string {
	t.Helper()
	var ln net.Listener
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if _, closed := closedAddrs.Load(l.Addr().String()); !closed {
			ln = l
			break
		}
		l.Close() // a port a test expects nothing to listen on: try again
	}
	var connected atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			connected.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		if n := connected.Load(); n > 0 {
			t.Errorf("%d connection(s) reached %s, the address that stands in for the local daemon's default (%s) in this test: "+
				"a command looked for, or reached, a daemon that was not its own", n, ln.Addr(), datadir.DefaultAddr)
		}
	})
	return ln.Addr().String()
}

// closedAddr is a loopback address where nothing listens: a port the
// kernel chose, then closed.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	closedAddrs.Store(addr, true)
	return addr
}

// closedAddrs are the addresses closedAddr handed out. The kernel may give
// such a port to the next listener on port 0; guardedAddr takes another.
var closedAddrs sync.Map

// result is what one abctl invocation did.
type result struct {
	code           int
	stdout, stderr string
}

// run executes abctl with args, stdin as given, no terminal.
func (e *cliEnv) run(stdin string, args ...string) result {
	e.t.Helper()
	return e.runIO(stdin, nil, args...)
}

// runIO executes abctl; setup may change the streams (a terminal, say).
func (e *cliEnv) runIO(stdin string, setup func(*iostreams.IOStreams), args ...string) result {
	e.t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	if setup != nil {
		setup(ios)
	}
	f := newTestFactory(e.t, ios, e.vars)
	f.Now = func() time.Time { return time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC) }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := RunFactory(ctx, args, f)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// write puts an agent file in the scratch directory and returns its path.
func (e *cliEnv) write(name, content string) string {
	e.t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return path
}

func (r result) expect(t *testing.T, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

// Volatile parts of outputs, replaced before comparing with golden files.
var scrubbers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`wpid_[0-9a-f]{64}`), "wpid_<id>"},
	{regexp.MustCompile(`\b(wr|tsk_v2|tsk|w|o|fld|op|wp|a)_[0-9]{15,20}\b`), "${1}_<id>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`), "<time>"},
	{regexp.MustCompile(`http://127\.0\.0\.1:\d+`), "http://<daemon>"},
	{regexp.MustCompile(`(expires|signature)=[0-9a-f]+`), "$1=<x>"},
}

func scrub(s string) string {
	for _, sc := range scrubbers {
		s = sc.re.ReplaceAllString(s, sc.with)
	}
	return s
}

// golden compares got, scrubbed, with testdata/golden/<name>; -update
// rewrites the file.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = scrub(got)
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(want, []byte(got)) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- want\n%s\n--- got\n%s", name, want, got)
	}
}

func contains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
