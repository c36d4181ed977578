// Package profiles is `abctl browser-profiles`: save the browser state of an
// agent's run (its cookies and local storage: what keeps a browser signed
// in) as a browser profile that other runs start from; list, show, rename
// and delete profiles; and make an agent forget the browser state it kept.
//
// A profile's cookies and storage never leave the service: no answer, and
// so no output of these commands, shows them.
package profiles

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmdProfiles returns `abctl browser-profiles`.
func NewCmdProfiles(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "browser-profiles",
		Aliases: []string{"browser-profile", "profiles"},
		Short:   "Save signed-in browser states for runs to start from (browser profiles)",
		Long: "A browser profile is a saved browser state: the cookies of the browser and the local\n" +
			"storage of the sites that were open, which is where sites keep a sign-in. A run that\n" +
			"names a profile (browser_profile_id; 'abctl run --browser-profile') starts from it,\n" +
			"already signed in where the profile was.\n\n" +
			"A profile is made from a run of an agent with persist_browser_session: true, which\n" +
			"keeps its browser state when it ends (the agent's next run starts from it too), or\n" +
			"empty. The cookies and storage never come back out: list and get show a profile's\n" +
			"name, the agent it came from and when it was made.\n\n" +
			"These are not the configuration profiles of --profile and 'abctl config profiles',\n" +
			"which choose the service abctl talks to.\n\n" +
			"PROFILE_ID is an id (bp_...) or profile/ID, as -o name prints it.",
		Example: "  abctl browser-profiles create 'Billing, signed in' --from-run wr_123\n" +
			"  abctl run --agent monthly-invoices --browser-profile bp_123\n" +
			"  abctl browser-profiles list --search billing\n" +
			"  abctl browser-profiles reset-agent billing-sign-in\n" +
			"  abctl browser-profiles delete bp_123 --yes",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdCreate(f, nil), NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdUpdate(f, nil),
		NewCmdDelete(f, nil), NewCmdResetAgent(f, nil))
	return cmd
}

// kind is how -o name prints a profile: profile/ID.
const kind = resource.Profile

// profilesListing shows profiles: ID, NAME, AGENT (the agent whose run the
// profile was made from, or -) and CREATED. single means one was asked for
// by id, which JSON and YAML then show alone.
func profilesListing(ps []*client.BrowserProfile, single bool) printer.Listing {
	if ps == nil {
		ps = []*client.BrowserProfile{}
	}
	l := printer.Listing{Value: listing.One(ps, single), Headers: []string{"id", "name", "agent", "created"}}
	for _, p := range ps {
		l.Names = append(l.Names, kind.Name(p.BrowserProfileID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, p := range ps {
			name := p.Name
			if p.DeletedAt != nil {
				name += " (deleted)"
			}
			t.AddRow(p.BrowserProfileID, name, agentOf(p), t.Time(p.CreatedAt.Time))
		}
	}
	return l
}

// agentOf is the AGENT cell: the agent the profile came from, or "-".
func agentOf(p *client.BrowserProfile) string {
	if p.WorkflowPermanentID == nil || *p.WorkflowPermanentID == "" {
		return "-"
	}
	return *p.WorkflowPermanentID
}

// describe names a profile in messages: its id, name and origin.
func describe(p *client.BrowserProfile) string {
	s := fmt.Sprintf("%s (%q", p.BrowserProfileID, p.Name)
	if a := agentOf(p); a != "-" {
		s += ", from a run of " + a
	}
	return s + ")"
}

// CreateOptions are the inputs of `abctl browser-profiles create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	Name        string
	Description string
	// FromRun is the agent run whose kept browser state the profile
	// holds, without the run/ of -o name; "" makes an empty profile.
	FromRun string
	Format  printer.Format
}

// NewCmdCreate returns `abctl browser-profiles create`. runF, when not nil, is
// called with the validated options instead of creating the profile.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "create NAME [--from-run RUN_ID] [--description TEXT]",
		Short: "Save the browser state an agent's run kept as a profile (or make an empty one)",
		Long: "create makes a browser profile called NAME and prints its id.\n\n" +
			"With --from-run, the profile holds the browser state the run kept when it ended: the\n" +
			"run must be an agent run (wr_...) of an agent with persist_browser_session: true. The\n" +
			"profile is a copy: later runs of that agent do not change it. Without --from-run the\n" +
			"profile is empty, and runs that name it start from a fresh browser.",
		Example: "  abctl browser-profiles create 'Billing, signed in' --from-run wr_123 --description 'the billing portal'\n" +
			"  abctl browser-profiles create Fresh",
		Args: cmdutil.ExactArgs(1, "the profile's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return cmdutil.Run(cmd, opts, runF, runCreate)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Description, "description", "", "what the profile is for")
	fl.StringVar(&opts.FromRun, "from-run", "", "the agent run (wr_...) whose kept browser state the profile holds")
	_ = cmd.RegisterFlagCompletionFunc("from-run", completion.Runs(f, completion.AgentRun))
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

// Validate checks the name, and that --from-run names an agent run.
func (o *CreateOptions) Validate() error {
	if strings.TrimSpace(o.Name) == "" {
		return cmdutil.UsageErrorf("the profile's name is empty: give the name it is listed under, e.g. 'Billing, signed in'")
	}
	id, err := resource.Run.ID(o.FromRun)
	if err != nil {
		return cmdutil.UsageErrorf("--from-run: %v", err)
	}
	if o.FromRun != "" && strings.TrimSpace(id) == "" {
		return cmdutil.UsageErrorf("--from-run is empty: give the agent run (wr_...) whose browser state the profile holds, or leave it out for an empty profile")
	}
	if strings.HasPrefix(id, "tsk_") {
		return cmdutil.UsageErrorf("--from-run %s is a task run, and task runs keep no browser state: give a run (wr_...) of an agent with persist_browser_session: true", id)
	}
	o.FromRun = id
	return nil
}

func runCreate(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	p, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: opts.Name, Description: opts.Description, WorkflowRunID: opts.FromRun})
	if err != nil {
		if opts.FromRun != "" {
			return fmt.Errorf("create the profile %q from run %s: %w", opts.Name, opts.FromRun, err)
		}
		return fmt.Errorf("create the profile %q: %w", opts.Name, err)
	}
	return profilesListing([]*client.BrowserProfile{p}, true).Print(opts.IO, opts.Now(), opts.Format)
}

// ListOptions are the inputs of `abctl browser-profiles list`.
type ListOptions struct {
	listing.ListOptions

	// Search keeps the profiles whose name or description holds it.
	Search         string
	IncludeDeleted bool
}

// NewCmdList returns `abctl browser-profiles list`. runF, when not nil, is called
// with the validated options instead of listing.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	cmd := listing.NewListCmd(f, &opts.ListOptions, "profiles", &cobra.Command{
		Use:   "list",
		Short: "List browser profiles, newest first (never their cookies or storage)",
		Example: "  abctl browser-profiles list\n" +
			"  abctl browser-profiles list --search billing -o json\n" +
			"  abctl browser-profiles list --include-deleted -o name",
	}, func(cmd *cobra.Command, _ []string) error {
		return cmdutil.Run(cmd, opts, runF, runList)
	})
	fl := cmd.Flags()
	fl.StringVar(&opts.Search, "search", "", "only profiles whose name or description contains this text (case aside)")
	fl.BoolVar(&opts.IncludeDeleted, "include-deleted", false, "list deleted profiles too, marked (deleted)")
	return cmd
}

func runList(ctx context.Context, opts *ListOptions) error {
	ps, err := listing.Read(ctx, &opts.ListOptions, "browser profiles", func(c *client.Client, pageSize int) iter.Seq2[*client.BrowserProfile, error] {
		return c.BrowserProfiles.All(ctx, &client.ListBrowserProfilesOptions{SearchKey: opts.Search, IncludeDeleted: opts.IncludeDeleted, PageSize: pageSize})
	})
	if err != nil {
		return err
	}
	return opts.Print(profilesListing(ps, false))
}

// GetOptions are the inputs of `abctl browser-profiles get`: the profiles
// to show, by id.
type GetOptions = listing.GetOptions

var getter = listing.Getter[*client.BrowserProfile]{
	Kind: kind,
	Noun: "browser profile",
	Get: func(ctx context.Context, c *client.Client, id string) (*client.BrowserProfile, error) {
		return c.BrowserProfiles.Get(ctx, id)
	},
	Show: func(ps []*client.BrowserProfile, single bool, _ time.Time) printer.Listing {
		return profilesListing(ps, single)
	},
}

// NewCmdGet returns `abctl browser-profiles get`. runF, when not nil, is called
// with the validated options instead of reading the profiles.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	return getter.NewCmd(f, &cobra.Command{
		Use:     "get PROFILE_ID...",
		Short:   "Show browser profiles by id (never their cookies or storage)",
		Example: "  abctl browser-profiles get bp_123 -o yaml",
		Args:    cmdutil.MinArgs(1, "one or more browser profile ids (bp_...)"),
	}, runF)
}

func runGet(ctx context.Context, opts *GetOptions) error { return getter.Run(ctx, opts) }

// UpdateOptions are the inputs of `abctl browser-profiles update`.
type UpdateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// ProfileID is the profile to change, without the profile/ of -o name.
	ProfileID string
	// Name and Description are the new values; nil leaves one as it is.
	Name        *string
	Description *string
	Format      printer.Format
}

// NewCmdUpdate returns `abctl browser-profiles update`. runF, when not nil, is
// called with the validated options instead of changing the profile.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	var name, description string
	cmd := &cobra.Command{
		Use:   "update PROFILE_ID [--name NAME] [--description TEXT]",
		Short: "Rename a browser profile or change its description",
		Long: "update changes a profile's name or description; its browser state stays as it is.\n" +
			"--description '' clears the description.",
		Example: "  abctl browser-profiles update bp_123 --name 'Billing portal'",
		Args:    cmdutil.ExactArgs(1, "a browser profile id (bp_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ProfileID = args[0]
			opts.Name, opts.Description = nil, nil
			if cmd.Flags().Changed("name") {
				opts.Name = &name
			}
			if cmd.Flags().Changed("description") {
				opts.Description = &description
			}
			return cmdutil.Run(cmd, opts, runF, runUpdate)
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "the new name")
	cmd.Flags().StringVar(&description, "description", "", "the new description ('' clears it)")
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

// Validate checks that something is to change, and reads the profile id.
func (o *UpdateOptions) Validate() error {
	if o.Name == nil && o.Description == nil {
		return cmdutil.UsageErrorf("give --name, --description or both: they are what update changes")
	}
	if o.Name != nil && strings.TrimSpace(*o.Name) == "" {
		return cmdutil.UsageErrorf("--name is empty: a profile needs a name")
	}
	id, err := kind.ID(o.ProfileID)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.ProfileID = id
	return nil
}

func runUpdate(ctx context.Context, opts *UpdateOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	p, err := c.BrowserProfiles.Update(ctx, opts.ProfileID, &client.BrowserProfileUpdateRequest{Name: opts.Name, Description: opts.Description})
	if err != nil {
		return fmt.Errorf("update browser profile %s: %w", opts.ProfileID, err)
	}
	return profilesListing([]*client.BrowserProfile{p}, true).Print(opts.IO, opts.Now(), opts.Format)
}

// DeleteOptions are the inputs of `abctl browser-profiles delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// ProfileID is the profile to delete, without the profile/ of -o name.
	ProfileID string
	Yes       bool
}

// NewCmdDelete returns `abctl browser-profiles delete`. runF, when not nil, is
// called with the validated options instead of deleting.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete PROFILE_ID",
		Short: "Delete a browser profile and its saved browser state",
		Long: "delete removes a profile's browser state for good; the profile stays listed with\n" +
			"--include-deleted. Runs that name it are refused from then on, and the runs of agents\n" +
			"that use it by default (their browser_profile_id) fail to start.\n\n" +
			"It asks first on a terminal; elsewhere it needs --yes.",
		Example: "  abctl browser-profiles delete bp_123\n" +
			"  abctl browser-profiles list --search old -o name | xargs -n1 abctl browser-profiles delete --yes",
		Args: cmdutil.ExactArgs(1, "a browser profile id (bp_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ProfileID = args[0]
			return cmdutil.Run(cmd, opts, runF, runDelete)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// Validate reads the profile id, and checks that the deletion can be
// confirmed: --yes, or a terminal to ask on.
func (o *DeleteOptions) Validate() error {
	id, err := kind.ID(o.ProfileID)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.ProfileID = id
	return cmdutil.CanConfirm(o.IO, o.Yes, "deleting a browser profile cannot be undone")
}

func runDelete(ctx context.Context, opts *DeleteOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	id := opts.ProfileID
	return cmdutil.Deletion{IO: opts.IO, Yes: opts.Yes, Noun: "browser profile", ID: id,
		Consequence: "Runs that start from it will no longer start.",
		Describe: func() (string, error) {
			p, err := c.BrowserProfiles.Get(ctx, id)
			if err != nil {
				return "", err
			}
			return describe(p), nil
		},
		Delete: func() error { return c.BrowserProfiles.Delete(ctx, id) },
	}.Run()
}

// ResetAgentOptions are the inputs of `abctl browser-profiles reset-agent`.
type ResetAgentOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// Agent is the agent, by name or id (also agent/NAME).
	Agent string
}

// NewCmdResetAgent returns `abctl browser-profiles reset-agent`. runF, when not
// nil, is called with the validated options instead of resetting.
func NewCmdResetAgent(f *cmdutil.Factory, runF func(*ResetAgentOptions) error) *cobra.Command {
	opts := &ResetAgentOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "reset-agent AGENT",
		Short: "Make an agent forget the browser state it kept, so that its next run signs in again",
		Long: "An agent with persist_browser_session: true keeps its browser state when a run ends,\n" +
			"and its next run starts from it, still signed in. reset-agent forgets that state: the\n" +
			"next run starts from a fresh browser (or from the agent's own browser_profile_id,\n" +
			"when it has one) and keeps its state again when it ends. Profiles made from the\n" +
			"agent's runs are not changed.\n\n" +
			"AGENT is the agent's name (as its file gives it), its id (wpid_...) or agent/NAME.",
		Example: "  abctl browser-profiles reset-agent billing-sign-in\n" +
			"  abctl browser-profiles reset-agent wpid_123",
		Args:              cmdutil.ExactArgs(1, "an agent's name or id (wpid_...)"),
		ValidArgsFunction: completion.First(completion.Agents(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Agent = args[0]
			return cmdutil.Run(cmd, opts, runF, runResetAgent)
		},
	}
	return cmd
}

// Validate checks that AGENT names an agent rather than something else.
func (o *ResetAgentOptions) Validate() error {
	ref, err := resource.Agent.ID(o.Agent)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	if strings.TrimSpace(ref) == "" {
		return cmdutil.UsageErrorf("AGENT is empty: give the agent's name or id (wpid_...)")
	}
	return nil
}

func runResetAgent(ctx context.Context, opts *ResetAgentOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	a, err := agentref.Get(ctx, c, opts.Agent)
	if err != nil {
		return err
	}
	id := a.WorkflowPermanentID
	if err := c.Agents.ResetProfile(ctx, id); err != nil {
		return fmt.Errorf("reset the browser state of agent %s: %w", id, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "The browser state of agent %s (%q) is forgotten: its next run starts without it.\n", id, a.Title)
	if !a.PersistBrowserSession {
		fmt.Fprintf(opts.IO.ErrOut, "Note: the agent does not have persist_browser_session: true, so its runs neither keep nor reuse a browser state.\n")
	}
	return nil
}
