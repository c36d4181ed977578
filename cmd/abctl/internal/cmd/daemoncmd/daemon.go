// Package daemoncmd is `abctl daemon`: the local service of package daemon
// on this machine, and `abctl daemon orgs`, the organizations of its store.
//
// It is the one command package that links the server (package daemon and
// its store): the others reach the service through the SDK only.
package daemoncmd

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// DaemonOptions are the inputs of `abctl daemon`.
type DaemonOptions struct {
	IO *iostreams.IOStreams
	// Serve runs the daemon until ctx ends: daemon.Run.
	Serve func(ctx context.Context, cfg daemon.Config) error

	// Config is what the daemon runs with: its flags, and in Engine the
	// browser's flags and the language model (the --llm-* flags over the
	// configuration file's llm section and the ABCTL_LLM_* environment,
	// with the defaults filled in).
	Config daemon.Config

	// BrowserEndpoints are the values of --browser-endpoint; without any,
	// browserEndpointsEnv (EnvBrowserEndpoints) gives them. Validate
	// parses them into Config.Engine.BrowserEndpoints.
	BrowserEndpoints    []string
	browserEndpointsEnv string
	// BrowserEndpointsFile is a file of endpoints, one a line as in the
	// environment variable, read when no --browser-endpoint is given.
	BrowserEndpointsFile string

	// Egress holds the values of the --egress-* flags, parsed by Validate
	// into Config.Egress and Config.EgressProxyHost.
	Egress egressFlags

	// storeFrom and artifactsFrom say where Config.Store and
	// Config.ArtifactsDir came from (the flag or its variable), for the
	// messages.
	storeFrom, artifactsFrom string
}

// NewCmdDaemon returns `abctl daemon`. runF, when not nil, is called with
// the validated options instead of serving.
func NewCmdDaemon(f *cmdutil.Factory, runF func(*DaemonOptions) error) *cobra.Command {
	opts := &DaemonOptions{IO: f.IO, Serve: daemon.Run, Config: daemon.Config{Engine: &daemon.EngineConfig{}}}
	cfg, engine := &opts.Config, opts.Config.Engine
	var lf llmFlags
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Serve the v1 API locally on an embedded store",
		Long: "abctl daemon serves the same v1 API as the hosted service on this machine, keeping\n" +
			"agents, folders, tags and runs in an embedded store under --data-dir, so that the SDK,\n" +
			"the CLI and the hosted service's own clients work offline against it.\n\n" +
			"Runs wait in a queue, fair across organizations, and --workers of them execute at\n" +
			"once. Each run that ends sends its webhook, signed with the API key that started it.\n" +
			"Runs a crash interrupted are ended (or, if they had not started, resumed) at the\n" +
			"next start.\n\n" +
			"On first start it creates an organization and an API key, prints the key once on\n" +
			"stderr and writes it to <data-dir>/" + datadir.KeyFileName + " (mode 0600). --api-key registers a\n" +
			"key of your choosing for that organization, for scripts and CI.\n\n" +
			"Credentials and browser profiles are sealed with the daemon's secret: the file\n" +
			"<data-dir>/" + datadir.SecretFileName + " (mode 0600, made on first start), or " + EnvSecret + "\n" +
			"(64 hexadecimal digits) when set. Keep it apart from the store's backups; a daemon\n" +
			"given another secret than the one its store was sealed with refuses to start.\n\n" +
			"It listens on loopback unless --addr says otherwise, and stops cleanly on Ctrl-C or\n" +
			"SIGTERM: requests in flight finish, then the store closes.\n\n" +
			"Runs reach only what is theirs: never file: URLs, the daemon's own ports, its\n" +
			"browsers' DevTools, link-local or cloud metadata addresses. Loopback and private\n" +
			"networks are theirs while the daemon serves one organization; once it serves\n" +
			"several, only what --egress-allow names (--egress-private changes the rule). Each\n" +
			"run's browser goes through a proxy of its own that decides on the address every\n" +
			"host resolves to (docs/security.md).\n\n" +
			"Runs execute in Chromium (found on PATH or given with --chromium, or a remote one\n" +
			"with --browser-address), which starts with the first run; without it runs fail,\n" +
			"saying how to install it. Runs are recorded as video when ffmpeg is on PATH\n" +
			"(--no-recording turns that off). The browser of a run started by\n" +
			"POST /v1/sdk/run_action stays open for follow-up actions until --action-idle\n" +
			"passes without one.\n\n" +
			"Runs can be spread over a fleet of remote browsers instead: --browser-endpoint\n" +
			"'" + endpointSyntax + "', once per browser, or the same\n" +
			"values one a line in " + EnvBrowserEndpoints + " (better for tokens: flags show in process\n" +
			"lists). Each run goes to the least loaded healthy endpoint with room (capacity 4 by\n" +
			"default) and waits in a queue while none has any; an endpoint that fails is checked\n" +
			"until it answers again. GET /metrics (Prometheus, no key) and GET /healthz show the\n" +
			"endpoints and the queue; 'abctl daemon status' prints them.\n\n" +
			"Task runs, AI blocks (navigation, extraction, validation, task, login, text_prompt,\n" +
			"file_download without a url, action without a working selector) and run_action with an\n" +
			"intention use a language model: --llm-provider (openai, anthropic, ollama,\n" +
			"openai-compatible), --llm-base-url, --llm-api-key, --llm-model, --llm-vision,\n" +
			"--llm-schema, --llm-timeout and --llm-max-retries, or the same settings in\n" +
			"ABCTL_LLM_PROVIDER, ABCTL_LLM_BASE_URL, ABCTL_LLM_API_KEY, ABCTL_LLM_MODEL,\n" +
			"ABCTL_LLM_VISION, ABCTL_LLM_SCHEMA, ABCTL_LLM_TIMEOUT and ABCTL_LLM_MAX_RETRIES (flags\n" +
			"win). With nothing set it is a local Ollama at " + llm.DefaultOllamaBaseURL + " with\n" +
			"" + llm.DefaultOllamaModel + ", no key needed; OPENAI_API_KEY or ANTHROPIC_API_KEY alone select those\n" +
			"services. Agents and blocks may name another model in their model field. Prefer the\n" +
			"environment for the key: flags show in process lists.\n\n" +
			"While it runs, <data-dir>/" + datadir.StateFileName + " (mode 0600) holds its address and process\n" +
			"id, and it serves the admin routes that 'abctl daemon orgs' uses on the Unix socket\n" +
			"<data-dir>/" + datadir.AdminSocketName + " (mode 0600), never on its TCP port; both are removed on\n" +
			"shutdown. A Unix socket path is short (107 bytes on Linux): the daemon refuses a\n" +
			"--data-dir whose path leaves no room for it.\n\n" +
			"Several daemons, on one machine or several, can serve the same records: give each\n" +
			"--store postgres://user:password@host:5432/dbname (or " + EnvStore + "), the same PostgreSQL\n" +
			"database, which the first one prepares. Each keeps its own --data-dir (its admin\n" +
			"socket, state file and secret file); all of them must have the same secret (the same\n" +
			EnvSecret + ", or a copy of the first daemon's secret file in each data directory)\n" +
			"and the same --artifacts (or " + EnvArtifacts + "), where the runs' files are kept: a\n" +
			"directory they all mount, or a bucket of an S3-compatible service, s3://bucket/prefix.\n" +
			"With a bucket, runs write into <data-dir>/" + datadir.ArtifactsDirName + " and each file is copied to the\n" +
			"bucket before it is recorded; any daemon serves it. The bucket's keys come from\n" +
			"AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (never from flags), its\n" +
			"service from AWS_ENDPOINT_URL_S3 (else AWS_ENDPOINT_URL; default AWS S3) and its region\n" +
			"from AWS_REGION (else AWS_DEFAULT_REGION); the daemon checks at start that it answers.\n" +
			"Only the first daemon on an empty database makes the default\n" +
			"organization and writes its key file. The database's password never shows in logs\n" +
			"or messages; prefer " + EnvStore + " to the flag, which process lists show.",
		// An argument can only be a mistyped subcommand (orgs).
		Args:                       cmdutil.GroupArgs,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.browserEndpointsEnv = f.Getenv(EnvBrowserEndpoints)
			opts.storeFrom, opts.artifactsFrom = "--store", "--artifacts"
			if !cmd.Flags().Changed("store") {
				cfg.Store, opts.storeFrom = f.Getenv(EnvStore), EnvStore+" (set in the environment)"
			}
			if !cmd.Flags().Changed("artifacts") {
				cfg.ArtifactsDir, opts.artifactsFrom = f.Getenv(EnvArtifacts), EnvArtifacts+" (set in the environment)"
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			file, err := f.ConfigFile()
			if err != nil {
				return err
			}
			model, err := lf.config(cmd, f.Getenv, file)
			if err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			engine.LLM, engine.Getenv = model, f.Getenv
			cfg.ArtifactsEnv = f.Getenv // the keys of an s3:// --artifacts
			if cfg.Secret, err = secretFromEnv(f.Getenv); err != nil {
				return &cmdutil.UsageError{Err: err}
			}
			if p := engine.SMTP.Port; p < 1 || p > 65535 {
				return &cmdutil.UsageError{Err: fmt.Errorf("--smtp-port %d: a port is a number from 1 to 65535", p)}
			}
			// The SMTP account from the environment, never from flags
			// (they show in process lists).
			engine.SMTP.Username, engine.SMTP.Password = f.Getenv(EnvSMTPUsername), f.Getenv(EnvSMTPPassword)

			cfg.Stderr = opts.IO.ErrOut
			cfg.Version = buildinfo.Get().Version
			if runF != nil {
				return runF(opts)
			}
			return explainListen(cmd.Context(), opts.Serve(cmd.Context(), opts.Config), cfg.Addr, cfg.DataDir)
		},
	}
	cmd.Flags().StringVar(&cfg.Addr, "addr", f.DaemonAddr(), "address to listen on")
	// --data-dir is persistent: the subcommands (orgs) work on the same directory.
	cmd.PersistentFlags().StringVar(&cfg.DataDir, "data-dir", config.DefaultDataDir(f.Getenv),
		"directory of this daemon's own files: the embedded store (without --store), the key and secret files, the run files (without --artifacts), the admin socket and the state file")
	// --store is persistent too: `abctl daemon orgs` works on the same
	// database. Its default is empty, never $ABCTL_STORE, which would show
	// the password in --help.
	cmd.PersistentFlags().StringVar(&cfg.Store, "store", "",
		"PostgreSQL database that several daemons share, postgres://user:password@host:5432/dbname (default: $"+EnvStore+", else the embedded store in --data-dir)")
	cmd.Flags().StringVar(&cfg.ArtifactsDir, "artifacts", "",
		"where the runs' files are kept, which daemons sharing --store must all have: a directory they all mount, or s3://bucket[/prefix], "+
			"a bucket whose keys, endpoint and region come from $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN, $AWS_ENDPOINT_URL_S3, $AWS_REGION "+
			"(default: $"+EnvArtifacts+", else <data-dir>/"+datadir.ArtifactsDirName+")")
	cmd.Flags().StringVar(&cfg.APIKey, "api-key", "", "register this API key for the default organization")
	cmd.Flags().IntVar(&cfg.Workers, "workers", 0, "runs that execute at once (default: with --browser-endpoint, their capacity; else one per CPU core)")
	cmd.Flags().Var((*byteSize)(&cfg.MaxUploadSize), "max-upload-size", "largest file POST /v1/upload_file accepts, such as 100MiB or 2GB (default 100MiB)")
	cmd.Flags().DurationVar(&cfg.WebhookTimeout, "webhook-timeout", 0, "how long a webhook receiver has to answer (default 10s)")
	cmd.Flags().StringVar(&engine.Chromium, "chromium", "", "path of the Chromium binary (default: $ABCTL_CHROMIUM, then chromium, chromium-browser, google-chrome on PATH)")
	cmd.Flags().StringVar(&engine.BrowserAddress, "browser-address", "", "use a remote Chromium over CDP (http://host:9222 or ws://host:9222/devtools/browser/...) instead of a local one")
	cmd.Flags().StringArrayVar(&opts.BrowserEndpoints, strings.TrimPrefix(flagBrowserEndpoint, "--"), nil,
		"a remote browser of the fleet, "+endpointSyntax+" (repeatable; default: the lines of --browser-endpoints-file, else of $"+EnvBrowserEndpoints+")")
	cmd.Flags().DurationVar(&engine.BrowserQueueTimeout, "browser-queue-timeout", 0,
		"with a fleet: how long a run waits for an endpoint with room before it fails (default 2m)")
	cmd.Flags().IntVar(&engine.BrowserQueueMax, "browser-queue-max", 0,
		"with a fleet: how many runs may wait for an endpoint at once; more fail at once (default 256)")
	cmd.Flags().StringVar(&opts.BrowserEndpointsFile, "browser-endpoints-file", "",
		"a file of the fleet's browsers, one "+endpointSyntax+" a line (# starts a comment)")
	cmd.Flags().BoolVar(&engine.NoRecording, "no-recording", false, "do not record runs as video")
	cmd.Flags().BoolVar(&cfg.Pprof, "pprof", false, "serve Go's profiles under /debug/pprof/ on the admin socket <data-dir>/"+datadir.AdminSocketName+" (never on --addr)")
	cmd.Flags().DurationVar(&engine.ActionIdle, "action-idle", executor.DefaultActionIdle, "how long the browser of a run_action workflow run stays open without an action")
	cmd.Flags().StringVar(&engine.SMTP.Host, "smtp-host", "", "SMTP server of send_email blocks that name none (its user and password: "+EnvSMTPUsername+", "+EnvSMTPPassword+")")
	cmd.Flags().IntVar(&engine.SMTP.Port, "smtp-port", 587, "port of --smtp-host")
	cmd.Flags().BoolVar(&engine.Code.Enabled, "allow-code-blocks", false, "run the Python code of code blocks (python3, a process per block with a time and memory limit); without it agents with code blocks fail before they start")
	cmd.Flags().DurationVar(&engine.Code.Timeout, "code-timeout", time.Minute, "how long one code block may run")
	cmd.Flags().IntVar(&engine.Code.MemoryMiB, "code-memory", 1024, "the memory (address space, MiB) one code block may use")
	cmd.Flags().StringVar(&engine.IMAP.Address, "imap-address", "", "IMAP server (host:port, TLS) of every email_inbox block, instead of Gmail's or Outlook's")
	cmd.Flags().BoolVar(&engine.IMAP.StartTLS, "imap-starttls", false, "connect to --imap-address in plain text and upgrade with STARTTLS (port 143) instead of TLS from the start")
	cmd.Flags().StringVar(&engine.S3.Endpoint, "s3-endpoint", "", "S3-compatible service of the storage blocks (such as http://127.0.0.1:9000; default: $AWS_ENDPOINT_URL_S3, then AWS S3); its keys: $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY")
	cmd.Flags().StringVar(&engine.S3.Region, "s3-region", "", "region of the buckets (default: $AWS_REGION)")
	cmd.Flags().StringVar(&engine.S3.Bucket, "s3-bucket", "", "bucket of upload_to_s3 and download_to_s3 blocks, and of file_upload blocks that name none")
	cmd.Flags().StringVar(&engine.S3.Prefix, "s3-prefix", "", "start of the keys upload_to_s3 and download_to_s3 write (such as abctl/)")
	cmd.Flags().BoolVar(&engine.S3.PathStyle, "s3-path-style", false, "address buckets as <endpoint>/<bucket> (MinIO, Ceph and most self-hosted services need it)")
	cmd.Flags().StringVar(&engine.S3.KnownHostsFile, "sftp-known-hosts", "", "known_hosts file that vouches for the SFTP servers of file_upload blocks without sftp_host_key (default: ~/.ssh/known_hosts)")
	opts.registerEgressFlags(cmd)
	lf.register(cmd)
	cmd.AddCommand(NewCmdOrgs(f, &cfg.DataDir, &cfg.Store), NewCmdStatus(f, &cfg.DataDir, nil))
	return cmd
}

// The variables that give the SMTP account of --smtp-host.
const (
	EnvSMTPUsername = "ABCTL_SMTP_USERNAME"
	EnvSMTPPassword = "ABCTL_SMTP_PASSWORD"
)

// The variables of --store and --artifacts, read when the flag is not
// given.
const (
	EnvStore     = "ABCTL_STORE"
	EnvArtifacts = "ABCTL_ARTIFACTS"
)

// checkStore refuses a store value (given by from, a flag or a variable)
// that is neither empty nor a PostgreSQL URL, naming it without its
// password.
func checkStore(value, from string) error {
	if value == "" || daemon.IsPostgresURL(value) {
		return nil
	}
	if from == "" {
		from = "--store"
	}
	return fmt.Errorf("%s: %w", from, daemon.StoreValueError(value))
}

// EnvSecret names the variable that gives the daemon its secret instead
// of the data directory's file: 64 hexadecimal digits (32 bytes).
const EnvSecret = "ABCTL_DAEMON_SECRET"

// secretFromEnv reads EnvSecret; nil when it is not set. The error never
// repeats the value.
func secretFromEnv(getenv func(string) string) ([]byte, error) {
	v := strings.TrimSpace(getenv(EnvSecret))
	if v == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(v)
	if err != nil || len(b) != store.SecretSize {
		return nil, fmt.Errorf("%s must be %d hexadecimal digits (%d random bytes, as `openssl rand -hex %d` makes them); it is %d characters long%s",
			EnvSecret, 2*store.SecretSize, store.SecretSize, store.SecretSize, len(v), map[bool]string{true: " and not hexadecimal", false: ""}[err != nil])
	}
	return b, nil
}

// Validate checks the daemon's flags and its browser engine's. The model's
// flags are checked as they are layered over the configuration file and the
// environment.
func (o *DaemonOptions) Validate() error {
	cfg := &o.Config
	if cfg.Workers < 0 {
		return cmdutil.UsageErrorf("--workers must be 1 or more (0 means the default), not %d", cfg.Workers)
	}
	if cfg.WebhookTimeout < 0 {
		return cmdutil.UsageErrorf("--webhook-timeout must be positive, not %s", cfg.WebhookTimeout)
	}
	if err := checkStore(cfg.Store, o.storeFrom); err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if artifacts.HasScheme(cfg.ArtifactsDir) {
		if err := daemon.ArtifactsValueError(cfg.ArtifactsDir); err != nil {
			return cmdutil.UsageErrorf("%s: %v", o.artifactsFrom, err)
		}
	} else if cfg.ArtifactsDir != "" {
		if fi, err := os.Stat(cfg.ArtifactsDir); err == nil && !fi.IsDir() {
			return cmdutil.UsageErrorf("%s %s is a file, not a directory", o.artifactsFrom, cfg.ArtifactsDir)
		}
	}
	if err := checkEngineFlags(cfg.Engine); err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if err := o.checkBrowserEndpoints(); err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	if err := o.checkEgress(); err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	return nil
}

// checkBrowserEndpoints parses the fleet's endpoints (--browser-endpoint,
// else EnvBrowserEndpoints) into the engine's configuration, and refuses
// them beside another browser.
func (o *DaemonOptions) checkBrowserEndpoints() error {
	values, from := endpointsFromFlag(o.BrowserEndpoints), flagBrowserEndpoint
	if len(values) == 0 && o.BrowserEndpointsFile != "" {
		b, err := os.ReadFile(o.BrowserEndpointsFile)
		if err != nil {
			return fmt.Errorf("--browser-endpoints-file: %w", err)
		}
		values, from = endpointsFromLines(string(b), o.BrowserEndpointsFile), "--browser-endpoints-file"
		if len(values) == 0 {
			return fmt.Errorf("--browser-endpoints-file %s names no endpoint (one a line: %s)", o.BrowserEndpointsFile, endpointSyntax)
		}
	}
	if len(values) == 0 {
		values, from = endpointsFromEnv(o.browserEndpointsEnv), EnvBrowserEndpoints
	}
	e := o.Config.Engine
	switch {
	case e.BrowserQueueTimeout < 0:
		return fmt.Errorf("--browser-queue-timeout %s: give a positive duration, such as 30s or 5m", e.BrowserQueueTimeout)
	case e.BrowserQueueMax < 0:
		return fmt.Errorf("--browser-queue-max %d: give a positive number of runs", e.BrowserQueueMax)
	case len(values) == 0 && (e.BrowserQueueTimeout != 0 || e.BrowserQueueMax != 0):
		return fmt.Errorf("--browser-queue-timeout and --browser-queue-max apply to a fleet of browsers: give --browser-endpoint too")
	}
	if len(values) == 0 {
		return nil
	}
	for _, other := range []struct{ flag, value, why string }{
		{"--browser-address", e.BrowserAddress, "runs use either the fleet or the one remote browser of --browser-address"},
		{"--chromium", e.Chromium, "runs on a fleet use its endpoints, never a local browser"},
	} {
		if other.value == "" {
			continue
		}
		if from == EnvBrowserEndpoints {
			return fmt.Errorf("%s (set in the environment) and %s cannot be combined: %s; unset %s to use %s",
				EnvBrowserEndpoints, other.flag, other.why, EnvBrowserEndpoints, other.flag)
		}
		return fmt.Errorf("%s and %s cannot be combined: %s", from, other.flag, other.why)
	}
	endpoints, err := parseEndpoints(values)
	if err != nil {
		return err
	}
	e.BrowserEndpoints = endpoints
	return nil
}

// checkEngineFlags checks the browser engine's flags.
func checkEngineFlags(e *daemon.EngineConfig) error {
	if e.ActionIdle <= 0 {
		return fmt.Errorf("--action-idle must be positive, not %s", e.ActionIdle)
	}
	if e.ActionIdle < time.Second {
		return fmt.Errorf("--action-idle must be at least 1s, not %s", e.ActionIdle)
	}
	if e.Chromium != "" {
		if _, err := exec.LookPath(e.Chromium); err != nil {
			return fmt.Errorf("--chromium %q is not an executable file: %v", e.Chromium, err)
		}
	}
	if e.BrowserAddress != "" {
		if e.Chromium != "" {
			return fmt.Errorf("--chromium and --browser-address cannot be combined: runs use either a local or a remote browser")
		}
		u, err := url.Parse(e.BrowserAddress)
		if err != nil || u.Host == "" {
			return fmt.Errorf("--browser-address %q is not a URL with a host (want http://host:9222 or ws://host:9222/devtools/browser/...)", e.BrowserAddress)
		}
		switch u.Scheme {
		case "http", "https", "ws", "wss":
		default:
			return fmt.Errorf("--browser-address %q: the scheme must be http, https, ws or wss", e.BrowserAddress)
		}
	}
	return nil
}

// llmFlags are the language-model flags of abctl daemon (the names are
// llm.Flag*).
type llmFlags struct {
	provider, baseURL, apiKey, model, schema string
	vision                                   bool
	timeout                                  time.Duration
	maxRetries                               int
}

func (lf *llmFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&lf.provider, strings.TrimPrefix(llm.FlagProvider, "--"), "", "language model provider: openai, anthropic, ollama or openai-compatible (default: a local Ollama, or the vendor whose key is set)")
	fs.StringVar(&lf.baseURL, strings.TrimPrefix(llm.FlagBaseURL, "--"), "", "API root of the model server (default: the provider's)")
	fs.StringVar(&lf.apiKey, strings.TrimPrefix(llm.FlagAPIKey, "--"), "", "API key of the model provider (prefer "+llm.EnvAPIKey+")")
	fs.StringVar(&lf.model, strings.TrimPrefix(llm.FlagModel, "--"), "", "default model name; agents and blocks may name another")
	fs.BoolVar(&lf.vision, strings.TrimPrefix(llm.FlagVision, "--"), false, "send screenshots to the model (default: by model name)")
	fs.StringVar(&lf.schema, strings.TrimPrefix(llm.FlagSchema, "--"), "", "how structured answers are asked for: json_schema, json_object, tool or prompt (default: by provider and model)")
	fs.DurationVar(&lf.timeout, strings.TrimPrefix(llm.FlagTimeout, "--"), 0, "bound on each request to the model (default 90s)")
	fs.IntVar(&lf.maxRetries, strings.TrimPrefix(llm.FlagMaxRetries, "--"), 0, "retries of a failed model request (default 3; negative for none)")
}

// config layers the flags that were given over the ABCTL_LLM_*
// environment, over the configuration file's llm section, and fills the
// rest (llm.Config.WithDefaults).
func (lf *llmFlags) config(cmd *cobra.Command, getenv func(string) string, file *config.File) (llm.Config, error) {
	env, err := file.ModelConfig(getenv)
	if err != nil {
		return llm.Config{}, err
	}
	set := func(flag string) bool { return cmd.Flags().Changed(strings.TrimPrefix(flag, "--")) }
	var fl llm.Config
	if set(llm.FlagProvider) {
		if fl.Provider, err = llm.ParseProvider(lf.provider); err != nil {
			return llm.Config{}, fmt.Errorf("%s: %w", llm.FlagProvider, err)
		}
	}
	if set(llm.FlagBaseURL) {
		fl.BaseURL = lf.baseURL
	}
	if set(llm.FlagAPIKey) {
		fl.APIKey = lf.apiKey
	}
	if set(llm.FlagModel) {
		fl.Model = lf.model
	}
	if set(llm.FlagVision) {
		fl.Vision = new(lf.vision)
	}
	if set(llm.FlagSchema) {
		if fl.Schema, err = llm.ParseSchemaMode(lf.schema); err != nil {
			return llm.Config{}, fmt.Errorf("%s: %w", llm.FlagSchema, err)
		}
	}
	if set(llm.FlagTimeout) {
		if lf.timeout <= 0 {
			return llm.Config{}, fmt.Errorf("%s must be positive, not %s", llm.FlagTimeout, lf.timeout)
		}
		fl.Timeout = lf.timeout
	}
	if set(llm.FlagMaxRetries) {
		fl.MaxRetries = lf.maxRetries
	}
	return env.Merge(fl).WithDefaults(getenv)
}
