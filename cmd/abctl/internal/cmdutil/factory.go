// Package cmdutil holds what abctl's commands share: the Factory of lazily
// built dependencies (configuration, settings, the API client, the embedded
// daemon), the error types that become exit codes, and flag helpers.
//
// A command asks the Factory for what it needs when it runs, so that `abctl
// --version` or a flag error never reads the configuration or opens a
// connection, and tests can replace any piece.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/executor"
)

// Factory builds, once each and only when asked, what commands depend on.
type Factory struct {
	IO     *iostreams.IOStreams
	Getenv config.Getenv
	Now    func() time.Time

	// GlobalFlags are the root's persistent flags (--profile, --base-url,
	// --api-key), read by Settings.
	GlobalFlags *pflag.FlagSet

	// StartDaemon runs the embedded daemon; nil means daemon.Run. Tests
	// replace it to give the daemon a scripted executor.
	StartDaemon func(ctx context.Context, cfg daemon.Config) error
	// HealthTimeout bounds the check that the local daemon is running;
	// 0 means 500 ms.
	HealthTimeout time.Duration
	// LocalAddr is the local daemon's own address (host:port): where
	// `abctl daemon` listens by default, the base URL of a local profile
	// that names none, and the only address at which a command starts the
	// daemon inside itself. "" means daemon.DefaultAddr. Tests set an
	// address of their own, so as never to reach, or take, the user's.
	LocalAddr string

	mu       sync.Mutex
	file     *config.File
	settings *config.Settings
	client   *client.Client
	embedded *embeddedDaemon
	// target is the base URL the client was made for, and where it came
	// from, for the errors of requests that reach nothing.
	target, targetFrom string
}

// DaemonAddr is the local daemon's own address: LocalAddr, or
// daemon.DefaultAddr.
func (f *Factory) DaemonAddr() string {
	if f.LocalAddr != "" {
		return f.LocalAddr
	}
	return daemon.DefaultAddr
}

// LocalBaseURL is the base URL of the local daemon's own address.
func (f *Factory) LocalBaseURL() string {
	return "http://" + f.DaemonAddr()
}

// NewFactory returns a Factory over io and getenv.
func NewFactory(io *iostreams.IOStreams, getenv config.Getenv) *Factory {
	return &Factory{IO: io, Getenv: getenv, Now: time.Now}
}

// ConfigFile reads the configuration file (once).
func (f *Factory) ConfigFile() (*config.File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.configFileLocked()
}

func (f *Factory) configFileLocked() (*config.File, error) {
	if f.file != nil {
		return f.file, nil
	}
	file, err := config.Load(filepath.Join(config.Dir(f.Getenv), config.FileName))
	if err != nil {
		return nil, err
	}
	f.file = file
	return file, nil
}

// Settings resolves the settings of this invocation (once).
func (f *Factory) Settings() (*config.Settings, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.settingsLocked()
}

func (f *Factory) settingsLocked() (*config.Settings, error) {
	if f.settings != nil {
		return f.settings, nil
	}
	file, err := f.configFileLocked()
	if err != nil {
		return nil, err
	}
	s, err := config.ResolveWith(f.GlobalFlags, f.Getenv, file, config.Defaults{LocalBaseURL: f.LocalBaseURL()})
	if err != nil {
		return nil, err
	}
	f.settings = s
	return s, nil
}

// Client returns the API client of the resolved profile. For a local
// daemon's profile it finds the running daemon (its state file gives the
// address it really listens on); when none runs and embedding is allowed,
// it starts one inside abctl for the rest of the command and says so on
// stderr. Close stops it.
func (f *Factory) Client(ctx context.Context) (*client.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.client != nil {
		return f.client, nil
	}
	s, err := f.settingsLocked()
	if err != nil {
		return nil, err
	}
	baseURL, key := s.BaseURL, s.APIKey
	from := s.BaseURLFrom
	if s.Local {
		baseURL, from, err = f.localDaemonLocked(ctx, s)
		if err != nil {
			return nil, err
		}
		if key == "" {
			key, err = readKeyFile(s)
			if err != nil {
				return nil, err
			}
		}
	}
	if key == "" {
		return nil, &NoKeyError{Settings: s}
	}
	c, err := client.New(client.WithBaseURL(baseURL), client.WithAPIKey(key),
		client.WithUserAgent("abctl/"+client.Version))
	if err != nil {
		return nil, fmt.Errorf("%v (base URL from %s)", err, from)
	}
	f.client = c
	f.target, f.targetFrom = baseURL, from
	return c, nil
}

// Target is the base URL the client talks to and where it came from (a
// flag, the environment, a profile, the local daemon's state file), once
// Client has made one.
func (f *Factory) Target() (baseURL, from string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.target, f.targetFrom
}

// ClientIfRunning is Client without starting the local daemon: for shell
// completion, which must be quick and leave nothing behind.
func (f *Factory) ClientIfRunning(ctx context.Context) (*client.Client, error) {
	s, err := f.Settings()
	if err != nil {
		return nil, err
	}
	if !s.Local || !s.Embed {
		return f.Client(ctx)
	}
	noEmbed := *s
	noEmbed.Embed, noEmbed.EmbedFrom = false, "shell completion, which never starts a daemon"
	f.mu.Lock()
	f.settings = &noEmbed
	f.mu.Unlock()
	return f.Client(ctx)
}

// Embedded reports whether this command started the daemon inside abctl.
func (f *Factory) Embedded() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.embedded != nil
}

// Close stops what the Factory started (the embedded daemon), waiting for
// it to finish its requests and close its store.
func (f *Factory) Close() error {
	f.mu.Lock()
	e := f.embedded
	f.embedded = nil
	f.mu.Unlock()
	if e == nil {
		return nil
	}
	return e.stop()
}

// localDaemonLocked returns the base URL of the local daemon of s, and
// where it came from, starting the daemon inside abctl when none answers
// and s allows it.
//
// A base URL given explicitly (flag, environment, profile) is used as
// given: it is not probed, and no daemon is started for it unless it is
// the local daemon's own address. Otherwise the daemon running over the
// data directory says where it listens in its state file; without one, no
// daemon runs over that directory, whatever answers at the default
// address (a daemon over another directory, which would refuse this one's
// key).
func (f *Factory) localDaemonLocked(ctx context.Context, s *config.Settings) (base, from string, err error) {
	var notRunning string // what was found, for the errors
	switch {
	case s.BaseURLGiven && !config.SameBaseURL(s.BaseURL, s.LocalBaseURL):
		return s.BaseURL, s.BaseURLFrom, nil
	case s.BaseURLGiven:
		if f.healthy(ctx, s.BaseURL) {
			return s.BaseURL, s.BaseURLFrom, nil
		}
		notRunning = fmt.Sprintf("no daemon answers at %s (base URL from %s)", s.BaseURL, s.BaseURLFrom)
	default:
		statePath := filepath.Join(s.DataDir, admin.StateFileName)
		st, err := admin.ReadState(s.DataDir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			notRunning = fmt.Sprintf("no daemon is running over %s (there is no %s)", s.DataDir, statePath)
		case err != nil:
			notRunning = fmt.Sprintf("no daemon is known to run over %s: %v", s.DataDir, err)
		default:
			u := stateURL(st.Addr)
			if u != "" && f.healthy(ctx, u) {
				return u, "the daemon's state file " + statePath, nil
			}
			notRunning = fmt.Sprintf("the daemon of %s does not answer at %s (the address in %s)", s.DataDir, st.Addr, statePath)
		}
	}
	if !s.Embed {
		return "", "", fmt.Errorf("%s, and embed is false for profile %q (from %s), so abctl does not start one inside the command; start one with 'abctl daemon --data-dir %s'",
			notRunning, s.Profile, s.EmbedFrom, s.DataDir)
	}
	e, err := f.startEmbedded(ctx, s)
	if err != nil {
		return "", "", fmt.Errorf("%s, and abctl could not start one inside this command: %w", notRunning, err)
	}
	f.embedded = e
	fmt.Fprintf(f.IO.ErrOut, "abctl: no daemon was running for profile %q, so this command runs one on %s until it ends (start 'abctl daemon' to keep runs going after abctl exits)\n", s.Profile, s.DataDir)
	return e.baseURL, "the daemon this command started", nil
}

// stateURL turns a listen address into a URL reachable from this machine.
func stateURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// healthy reports whether an abctl daemon answers GET /healthz at base.
func (f *Factory) healthy(ctx context.Context, base string) bool {
	timeout := f.HealthTimeout
	if timeout <= 0 {
		timeout = 500 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1024))
	return resp.StatusCode == http.StatusOK
}

// embeddedDaemon is a daemon running inside this abctl process.
type embeddedDaemon struct {
	baseURL string
	cancel  context.CancelFunc
	done    chan error
}

func (e *embeddedDaemon) stop() error {
	e.cancel()
	select {
	case err := <-e.done:
		return err
	case <-time.After(20 * time.Second):
		return errors.New("the embedded daemon did not stop within 20s")
	}
}

// startEmbedded runs the daemon of s inside abctl, on the local daemon's
// own address when that is free, else on a free loopback port. Its context
// is not the command's: the command may still need it after an interrupt
// (to cancel a run), and Close ends it.
func (f *Factory) startEmbedded(ctx context.Context, s *config.Settings) (*embeddedDaemon, error) {
	addrs := []string{f.DaemonAddr(), "127.0.0.1:0"}
	start := f.StartDaemon
	if start == nil {
		start = daemon.Run
	}
	// The embedded daemon's model comes from the configuration file's llm
	// section and the ABCTL_LLM_* environment (and the vendors' key
	// variables), as `abctl daemon`'s does without flags.
	file, err := f.configFileLocked()
	if err != nil {
		return nil, err
	}
	model, err := file.ModelConfig(f.Getenv)
	if err == nil {
		model, err = model.WithDefaults(f.Getenv)
	}
	if err != nil {
		return nil, fmt.Errorf("the local daemon's language model: %w", err)
	}
	var lastErr error
	for _, addr := range addrs {
		dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		ready := make(chan string, 1)
		done := make(chan error, 1)
		cfg := daemon.Config{
			Addr:    addr,
			DataDir: s.DataDir,
			// Warnings and errors only: request lines would bury the
			// command's own output.
			Logger: slog.New(slog.NewTextHandler(f.IO.ErrOut, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Stderr: f.IO.ErrOut,
			Ready:  func(a string) { ready <- a },
			Engine: &daemon.EngineConfig{ActionIdle: executor.DefaultActionIdle, LLM: model, Getenv: f.Getenv},
		}
		go func() { done <- start(dctx, cfg) }()
		select {
		case a := <-ready:
			return &embeddedDaemon{baseURL: stateURL(a), cancel: cancel, done: done}, nil
		case err := <-done:
			cancel()
			lastErr = err
			if errors.Is(err, daemon.ErrListen) {
				continue // the address is taken by something else: try a free port
			}
			return nil, fmt.Errorf("start the local daemon on %s at %s: %w", s.DataDir, addr, err)
		case <-ctx.Done():
			cancel()
			<-done
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("start the local daemon on %s at %s: %w", s.DataDir, strings.Join(addrs, " or "), lastErr)
}

// readKeyFile reads the default key a local daemon wrote in its data
// directory.
func readKeyFile(s *config.Settings) (string, error) {
	path := filepath.Join(s.DataDir, daemon.KeyFileName)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", &NoKeyError{Settings: s, KeyFile: path}
	}
	if err != nil {
		return "", fmt.Errorf("read the local daemon's API key: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// NoKeyError says that no API key was found, and where abctl looked.
type NoKeyError struct {
	Settings *config.Settings
	KeyFile  string // the local daemon's key file that does not exist, if any
}

func (e *NoKeyError) Error() string {
	s := e.Settings
	var b strings.Builder
	fmt.Fprintf(&b, "no API key for profile %q (%s)", s.Profile, s.BaseURL)
	switch {
	case e.KeyFile != "":
		fmt.Fprintf(&b, ": %s does not exist (a daemon started with --api-key writes none); set %s or the profile's api_key_env", e.KeyFile, config.EnvAPIKey)
	case s.APIKeyEnv != "":
		fmt.Fprintf(&b, ": the profile reads it from $%s, which is empty; set it, or %s", s.APIKeyEnv, config.EnvAPIKey)
	default:
		fmt.Fprintf(&b, ": set %s, or give the profile one with 'abctl config set-profile %s --api-key-env VAR'", config.EnvAPIKey, s.Profile)
	}
	return b.String()
}
