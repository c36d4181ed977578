package daemoncmd

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

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/daemon/store/pgstore"
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

// NewCmdOrgs returns `abctl daemon orgs`, whose commands work on the data
// directory *dataDir (the --data-dir of abctl daemon), or on the PostgreSQL
// database *storeURL (its --store; EnvStore when that is not given).
func NewCmdOrgs(f *cmdutil.Factory, dataDir, storeURL *string) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "orgs",
		Aliases: []string{"organizations"},
		Short:   "Create and list the organizations of a local daemon",
		Long: "abctl daemon orgs manages the organizations of the daemon's store in --data-dir. Every\n" +
			"agent, folder and run belongs to exactly one organization, and an organization's API keys\n" +
			"see only its own records.\n\n" +
			"When no daemon is running on --data-dir, the store is changed directly. When one is, the\n" +
			"request goes to its admin routes, which it serves only on the Unix socket\n" +
			"<data-dir>/" + datadir.AdminSocketName + " (mode 0600: only its user, and root, can connect), never on\n" +
			"its TCP port.\n\n" +
			"With --store (or " + EnvStore + "), the PostgreSQL database that daemons share, the commands\n" +
			"work on that database directly, whether daemons run on it or not: no one daemon holds\n" +
			"it, and every daemon on it sees the new organization at once. --data-dir is then not\n" +
			"used.",
		Args:                       cmdutil.GroupArgs,
		SuggestionsMinimumDistance: 2,
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdOrgsCreate(f, dataDir, storeURL, nil), NewCmdOrgsList(f, dataDir, storeURL, nil))
	return cmd
}

// OrgsCreateOptions are the inputs of `abctl daemon orgs create`.
type OrgsCreateOptions struct {
	IO *iostreams.IOStreams

	// DataDir is the daemon's data directory.
	DataDir string
	// Store is the PostgreSQL database daemons share (--store, else
	// EnvStore); "" means the store in DataDir.
	Store string
	// Name is the organization's name, trimmed once validated.
	Name string
	// Output is text (the key alone) or json.
	Output string
}

// NewCmdOrgsCreate returns `abctl daemon orgs create`. runF, when not nil,
// is called with the validated options instead of creating.
func NewCmdOrgsCreate(f *cmdutil.Factory, dataDir, storeURL *string, runF func(*OrgsCreateOptions) error) *cobra.Command {
	opts := &OrgsCreateOptions{IO: f.IO}
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
				return cmdutil.Usagef(cmd, "%q takes exactly one argument, the organization's name; got %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.DataDir, opts.Name = *dataDir, args[0]
			var err error
			if opts.Store, err = storeOf(cmd, f, storeURL); err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runOrgsCreate(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// Validate checks -o and the name, which it trims.
func (o *OrgsCreateOptions) Validate() error {
	if err := checkOutput(o.Output); err != nil {
		return err
	}
	name, err := admin.ValidateOrganizationName(o.Name)
	if err != nil {
		return &cmdutil.UsageError{Err: err}
	}
	o.Name = name
	return nil
}

func runOrgsCreate(ctx context.Context, opts *OrgsCreateOptions) error {
	oa, err := openOrgAdmin(ctx, opts.DataDir, opts.Store)
	if err != nil {
		return err
	}
	defer oa.close()
	created, err := oa.createOrganization(ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.Output == "json" {
		return writeJSONLine(opts.IO.Out, created)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Created organization %s %q. Its API key, shown only this once:\n", created.OrganizationID, opts.Name)
	_, err = fmt.Fprintln(opts.IO.Out, created.APIKey)
	return err
}

// OrgsListOptions are the inputs of `abctl daemon orgs list`.
type OrgsListOptions struct {
	IO *iostreams.IOStreams

	// DataDir is the daemon's data directory.
	DataDir string
	// Store is the PostgreSQL database daemons share (--store, else
	// EnvStore); "" means the store in DataDir.
	Store string
	// Output is text (a table) or json.
	Output string
}

// NewCmdOrgsList returns `abctl daemon orgs list`. runF, when not nil, is
// called with the validated options instead of listing.
func NewCmdOrgsList(f *cmdutil.Factory, dataDir, storeURL *string, runF func(*OrgsListOptions) error) *cobra.Command {
	opts := &OrgsListOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the organizations, oldest first",
		Long: "abctl daemon orgs list prints the organizations of the store, oldest (the default one)\n" +
			"first: a table with -o text, a JSON array of {organization_id, name, created_at}\n" +
			"with -o json. API keys cannot be listed: the store keeps only their hashes.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.DataDir = *dataDir
			var err error
			if opts.Store, err = storeOf(cmd, f, storeURL); err != nil {
				return err
			}
			if err := opts.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runOrgsList(cmd.Context(), opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// Validate checks -o.
func (o *OrgsListOptions) Validate() error {
	return checkOutput(o.Output)
}

func runOrgsList(ctx context.Context, opts *OrgsListOptions) error {
	oa, err := openOrgAdmin(ctx, opts.DataDir, opts.Store)
	if err != nil {
		return err
	}
	defer oa.close()
	orgs, err := oa.organizations(ctx)
	if err != nil {
		return err
	}
	if opts.Output == "json" {
		return writeJSONLine(opts.IO.Out, orgs)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ORGANIZATION_ID\tNAME\tCREATED_AT")
	for _, o := range orgs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", o.OrganizationID, o.Name, o.CreatedAt.Format("2006-01-02T15:04:05"))
	}
	return tw.Flush()
}

// storeOf is the store the orgs commands work on: --store when given (or
// *storeURL set), else EnvStore; a value that is not a PostgreSQL URL is a
// usage error naming where it came from.
func storeOf(cmd *cobra.Command, f *cmdutil.Factory, storeURL *string) (string, error) {
	v, from := "", "--store"
	if storeURL != nil {
		v = *storeURL
	}
	if v == "" && !cmd.Flags().Changed("store") {
		v, from = f.Getenv(EnvStore), EnvStore+" (set in the environment)"
	}
	if err := checkStore(v, from); err != nil {
		return "", &cmdutil.UsageError{Err: err}
	}
	return v, nil
}

func addOutputFlag(cmd *cobra.Command, output *string) {
	cmd.Flags().StringVarP(output, "output", "o", "text", "output format: text or json")
}

func checkOutput(output string) error {
	if output != "text" && output != "json" {
		return cmdutil.UsageErrorf("--output must be text or json, not %q", output)
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
// returns a client of that daemon's admin routes; with storeURL, it opens
// that PostgreSQL database, which no one daemon holds. It never creates a
// store's first organization: a store no daemon has started on yet has no
// default organization, and the first one created would take that place.
func openOrgAdmin(ctx context.Context, dataDir, storeURL string) (orgAdmin, error) {
	if storeURL != "" {
		return openPostgresAdmin(ctx, storeURL)
	}
	path := filepath.Join(dataDir, datadir.StoreFileName)
	deadline := time.Now().Add(lockedWait)
	for {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no abctl store in %s: start 'abctl daemon --data-dir %s' once to create it", dataDir, dataDir)
		}
		st, err := boltstore.Open(path, store.Options{LockTimeout: lockTimeout})
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
		_, serr := admin.ReadState(dataDir)
		if serr == nil {
			return remoteAdmin{c: admin.NewClient(admin.SocketPath(dataDir)), dataDir: dataDir}, nil
		}
		if !errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("the store in %s is locked, and %w", dataDir, serr)
		}
		if !time.Now().Before(deadline) {
			return nil, fmt.Errorf("the store in %s is locked by another process, which has not published %s: "+
				"if it is a daemon still starting, or another abctl command, try again in a moment",
				dataDir, datadir.StateFileName)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// openPostgresAdmin opens the PostgreSQL database daemons share. It is
// opened without the daemons' secret: an API key made here gets its sealed
// copy (which signs webhooks) when a daemon first sees it used.
func openPostgresAdmin(ctx context.Context, storeURL string) (orgAdmin, error) {
	st, err := pgstore.Open(ctx, storeURL, store.Options{})
	if err != nil {
		return nil, err
	}
	if _, err := st.DefaultOrganization(ctx); err != nil {
		st.Close()
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("the PostgreSQL database at %s has no organization yet: start 'abctl daemon --store ...' on it once to create the default one",
				pgstore.Redact(storeURL))
		}
		return nil, err
	}
	return storeAdmin{st}, nil
}

// storeAdmin works on the store directly (no daemon running, or a shared
// PostgreSQL database).
type storeAdmin struct{ st store.Store }

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

// remoteAdmin goes through the admin routes of the daemon holding the
// store, on its admin socket.
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
		return fmt.Errorf("the daemon holding %s answered on its admin socket %s: %w", a.dataDir, a.c.Socket(), err)
	}
	return fmt.Errorf("a daemon holds %s but does not answer on its admin socket %s: %w", a.dataDir, a.c.Socket(), err)
}
