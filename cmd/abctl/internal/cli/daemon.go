package cli

import (
	"fmt"
	"os"
	"path/filepath"

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
	cmd.AddCommand(newDaemonOrgsCmd(&cfg.DataDir))
	return cmd
}
