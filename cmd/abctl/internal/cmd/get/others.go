package get

import (
	"context"
	"fmt"
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

// RunsOptions are the inputs of `abctl get runs`.
type RunsOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// RunIDs are the runs to show, without the run/ of -o name; none
	// lists them.
	RunIDs []string
	Format printer.Format
	// Search, Agent (a name or id), Status, Types and Tags filter the
	// list.
	Search, Agent       string
	Status, Types, Tags []string
	// Limit bounds the list; 0 means all the service lists.
	Limit int
	// Steps shows the steps of the one run of RunIDs instead of the run.
	Steps bool
}

// NewCmdRuns returns `abctl get runs`. runF, when not nil, is called with
// the validated options instead of reading the runs.
func NewCmdRuns(f *cmdutil.Factory, runF func(*RunsOptions) error) *cobra.Command {
	opts := &RunsOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "runs [RUN_ID...]",
		Aliases: []string{"run"},
		Short:   "List runs, newest first, or show some by id",
		Long: "Without arguments, lists the runs, newest first. With run ids, shows those runs;\n" +
			"with one id and --steps, shows its steps instead (newest first): what\n" +
			"each step did, how it ended, and where its time and tokens went.",
		Example: "  abctl get runs --status running --status queued\n" +
			"  abctl get runs --agent contact-form --limit 5 -o json\n" +
			"  abctl get run wr_490440779503358000 -o yaml\n" +
			"  abctl get run tsk_490440779503358000 --steps -o wide",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunIDs = args
			return cmdutil.Run(cmd, opts, runF, runRuns)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Status, "status", nil, "only runs in this status (repeatable)")
	fl.StringArrayVar(&opts.Types, "type", nil, "only runs of this type: task_v1, task_v2, workflow_run (repeatable)")
	fl.StringVar(&opts.Agent, "agent", "", "only the runs of this agent (name or wpid_...)")
	fl.StringVar(&opts.Search, "search", "", "only runs whose id, title or agent contain this text (3 characters or more)")
	fl.StringArrayVar(&opts.Tags, "tag", nil, "only agent runs with this tag: label, key:value or key:* (repeatable: all must match)")
	fl.IntVar(&opts.Limit, "limit", 50, "at most this many runs (0: all the service lists)")
	fl.BoolVar(&opts.Steps, "steps", false, "show the steps of the run (one id) instead of the run")
	printer.AddFlag(cmd, &opts.Format, printer.AllFormats...)
	cmd.ValidArgsFunction = completion.Runs(f, completion.AnyRun)
	return cmd
}

// Validate checks the flags and reads the run ids.
func (o *RunsOptions) Validate() error {
	if err := listing.CheckLimit(o.Limit); err != nil {
		return err
	}
	if o.Search != "" && len([]rune(o.Search)) < 3 {
		return cmdutil.UsageErrorf("--search needs at least 3 characters")
	}
	if o.Steps && len(o.RunIDs) != 1 {
		return cmdutil.UsageErrorf("--steps needs one run id")
	}
	ids, err := ids(resource.Run, o.RunIDs)
	if err != nil {
		return err
	}
	o.RunIDs = ids
	return nil
}

// ids reads the ids of args, resources of kind k; one of another kind is
// a usage error.
func ids(k resource.Kind, args []string) ([]string, error) {
	ids := make([]string, 0, len(args))
	for _, a := range args {
		id, err := k.ID(a)
		if err != nil {
			return nil, cmdutil.UsageErrorf("%v", err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func runRuns(ctx context.Context, opts *RunsOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	wide := opts.Format == printer.Wide
	if opts.Steps {
		id := opts.RunIDs[0]
		steps, err := c.Runs.Steps(ctx, id)
		if err != nil {
			return fmt.Errorf("get the steps of run %s: %w", id, err)
		}
		if steps == nil {
			return fmt.Errorf("get the steps of run %s: the service at %s does not serve run steps (an abctl daemon does; see abctl get run %s -o json for the run)", id, c.BaseURL(), id)
		}
		return stepsListing(id, steps, wide).Print(opts.IO, opts.Now(), opts.Format)
	}
	if len(opts.RunIDs) > 0 {
		runs, err := listing.Each(ctx, opts.RunIDs, func(ctx context.Context, id string) (*client.Run, error) { return c.Runs.Get(ctx, id) }, "run")
		if err != nil {
			return err
		}
		return runsListing(runs, len(opts.RunIDs) == 1, wide, opts.Now()).Print(opts.IO, opts.Now(), opts.Format)
	}
	lo := &client.ListRunsOptions{SearchKey: opts.Search, Tags: opts.Tags, PageSize: 100}
	for _, s := range opts.Status {
		lo.Status = append(lo.Status, client.RunStatus(s))
	}
	for _, t := range opts.Types {
		lo.RunType = append(lo.RunType, client.RunType(t))
	}
	if opts.Agent != "" {
		id, err := agentref.Resolve(ctx, c, opts.Agent)
		if err != nil {
			return err
		}
		lo.WorkflowPermanentID = []string{id}
	}
	if opts.Limit > 0 && opts.Limit < 100 {
		lo.PageSize = opts.Limit
	}
	var items []*client.RunListItem
	for r, err := range c.Runs.All(ctx, lo) {
		if err != nil {
			return fmt.Errorf("list the runs: %w", err)
		}
		items = append(items, r)
		if opts.Limit > 0 && len(items) == opts.Limit {
			break
		}
	}
	return runListListing(items, wide, opts.Now()).Print(opts.IO, opts.Now(), opts.Format)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// duration is how long a run ran ("" before it started).
func duration(started, finished *client.Time, now time.Time) string {
	if started == nil {
		return ""
	}
	end := now
	if finished != nil {
		end = finished.Time
	}
	d := end.Sub(started.Time).Round(100 * time.Millisecond)
	if d < 0 {
		d = 0
	}
	return d.String()
}

// FoldersOptions are the inputs of `abctl get folders`.
type FoldersOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// FolderIDs are the folders to show, without the folder/ of -o name;
	// none lists them.
	FolderIDs []string
	Format    printer.Format
	// Search filters the list.
	Search string
}

// NewCmdFolders returns `abctl get folders`. runF, when not nil, is called
// with the validated options instead of reading the folders.
func NewCmdFolders(f *cmdutil.Factory, runF func(*FoldersOptions) error) *cobra.Command {
	opts := &FoldersOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "folders [FOLDER_ID...]",
		Aliases: []string{"folder"},
		Short:   "List folders, most recently changed first, or show some by id",
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.FolderIDs = args
			return cmdutil.Run(cmd, opts, runF, runFolders)
		},
	}
	cmd.Flags().StringVar(&opts.Search, "search", "", "only folders whose title or description contain this text")
	printer.AddFlag(cmd, &opts.Format, printer.AllFormats...)
	return cmd
}

// Validate reads the folder ids.
func (o *FoldersOptions) Validate() error {
	ids, err := ids(resource.Folder, o.FolderIDs)
	if err != nil {
		return err
	}
	o.FolderIDs = ids
	return nil
}

func runFolders(ctx context.Context, opts *FoldersOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	var folders []*client.Folder
	if len(opts.FolderIDs) > 0 {
		if folders, err = listing.Each(ctx, opts.FolderIDs, func(ctx context.Context, id string) (*client.Folder, error) { return c.Folders.Get(ctx, id) }, "folder"); err != nil {
			return err
		}
	} else {
		for fo, err := range c.Folders.All(ctx, &client.ListFoldersOptions{Search: opts.Search, PageSize: 100}) {
			if err != nil {
				return fmt.Errorf("list the folders: %w", err)
			}
			folders = append(folders, fo)
		}
	}
	return listing.Folders(folders, len(opts.FolderIDs) == 1, opts.Format == printer.Wide).Print(opts.IO, opts.Now(), opts.Format)
}

// TagsOptions are the inputs of `abctl get tags`.
type TagsOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Key lists the values of this key only; "" lists all.
	Key    string
	Format printer.Format
}

// NewCmdTags returns `abctl get tags`. runF, when not nil, is called with
// the options instead of reading the tags.
func NewCmdTags(f *cmdutil.Factory, runF func(*TagsOptions) error) *cobra.Command {
	opts := &TagsOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "tags [KEY]",
		Aliases: []string{"tag"},
		Short:   "List the tag values in use (of one key), with their colours and agent counts",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = ""
			if len(args) == 1 {
				opts.Key = args[0]
			}
			return cmdutil.Run(cmd, opts, runF, runTags)
		},
	}
	printer.AddFlag(cmd, &opts.Format, printer.AllFormats...)
	return cmd
}

func runTags(ctx context.Context, opts *TagsOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	values, err := c.Tags.ListValues(ctx, opts.Key)
	if err != nil {
		return fmt.Errorf("list the tags: %w", err)
	}
	return listing.TagValues(values).Print(opts.IO, opts.Now(), opts.Format)
}
