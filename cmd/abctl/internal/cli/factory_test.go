package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// TestNewFactory: the wiring gives the Factory what it knows of the local
// daemon without linking it.
func TestNewFactory(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	f := NewFactory(ios, func(string) string { return "" })
	if f.LocalAddr != datadir.DefaultAddr || f.KeyFileName != datadir.KeyFileName || f.StartDaemon == nil {
		t.Errorf("LocalAddr %q, KeyFileName %q, StartDaemon %v", f.LocalAddr, f.KeyFileName, f.StartDaemon != nil)
	}
}

// TestEmbeddedDaemonStarter: the starter runs the daemon until stop,
// outside the command's context, with what the Factory asked for.
func TestEmbeddedDaemonStarter(t *testing.T) {
	var got daemon.Config
	running, ended := make(chan struct{}), make(chan struct{})
	start := embeddedDaemon(func(ctx context.Context, cfg daemon.Config) error {
		got = cfg
		cfg.Ready("127.0.0.1:4321")
		close(running)
		<-ctx.Done()
		close(ended)
		return errors.New("stopped")
	})
	ctx, cancel := context.WithCancel(t.Context())
	getenv := func(k string) string { return "env-" + k }
	addr, stop, err := start(ctx, cmdutil.DaemonConfig{Addr: "127.0.0.1:0", DataDir: "/data", ErrOut: io.Discard, Getenv: getenv,
		LLM: llm.Config{Provider: llm.ProviderOllama, Model: "m"}})
	if err != nil || addr != "127.0.0.1:4321" {
		t.Fatalf("start: %q %v", addr, err)
	}
	<-running
	if got.Addr != "127.0.0.1:0" || got.DataDir != "/data" || got.Stderr != io.Discard || got.Logger == nil ||
		got.Engine.ActionIdle != executor.DefaultActionIdle || got.Engine.LLM.Model != "m" || got.Engine.Getenv("X") != "env-X" {
		t.Errorf("the daemon's configuration: %+v, engine %+v", got, got.Engine)
	}
	cancel() // the command's context ends: the daemon goes on
	select {
	case <-ended:
		t.Error("the daemon stopped with the command's context")
	case <-time.After(50 * time.Millisecond):
	}
	if err := stop(); err == nil || err.Error() != "stopped" {
		t.Errorf("stop: %v, want the daemon's own end", err)
	}
}

func TestEmbeddedDaemonStartFails(t *testing.T) {
	cfg := cmdutil.DaemonConfig{Addr: "127.0.0.1:0", ErrOut: io.Discard}
	listen := fmt.Errorf("listen: %w", daemon.ErrListen)
	_, _, err := embeddedDaemon(func(context.Context, daemon.Config) error { return listen })(t.Context(), cfg)
	if !errors.Is(err, cmdutil.ErrListen) || err.Error() != listen.Error() {
		t.Errorf("an address in use: %v, want it marked as cmdutil.ErrListen", err)
	}
	broken := errors.New("the store is damaged")
	_, _, err = embeddedDaemon(func(context.Context, daemon.Config) error { return broken })(t.Context(), cfg)
	if err != broken {
		t.Errorf("a failed start: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err = embeddedDaemon(func(ctx context.Context, _ daemon.Config) error {
		time.Sleep(10 * time.Millisecond)
		return nil
	})(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("an interrupted start: %v", err)
	}
}
