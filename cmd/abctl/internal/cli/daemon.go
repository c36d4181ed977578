package cli

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/daemon"
)

// defaultDataDir is $XDG_DATA_HOME/abctl, or ~/.local/share/abctl.
func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "abctl")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "abctl")
	}
	return "abctl-data"
}

func newDaemonCmd() *cobra.Command {
	var cfg daemon.Config
	var engine daemon.EngineConfig
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
			"stderr and writes it to <data-dir>/" + daemon.KeyFileName + " (mode 0600). --api-key registers a\n" +
			"key of your choosing for that organization, for scripts and CI.\n\n" +
			"It listens on loopback unless --addr says otherwise, and stops cleanly on Ctrl-C or\n" +
			"SIGTERM: requests in flight finish, then the store closes.\n\n" +
			"Runs execute in Chromium (found on PATH or given with --chromium, or a remote one\n" +
			"with --browser-address), which starts with the first run; without it runs fail,\n" +
			"saying how to install it. Runs are recorded as video when ffmpeg is on PATH\n" +
			"(--no-recording turns that off). The browser of a run started by\n" +
			"POST /v1/sdk/run_action stays open for follow-up actions until --action-idle\n" +
			"passes without one.\n\n" +
			"While it runs, <data-dir>/" + daemon.StateFileName + " (mode 0600) holds its address and a\n" +
			"token for the admin routes that 'abctl daemon orgs' uses; it is removed on shutdown.",
		// An argument can only be a mistyped subcommand (orgs).
		Args:                       rootArgs,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Workers < 0 {
				return &usageError{cmdPath: cmd.CommandPath(), err: fmt.Errorf("--workers must be 1 or more (0 means one per CPU core), not %d", cfg.Workers)}
			}
			if cfg.WebhookTimeout < 0 {
				return &usageError{cmdPath: cmd.CommandPath(), err: fmt.Errorf("--webhook-timeout must be positive, not %s", cfg.WebhookTimeout)}
			}
			if err := checkEngineFlags(&engine); err != nil {
				return &usageError{cmdPath: cmd.CommandPath(), err: err}
			}
			cfg.Engine = &engine
			cfg.Stderr = cmd.ErrOrStderr()
			return daemon.Run(cmd.Context(), cfg)
		},
	}
	cmd.Flags().StringVar(&cfg.Addr, "addr", daemon.DefaultAddr, "address to listen on")
	// --data-dir is persistent: the subcommands (orgs) work on the same directory.
	cmd.PersistentFlags().StringVar(&cfg.DataDir, "data-dir", defaultDataDir(), "directory of the store and the key file")
	cmd.Flags().StringVar(&cfg.APIKey, "api-key", "", "register this API key for the default organization")
	cmd.Flags().IntVar(&cfg.Workers, "workers", 0, "runs that execute at once (default: one per CPU core)")
	cmd.Flags().DurationVar(&cfg.WebhookTimeout, "webhook-timeout", 0, "how long a webhook receiver has to answer (default 10s)")
	cmd.Flags().StringVar(&engine.Chromium, "chromium", "", "path of the Chromium binary (default: $ABCTL_CHROMIUM, then chromium, chromium-browser, google-chrome on PATH)")
	cmd.Flags().StringVar(&engine.BrowserAddress, "browser-address", "", "use a remote Chromium over CDP (http://host:9222 or ws://host:9222/devtools/browser/...) instead of a local one")
	cmd.Flags().BoolVar(&engine.NoRecording, "no-recording", false, "do not record runs as video")
	cmd.Flags().DurationVar(&engine.ActionIdle, "action-idle", daemon.DefaultActionIdle, "how long the browser of a run_action workflow run stays open without an action")
	cmd.AddCommand(newDaemonOrgsCmd(&cfg.DataDir))
	return cmd
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
