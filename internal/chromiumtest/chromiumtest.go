// Package chromiumtest starts Chromium processes for tests of remote
// browsers and of the browser fleet: a headless Chromium with DevTools on a
// free loopback port (Start), and a TCP forwarder on a loopback port of its
// own in front of it (Forwarder), so that a browser killed and started
// again on another port is the same endpoint address (Member.Restart).
// Chromium builds the webSocketDebuggerUrl of /json/version from the Host
// header of the request, so clients that follow it dial the forwarder.
//
// Everything started is stopped at the end of the test. A test skips when
// no Chromium binary is found, saying so.
package chromiumtest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Binary returns the Chromium binary of the machine: $ABCTL_CHROMIUM, else
// chromium, chromium-browser or google-chrome on PATH; "" when there is
// none.
func Binary() string {
	if p := os.Getenv("ABCTL_CHROMIUM"); p != "" {
		if found, err := exec.LookPath(p); err == nil {
			return found
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser is a Chromium process started by a test.
type Browser struct {
	cmd     *exec.Cmd
	port    int
	profile string
}

// Start starts a headless Chromium with DevTools on a free loopback port,
// with the flags the project's tests use. It is killed at the end of the
// test.
func Start(tb testing.TB) *Browser {
	tb.Helper()
	bin := Binary()
	if bin == "" {
		tb.Skip("no Chromium binary (Debian: apt-get install chromium): this test drives real browsers")
	}
	// Not tb.TempDir: a Chromium just killed may still write to its
	// profile while the test's cleanup removes it.
	profile, err := os.MkdirTemp("", "abctl-chromiumtest")
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir="+profile, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // to kill its helpers too
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	b := &Browser{cmd: cmd, profile: profile}
	tb.Cleanup(func() {
		b.Kill()
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	// Chromium writes its port in DevToolsActivePort once it listens.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(profile + "/DevToolsActivePort")
		if line, _, ok := strings.Cut(string(data), "\n"); err == nil && ok {
			if b.port, err = strconv.Atoi(line); err == nil && b.port > 0 {
				return b
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("Chromium wrote no DevToolsActivePort in %s within 30 s", profile)
	return nil
}

// Port is the browser's DevTools port on 127.0.0.1.
func (b *Browser) Port() int { return b.port }

// URL is the browser's DevTools address.
func (b *Browser) URL() string { return "http://127.0.0.1:" + strconv.Itoa(b.port) }

// Pid is the browser's process id.
func (b *Browser) Pid() int { return b.cmd.Process.Pid }

// Kill ends the browser at once (SIGKILL to its process group) and waits,
// up to 10 s, until none of its processes is left. It may be called more
// than once.
func (b *Browser) Kill() {
	pgid := b.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGKILL)
	b.cmd.Wait()
	for i := 0; i < 500 && syscall.Kill(-pgid, 0) == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// Forwarder relays TCP connections from its own loopback port to a
// Chromium's DevTools port. With an auth value, it refuses (401) a
// connection whose first request lacks "Authorization: <auth>": every
// request, or with upgradeOnly only the websocket upgrade (then
// /json/version answers without it, as a health check sees it, but
// connecting fails).
type Forwarder struct {
	ln          net.Listener
	target      atomic.Int64 // the Chromium's port
	auth        string
	upgradeOnly bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// NewForwarder starts a forwarder to port, closed at the end of the test.
func NewForwarder(tb testing.TB, port int, auth string, upgradeOnly bool) *Forwarder {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f := &Forwarder{ln: ln, auth: auth, upgradeOnly: upgradeOnly, conns: make(map[net.Conn]struct{})}
	f.target.Store(int64(port))
	f.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !f.track(c) {
				c.Close()
				return
			}
			f.wg.Go(func() { f.serve(c) })
		}
	})
	tb.Cleanup(f.Close)
	return f
}

// URL is the endpoint address of the forwarder.
func (f *Forwarder) URL() string { return "http://" + f.ln.Addr().String() }

// Retarget sends the next connections to port.
func (f *Forwarder) Retarget(port int) { f.target.Store(int64(port)) }

// track records a connection for Close; false once closed.
func (f *Forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *Forwarder) serve(c net.Conn) {
	defer c.Close()
	// Read the first request, keeping its bytes to pass them on unchanged.
	var head bytes.Buffer
	req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &head)))
	if err != nil {
		return
	}
	upgrade := strings.EqualFold(req.Header.Get("Upgrade"), "websocket")
	if f.auth != "" && (upgrade || !f.upgradeOnly) && req.Header.Get("Authorization") != f.auth {
		io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	b, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(int(f.target.Load())))
	if err != nil {
		return // the client sees the connection drop, as with a dead host
	}
	defer b.Close()
	if !f.track(b) {
		return
	}
	if _, err := b.Write(head.Bytes()); err != nil {
		return
	}
	// Either direction ending ends both (the deferred closes stop the other).
	done := make(chan struct{}, 2)
	go func() { io.Copy(b, c); done <- struct{}{} }()
	go func() { io.Copy(c, b); done <- struct{}{} }()
	<-done
}

// Close stops the forwarder and its connections.
func (f *Forwarder) Close() {
	f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// Member is a Chromium behind its forwarder: an endpoint that survives
// restarts of its browser.
type Member struct {
	Browser *Browser
	Fwd     *Forwarder
}

// StartMember starts a Chromium and a forwarder in front of it.
func StartMember(tb testing.TB) *Member {
	b := Start(tb)
	return &Member{Browser: b, Fwd: NewForwarder(tb, b.port, "", false)}
}

// URL is the member's endpoint address (the forwarder's).
func (m *Member) URL() string { return m.Fwd.URL() }

// Restart starts a new Chromium and points the forwarder at it.
func (m *Member) Restart(tb testing.TB) {
	m.Browser = Start(tb)
	m.Fwd.Retarget(m.Browser.port)
}
