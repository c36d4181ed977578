package daemon

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/metrics"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/scheduler"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/webhooks"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// Config is everything `abctl daemon` needs to start.
type Config struct {
	Addr string // listen address; datadir.DefaultAddr when empty
	// DataDir holds the daemon's own files: the bbolt store (when Store
	// is empty), the key file, the secret file, the admin socket and the
	// state file. Required; each daemon has its own, also when several
	// share a PostgreSQL store.
	DataDir string
	// Store is where the records are kept: "" means the embedded bbolt
	// file in DataDir (one daemon); a postgres:// or postgresql:// URL
	// means that PostgreSQL database (package daemon/store/pgstore), which
	// several daemons may share. They must then all have the same Secret
	// and the same ArtifactsDir. Its password never shows in logs or
	// errors.
	Store string
	// ArtifactsDir is where the runs' files (recordings, screenshots,
	// downloads) are kept: a directory, "" meaning DataDir/artifacts, or a
	// bucket of an S3-compatible service, s3://bucket[/prefix]. Daemons
	// that share a PostgreSQL store must share it too (a directory they
	// all mount, or one bucket), so that each serves the files of runs
	// another executed. With a bucket, runs write their files into
	// DataDir/artifacts and each recorded file is copied to the bucket;
	// the bucket's keys, endpoint and region come from ArtifactsEnv.
	ArtifactsDir string
	// ArtifactsEnv reads the environment variables of an s3://
	// ArtifactsDir, those of blocks.S3ConfigFromEnv: AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ENDPOINT_URL_S3 (else
	// AWS_ENDPOINT_URL) and AWS_REGION (else AWS_DEFAULT_REGION); nil
	// means os.Getenv.
	ArtifactsEnv func(string) string
	// APIKey, when set, is registered for the default organization, so that
	// scripts and CI can choose the key instead of reading it back.
	APIKey string
	// Secret, when set (store.SecretSize bytes), is the daemon's secret,
	// given (by the environment, say) instead of kept in the data
	// directory's file: it seals credentials and browser states, the
	// copies of API keys that sign webhooks, and signs file URLs.
	Secret []byte
	Logger *slog.Logger // nil: text records on Stderr
	Stderr io.Writer    // where the first key is announced; nil: os.Stderr
	// Ready, when set, is called with the address actually listened on
	// (useful with port 0).
	Ready func(addr string)
	// Executor executes runs; nil means the local browser engine when
	// Engine is set (as `abctl daemon` sets it), else one that fails every
	// run saying that no browser engine is configured.
	Executor executor.Executor
	// Engine configures the local browser engine (package engine), used
	// when Executor is nil.
	Engine *EngineConfig
	// Actions runs single actions (POST /v1/sdk/run_action); nil means the
	// executor, when it implements Actions (the local engine does).
	Actions executor.Actions
	// Sessions keeps browser sessions (POST /v1/browser_sessions); nil
	// means the executor, when it implements BrowserSessions (the local
	// engine does).
	Sessions executor.BrowserSessions
	// Workers is how many runs execute at once; 0 means, with a fleet of
	// browser endpoints, their capacity, else one per CPU core.
	Workers int
	// WebhookTimeout is how long a webhook receiver has to answer; 0 means
	// 10 s.
	WebhookTimeout time.Duration
	// WebhookClient sends the webhooks; nil means the sender's own (no
	// proxy, no redirects). Tests give one that reaches loopback only.
	WebhookClient *http.Client
	// Minute is how long a minute of a run's time limit and of a browser
	// session's timeout lasts; 0 means time.Minute. Tests shorten it.
	Minute time.Duration
	// ScheduleClock is the clock of the agents' schedules; nil means the
	// machine's. Tests give a scheduler.ManualClock and move it.
	ScheduleClock scheduler.Clock
	// OnScheduleFire, when set, is called after each fire time of a
	// schedule is handled (tests wait on it).
	OnScheduleFire func(scheduler.Fire)
	// CustomModelCheck bounds the test call made to a custom model's
	// endpoint when it is saved (/v1/custom-llms); 0 means
	// engine.DefaultCustomModelCheck (10 s).
	CustomModelCheck time.Duration
	// MaxUploadSize caps the files of POST /v1/upload_file, in bytes; 0
	// means api.DefaultMaxUploadSize (100 MiB).
	MaxUploadSize int64
	// Egress is what runs may reach (package internal/egress): when
	// loopback and private networks are reachable, and the operator's
	// allow and deny patterns. Run fills in Shared (the daemon serves
	// more than one organization) from the store.
	Egress egress.Config
	// EgressPolicy, when set, is the policy itself, built by the caller
	// (tests that give their own Executor share it with their engine);
	// Egress is then ignored, and Run protects its address on it.
	EgressPolicy *egress.Policy
	// EgressProxyHost is the address of this machine on which each run's
	// egress proxy listens, reached by the run's browser; "" means
	// 127.0.0.1 (a local Chromium, browsers on this machine).
	EgressProxyHost string
	// Pprof serves Go's profiles under /debug/pprof/ on the admin socket
	// (mode 0600), never on the TCP port (`abctl daemon --pprof`).
	Pprof bool
	// QueueLease is how long a daemon sharing its store with others holds
	// a run without renewing its lease (runner.Config.Lease): a daemon
	// that dies has its runs taken over that long after, at most. 0 means
	// runner.DefaultLease; tests shorten it.
	QueueLease time.Duration
	// Version is what GET /v1/version answers, the version of abctl (the
	// CLI gives its build's); "" answers the binary's module version or
	// "dev".
	Version string
}

// EngineConfig configures the local browser engine.
type EngineConfig struct {
	// Chromium is the browser binary; "" looks for one ($ABCTL_CHROMIUM,
	// then chromium, chromium-browser, google-chrome on PATH) when the first
	// run starts.
	Chromium string
	// BrowserAddress is a remote browser reached over CDP, used instead of
	// a local Chromium.
	BrowserAddress string
	// BrowserEndpoints are the remote browsers of a fleet: runs without a
	// browser_address of their own are placed on the least loaded of them
	// that has room, and no local Chromium starts. Not with Chromium or
	// BrowserAddress.
	BrowserEndpoints []BrowserEndpoint
	// BrowserQueueTimeout is how long a run waits for an endpoint of the
	// fleet with room before it fails, BrowserQueueMax how many runs may
	// wait at once; 0: the browser package's defaults (2 minutes, 256).
	BrowserQueueTimeout time.Duration
	BrowserQueueMax     int
	// NoRecording turns the video of runs off (recording needs ffmpeg).
	NoRecording bool
	// ActionIdle is how long the browser of a run_action workflow run stays
	// open without an action; 0 means executor.DefaultActionIdle.
	ActionIdle time.Duration
	// LLM is the language model of task runs, AI blocks and model-driven
	// single actions (see package llm): provider, base URL, key,
	// model, capabilities, timeout, retries. The zero value is a local
	// Ollama with llm.DefaultOllamaModel; runs fail, saying how to
	// configure a model, while none answers there.
	LLM llm.Config
	// Getenv reads the vendors' key variables (OPENAI_API_KEY,
	// ANTHROPIC_API_KEY), which make those vendors' models available to
	// agents and blocks that name them, and the S3 storage's (AWS_*, see
	// blocks.S3ConfigFromEnv); nil reads none.
	Getenv func(string) string
	// SMTP is the mail server of send_email blocks that name none.
	SMTP blocks.SMTP
	// S3 is the S3-compatible storage of storage blocks that name none.
	S3 blocks.S3Config
	// Code says whether and how code blocks run (off by default).
	Code blocks.CodeConfig
	// IMAP is where email_inbox blocks read mail; the zero value uses the
	// providers' servers.
	IMAP blocks.IMAPConfig
}

// BrowserEndpoint is one remote browser of the fleet, reached over CDP (as
// engine/browser.Endpoint, which it becomes).
type BrowserEndpoint struct {
	// URL is http(s)://host:port or ws(s)://host:port/...
	URL string
	// Headers are sent when connecting (the tokens of hosted browser
	// services). Their values are secrets: never print them.
	Headers map[string]string
	// Capacity is how many sessions it takes at once; 0 means
	// browser.DefaultEndpointCapacity.
	Capacity int
	// Name names it in status, metrics and messages; "" means its URL
	// without credentials or query.
	Name string
}

// ErrListen is wrapped by Run's error when the listen address could not be
// taken (in use, not local, not permitted), so that a caller can try
// another.
var ErrListen = errors.New("cannot listen")

type listenError struct{ err error }

func (e listenError) Error() string        { return e.err.Error() }
func (e listenError) Unwrap() error        { return e.err }
func (e listenError) Is(target error) bool { return target == ErrListen }

// Run serves the API until ctx is done, then shuts down: in-flight requests
// finish (up to 10 s), and the store closes last.
//
// While it serves, the admin routes (package daemon/admin, and daemon/api's
// admin.go) answer on the admin socket (datadir.AdminSocketName in the
// data directory, mode 0600) and nowhere else, and the state file
// (datadir.StateFileName, mode 0600) holds the address listened on and the
// process id; Run removes both when it returns. A data directory whose
// path is too long for a Unix socket is refused.
func Run(ctx context.Context, cfg Config) error {
	if cfg.DataDir == "" {
		return errors.New("daemon: no data directory given")
	}
	if cfg.Store != "" && !IsPostgresURL(cfg.Store) {
		return fmt.Errorf("daemon: the store %w", StoreValueError(cfg.Store))
	}
	if cfg.Addr == "" {
		cfg.Addr = datadir.DefaultAddr
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	// Two loggers (one of them buffered) and the key announcement share
	// Stderr: one lock keeps their writes whole and apart.
	cfg.Stderr = &lockedWriter{w: cfg.Stderr}
	accessLog := cfg.Logger
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(cfg.Stderr, nil))
		// Request lines are written in batches (logbuffer.go); the rest
		// at once.
		buf := newLogBuffer(cfg.Stderr, 200*time.Millisecond)
		defer buf.Close()
		accessLog = slog.New(slog.NewTextHandler(buf, nil))
	}
	// Before anything is made there: the admin socket must fit.
	if err := admin.CheckSocketPath(cfg.DataDir); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("daemon: create data directory: %w", err)
	}
	secret := cfg.Secret
	if secret == nil {
		var err error
		if secret, err = loadSecret(cfg.DataDir); err != nil {
			return err
		}
	} else if len(secret) != store.SecretSize {
		return fmt.Errorf("daemon: the secret given is %d bytes long; it must be %d", len(secret), store.SecretSize)
	}
	// One generator makes the ids of the store, the run files and the
	// agent versions the API hands to the store (store_open.go).
	st, gen, err := openStore(ctx, cfg, secret)
	if err != nil {
		return err
	}
	defer st.Close()
	// The run files' place is checked (a bucket must answer) before the
	// first start announces a key it would then not serve.
	files, err := openArtifacts(ctx, cfg, gen) // store_open.go
	if err != nil {
		return err
	}
	defer files.Close()

	if err := ensureOrganization(ctx, st, cfg); err != nil {
		return err
	}
	// What runs may reach: one policy for the browsers, the blocks and
	// the webhooks. The daemon's own address is protected once it
	// listens.
	policy := cfg.EgressPolicy
	if policy == nil {
		egressCfg := cfg.Egress
		egressCfg.Shared = func() bool { return st.OrganizationCount() > 1 }
		policy = egress.New(egressCfg)
	}
	cfg.Logger.Info("egress policy", "private_networks", privateNote(policy.Config().Private, st.OrganizationCount()),
		"allow", len(policy.Config().Allow), "deny", len(policy.Config().Deny))

	signer, err := artifacts.NewSigner(secret)
	if err != nil {
		return err
	}
	exec := cfg.Executor
	if exec == nil && cfg.Engine != nil {
		idle := cfg.Engine.ActionIdle
		if idle <= 0 {
			idle = executor.DefaultActionIdle
		}
		models, err := llm.NewRegistry(cfg.Engine.LLM, cfg.Engine.Getenv, llm.WithLogger(cfg.Logger))
		if err != nil {
			return fmt.Errorf("daemon: the language model: %w", err)
		}
		eng, err := engine.New(ctx, engine.Config{
			Chromium: cfg.Engine.Chromium, BrowserAddress: cfg.Engine.BrowserAddress, BrowserEndpoints: browserEndpoints(cfg.Engine),
			BrowserQueueTimeout: cfg.Engine.BrowserQueueTimeout, BrowserQueueMax: cfg.Engine.BrowserQueueMax,
			Record: !cfg.Engine.NoRecording, Logger: cfg.Logger, ActionIdle: idle,
			Models: models, SMTP: cfg.Engine.SMTP, S3: s3Config(cfg.Engine), Code: cfg.Engine.Code, IMAP: cfg.Engine.IMAP,
			Egress: policy, EgressProxyHost: cfg.EgressProxyHost,
		})
		if err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
		defer eng.Close()
		if len(cfg.Engine.BrowserEndpoints) > 0 {
			// The fleet's endpoints are checked from the start, not from
			// the first run (no local browser starts with a fleet).
			eng.FleetStatus()
		}
		exec = eng
	}
	if exec == nil {
		exec = noEngine{}
	}
	actions := cfg.Actions
	if actions == nil {
		actions, _ = exec.(executor.Actions)
	}
	if actions != nil {
		// Open run_action sessions end (and their runs are recorded)
		// before the store closes.
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			actions.EndActionRuns(ctx)
		}()
	}
	sender := &webhooks.Sender{Timeout: cfg.WebhookTimeout, Client: cfg.WebhookClient, Guard: policy.For}
	// A stopped daemon leaves no connection open to a receiver: kept-alive
	// ones would hold up the receiver's own graceful shutdown (a server
	// waits seconds for a connection that never sent a request).
	defer sender.CloseIdleConnections() // after the runner's last delivery
	// The answers about runs and the webhooks' payloads carry the same
	// URLs; the runner sends the terminal webhooks, the API the retries.
	links := &runview.Links{Signer: signer}
	hooks := &runner.Webhooks{Store: st, Sender: sender, Links: links, Logger: cfg.Logger}
	rn := runner.New(runner.Config{
		Store: st, Executor: exec, Files: files, Notifier: hooks,
		Workers: workers(cfg.Workers, exec), Logger: cfg.Logger, Minute: cfg.Minute,
		LocalFiles: artifacts.LocalFiles{Store: files, Signer: signer}, // the daemon's own file URLs, read from disk
		Lease:      cfg.QueueLease,
	})
	sessions := cfg.Sessions
	if sessions == nil {
		sessions, _ = exec.(executor.BrowserSessions)
	}
	// The pictures of running runs' pages: the executor's runs', else the
	// run_action runs' of the Actions given beside it (tests).
	frames, _ := exec.(executor.Frames)
	if frames == nil {
		frames, _ = actions.(executor.Frames)
	}
	runs := &api.Runs{Runner: rn, Files: files, Links: links, Webhooks: hooks, Actions: actions, Sessions: sessions, Frames: frames}
	// The fleet of browser endpoints, when the executor places runs on one
	// (the local engine given BrowserEndpoints), shows in GET /metrics and
	// GET /healthz.
	fleet, _ := exec.(metrics.FleetSource)
	handler := api.NewServer(st, cfg.Logger, api.WithRuns(runs), api.WithIDs(gen), api.WithAccessLog(accessLog), api.WithMinute(cfg.Minute),
		api.WithMaxUploadSize(cfg.MaxUploadSize), api.WithVersion(cfg.Version), api.WithPprof(cfg.Pprof),
		api.WithModelCheck(customModelCheck(cfg, policy.For)),
		api.WithMetrics(metrics.Handler(metrics.NewFleetCollector(fleet))),
		api.WithBrowsers(func() (any, bool) { return metrics.Health(fleet) }))
	defer handler.StopSessionTimers()
	rn.SetAgentRuns(handler) // the runs of workflow_trigger blocks, made as the API makes runs
	// The browsers of the sessions a previous daemon left open are gone.
	// A shared store's open sessions may be other live daemons' (whose
	// browsers are alive): they are left as they are.
	if sharedStore(st) {
		cfg.Logger.Info("open browser sessions are left as they are: the store is shared, and a session's browser lives in the daemon that opened it; " +
			"the sessions of a daemon that stopped stay open in the store until closed (POST /v1/browser_sessions/{id}/close, through any daemon)")
	} else if n, err := st.BrowserSessions().EndOpen(ctx, store.SessionEndedByRestart); err != nil {
		return err
	} else if n > 0 {
		cfg.Logger.Info("browser sessions of the previous daemon ended", "count", n)
	}
	// Resume or end what a previous daemon left unfinished before taking
	// new requests.
	if err := rn.Start(ctx); err != nil {
		return err
	}
	defer rn.Stop() // after the HTTP server, before the store closes
	// The schedules' runs are made as the API makes runs. Start fires the
	// schedules that came due while no daemon ran (one catch-up run each)
	// before the first request.
	sched := scheduler.New(scheduler.Config{
		Store: st, Runs: handler, Submit: rn.Submit, Clock: cfg.ScheduleClock,
		Logger: cfg.Logger, OnFire: cfg.OnScheduleFire,
		Sync: scheduler.SyncFor(st), // other daemons' schedules, in a shared store
	})
	handler.SetScheduler(sched)
	if err := sched.Start(ctx); err != nil {
		return err
	}
	defer sched.Stop() // before the runner stops

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("daemon: listen on %s: %w", cfg.Addr, listenError{err})
	}
	defer ln.Close() // in case Serve never runs; the server closes it otherwise
	if err := policy.Protect(ln.Addr().String(), "the daemon's API"); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	// The admin routes are served on the admin socket (mode 0600) and on
	// nothing else: the TCP port is reachable by the runs themselves.
	adminLn, err := admin.Listen(cfg.DataDir)
	if err != nil {
		return err
	}
	defer adminLn.Close() // removes the socket
	// The state file tells `abctl daemon orgs` and the CLI that this
	// daemon holds the store, and where its API answers.
	state := admin.State{Addr: ln.Addr().String(), PID: os.Getpid()}
	if err := admin.WriteState(cfg.DataDir, state); err != nil {
		return err
	}
	defer func() {
		if err := admin.RemoveState(cfg.DataDir, state); err != nil {
			cfg.Logger.Warn("could not remove the state file", "error", err)
		}
	}()
	errorLog := slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errorLog}
	adminSrv := &http.Server{Handler: handler.AdminHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: errorLog}
	cfg.Logger.Info("abctl daemon listening", "addr", ln.Addr().String(), "admin_socket", adminLn.Addr().String(), "data_dir", cfg.DataDir)
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String())
	}

	serveErr := make(chan error, 2)
	go func() { serveErr <- fmt.Errorf("daemon: serve: %w", srv.Serve(ln)) }()
	go func() { serveErr <- fmt.Errorf("daemon: serve the admin socket: %w", adminSrv.Serve(adminLn)) }()
	select {
	case err := <-serveErr:
		srv.Close()
		adminSrv.Close()
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Both at once: each waits for its requests in flight.
	adminDone := make(chan error, 1)
	go func() { adminDone <- adminSrv.Shutdown(shutdownCtx) }()
	err = srv.Shutdown(shutdownCtx)
	if aerr := <-adminDone; err == nil && aerr != nil {
		err = fmt.Errorf("admin socket: %w", aerr)
	}
	if err != nil {
		return fmt.Errorf("daemon: shutdown: %w", err)
	}
	cfg.Logger.Info("abctl daemon stopped")
	return nil
}

// privateNote says in the start-up log when runs reach loopback and
// private networks.
func privateNote(m egress.PrivateMode, orgs int) string {
	switch m {
	case egress.PrivateAllow:
		return "reachable (--egress-private=allow)"
	case egress.PrivateDeny:
		return "refused but for --egress-allow (--egress-private=deny)"
	}
	if orgs > 1 {
		return "refused but for --egress-allow: the daemon serves several organizations"
	}
	return "reachable while the daemon serves one organization"
}

// ensureOrganization creates the default organization and its key on first
// start, announcing the key once on stderr and writing it to the key file;
// and registers cfg.APIKey when given. A daemon whose store has an
// organization already writes no key file. Daemons starting at once on
// one PostgreSQL database take turns (lockOrganizations), so that only the
// first makes the default organization and announces its key.
func ensureOrganization(ctx context.Context, st store.Store, cfg Config) error {
	unlock, err := lockOrganizations(ctx, st, cfg.Logger)
	if err != nil {
		return err
	}
	defer unlock()
	org, err := st.DefaultOrganization(ctx)
	if errors.Is(err, store.ErrNotFound) {
		var key string
		org, key, err = st.CreateOrganization(ctx, "default")
		if err != nil {
			return err
		}
		if cfg.APIKey == "" {
			path := filepath.Join(cfg.DataDir, datadir.KeyFileName)
			if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
				return fmt.Errorf("daemon: write the API key file: %w", err)
			}
			fmt.Fprintf(cfg.Stderr, "abctl daemon: created organization %s with API key\n\n    %s\n\nThe key is also in %s. It is shown only this once.\n", org.ID, key, path)
		}
	} else if err != nil {
		return err
	}
	if cfg.APIKey != "" {
		if err := st.AddAPIKey(ctx, org.ID, cfg.APIKey); err != nil {
			return fmt.Errorf("daemon: register --api-key: %w", err)
		}
	}
	return nil
}

// newIDs returns the daemon's id generator, with a random worker number:
// another process writing to the same data directory (`abctl daemon orgs`
// on a stopped daemon's) has its own.
func newIDs() (*ids.Generator, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("daemon: random worker id: %w", err)
	}
	return ids.New(binary.BigEndian.Uint32(b[:])), nil
}

// loadSecret reads the daemon's secret from the data directory, making it
// on first start.
func loadSecret(dir string) ([]byte, error) {
	path := filepath.Join(dir, datadir.SecretFileName)
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) != store.SecretSize {
			return nil, fmt.Errorf("daemon: %s holds %d bytes, not %d: restore it or delete it (webhooks and artifact URLs of existing runs then stop working)", path, len(b), store.SecretSize)
		}
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("daemon: read the secret: %w", err)
	}
	b = make([]byte, store.SecretSize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("daemon: make a secret: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon: write the secret: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("daemon: write the secret: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("daemon: write the secret: %w", err)
	}
	return b, f.Close()
}

// noEngine is the executor of a daemon built without a browser engine: it
// fails every run, saying so, rather than leaving runs queued forever.
type noEngine struct{}

func (noEngine) Execute(ctx context.Context, job *executor.Job, _ executor.Progress) executor.Result {
	return executor.Result{
		Status:        client.RunStatusFailed,
		FailureReason: "This daemon has no browser engine configured, so it cannot execute runs.",
	}
}

// lockedWriter serialises the writes of several writers to one.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// s3Config is the S3 storage of the engine's blocks: ec.S3, with the keys
// from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN: keys never come from flags), and the endpoint and the
// region from it where ec.S3 names none.
func s3Config(ec *EngineConfig) blocks.S3Config {
	c := ec.S3
	getenv := ec.Getenv
	if getenv == nil {
		return c
	}
	env := blocks.S3ConfigFromEnv(getenv)
	if c.AccessKeyID == "" && c.SecretAccessKey == "" {
		c.AccessKeyID, c.SecretAccessKey, c.SessionToken = env.AccessKeyID, env.SecretAccessKey, env.SessionToken
	}
	if c.Endpoint == "" {
		c.Endpoint = env.Endpoint
	}
	if c.Region == "" {
		c.Region = env.Region
	}
	return c
}

// workers is how many runs execute at once: n when it is set; else, with
// a fleet of browser endpoints, their capacity (one per CPU core would
// leave most of a large fleet idle, and more would make runs wait in the
// fleet's queue, whose timeout is for a fleet that cannot take them);
// else 0, the runner's default (one per CPU core).
func workers(n int, exec executor.Executor) int {
	if n > 0 {
		return n
	}
	if fleet, ok := exec.(metrics.FleetSource); ok {
		if st, ok := fleet.FleetStatus(); ok && len(st.Endpoints) > 0 {
			total := 0
			for _, ep := range st.Endpoints {
				total += ep.Capacity
			}
			return total
		}
	}
	return 0
}

// browserEndpoints are ec's endpoints as the engine takes them.
func browserEndpoints(ec *EngineConfig) []browser.Endpoint {
	var out []browser.Endpoint
	for _, e := range ec.BrowserEndpoints {
		out = append(out, browser.Endpoint{URL: e.URL, Headers: e.Headers, Capacity: e.Capacity, Name: e.Name})
	}
	return out
}
