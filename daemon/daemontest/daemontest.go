// Package daemontest runs a real `abctl daemon` (daemon.Run) inside a test,
// on a free loopback port, for the tests of any package that talks to one:
// the daemon's own, the CLI's, later the MCP server's.
package daemontest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/internal/loopback"
)

// hangGuard bounds the daemon's start and its stop: only a hang meets it,
// never a slow machine (a stop ends executing runs and closes their
// browsers, seconds under load).
const hangGuard = 2 * time.Minute

// Start runs daemon.Run over dataDir on 127.0.0.1:0 and returns the address
// it listens on and a function that stops it and returns Run's error. The
// daemon is stopped when the test ends if stop was not called; stop may be
// called more than once. Logs are discarded unless cfg says otherwise.
func Start(t testing.TB, dataDir string, cfg daemon.Config) (addr string, stop func() error) {
	t.Helper()
	cfg.DataDir = dataDir
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.WebhookClient == nil {
		// Whatever a test makes it send to, a test daemon contacts this
		// machine only, and never looks a name up.
		cfg.WebhookClient = loopback.Client()
	}
	ready := make(chan string, 1)
	cfg.Ready = func(a string) { ready <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Run(ctx, cfg) }()

	var stopped bool
	var runErr error
	stop = func() error {
		if stopped {
			return runErr
		}
		stopped = true
		cancel()
		select {
		case runErr = <-done:
		case <-time.After(hangGuard):
			t.Errorf("daemontest: Run did not return within %s of its context being cancelled", hangGuard)
		}
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("daemontest: Run: %v", err)
		}
	})
	select {
	case addr = <-ready:
	case err := <-done:
		stopped, runErr = true, err
		t.Fatalf("daemontest: Run: %v", err)
	case <-time.After(hangGuard):
		t.Fatalf("daemontest: the daemon did not start within %s", hangGuard)
	}
	return addr, stop
}
