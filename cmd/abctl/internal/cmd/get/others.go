package get

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

func newRunsCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		output, search, agent string
		status, types, tags   []string
		limit                 int
		steps                 bool
	)
	cmd := &cobra.Command{
		Use:     "runs [RUN_ID...]",
		Aliases: []string{"run"},
		Short:   "List runs, newest first, or show some by id",
		Long: "Without arguments, lists the runs, newest first. With run ids, shows those runs;\n" +
			"with one id and --steps, shows its steps instead (its timeline, newest first): what\n" +
			"each step did, how it ended, and where its time and tokens went.",
		Example: "  abctl get runs --status running --status queued\n" +
			"  abctl get runs --agent contact-form --limit 5 -o json\n" +
			"  abctl get run wr_490440779503358000 -o yaml\n" +
			"  abctl get run tsk_490440779503358000 --steps -o wide",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			if limit < 0 {
				return cmdutil.Usagef(cmd, "--limit must be 0 (all) or more, not %d", limit)
			}
			if search != "" && len([]rune(search)) < 3 {
				return cmdutil.Usagef(cmd, "--search needs at least 3 characters")
			}
			if steps && len(args) != 1 {
				return cmdutil.Usagef(cmd, "--steps needs one run id")
			}
			ids, err := resource.Run.Args(cmd, args)
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			if steps {
				id := ids[0]
				tl, err := c.Runs.Timeline(cmd.Context(), id)
				if err != nil {
					return fmt.Errorf("get the steps of run %s: %w", id, err)
				}
				if tl == nil {
					return fmt.Errorf("get the steps of run %s: the service at %s does not serve run timelines", id, c.BaseURL())
				}
				return timelineListing(id, tl, format == printer.Wide).Print(f.IO, f.Now(), format)
			}
			if len(ids) > 0 {
				var runs []*client.Run
				for _, id := range ids {
					r, err := c.Runs.Get(cmd.Context(), id)
					if err != nil {
						return fmt.Errorf("get run %s: %w", id, err)
					}
					runs = append(runs, r)
				}
				return runsListing(runs, len(args) == 1, format == printer.Wide, f.Now()).Print(f.IO, f.Now(), format)
			}
			opts := &client.ListRunsOptions{SearchKey: search, Tags: tags, PageSize: 100}
			for _, s := range status {
				opts.Status = append(opts.Status, client.RunStatus(s))
			}
			for _, t := range types {
				opts.RunType = append(opts.RunType, client.RunType(t))
			}
			if agent != "" {
				id, err := agentref.Resolve(cmd.Context(), c, agent)
				if err != nil {
					return err
				}
				opts.WorkflowPermanentID = []string{id}
			}
			if limit > 0 && limit < 100 {
				opts.PageSize = limit
			}
			var items []*client.RunListItem
			for r, err := range c.Runs.All(cmd.Context(), opts) {
				if err != nil {
					return fmt.Errorf("list the runs: %w", err)
				}
				items = append(items, r)
				if limit > 0 && len(items) == limit {
					break
				}
			}
			return runListListing(items, format == printer.Wide, f.Now()).Print(f.IO, f.Now(), format)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&status, "status", nil, "only runs in this status (repeatable)")
	fl.StringArrayVar(&types, "type", nil, "only runs of this type: task_v1, task_v2, workflow_run (repeatable)")
	fl.StringVar(&agent, "agent", "", "only the runs of this agent (name or wpid_...)")
	fl.StringVar(&search, "search", "", "only runs whose id, title or agent contain this text (3 characters or more)")
	fl.StringArrayVar(&tags, "tag", nil, "only agent runs with this tag: label, key:value or key:* (repeatable: all must match)")
	fl.IntVar(&limit, "limit", 50, "at most this many runs (0: all the service lists)")
	fl.BoolVar(&steps, "steps", false, "show the steps of the run (one id) instead of the run")
	printer.AddFlag(cmd, &output, printer.AllFormats...)
	cmd.ValidArgsFunction = completion.Runs(f, completion.AnyRun)
	return cmd
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

func newFoldersCmd(f *cmdutil.Factory) *cobra.Command {
	var output, search string
	cmd := &cobra.Command{
		Use:     "folders [FOLDER_ID...]",
		Aliases: []string{"folder"},
		Short:   "List folders, most recently changed first, or show some by id",
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			ids, err := resource.Folder.Args(cmd, args)
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			var folders []*client.Folder
			if len(ids) > 0 {
				for _, id := range ids {
					fo, err := c.Folders.Get(cmd.Context(), id)
					if err != nil {
						return fmt.Errorf("get folder %s: %w", id, err)
					}
					folders = append(folders, fo)
				}
			} else {
				for fo, err := range c.Folders.All(cmd.Context(), &client.ListFoldersOptions{Search: search, PageSize: 100}) {
					if err != nil {
						return fmt.Errorf("list the folders: %w", err)
					}
					folders = append(folders, fo)
				}
			}
			return foldersListing(folders, len(args) == 1, format == printer.Wide).Print(f.IO, f.Now(), format)
		},
	}
	cmd.Flags().StringVar(&search, "search", "", "only folders whose title or description contain this text")
	printer.AddFlag(cmd, &output, printer.AllFormats...)
	return cmd
}

func newTagsCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "tags [KEY]",
		Aliases: []string{"tag"},
		Short:   "List the tag values in use (of one key), with their colours and agent counts",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			key := ""
			if len(args) == 1 {
				key = args[0]
			}
			values, err := c.Tags.ListValues(cmd.Context(), key)
			if err != nil {
				return fmt.Errorf("list the tags: %w", err)
			}
			return TagValuesListing(values).Print(f.IO, f.Now(), format)
		},
	}
	printer.AddFlag(cmd, &output, printer.AllFormats...)
	return cmd
}
