// Package schedules is `abctl schedules`: start an agent's runs at cron
// times in a time zone. create, list, get, enable, disable and delete a
// schedule; the service (or the daemon) starts the runs.
package schedules

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
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// NewCmdSchedules returns `abctl schedules`.
func NewCmdSchedules(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "schedules",
		Aliases: []string{"schedule"},
		Short:   "Run agents at cron times: create, list, enable, disable and delete schedules",
		Long: "A schedule starts runs of an agent at the times of a cron expression, read in an IANA\n" +
			"time zone, with the parameters it was given. Its runs have trigger type \"scheduled\"\n" +
			"and carry the tag schedule:<id>: `abctl get runs --tag schedule:wfs_123` lists them.\n\n" +
			"CRON is five fields (minute hour day-of-month month day-of-week), six with a seconds\n" +
			"field first (the daemon), or @hourly, @daily, @weekly, @monthly, @yearly.\n" +
			"AGENT is an agent id (wpid_...) or the name an agent file gave it.",
		Example: "  abctl schedules create invoices --cron '0 9 * * MON-FRI' --timezone Europe/Berlin -p month=current\n" +
			"  abctl schedules list\n" +
			"  abctl schedules disable invoices wfs_123\n" +
			"  abctl schedules delete invoices wfs_123 --yes",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdCreate(f, nil), NewCmdList(f, nil), NewCmdGet(f, nil),
		NewCmdSetEnabled(f, true, nil), NewCmdSetEnabled(f, false, nil), NewCmdDelete(f, nil))
	return cmd
}

// schedulesListing shows schedules, whichever command asked: ID, AGENT
// (its id and title), CRON, TIMEZONE, ENABLED, NEXT RUN, NOT RUN (notRun)
// and NAME. value is what JSON and YAML show.
func schedulesListing(items []*client.OrganizationSchedule, value any) printer.Listing {
	l := printer.Listing{Value: value, Headers: []string{"id", "agent", "cron", "timezone", "enabled", "next run", "not run", "name"}}
	for _, s := range items {
		l.Names = append(l.Names, "schedule/"+s.WorkflowScheduleID)
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, s := range items {
			next := ""
			if s.NextRun != nil {
				next = s.NextRun.UTC().Format(time.RFC3339)
			}
			name := ""
			if s.Name != nil {
				name = *s.Name
			}
			agent := s.WorkflowPermanentID
			if s.WorkflowTitle != "" {
				agent += " (" + s.WorkflowTitle + ")"
			}
			t.AddRow(s.WorkflowScheduleID, agent, s.CronExpression, s.Timezone, fmt.Sprint(s.Enabled), next, notRun(s.ScheduleActivity), name)
		}
	}
	return l
}

// notRun says which fire times of a schedule started no run: "3 missed"
// (they passed while the daemon was not running), "1 skipped" (the
// previous run had not ended), both, or "" for none.
func notRun(a client.ScheduleActivity) string {
	var parts []string
	if a.MissedFires > 0 {
		parts = append(parts, fmt.Sprintf("%d missed", a.MissedFires))
	}
	if a.SkippedFires > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", a.SkippedFires))
	}
	return strings.Join(parts, ", ")
}

// item is a schedule answer of the agent titled title as a list row.
func item(r *client.ScheduleResponse, title string) *client.OrganizationSchedule {
	s := r.Schedule
	it := &client.OrganizationSchedule{
		WorkflowScheduleID: s.WorkflowScheduleID, OrganizationID: s.OrganizationID, WorkflowPermanentID: s.WorkflowPermanentID,
		WorkflowTitle: title, CronExpression: s.CronExpression, Timezone: s.Timezone, Enabled: s.Enabled, Parameters: s.Parameters,
		Name: s.Name, Description: s.Description, CreatedAt: s.CreatedAt, ModifiedAt: s.ModifiedAt,
		ScheduleActivity: s.ScheduleActivity,
	}
	if len(r.NextRuns) > 0 {
		it.NextRun = &r.NextRuns[0]
	}
	return it
}

func printOne(ios *iostreams.IOStreams, now time.Time, format printer.Format, r *client.ScheduleResponse, title string) error {
	return schedulesListing([]*client.OrganizationSchedule{item(r, title)}, r).Print(ios, now, format)
}

// scheduleID reads a SCHEDULE_ID argument (wfs_..., or schedule/wfs_...).
func scheduleID(arg string) (string, error) {
	id := strings.TrimPrefix(strings.TrimSpace(arg), "schedule/")
	if id == "" || strings.ContainsAny(id, "/ ") {
		return "", cmdutil.UsageErrorf("%q is not a schedule id (wfs_...)", arg)
	}
	return id, nil
}

// CreateOptions are the inputs of `abctl schedules create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	Agent       string
	Cron        string
	Timezone    string
	Params      []string // key=value
	Name        string
	Description string
	Disabled    bool
	Format      printer.Format
}

// NewCmdCreate returns `abctl schedules create`. runF, when not nil, is
// called with the validated options instead of creating.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "create AGENT --cron CRON --timezone ZONE",
		Short: "Start an agent's runs at cron times",
		Long: "create makes a schedule of AGENT. Its first run is at the first time of CRON after now;\n" +
			"times that came before it are not run. --param values are checked against the agent's\n" +
			"parameters as a run's are, and given to every run.",
		Example: "  abctl schedules create invoices --cron '30 2 * * *' --timezone America/New_York\n" +
			"  abctl schedules create wpid_123 --cron @hourly --timezone UTC -p url=https://example.com --name hourly-check",
		Args: cmdutil.ExactArgs(1, "an agent (its id, wpid_..., or its name)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Agent = args[0]
			return cmdutil.Run(cmd, opts, runF, runCreate)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Cron, "cron", "", "the cron expression: 5 fields (minute hour day-of-month month day-of-week), or @daily and the like")
	fl.StringVar(&opts.Timezone, "timezone", "", "the IANA time zone of the expression's times (UTC, Europe/Berlin, America/New_York)")
	fl.StringArrayVarP(&opts.Params, "param", "p", nil, "a parameter of the runs as key=value (repeatable)")
	fl.StringVar(&opts.Name, "name", "", "a name for the schedule")
	fl.StringVar(&opts.Description, "description", "", "what the schedule is for")
	fl.BoolVar(&opts.Disabled, "disabled", false, "create it disabled (enable it later)")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

// Validate checks that --cron, --timezone and the parameters are given and
// well formed; the service checks the expression and the zone.
func (o *CreateOptions) Validate() error {
	switch {
	case strings.TrimSpace(o.Cron) == "":
		return cmdutil.UsageErrorf("--cron is required: e.g. --cron '0 9 * * MON-FRI' (09:00 on weekdays)")
	case strings.TrimSpace(o.Timezone) == "":
		return cmdutil.UsageErrorf("--timezone is required: an IANA name such as UTC or Europe/Berlin")
	}
	if _, err := cmdutil.Params(o.Params); err != nil {
		return err
	}
	return nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func runCreate(ctx context.Context, opts *CreateOptions) error {
	c, agent, err := clientAndAgent(ctx, opts.Client, opts.Agent)
	if err != nil {
		return err
	}
	wpid := agent.WorkflowPermanentID
	params, _ := cmdutil.Params(opts.Params)
	enabled := !opts.Disabled
	r, err := c.Schedules.Create(ctx, wpid, &client.ScheduleRequest{
		CronExpression: opts.Cron, Timezone: opts.Timezone, Enabled: &enabled, Parameters: params,
		Name: optional(opts.Name), Description: optional(opts.Description),
	})
	if err != nil {
		return fmt.Errorf("create a schedule of %s: %w", opts.Agent, err)
	}
	return printOne(opts.IO, opts.Now(), opts.Format, r, agent.Title)
}

// ListOptions are the inputs of `abctl schedules list`.
type ListOptions struct {
	listing.ListOptions

	// Agent lists the schedules of one agent; "" lists the organization's.
	Agent  string
	Status client.ScheduleStatus
	Search string
}

// NewCmdList returns `abctl schedules list`. runF, when not nil, is called
// with the validated options instead of listing.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	var status string
	cmd := listing.NewListCmd(f, &opts.ListOptions, "schedules", &cobra.Command{
		Use:   "list [AGENT]",
		Short: "List schedules, of the organization or of one agent",
		Example: "  abctl schedules list\n" +
			"  abctl schedules list --status paused -o name\n" +
			"  abctl schedules list invoices -o yaml",
		Args: cobra.MaximumNArgs(1),
	}, func(cmd *cobra.Command, args []string) error {
		opts.Agent, opts.Status = "", client.ScheduleStatus(status)
		if len(args) == 1 {
			opts.Agent = args[0]
		}
		return cmdutil.Run(cmd, opts, runF, runList)
	})
	cmd.Flags().StringVar(&status, "status", "", "only active (enabled) or paused (disabled) schedules")
	cmd.Flags().StringVar(&opts.Search, "search", "", "only schedules whose name or agent title contains this text")
	return cmd
}

// Validate checks the status, the limit and that the filters go with the
// organization's list.
func (o *ListOptions) Validate() error {
	switch o.Status {
	case "", client.ScheduleActive, client.SchedulePaused:
	default:
		return cmdutil.UsageErrorf("--status %q: use active or paused", o.Status)
	}
	if err := listing.CheckLimit(o.Limit); err != nil {
		return err
	}
	if o.Agent != "" && (o.Status != "" || o.Search != "") {
		return cmdutil.UsageErrorf("--status and --search filter the organization's list: leave out AGENT")
	}
	return nil
}

// runList lists the organization's schedules, or one agent's: both from
// the organization-wide list (the one that has each schedule's next run
// and its agent's title), the latter keeping the agent's schedules only.
func runList(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	lo := &client.ListSchedulesOptions{Status: opts.Status, Search: opts.Search, PageSize: min(listing.PageSize(opts.Limit), 100)}
	what, wpid := "schedules", ""
	if opts.Agent != "" {
		if wpid, err = agentref.Resolve(ctx, c, opts.Agent); err != nil {
			return err
		}
		// The agent's schedules are among all the organization's.
		lo.PageSize, what = 100, "schedules of "+opts.Agent
	}
	seq := c.Schedules.All(ctx, lo)
	if wpid != "" {
		seq = ofAgent(seq, wpid)
	}
	items, err := listing.Collect(seq, opts.Limit, what)
	if err != nil {
		return err
	}
	return opts.Print(schedulesListing(items, items))
}

// ofAgent keeps the schedules of the agent wpid.
func ofAgent(all iter.Seq2[*client.OrganizationSchedule, error], wpid string) iter.Seq2[*client.OrganizationSchedule, error] {
	return func(yield func(*client.OrganizationSchedule, error) bool) {
		for s, err := range all {
			if err == nil && s.WorkflowPermanentID != wpid {
				continue
			}
			if !yield(s, err) || err != nil {
				return
			}
		}
	}
}

// OneOptions are the inputs of the commands on one schedule: get, enable,
// disable, delete.
type OneOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	Agent      string
	ScheduleID string
	Yes        bool // delete: do not ask
	Format     printer.Format
}

func (o *OneOptions) read(args []string) error {
	o.Agent = args[0]
	id, err := scheduleID(args[1])
	if err != nil {
		return err
	}
	o.ScheduleID = id
	return nil
}

const oneArgs = "an agent (wpid_... or its name) and a schedule id (wfs_...)"

// NewCmdGet returns `abctl schedules get`. runF, when not nil, is called
// with the validated options instead of reading the schedule.
func NewCmdGet(f *cmdutil.Factory, runF func(*OneOptions) error) *cobra.Command {
	return newCmdOne(f, &cobra.Command{
		Use:     "get AGENT SCHEDULE_ID",
		Short:   "Show a schedule and its next run times",
		Example: "  abctl schedules get invoices wfs_123 -o yaml",
	}, runF, func(ctx context.Context, c *client.Client, wpid, id string) (*client.ScheduleResponse, error) {
		return c.Schedules.Get(ctx, wpid, id)
	})
}

// NewCmdSetEnabled returns `abctl schedules enable` (enabled) or
// `abctl schedules disable`. runF, when not nil, is called with the
// validated options instead.
func NewCmdSetEnabled(f *cmdutil.Factory, enabled bool, runF func(*OneOptions) error) *cobra.Command {
	use, short := "disable", "Stop a schedule from starting runs (keep it)"
	if enabled {
		use, short = "enable", "Let a schedule start runs again, from now on (the times it missed are not run)"
	}
	return newCmdOne(f, &cobra.Command{
		Use:     use + " AGENT SCHEDULE_ID",
		Short:   short,
		Example: "  abctl schedules " + use + " invoices wfs_123",
	}, runF, func(ctx context.Context, c *client.Client, wpid, id string) (*client.ScheduleResponse, error) {
		if enabled {
			return c.Schedules.Enable(ctx, wpid, id)
		}
		return c.Schedules.Disable(ctx, wpid, id)
	})
}

// newCmdOne completes cmd, which says what the command is (Use, Short,
// Example), into a command on one schedule that shows the schedule it
// answers with: get, enable, disable. call asks the service, with the id
// of the schedule's agent (wpid) and the schedule's id; runF, when not
// nil, is called with the options instead.
func newCmdOne(f *cmdutil.Factory, cmd *cobra.Command, runF func(*OneOptions) error,
	call func(ctx context.Context, c *client.Client, wpid, id string) (*client.ScheduleResponse, error)) *cobra.Command {
	opts := &OneOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd.Args = cmdutil.ExactArgs(2, oneArgs)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := opts.read(args); err != nil {
			return err
		}
		if runF != nil {
			return runF(opts)
		}
		return runOne(cmd.Context(), opts, call)
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

func runOne(ctx context.Context, opts *OneOptions, call func(ctx context.Context, c *client.Client, wpid, id string) (*client.ScheduleResponse, error)) error {
	c, agent, err := clientAndAgent(ctx, opts.Client, opts.Agent)
	if err != nil {
		return err
	}
	r, err := call(ctx, c, agent.WorkflowPermanentID, opts.ScheduleID)
	if err != nil {
		return fmt.Errorf("schedule %s of %s: %w", opts.ScheduleID, opts.Agent, err)
	}
	return printOne(opts.IO, opts.Now(), opts.Format, r, agent.Title)
}

// clientAndAgent returns the service's client and the agent ref names
// (its name or id).
func clientAndAgent(ctx context.Context, newClient func(context.Context) (*client.Client, error), ref string) (*client.Client, *client.Agent, error) {
	c, err := newClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	agent, err := agentref.Get(ctx, c, ref)
	if err != nil {
		return nil, nil, err
	}
	return c, agent, nil
}

// NewCmdDelete returns `abctl schedules delete`. runF, when not nil, is
// called with the validated options instead of deleting.
func NewCmdDelete(f *cmdutil.Factory, runF func(*OneOptions) error) *cobra.Command {
	opts := &OneOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "delete AGENT SCHEDULE_ID",
		Short: "Delete a schedule (the runs it started stay)",
		Long: "delete removes a schedule for good; the runs it started stay. It asks first on a\n" +
			"terminal; elsewhere it needs --yes. To stop it for a while, disable it instead.",
		Example: "  abctl schedules delete invoices wfs_123 --yes",
		Args:    cmdutil.ExactArgs(2, oneArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.read(args); err != nil {
				return err
			}
			if !opts.Yes && !opts.IO.CanPrompt() {
				return cmdutil.UsageErrorf("deleting a schedule cannot be undone: add --yes when no terminal can confirm (or disable it instead)")
			}
			return cmdutil.Run(cmd, opts, runF, runDelete)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func runDelete(ctx context.Context, opts *OneOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	wpid, err := agentref.Resolve(ctx, c, opts.Agent)
	if err != nil {
		return err
	}
	if !opts.Yes {
		s, err := c.Schedules.Get(ctx, wpid, opts.ScheduleID)
		if err != nil {
			return fmt.Errorf("get schedule %s: %w", opts.ScheduleID, err)
		}
		q := fmt.Sprintf("Delete schedule %s (%s in %s) of %s?", opts.ScheduleID, s.Schedule.CronExpression, s.Schedule.Timezone, opts.Agent)
		if err := cmdutil.ConfirmOrStop(opts.IO, q); err != nil {
			return err
		}
	}
	if err := c.Schedules.Delete(ctx, wpid, opts.ScheduleID); err != nil {
		return fmt.Errorf("delete schedule %s: %w", opts.ScheduleID, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Schedule %s deleted.\n", opts.ScheduleID)
	return nil
}
