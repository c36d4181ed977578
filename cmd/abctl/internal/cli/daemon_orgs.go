package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/store"
)

// How `abctl daemon orgs` reaches the store: lockTimeout is how long it
// waits for the file lock before concluding that a daemon holds it, and
// lockedWait how long it keeps trying while the store is locked but no
// daemon has published its state file yet (a daemon starting, or another
// abctl using the directory for a moment).
var (
	lockTimeout = 200 * time.Millisecond
	lockedWait  = 3 * time.Second
)

func newDaemonOrgsCmd(dataDir *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "orgs",
		Aliases: []string{"organizations"},
		Short:   "Create and list the organizations of a local daemon",
		Long: "abctl daemon orgs manages the organizations of the daemon's store in --data-dir. Every\n" +
			"agent, folder and run belongs to exactly one organization, and an organization's API keys\n" +
			"see only its own records.\n\n" +
			"When no daemon is running on --data-dir, the store is changed directly. When one is, the\n" +
			"request goes to its admin routes on loopback, authenticated with the token it keeps in\n" +
			"<data-dir>/" + admin.StateFileName + ".",
		Args:                       rootArgs,
		SuggestionsMinimumDistance: 2,
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newDaemonOrgsCreateCmd(dataDir), newDaemonOrgsListCmd(dataDir))
	return cmd
}

func newDaemonOrgsCreateCmd(dataDir *string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an organization and print its API key",
		Long: "abctl daemon orgs create makes an organization and a first API key for it. The key is\n" +
			"shown only this once: the store keeps only its hash.\n\n" +
			"With -o text (the default) the key alone goes to stdout and a sentence about it to\n" +
			"stderr, so that KEY=$(abctl daemon orgs create acme) works. With -o json stdout gets\n" +
			"{\"organization_id\": \"o_...\", \"api_key\": \"...\"}.\n\n" +
			"NAME must not be empty, has at most 255 characters and no control characters;\n" +
			"surrounding spaces are dropped.",
		Example: "  abctl daemon orgs create acme\n  abctl daemon orgs create \"Team B\" -o json --data-dir ./data",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &cmdutil.UsageError{CmdPath: cmd.CommandPath(), Err: fmt.Errorf(
					"%q takes exactly one argument, the organization's name; got %d", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(cmd, output); err != nil {
				return err
			}
			name, err := admin.ValidateOrganizationName(args[0])
			if err != nil {
				return &cmdutil.UsageError{CmdPath: cmd.CommandPath(), Err: err}
			}
			admin, err := openOrgAdmin(cmd.Context(), *dataDir)
			if err != nil {
				return err
			}
			defer admin.close()
			created, err := admin.createOrganization(cmd.Context(), name)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSONLine(cmd.OutOrStdout(), created)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Created organization %s %q. Its API key, shown only this once:\n", created.OrganizationID, name)
			_, err = fmt.Fprintln(cmd.OutOrStdout(), created.APIKey)
			return err
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func newDaemonOrgsListCmd(dataDir *string) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the organizations, oldest first",
		Long: "abctl daemon orgs list prints the organizations of the store, oldest (the default one)\n" +
			"first: a table with -o text, a JSON array of {organization_id, name, created_at}\n" +
			"with -o json. API keys cannot be listed: the store keeps only their hashes.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(cmd, output); err != nil {
				return err
			}
			admin, err := openOrgAdmin(cmd.Context(), *dataDir)
			if err != nil {
				return err
			}
			defer admin.close()
			orgs, err := admin.organizations(cmd.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSONLine(cmd.OutOrStdout(), orgs)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ORGANIZATION_ID\tNAME\tCREATED_AT")
			for _, o := range orgs {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", o.OrganizationID, o.Name, o.CreatedAt.Format("2006-01-02T15:04:05"))
			}
			return tw.Flush()
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "text", "output format: text or json")
}

func checkOutput(cmd *cobra.Command, output string) error {
	if output != "text" && output != "json" {
		return &cmdutil.UsageError{CmdPath: cmd.CommandPath(), Err: fmt.Errorf("--output must be text or json, not %q", output)}
	}
	return nil
}

// writeJSONLine writes v as one line of compact JSON.
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// orgAdmin is where the orgs commands do their work: the store itself, or
// the admin routes of the daemon that holds it.
type orgAdmin interface {
	createOrganization(ctx context.Context, name string) (admin.CreatedOrganization, error)
	organizations(ctx context.Context) ([]admin.Organization, error)
	close() error
}

// openOrgAdmin opens the store in dataDir, or, when a daemon holds it,
// returns a client of that daemon's admin routes. It never creates a store:
// a directory no daemon has started on yet has no default organization, and
// the first one created would take that place.
func openOrgAdmin(ctx context.Context, dataDir string) (orgAdmin, error) {
	path := filepath.Join(dataDir, daemon.StoreFileName)
	deadline := time.Now().Add(lockedWait)
	for {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no abctl store in %s: start 'abctl daemon --data-dir %s' once to create it", dataDir, dataDir)
		}
		st, err := store.Open(path, store.Options{LockTimeout: lockTimeout})
		if err == nil {
			if _, err := st.DefaultOrganization(ctx); err != nil {
				st.Close()
				if errors.Is(err, store.ErrNotFound) {
					return nil, fmt.Errorf("the store in %s has no organization yet: start 'abctl daemon --data-dir %s' once to create the default one", dataDir, dataDir)
				}
				return nil, err
			}
			return storeAdmin{st}, nil
		}
		if !errors.Is(err, store.ErrLocked) {
			return nil, err
		}
		state, serr := admin.ReadState(dataDir)
		if serr == nil {
			ac, err := admin.NewClient(state)
			if err != nil {
				return nil, fmt.Errorf("a daemon holds %s, but %w; stop it and try again", dataDir, err)
			}
			return remoteAdmin{c: ac, dataDir: dataDir}, nil
		}
		if !errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("the store in %s is locked, and %w", dataDir, serr)
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("the store in %s is locked by another process, which has not published %s: "+
				"if it is a daemon still starting, or another abctl command, try again in a moment",
				dataDir, admin.StateFileName)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// storeAdmin works on the store directly (no daemon running).
type storeAdmin struct{ st *store.Store }

func (a storeAdmin) createOrganization(ctx context.Context, name string) (admin.CreatedOrganization, error) {
	org, key, err := a.st.CreateOrganization(ctx, name)
	if err != nil {
		return admin.CreatedOrganization{}, err
	}
	return admin.CreatedOrganization{OrganizationID: org.ID, APIKey: key}, nil
}

func (a storeAdmin) organizations(ctx context.Context) ([]admin.Organization, error) {
	orgs, err := a.st.Organizations(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]admin.Organization, len(orgs))
	for i, o := range orgs {
		out[i] = admin.Organization{OrganizationID: o.ID, Name: o.Name, CreatedAt: o.CreatedAt}
	}
	return out, nil
}

func (a storeAdmin) close() error { return a.st.Close() }

// remoteAdmin goes through the admin routes of the daemon holding the store.
type remoteAdmin struct {
	c       *admin.Client
	dataDir string
}

func (a remoteAdmin) createOrganization(ctx context.Context, name string) (admin.CreatedOrganization, error) {
	out, err := a.c.CreateOrganization(ctx, name)
	return out, a.wrap(err)
}

func (a remoteAdmin) organizations(ctx context.Context) ([]admin.Organization, error) {
	out, err := a.c.Organizations(ctx)
	return out, a.wrap(err)
}

func (a remoteAdmin) close() error { return nil }

func (a remoteAdmin) wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	var ae *admin.Error
	if errors.As(err, &ae) {
		return fmt.Errorf("the daemon holding %s, at %s, answered %w", a.dataDir, a.c.Addr(), err)
	}
	return fmt.Errorf("a daemon holds %s but does not answer at %s: %w", a.dataDir, a.c.Addr(), err)
}
