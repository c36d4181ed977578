package daemoncmd_test

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
)

// TestDaemonAddressTaken: a daemon whose address is taken says, beside the
// listener's error, what holds it (another abctl daemon, or a program
// that is not one) and what to do: stop it, or --addr, with the state file
// through which the commands find the daemon (issue 30: only "bind:
// address already in use").
func TestDaemonAddressTaken(t *testing.T) {
	// A program that is not an abctl daemon: it accepts and closes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dir := t.TempDir()
	state := filepath.Join(dir, datadir.StateFileName)
	code, stdout, stderr := run(t, "daemon", "--data-dir", dir, "--addr", ln.Addr().String())
	if code != ExitError || stdout != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing", code, stdout, ExitError)
	}
	for _, want := range []string{"address already in use", ln.Addr().String() + " is taken by a program that is not an abctl daemon", "--addr 127.0.0.1:", state} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}

	// Another abctl daemon, over another data directory.
	other, _ := daemontest.Start(t, t.TempDir(), daemon.Config{})
	code, _, stderr = run(t, "daemon", "--data-dir", dir, "--addr", other)
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	for _, want := range []string{"address already in use", "another abctl daemon (version ", "over another data directory than " + dir, "listens at " + other, "Stop it, or start this one on another address", state} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
