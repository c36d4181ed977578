package daemoncmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/datadir"
)

// statusTimeout bounds the request `abctl daemon status` makes.
const statusTimeout = 10 * time.Second

// StatusOptions are the inputs of `abctl daemon status`.
type StatusOptions struct {
	IO *iostreams.IOStreams

	// BaseURL is where the daemon is asked (its GET /healthz), and
	// BaseURLFrom where that address came from, for the messages. When
	// BaseURL is "", the state file of DataDir gives it.
	BaseURL, BaseURLFrom string
	// DataDir is the daemon's data directory.
	DataDir string
	// Output is text (the state, and a table of the fleet) or json (the
	// answer of GET /healthz).
	Output string
}

// NewCmdStatus returns `abctl daemon status`, which asks the daemon over
// *dataDir (the --data-dir of abctl daemon), or the one at the base URL
// given, how it is. runF, when not nil, is called with the validated
// options instead of asking.
func NewCmdStatus(f *cmdutil.Factory, dataDir *string, runF func(*StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the daemon runs, and its fleet of browsers",
		Long: "abctl daemon status asks a running daemon how it is (its GET /healthz). With a fleet of\n" +
			"browser endpoints (--browser-endpoint) it prints a table of them: whether each is up,\n" +
			"the runs on it now, its capacity, the sessions that failed on it and those placed on\n" +
			"it since the daemon started; then the queue of runs waiting for room. -o json prints\n" +
			"the answer of GET /healthz as it is.\n\n" +
			"It asks the daemon at --" + config.FlagBaseURL + " (or " + config.EnvBaseURL + ", or the profile's base URL) when one\n" +
			"is given, else the daemon running over --data-dir, at the address in its\n" +
			"<data-dir>/" + datadir.StateFileName + ". It never starts a daemon: when none answers it says so and\n" +
			"exits with status 1.\n\n" +
			"Daemons that share a PostgreSQL database (--store) each have their own --data-dir and\n" +
			"state file: status asks one daemon, and --store does not choose it.",
		Example: "  abctl daemon status\n  abctl daemon status --data-dir ./data -o json",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.DataDir = *dataDir
			if err := opts.Validate(); err != nil {
				return err
			}
			// --data-dir names the daemon to ask; without it, a base URL
			// given by flag, environment or profile does, else the data
			// directory of the profile.
			if !cmd.Flags().Changed("data-dir") {
				s, err := f.Settings()
				if err != nil {
					return err
				}
				switch {
				case s.BaseURLGiven:
					opts.BaseURL, opts.BaseURLFrom = s.BaseURL, s.BaseURLFrom
				case s.Local && s.DataDir != "":
					opts.DataDir = s.DataDir
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return runStatus(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// Validate checks -o.
func (o *StatusOptions) Validate() error {
	return checkOutput(o.Output)
}

func runStatus(ctx context.Context, opts *StatusOptions) error {
	base, from := opts.BaseURL, opts.BaseURLFrom
	if base == "" {
		var err error
		if base, from, err = stateBaseURL(opts.DataDir); err != nil {
			return err
		}
	}
	body, err := getHealth(ctx, base)
	if err != nil {
		return fmt.Errorf("no daemon answers at %s (address from %s): %w", base, from, err)
	}
	var h client.Health
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("%s (address from %s) answered GET /healthz with something else than an abctl daemon's health: %v", base, from, err)
	}
	if opts.Output == "json" {
		var buf bytes.Buffer
		if err := json.Compact(&buf, bytes.TrimSpace(body)); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err := opts.IO.Out.Write(buf.Bytes())
		return err
	}
	return printStatus(opts.IO.Out, base, h)
}

// stateBaseURL is the address of the daemon running over dataDir, from its
// state file.
func stateBaseURL(dataDir string) (base, from string, err error) {
	statePath := filepath.Join(dataDir, datadir.StateFileName)
	st, err := admin.ReadState(dataDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("no daemon is running over %s (there is no %s); start one with 'abctl daemon --data-dir %s'", dataDir, statePath, dataDir)
	case err != nil:
		return "", "", fmt.Errorf("no daemon is known to run over %s: %w", dataDir, err)
	}
	host, port, err := net.SplitHostPort(st.Addr)
	if err != nil {
		return "", "", fmt.Errorf("the daemon's address %q in %s: %w", st.Addr, statePath, err)
	}
	// A daemon listening on every address answers on loopback.
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), "the daemon's state file " + statePath, nil
}

// getHealth returns the body of GET /healthz at base.
func getHealth(ctx context.Context, base string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/healthz", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in the caller's message
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /healthz answered %s", resp.Status)
	}
	return body, nil
}

// printStatus writes the daemon's state and its fleet as text.
func printStatus(w io.Writer, base string, h client.Health) error {
	fmt.Fprintf(w, "Daemon at %s: %s\n", base, h.Status)
	fleet := h.Browsers
	if fleet == nil {
		_, err := fmt.Fprintln(w, "Browsers: the daemon's own (no fleet of browser endpoints)")
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENDPOINT\tURL\tUP\tRUNS\tCAPACITY\tFAILURES\tPLACED")
	for _, e := range fleet.Endpoints {
		up := "yes"
		if !e.Healthy {
			up = "no"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\n", e.Name, e.URL, up, e.InUse, e.Capacity, e.Failures, e.Placed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, e := range fleet.Endpoints {
		if !e.Healthy && e.LastError != "" {
			fmt.Fprintf(w, "%s is down: %s\n", e.Name, e.LastError)
		}
	}
	_, err := fmt.Fprintf(w, "Queue: %d waiting for a browser; %d waited and %d gave up since the daemon started\n",
		fleet.Queued, fleet.QueueWaits, fleet.QueueTimeouts)
	return err
}
