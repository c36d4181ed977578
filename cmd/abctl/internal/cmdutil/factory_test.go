package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/localrun/llm"
)

// localFactory returns a Factory of the local profile over a data
// directory of its own, with the daemon's address and key file name as the
// wiring sets them.
func localFactory(t *testing.T) (f *Factory, dataDir string, stderr fmt.Stringer) {
	t.Helper()
	home := t.TempDir()
	dataDir = filepath.Join(home, "data")
	vars := map[string]string{"HOME": home, "ABCTL_CONFIG_DIR": filepath.Join(home, "config"), "ABCTL_DATA_DIR": dataDir}
	ios, _, _, errOut := iostreams.Test()
	f = NewFactory(ios, func(k string) string { return vars[k] })
	f.LocalAddr = "127.0.0.1:1"
	f.KeyFileName = "api-key"
	return f, dataDir, errOut
}

func writeKey(t *testing.T, dataDir string) {
	t.Helper()
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, "api-key"), []byte("abk_test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSettingsNeedTheLocalAddress: the Factory knows the local daemon only
// through what the wiring gives it.
func TestSettingsNeedTheLocalAddress(t *testing.T) {
	f, _, _ := localFactory(t)
	f.LocalAddr = ""
	if _, err := f.Settings(); err == nil || !strings.Contains(err.Error(), "LocalAddr") {
		t.Errorf("Settings without LocalAddr: %v", err)
	}
	f, _, _ = localFactory(t)
	s, err := f.Settings()
	if err != nil {
		t.Fatal(err)
	}
	if s.BaseURL != "http://127.0.0.1:1" || f.LocalBaseURL() != "http://127.0.0.1:1" || f.DaemonAddr() != "127.0.0.1:1" {
		t.Errorf("base URL %q, local %q", s.BaseURL, f.LocalBaseURL())
	}
}

// TestEmbeddedDaemon: with no daemon over its data directory, Client
// starts one through StartDaemon, on the local address, or on a free port
// when that is taken; Close stops it.
func TestEmbeddedDaemon(t *testing.T) {
	f, dataDir, stderr := localFactory(t)
	writeKey(t, dataDir)
	var started []DaemonConfig
	stopped := 0
	f.StartDaemon = func(_ context.Context, cfg DaemonConfig) (string, func() error, error) {
		started = append(started, cfg)
		if cfg.Addr == f.LocalAddr {
			return "", nil, ListenError(errors.New("listen tcp 127.0.0.1:1: address in use"))
		}
		return "0.0.0.0:4321", func() error { stopped++; return nil }, nil
	}
	c, err := f.Client(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 2 || started[0].Addr != "127.0.0.1:1" || started[1].Addr != "127.0.0.1:0" {
		t.Fatalf("started %+v, want the local address, then a free port", started)
	}
	cfg := started[1]
	if cfg.DataDir != dataDir || cfg.ErrOut != f.IO.ErrOut || cfg.Getenv("ABCTL_DATA_DIR") != dataDir || cfg.LLM.Provider != llm.ProviderOllama {
		t.Errorf("the daemon's configuration: %+v", cfg)
	}
	if c.BaseURL() != "http://127.0.0.1:4321" || !f.Embedded() {
		t.Errorf("client of %s, embedded %v", c.BaseURL(), f.Embedded())
	}
	if base, from := f.Target(); base != "http://127.0.0.1:4321" || from != "the daemon this command started" {
		t.Errorf("target %s from %s", base, from)
	}
	if !strings.Contains(stderr.String(), "this command runs one on "+dataDir) || !strings.Contains(stderr.String(), "127.0.0.1:1 is taken by something else") ||
		!strings.Contains(stderr.String(), "at http://127.0.0.1:4321 until it ends: the links it prints stop working when it exits") {
		t.Errorf("stderr: %q", stderr.String())
	}
	if err := f.Close(); err != nil || stopped != 1 || f.Embedded() {
		t.Errorf("Close: %v, stopped %d times", err, stopped)
	}
	if err := f.Close(); err != nil || stopped != 1 {
		t.Errorf("a second Close: %v, stopped %d times", err, stopped)
	}
}

func TestEmbeddedDaemonFails(t *testing.T) {
	f, dataDir, _ := localFactory(t)
	writeKey(t, dataDir)
	if _, err := f.Client(t.Context()); err == nil || !strings.Contains(err.Error(), "could not start one inside this command: this program has no daemon to start") {
		t.Errorf("without StartDaemon: %v", err)
	}

	f, dataDir, _ = localFactory(t)
	writeKey(t, dataDir)
	calls := 0
	f.StartDaemon = func(context.Context, DaemonConfig) (string, func() error, error) {
		calls++
		return "", nil, errors.New("the store is damaged")
	}
	_, err := f.Client(t.Context())
	if calls != 1 || err == nil || !strings.Contains(err.Error(), "start the local daemon on "+dataDir+" at 127.0.0.1:1: the store is damaged") {
		t.Errorf("%d start(s): %v, want one and its error", calls, err)
	}

	f, dataDir, _ = localFactory(t)
	writeKey(t, dataDir)
	f.StartDaemon = func(_ context.Context, cfg DaemonConfig) (string, func() error, error) {
		return "", nil, ListenError(fmt.Errorf("listen tcp %s: in use", cfg.Addr))
	}
	if _, err := f.Client(t.Context()); err == nil || !strings.Contains(err.Error(), "at 127.0.0.1:1 or 127.0.0.1:0: listen tcp 127.0.0.1:0: in use") {
		t.Errorf("no address free: %v", err)
	}
}

// TestNoKey: a local profile whose daemon wrote no key file says so.
func TestNoKey(t *testing.T) {
	f, dataDir, _ := localFactory(t)
	f.StartDaemon = func(context.Context, DaemonConfig) (string, func() error, error) {
		return "127.0.0.1:4321", func() error { return nil }, nil
	}
	_, err := f.Client(t.Context())
	var nk *NoKeyError
	if !errors.As(err, &nk) || nk.KeyFile != filepath.Join(dataDir, "api-key") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("without a key file: %v", err)
	}
	f.Close()

	f, dataDir, _ = localFactory(t)
	f.KeyFileName = ""
	f.StartDaemon = func(context.Context, DaemonConfig) (string, func() error, error) {
		return "127.0.0.1:4321", func() error { return nil }, nil
	}
	if _, err := f.Client(t.Context()); err == nil || !strings.Contains(err.Error(), "KeyFileName") {
		t.Errorf("without KeyFileName: %v", err)
	}
	f.Close()
}

// TestNoEmbed: ABCTL_EMBED=false never starts a daemon, and says how to.
func TestNoEmbed(t *testing.T) {
	home := t.TempDir()
	vars := map[string]string{"HOME": home, "ABCTL_CONFIG_DIR": home, "ABCTL_DATA_DIR": home, "ABCTL_EMBED": "false"}
	ios, _, _, _ := iostreams.Test()
	f := NewFactory(ios, func(k string) string { return vars[k] })
	f.LocalAddr = "127.0.0.1:1"
	f.StartDaemon = func(context.Context, DaemonConfig) (string, func() error, error) {
		t.Error("a daemon was started")
		return "", nil, errors.New("no")
	}
	_, err := f.Client(t.Context())
	if err == nil || !strings.Contains(err.Error(), "start one with 'abctl daemon --data-dir "+home+"'") {
		t.Errorf("%v", err)
	}
}

func TestListenError(t *testing.T) {
	inner := errors.New("listen tcp: address in use")
	err := fmt.Errorf("start: %w", ListenError(inner))
	if !errors.Is(err, ErrListen) || !errors.Is(err, inner) || err.Error() != "start: listen tcp: address in use" {
		t.Errorf("%v", err)
	}
	if errors.Is(inner, ErrListen) {
		t.Error("any error is a listen error")
	}
}
