package admin_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/datadir"
)

func TestListen(t *testing.T) {
	dir := t.TempDir()
	ln, err := admin.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	path := filepath.Join(dir, datadir.AdminSocketName)
	if admin.SocketPath(dir) != path {
		t.Errorf("SocketPath = %q, want %q", admin.SocketPath(dir), path)
	}
	if got := ln.Addr().String(); got != path {
		t.Errorf("Addr = %q, want %q", got, path)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want a socket with mode 0600", fi.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".admin-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	// It accepts on the final path.
	accepted := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err
	}()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	c.Close()
	if err := <-accepted; err != nil {
		t.Fatalf("accept: %v", err)
	}

	if err := ln.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after Close: %v, want it removed", err)
	}
	if err := ln.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Closing a listener whose socket was replaced leaves the new one.
func TestListenCloseLeavesAnotherSocket(t *testing.T) {
	dir := t.TempDir()
	ln, err := admin.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := admin.SocketPath(dir)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	other, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("the other socket was removed: %v", err)
	}
}

func TestListenStaleAndLive(t *testing.T) {
	dir := t.TempDir()
	path := admin.SocketPath(dir)
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	ln, err := admin.Listen(dir)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	// Now something answers there: a second Listen is refused, and the
	// first keeps its socket.
	if _, err := admin.Listen(dir); err == nil || !strings.Contains(err.Error(), "something already answers on the admin socket "+path) {
		t.Errorf("Listen over a live socket: %v", err)
	}
	if c, err := net.Dial("unix", path); err != nil {
		t.Errorf("the live socket is gone: %v", err)
	} else {
		c.Close()
	}
	ln.Close()
}

func TestCheckSocketPath(t *testing.T) {
	base := t.TempDir()
	extra := len(filepath.Join(base, "x", ".admin-4294967295", "s")) - len(filepath.Join(base, "x"))
	fits := admin.MaxSocketPath() - extra
	ok := filepath.Join(base, strings.Repeat("d", fits-len(base)-1))
	if len(ok) != fits {
		t.Fatalf("test setup: %d bytes, want %d", len(ok), fits)
	}
	if err := admin.CheckSocketPath(ok); err != nil {
		t.Errorf("%d bytes: %v", len(ok), err)
	}
	// That longest directory does hold the socket.
	if err := os.Mkdir(ok, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := admin.Listen(ok)
	if err != nil {
		t.Fatalf("Listen in a directory of %d bytes: %v", len(ok), err)
	}
	ln.Close()

	tooLong := ok + "d"
	err = admin.CheckSocketPath(tooLong)
	if err == nil || !strings.Contains(err.Error(), tooLong) || !strings.Contains(err.Error(), "shorter path") {
		t.Errorf("%d bytes: %v", len(tooLong), err)
	}
}

func TestState(t *testing.T) {
	dir := t.TempDir()
	if _, err := admin.ReadState(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadState of an empty directory: %v", err)
	}
	ours := admin.State{Addr: "127.0.0.1:8780", PID: 42}
	if err := admin.WriteState(dir, ours); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, datadir.StateFileName)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file: %v, %v; want mode 0600", fi, err)
	}
	if st, err := admin.ReadState(dir); err != nil || st != ours {
		t.Errorf("ReadState = %+v, %v", st, err)
	}
	// Another daemon's state is left alone.
	if err := admin.RemoveState(dir, admin.State{Addr: "127.0.0.1:9999", PID: 42}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("another's RemoveState removed the file: %v", err)
	}
	if err := admin.RemoveState(dir, ours); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after RemoveState: %v", err)
	}
	// A state file of an older daemon (with an admin token) still reads.
	if err := os.WriteFile(path, []byte(`{"addr":"127.0.0.1:1","pid":7,"admin_token":"00"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := admin.ReadState(dir); err != nil || st != (admin.State{Addr: "127.0.0.1:1", PID: 7}) {
		t.Errorf("older state file: %+v, %v", st, err)
	}
	if err := os.WriteFile(path, []byte(`{"pid":7}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ReadState(dir); err == nil || !strings.Contains(err.Error(), "addr missing") {
		t.Errorf("state file without addr: %v", err)
	}
}
