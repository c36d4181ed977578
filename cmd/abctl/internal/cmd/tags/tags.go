// Package tags is `abctl tags`: the organization's tag registry (keys with
// descriptions, values with colours) and the tags of agents and runs.
//
// A tag is "key=value" (grouped under a key) or a bare "label". The same
// verbs work on agents (an id or a name) and on agent runs (wr_...):
//
//	abctl tags set contact-form env=prod urgent --color env=green
//	abctl tags unset wr_123 env
//	abctl tags get contact-form
//	abctl tags history wr_123 --key env
package tags

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmd/get"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmd returns `abctl tags`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "tags",
		Aliases: []string{"tag"},
		Short:   "Tag agents and runs; manage tag keys and values",
		Long: "Tags are key=value pairs (grouped under the key) or bare labels. The agent list filters\n" +
			"on them (abctl get agents --tag env:prod). An agent or run carries at most 20.\n\n" +
			"TARGET is an agent (wpid_..., the name it was applied under, or agent/NAME as -o name\n" +
			"prints it) or an agent run (wr_... or run/ID).",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSetCmd(f), newUnsetCmd(f), newGetCmd(f), newHistoryCmd(f),
		newKeysCmd(f), newValuesCmd(f), newRenameCmd(f), newDeleteCmd(f))
	return cmd
}

// target is an agent or a run whose tags a command changes or reads.
type target struct {
	id    string
	isRun bool
}

func (t target) String() string {
	if t.isRun {
		return "run " + t.id
	}
	return "agent " + t.id
}

// prepare does what every command on a target starts with: check -o,
// get the client, resolve the target.
func prepare(cmd *cobra.Command, f *cmdutil.Factory, output, ref string) (printer.Format, *client.Client, target, error) {
	format, err := printer.Check(cmd, output)
	if err != nil {
		return "", nil, target{}, err
	}
	c, err := f.Client(cmd.Context())
	if err != nil {
		return "", nil, target{}, err
	}
	t, err := resolveTarget(cmd.Context(), c, ref)
	return format, c, t, err
}

func resolveTarget(ctx context.Context, c *client.Client, ref string) (target, error) {
	named := false // run/ID, as -o name prints it
	if id, err := resource.Run.ID(ref); err == nil && id != ref {
		ref, named = id, true
	}
	if strings.HasPrefix(ref, "tsk_") {
		return target{}, fmt.Errorf("%s is a task run: only agent runs (wr_...) carry tags", ref)
	}
	if named || strings.HasPrefix(ref, "wr_") {
		return target{id: ref, isRun: true}, nil
	}
	id, err := agentref.Resolve(ctx, c, ref)
	if err != nil {
		return target{}, err
	}
	return target{id: id}, nil
}

// parseTag reads "key=value" or "label".
func parseTag(s string) (client.TagInput, error) {
	if k, v, ok := strings.Cut(s, "="); ok {
		if k == "" || v == "" {
			return client.TagInput{}, fmt.Errorf("tag %q: write key=value, or a bare label", s)
		}
		return client.TagInput{Key: k, Value: v}, nil
	}
	if s == "" {
		return client.TagInput{}, fmt.Errorf("empty tag")
	}
	return client.TagInput{Value: s}, nil
}

func tagText(key *string, value string) string {
	if key == nil {
		return value
	}
	return *key + "=" + value
}

func printTags(f *cmdutil.Factory, format printer.Format, raw any, tags []client.Tag) error {
	l := printer.Listing{Value: raw, Headers: []string{"key", "value", "set"}}
	for _, t := range tags {
		l.Names = append(l.Names, tagText(t.Key, t.Value))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, tag := range tags {
			key := ""
			if tag.Key != nil {
				key = *tag.Key
			}
			t.AddRow(key, tag.Value, t.Time(tag.SetAt.Time))
		}
	}
	return l.Print(f.IO, f.Now(), format)
}

func newSetCmd(f *cmdutil.Factory) *cobra.Command {
	var colors []string
	var output string
	cmd := &cobra.Command{
		Use:   "set TARGET TAG...",
		Short: "Set tags on an agent or a run (key=value replaces the key's value)",
		Example: "  abctl tags set contact-form env=prod team=web urgent\n" +
			"  abctl tags set wr_490440779503358000 reviewed --color reviewed=green",
		Args: cmdutil.MinArgs(2, "a target and one or more tags"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			req := &client.TagApplyRequest{}
			for _, a := range args[1:] {
				tag, err := parseTag(a)
				if err != nil {
					return cmdutil.Usagef(cmd, "%v", err)
				}
				req.Tags = append(req.Tags, tag)
			}
			for _, c := range colors {
				k, v, ok := strings.Cut(c, "=")
				if !ok || k == "" || !client.TagColor(v).IsKnown() {
					return cmdutil.Usagef(cmd, "--color %q: write key=color with a palette colour (%s)", c, palette())
				}
				if req.Colors == nil {
					req.Colors = map[string]client.TagColor{}
				}
				req.Colors[k] = client.TagColor(v)
			}
			return apply(cmd, f, args[0], req, format)
		},
	}
	cmd.Flags().StringArrayVar(&colors, "color", nil, "palette colour of a new key=value pair, as key=color (repeatable)")
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML, printer.Name)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

func palette() string {
	names := make([]string, len(client.TagColors))
	for i, c := range client.TagColors {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

func newUnsetCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "unset TARGET KEY_OR_LABEL...",
		Short:   "Remove tags from an agent or a run (a key, or a bare label)",
		Example: "  abctl tags unset contact-form env urgent",
		Args:    cmdutil.MinArgs(2, "a target and one or more keys or labels"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, t, err := prepare(cmd, f, output, args[0])
			if err != nil {
				return err
			}
			// A name that is a registered key on the target removes that
			// key; anything else is a bare label.
			current, _, err := getTags(cmd.Context(), c, t)
			if err != nil {
				return err
			}
			keys := map[string]bool{}
			for _, tag := range current {
				if tag.Key != nil {
					keys[*tag.Key] = true
				}
			}
			req := &client.TagApplyRequest{}
			for _, a := range args[1:] {
				if keys[a] {
					req.TagsToDelete = append(req.TagsToDelete, client.TagDeleteInput{Key: a})
				} else {
					req.TagsToDelete = append(req.TagsToDelete, client.TagDeleteInput{Value: a})
				}
			}
			return applyTo(cmd, f, c, t, req, format)
		},
	}
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML, printer.Name)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

func apply(cmd *cobra.Command, f *cmdutil.Factory, ref string, req *client.TagApplyRequest, format printer.Format) error {
	c, err := f.Client(cmd.Context())
	if err != nil {
		return err
	}
	t, err := resolveTarget(cmd.Context(), c, ref)
	if err != nil {
		return err
	}
	return applyTo(cmd, f, c, t, req, format)
}

func applyTo(cmd *cobra.Command, f *cmdutil.Factory, c *client.Client, t target, req *client.TagApplyRequest, format printer.Format) error {
	if t.isRun {
		res, err := c.Runs.ApplyTags(cmd.Context(), t.id, req)
		if err != nil {
			return fmt.Errorf("tag %s: %w", t, err)
		}
		return printTags(f, format, res, res.Tags)
	}
	res, err := c.Agents.ApplyTags(cmd.Context(), t.id, req)
	if err != nil {
		return fmt.Errorf("tag %s: %w", t, err)
	}
	return printTags(f, format, res, res.Tags)
}

// getTags reads the current tags of t, and the service's answer as it is
// (for -o json and yaml).
func getTags(ctx context.Context, c *client.Client, t target) (tags []client.Tag, raw any, err error) {
	if t.isRun {
		res, err := c.Runs.GetTags(ctx, t.id)
		if err != nil {
			return nil, nil, fmt.Errorf("read the tags of %s: %w", t, err)
		}
		return res.Tags, res, nil
	}
	res, err := c.Agents.GetTags(ctx, t.id)
	if err != nil {
		return nil, nil, fmt.Errorf("read the tags of %s: %w", t, err)
	}
	return res.Tags, res, nil
}

func newGetCmd(f *cmdutil.Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "get TARGET",
		Short: "Show the tags of an agent or a run",
		Args:  cmdutil.ExactArgs(1, "an agent or a run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, t, err := prepare(cmd, f, output, args[0])
			if err != nil {
				return err
			}
			tags, raw, err := getTags(cmd.Context(), c, t)
			if err != nil {
				return err
			}
			return printTags(f, format, raw, tags)
		},
	}
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML, printer.Name)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

func newHistoryCmd(f *cmdutil.Factory) *cobra.Command {
	var output, key string
	var limit int
	var since time.Duration
	cmd := &cobra.Command{
		Use:     "history TARGET",
		Short:   "Show the tag changes of an agent or a run, newest first",
		Example: "  abctl tags history contact-form --key env --since 24h",
		Args:    cmdutil.ExactArgs(1, "an agent or a run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 || limit > 500 {
				return cmdutil.Usagef(cmd, "--limit must be between 1 and 500, not %d", limit)
			}
			format, c, t, err := prepare(cmd, f, output, args[0])
			if err != nil {
				return err
			}
			o := &client.TagHistoryOptions{Limit: limit, Key: key}
			if since > 0 {
				at := client.NewTime(f.Now().Add(-since))
				o.Since = &at
			}
			var raw any
			var events []client.TagEvent
			if t.isRun {
				h, err := c.Runs.TagHistory(cmd.Context(), t.id, o)
				if err != nil {
					return fmt.Errorf("read the tag history of %s: %w", t, err)
				}
				raw, events = h, h.Events
			} else {
				h, err := c.Agents.TagHistory(cmd.Context(), t.id, o)
				if err != nil {
					return fmt.Errorf("read the tag history of %s: %w", t, err)
				}
				raw, events = h, h.Events
			}
			l := printer.Listing{Value: raw, Headers: []string{"when", "event", "key", "value", "by"}}
			l.Rows = func(tp *printer.TablePrinter) {
				for _, e := range events {
					k, v := "", ""
					if e.Key != nil {
						k = *e.Key
					}
					if e.Value != nil {
						v = *e.Value
					}
					tp.AddRow(tp.Time(e.SetAt.Time), string(e.EventType), k, v, e.SetBy)
				}
			}
			return l.Print(f.IO, f.Now(), format)
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "only the events of this key")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many events (1 to 500; default: the service's, 100)")
	cmd.Flags().DurationVar(&since, "since", 0, "only the events of this last period (e.g. 24h)")
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

func newKeysCmd(f *cmdutil.Factory) *cobra.Command {
	var output, describe string
	cmd := &cobra.Command{
		Use:   "keys [KEY]",
		Short: "List the tag keys, or change one's description",
		Example: "  abctl tags keys\n" +
			"  abctl tags keys env --describe 'Deployment environment'",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("describe") {
				if len(args) != 1 {
					return cmdutil.Usagef(cmd, "--describe needs the KEY to describe")
				}
				k, err := c.Tags.UpdateKey(cmd.Context(), args[0], describe)
				if err != nil {
					return fmt.Errorf("describe tag key %s: %w", args[0], err)
				}
				return printKeys(f, format, []*client.TagKey{k})
			}
			keys, err := c.Tags.ListKeys(cmd.Context())
			if err != nil {
				return fmt.Errorf("list the tag keys: %w", err)
			}
			if len(args) == 1 {
				var one []*client.TagKey
				for _, k := range keys {
					if k.Key == args[0] {
						one = append(one, k)
					}
				}
				if len(one) == 0 {
					return fmt.Errorf("no tag key %q", args[0])
				}
				keys = one
			}
			return printKeys(f, format, keys)
		},
	}
	cmd.Flags().StringVar(&describe, "describe", "", "set the key's description (empty clears it)")
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

func printKeys(f *cmdutil.Factory, format printer.Format, keys []*client.TagKey) error {
	l := printer.Listing{Value: keys, Headers: []string{"key", "agents", "description"}}
	for _, k := range keys {
		l.Names = append(l.Names, k.Key)
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, k := range keys {
			d := ""
			if k.Description != nil {
				d = *k.Description
			}
			t.AddRow(k.Key, fmt.Sprint(k.WorkflowCount), d)
		}
	}
	return l.Print(f.IO, f.Now(), format)
}

func newValuesCmd(f *cmdutil.Factory) *cobra.Command {
	var output, color string
	var create bool
	cmd := &cobra.Command{
		Use:   "values [KEY [VALUE]]",
		Short: "List tag values; register one (--create) or recolour it (--color)",
		Example: "  abctl tags values\n" +
			"  abctl tags values env\n" +
			"  abctl tags values env prod --create --color green\n" +
			"  abctl tags values env prod --color red",
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			creating := create
			recolor := cmd.Flags().Changed("color") && !creating
			if (creating || recolor) && len(args) != 2 {
				return cmdutil.Usagef(cmd, "--create and --color need KEY and VALUE")
			}
			if color != "" && !client.TagColor(color).IsKnown() {
				return cmdutil.Usagef(cmd, "--color %q is not a palette colour (%s)", color, palette())
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			var values []*client.TagValue
			switch {
			case creating:
				v, err := c.Tags.CreateValue(cmd.Context(), &client.TagValueCreateRequest{Key: args[0], Value: args[1], Color: client.TagColor(color)})
				if err != nil {
					return fmt.Errorf("create tag value %s=%s: %w", args[0], args[1], err)
				}
				values = []*client.TagValue{v}
			case recolor:
				v, err := c.Tags.UpdateValue(cmd.Context(), args[0], args[1], client.TagColor(color))
				if err != nil {
					return fmt.Errorf("recolour tag value %s=%s: %w", args[0], args[1], err)
				}
				values = []*client.TagValue{v}
			default:
				key := ""
				if len(args) > 0 {
					key = args[0]
				}
				values, err = c.Tags.ListValues(cmd.Context(), key)
				if err != nil {
					return fmt.Errorf("list the tag values: %w", err)
				}
				if len(args) == 2 {
					var one []*client.TagValue
					for _, v := range values {
						if v.Value == args[1] {
							one = append(one, v)
						}
					}
					values = one
				}
			}
			return get.TagValuesListing(values).Print(f.IO, f.Now(), format)
		},
	}
	cmd.Flags().BoolVar(&create, "create", false, "register KEY VALUE before any agent uses it")
	cmd.Flags().StringVar(&color, "color", "", "palette colour: "+palette())
	printer.AddFlag(cmd, &output, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

func newRenameCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "rename KEY VALUE NEW_VALUE",
		Short:   "Rename a tag value on every agent that carries it",
		Example: "  abctl tags rename env staging preprod",
		Args:    cmdutil.ExactArgs(3, "KEY, VALUE and NEW_VALUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			res, err := c.Tags.RenameValue(cmd.Context(), args[0], args[1], args[2])
			if err != nil {
				return fmt.Errorf("rename %s=%s: %w", args[0], args[1], err)
			}
			fmt.Fprintf(f.IO.ErrOut, "Renamed %s=%s to %s=%s on %d agent(s).\n", args[0], args[1], res.Key, res.Value, res.RenamedWorkflowCount)
			return nil
		},
	}
}

func newDeleteCmd(f *cmdutil.Factory) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete KEY [VALUE]",
		Short: "Delete a tag key (and all its values) or one value, from every agent and run",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			what := "tag key " + args[0] + " and every value of it"
			if len(args) == 2 {
				what = "tag value " + args[0] + "=" + args[1]
			}
			if !yes {
				if !f.IO.CanPrompt() {
					return cmdutil.Usagef(cmd, "deleting %s removes it from every agent and run: add --yes when no terminal can confirm", what)
				}
				ok, err := cmdutil.Confirm(f.IO, "Delete "+what+" from every agent and run?")
				if err != nil || !ok {
					return cmdutil.Silent(cmdutil.ExitError)
				}
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			if len(args) == 2 {
				res, err := c.Tags.DeleteValue(cmd.Context(), args[0], args[1])
				if err != nil {
					return fmt.Errorf("delete %s: %w", what, err)
				}
				fmt.Fprintf(f.IO.ErrOut, "Deleted %s: removed from %d agent(s) and %d run(s).\n", what, res.RemovedFromWorkflowCount, res.RemovedFromRunCount)
				return nil
			}
			res, err := c.Tags.DeleteKey(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("delete %s: %w", what, err)
			}
			fmt.Fprintf(f.IO.ErrOut, "Deleted %s: removed from %d agent(s) and %d run(s).\n", what, res.RemovedFromWorkflowCount, res.RemovedFromRunCount)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}
