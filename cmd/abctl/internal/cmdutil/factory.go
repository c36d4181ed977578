// Package cmdutil holds what abctl's commands share: the Factory of lazily
// built dependencies (configuration, settings, the API client, the embedded
// daemon), the error types that become exit codes, the steps every command
// goes through (Run: validate, then hand to a test's hook or run), asking
// before what cannot be undone (Confirm, Deletion), and the helpers of
// arguments and flags that several commands take (the agent files of -f and
// -R among them).
//
// A command asks the Factory for what it needs when it runs, so that `abctl
// --version` or a flag error never reads the configuration or opens a
// connection, and tests can replace any piece.
//
// The package links no server code: the local daemon that a command may
// start inside itself is given to the Factory (StartDaemon) by the program's
// wiring, package cli, with the daemon's address and file names.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/llm"
)

// Factory builds, once each and only when asked, what commands depend on.
type Factory struct {
	IO     *iostreams.IOStreams
	Getenv config.Getenv
	Now    func() time.Time

	// GlobalFlags are the root's persistent flags (--profile, --base-url),
	// read by Settings.
	GlobalFlags *pflag.FlagSet

	// LocalAddr is the local daemon's own address (host:port): where
	// `abctl daemon` listens by default, the base URL of a local profile
	// that names none, and the only address at which a command starts the
	// daemon inside itself. The wiring sets the daemon's default address;
	// tests set an address of their own, so as never to reach, or take,
	// the user's. Settings fails while it is "".
	LocalAddr string
	// KeyFileName is the file of a local daemon's data directory that
	// holds its default organization's API key, which a local profile's
	// client reads; set by the wiring.
	KeyFileName string
	// StartDaemon runs the local daemon inside this process, for a local
	// profile whose daemon is not running; nil: a command never does.
	StartDaemon DaemonStarter
	// HealthTimeout bounds the check that the local daemon is running;
	// 0 means 500 ms.
	HealthTimeout time.Duration

	mu       sync.Mutex
	file     *config.File
	settings *config.Settings
	client   *client.Client
	embedded *embeddedDaemon
	// target is the base URL the client was made for, and where it came
	// from, for the errors of requests that reach nothing.
	target, targetFrom string
}

// DaemonStarter starts the local daemon inside this process, as cfg says,
// and returns the address it listens on and a function that stops it,
// waiting for it to finish its requests and close its store. ctx bounds
// the start only: the daemon runs until stop is called. When cfg.Addr
// cannot be taken (in use, not permitted), the error wraps ErrListen.
type DaemonStarter func(ctx context.Context, cfg DaemonConfig) (addr string, stop func() error, err error)

// DaemonConfig is what the Factory starts an embedded daemon with.
type DaemonConfig struct {
	// Addr is the address to listen on; "127.0.0.1:0" means a free port.
	Addr string
	// DataDir is the data directory of the local profile.
	DataDir string
	// ErrOut takes the daemon's warnings and errors (the command's stderr).
	ErrOut io.Writer
	// Getenv is the environment the daemon's engine reads (ABCTL_CHROMIUM,
	// ...).
	Getenv func(string) string
	// LLM is the daemon's language model: the configuration file's llm
	// section under the ABCTL_LLM_* environment, with the defaults filled
	// in, as `abctl daemon` without --llm-* flags has it.
	LLM llm.Config
}

// ErrListen is wrapped by a DaemonStarter's error when the address could
// not be taken, so that the Factory tries another.
var ErrListen = errors.New("cannot listen")

// ListenError returns err, a DaemonStarter's error for an address it could
// not take, marked as wrapping ErrListen; its message is err's.
func ListenError(err error) error { return listenError{err} }

type listenError struct{ err error }

func (e listenError) Error() string        { return e.err.Error() }
func (e listenError) Unwrap() error        { return e.err }
func (e listenError) Is(target error) bool { return target == ErrListen }

// DaemonAddr is the local daemon's own address: LocalAddr.
func (f *Factory) DaemonAddr() string {
	return f.LocalAddr
}

// LocalBaseURL is the base URL of the local daemon's own address.
func (f *Factory) LocalBaseURL() string {
	return "http://" + f.DaemonAddr()
}

// NewFactory returns a Factory over io and getenv that knows nothing of
// the local daemon yet: the program's wiring (cli.NewFactory) sets
// LocalAddr, KeyFileName and StartDaemon.
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
	if f.LocalAddr == "" {
		return nil, errors.New("the local daemon's address is not set (Factory.LocalAddr)")
	}
	s, err := config.Resolve(f.GlobalFlags, f.Getenv, file, config.Defaults{LocalBaseURL: f.LocalBaseURL()})
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
			key, err = f.readKeyFile(s)
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
func (f *Factory) localDaemonLocked(ctx context.Context, s *config.Settings) (base, from string, err error) {
	base, from, notRunning := f.findLocalDaemon(ctx, s)
	if base != "" {
		return base, from, nil
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
	if !config.SameBaseURL(e.baseURL, s.LocalBaseURL) && !s.BaseURLGiven {
		// The local daemon's own address is taken by something that is
		// not this data directory's daemon: the links this command prints
		// are on a port of its own, and die with it.
		fmt.Fprintf(f.IO.ErrOut, "abctl: no daemon was running for profile %q and %s is taken by something else, so this command runs one on %s at %s until it ends: "+
			"the links it prints stop working when it exits (start 'abctl daemon --addr ADDR' to keep one running there, which the commands find through %s)\n",
			s.Profile, f.DaemonAddr(), s.DataDir, e.baseURL, filepath.Join(s.DataDir, datadir.StateFileName))
	} else {
		fmt.Fprintf(f.IO.ErrOut, "abctl: no daemon was running for profile %q, so this command runs one on %s until it ends (start 'abctl daemon' to keep runs going after abctl exits)\n", s.Profile, s.DataDir)
	}
	return e.baseURL, "the daemon this command started", nil
}

// findLocalDaemon returns the base URL of the running local daemon of s,
// and where it came from; when none answers, base is "" and notRunning
// says what was found.
//
// A base URL given explicitly (flag, environment, profile) is used as
// given: it is not probed unless it is the local daemon's own address.
// Otherwise the daemon running over the data directory says where it
// listens in its state file; without one, no daemon runs over that
// directory, whatever answers at the default address (a daemon over
// another directory, which would refuse this one's key).
func (f *Factory) findLocalDaemon(ctx context.Context, s *config.Settings) (base, from, notRunning string) {
	switch {
	case s.BaseURLGiven && !config.SameBaseURL(s.BaseURL, s.LocalBaseURL):
		return s.BaseURL, s.BaseURLFrom, ""
	case s.BaseURLGiven:
		if f.healthy(ctx, s.BaseURL) {
			return s.BaseURL, s.BaseURLFrom, ""
		}
		return "", "", fmt.Sprintf("no daemon answers at %s (base URL from %s)", s.BaseURL, s.BaseURLFrom)
	}
	statePath := filepath.Join(s.DataDir, datadir.StateFileName)
	st, err := admin.ReadState(s.DataDir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", "", fmt.Sprintf("no daemon is running over %s (there is no %s)", s.DataDir, statePath)
	case err != nil:
		return "", "", fmt.Sprintf("no daemon is known to run over %s: %v", s.DataDir, err)
	}
	u := stateURL(st.Addr)
	if u != "" && f.healthy(ctx, u) {
		return u, "the daemon's state file " + statePath, ""
	}
	return "", "", fmt.Sprintf("the daemon of %s does not answer at %s (the address in %s)", s.DataDir, st.Addr, statePath)
}

// ResolvedBaseURL is the base URL the commands of this profile talk to,
// and where it comes from, found as Client finds it but without starting
// a daemon: for a local daemon's profile, the address of the daemon that
// runs over its data directory (its state file says where), or, when none
// runs, the address a command would start one at and why.
func (f *Factory) ResolvedBaseURL(ctx context.Context) (base, from string, err error) {
	s, err := f.Settings()
	if err != nil {
		return "", "", err
	}
	if !s.Local {
		return s.BaseURL, s.BaseURLFrom, nil
	}
	base, from, notRunning := f.findLocalDaemon(ctx, s)
	if base != "" {
		return base, from, nil
	}
	if !s.Embed {
		return s.BaseURL, fmt.Sprintf("%s; %s, and a command does not start one (embed is false)", s.BaseURLFrom, notRunning), nil
	}
	return s.BaseURL, fmt.Sprintf("%s; %s, so a command starts one there (on a free port if that one is taken)", s.BaseURLFrom, notRunning), nil
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
	stop    func() error
}

// startEmbedded runs the daemon of s inside abctl, on the local daemon's
// own address when that is free, else on a free loopback port. It keeps
// running after the command's context ends (the command may still need it
// after an interrupt, to cancel a run): Close ends it.
func (f *Factory) startEmbedded(ctx context.Context, s *config.Settings) (*embeddedDaemon, error) {
	addrs := []string{f.DaemonAddr(), "127.0.0.1:0"}
	if f.StartDaemon == nil {
		return nil, errors.New("this program has no daemon to start")
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
		a, stop, err := f.StartDaemon(ctx, DaemonConfig{Addr: addr, DataDir: s.DataDir, ErrOut: f.IO.ErrOut, Getenv: f.Getenv, LLM: model})
		switch {
		case err == nil:
			return &embeddedDaemon{baseURL: stateURL(a), stop: stop}, nil
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return nil, err
		case errors.Is(err, ErrListen):
			lastErr = err
			continue // the address is taken by something else: try a free port
		}
		return nil, fmt.Errorf("start the local daemon on %s at %s: %w", s.DataDir, addr, err)
	}
	return nil, fmt.Errorf("start the local daemon on %s at %s: %w", s.DataDir, strings.Join(addrs, " or "), lastErr)
}

// readKeyFile reads the default key a local daemon wrote in its data
// directory.
func (f *Factory) readKeyFile(s *config.Settings) (string, error) {
	if f.KeyFileName == "" {
		return "", errors.New("the name of the local daemon's key file is not set (Factory.KeyFileName)")
	}
	path := filepath.Join(s.DataDir, f.KeyFileName)
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
