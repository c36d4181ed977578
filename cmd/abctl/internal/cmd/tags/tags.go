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
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmdTags returns `abctl tags`.
func NewCmdTags(f *cmdutil.Factory) *cobra.Command {
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
	cmd.AddCommand(NewCmdSet(f, nil), NewCmdUnset(f, nil), NewCmdGet(f, nil), NewCmdHistory(f, nil),
		NewCmdKeys(f, nil), NewCmdValues(f, nil), NewCmdRename(f, nil), NewCmdDelete(f, nil))
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

// resolveTarget finds what ref names: a run (wr_..., run/ID) or an agent
// (a name or id, agent/NAME).
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

// clientAndTarget makes the client and finds the target ref names.
func clientAndTarget(ctx context.Context, getClient func(context.Context) (*client.Client, error), ref string) (*client.Client, target, error) {
	c, err := getClient(ctx)
	if err != nil {
		return nil, target{}, err
	}
	t, err := resolveTarget(ctx, c, ref)
	return c, t, err
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

func printTags(io *iostreams.IOStreams, now time.Time, format printer.Format, raw any, tags []client.Tag) error {
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
	return l.Print(io, now, format)
}

// SetOptions are the inputs of `abctl tags set`.
type SetOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Target is the agent or run to tag.
	Target string
	// Tags are key=value pairs or labels; Colors key=color pairs.
	Tags   []string
	Colors []string
	Format printer.Format

	// Request is what Validate reads from Tags and Colors.
	Request *client.TagApplyRequest
}

// NewCmdSet returns `abctl tags set`. runF, when not nil, is called with
// the validated options instead of tagging.
func NewCmdSet(f *cmdutil.Factory, runF func(*SetOptions) error) *cobra.Command {
	opts := &SetOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "set TARGET TAG...",
		Short: "Set tags on an agent or a run (key=value replaces the key's value)",
		Example: "  abctl tags set contact-form env=prod team=web urgent\n" +
			"  abctl tags set wr_490440779503358000 reviewed --color reviewed=green",
		Args: cmdutil.MinArgs(2, "a target and one or more tags"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target, opts.Tags = args[0], args[1:]
			return cmdutil.Run(cmd, opts, runF, runSet)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Colors, "color", nil, "palette colour of a new key=value pair, as key=color (repeatable)")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

// Validate reads the tags and the colours into Request.
func (o *SetOptions) Validate() error {
	req := &client.TagApplyRequest{}
	for _, a := range o.Tags {
		tag, err := parseTag(a)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		req.Tags = append(req.Tags, tag)
	}
	for _, c := range o.Colors {
		k, v, ok := strings.Cut(c, "=")
		if !ok || k == "" || !client.TagColor(v).IsKnown() {
			return cmdutil.UsageErrorf("--color %q: write key=color with a palette colour (%s)", c, palette())
		}
		if req.Colors == nil {
			req.Colors = map[string]client.TagColor{}
		}
		req.Colors[k] = client.TagColor(v)
	}
	o.Request = req
	return nil
}

func runSet(ctx context.Context, opts *SetOptions) error {
	c, t, err := clientAndTarget(ctx, opts.Client, opts.Target)
	if err != nil {
		return err
	}
	return applyTo(ctx, opts.IO, opts.Now(), c, t, opts.Request, opts.Format)
}

func palette() string {
	names := make([]string, len(client.TagColors))
	for i, c := range client.TagColors {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// UnsetOptions are the inputs of `abctl tags unset`.
type UnsetOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Target is the agent or run to untag.
	Target string
	// Names are the keys (their values go with them) or bare labels to
	// remove.
	Names  []string
	Format printer.Format
}

// NewCmdUnset returns `abctl tags unset`. runF, when not nil, is called
// with the options instead of untagging.
func NewCmdUnset(f *cmdutil.Factory, runF func(*UnsetOptions) error) *cobra.Command {
	opts := &UnsetOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "unset TARGET KEY_OR_LABEL...",
		Short:   "Remove tags from an agent or a run (a key, or a bare label)",
		Example: "  abctl tags unset contact-form env urgent",
		Args:    cmdutil.MinArgs(2, "a target and one or more keys or labels"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target, opts.Names = args[0], args[1:]
			return cmdutil.Run(cmd, opts, runF, runUnset)
		},
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

func runUnset(ctx context.Context, opts *UnsetOptions) error {
	c, t, err := clientAndTarget(ctx, opts.Client, opts.Target)
	if err != nil {
		return err
	}
	// A name that is a registered key on the target removes that key;
	// anything else is a bare label.
	current, _, err := getTags(ctx, c, t)
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
	for _, a := range opts.Names {
		if keys[a] {
			req.TagsToDelete = append(req.TagsToDelete, client.TagDeleteInput{Key: a})
		} else {
			req.TagsToDelete = append(req.TagsToDelete, client.TagDeleteInput{Value: a})
		}
	}
	return applyTo(ctx, opts.IO, opts.Now(), c, t, req, opts.Format)
}

// applyTo applies req to the tags of t and prints the tags it then has.
func applyTo(ctx context.Context, io *iostreams.IOStreams, now time.Time, c *client.Client, t target, req *client.TagApplyRequest, format printer.Format) error {
	if t.isRun {
		res, err := c.Runs.ApplyTags(ctx, t.id, req)
		if err != nil {
			return fmt.Errorf("tag %s: %w", t, err)
		}
		return printTags(io, now, format, res, res.Tags)
	}
	res, err := c.Agents.ApplyTags(ctx, t.id, req)
	if err != nil {
		return fmt.Errorf("tag %s: %w", t, err)
	}
	return printTags(io, now, format, res, res.Tags)
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

// GetOptions are the inputs of `abctl tags get`.
type GetOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Target is the agent or run whose tags to show.
	Target string
	Format printer.Format
}

// NewCmdGet returns `abctl tags get`. runF, when not nil, is called with
// the options instead of reading the tags.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "get TARGET",
		Short: "Show the tags of an agent or a run",
		Args:  cmdutil.ExactArgs(1, "an agent or a run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			return cmdutil.Run(cmd, opts, runF, runGet)
		},
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

func runGet(ctx context.Context, opts *GetOptions) error {
	c, t, err := clientAndTarget(ctx, opts.Client, opts.Target)
	if err != nil {
		return err
	}
	tags, raw, err := getTags(ctx, c, t)
	if err != nil {
		return err
	}
	return printTags(opts.IO, opts.Now(), opts.Format, raw, tags)
}

// HistoryOptions are the inputs of `abctl tags history`.
type HistoryOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Target is the agent or run whose tag changes to show.
	Target string
	// Key keeps the events of one key; Limit bounds them (0: the
	// service's default); Since keeps those of this last period (0: all).
	Key    string
	Limit  int
	Since  time.Duration
	Format printer.Format
}

// NewCmdHistory returns `abctl tags history`. runF, when not nil, is
// called with the validated options instead of reading the history.
func NewCmdHistory(f *cmdutil.Factory, runF func(*HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "history TARGET",
		Short:   "Show the tag changes of an agent or a run, newest first",
		Example: "  abctl tags history contact-form --key env --since 24h",
		Args:    cmdutil.ExactArgs(1, "an agent or a run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			// --limit is checked before -o, as it always was.
			return cmdutil.Run(cmd, opts, runF, runHistory)
		},
	}
	cmd.Flags().StringVar(&opts.Key, "key", "", "only the events of this key")
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "at most this many events (1 to 500; default: the service's, 100)")
	cmd.Flags().DurationVar(&opts.Since, "since", 0, "only the events of this last period (e.g. 24h)")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML)
	cmd.ValidArgsFunction = completion.First(completion.Targets(f))
	return cmd
}

// Validate checks --limit.
func (o *HistoryOptions) Validate() error {
	if o.Limit < 0 || o.Limit > 500 {
		return cmdutil.UsageErrorf("--limit must be between 1 and 500, not %d", o.Limit)
	}
	return nil
}

func runHistory(ctx context.Context, opts *HistoryOptions) error {
	c, t, err := clientAndTarget(ctx, opts.Client, opts.Target)
	if err != nil {
		return err
	}
	o := &client.TagHistoryOptions{Limit: opts.Limit, Key: opts.Key}
	if opts.Since > 0 {
		o.Since = new(client.NewTime(opts.Now().Add(-opts.Since)))
	}
	var raw any
	var events []client.TagEvent
	if t.isRun {
		h, err := c.Runs.TagHistory(ctx, t.id, o)
		if err != nil {
			return fmt.Errorf("read the tag history of %s: %w", t, err)
		}
		raw, events = h, h.Events
	} else {
		h, err := c.Agents.TagHistory(ctx, t.id, o)
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
	return l.Print(opts.IO, opts.Now(), opts.Format)
}

// KeysOptions are the inputs of `abctl tags keys`.
type KeysOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Key shows this key only; "" lists them all.
	Key string
	// Describe, when not nil, sets Key's description.
	Describe *string
	Format   printer.Format
}

// NewCmdKeys returns `abctl tags keys`. runF, when not nil, is called with
// the validated options instead of reading (or describing) the keys.
func NewCmdKeys(f *cmdutil.Factory, runF func(*KeysOptions) error) *cobra.Command {
	opts := &KeysOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	var describe string
	cmd := &cobra.Command{
		Use:   "keys [KEY]",
		Short: "List the tag keys, or change one's description",
		Example: "  abctl tags keys\n" +
			"  abctl tags keys env --describe 'Deployment environment'",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key, opts.Describe = "", nil
			if len(args) == 1 {
				opts.Key = args[0]
			}
			if cmd.Flags().Changed("describe") {
				opts.Describe = &describe
			}
			return cmdutil.Run(cmd, opts, runF, runKeys)
		},
	}
	cmd.Flags().StringVar(&describe, "describe", "", "set the key's description (empty clears it)")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

// Validate checks that --describe comes with its key.
func (o *KeysOptions) Validate() error {
	if o.Describe != nil && o.Key == "" {
		return cmdutil.UsageErrorf("--describe needs the KEY to describe")
	}
	return nil
}

func runKeys(ctx context.Context, opts *KeysOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if opts.Describe != nil {
		k, err := c.Tags.UpdateKey(ctx, opts.Key, *opts.Describe)
		if err != nil {
			return fmt.Errorf("describe tag key %s: %w", opts.Key, err)
		}
		return printKeys(opts, []*client.TagKey{k})
	}
	keys, err := c.Tags.ListKeys(ctx)
	if err != nil {
		return fmt.Errorf("list the tag keys: %w", err)
	}
	if opts.Key != "" {
		var one []*client.TagKey
		for _, k := range keys {
			if k.Key == opts.Key {
				one = append(one, k)
			}
		}
		if len(one) == 0 {
			return fmt.Errorf("no tag key %q", opts.Key)
		}
		keys = one
	}
	return printKeys(opts, keys)
}

func printKeys(opts *KeysOptions, keys []*client.TagKey) error {
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
	return l.Print(opts.IO, opts.Now(), opts.Format)
}

// ValuesOptions are the inputs of `abctl tags values`.
type ValuesOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Key lists the values of this key only ("": all); Value, when not
	// nil, the one value of Key.
	Key   string
	Value *string
	// Create registers Key=Value; Color (when not nil) is the colour it
	// gets, or, without Create, the one it changes to.
	Create bool
	Color  *string
	Format printer.Format
}

// NewCmdValues returns `abctl tags values`. runF, when not nil, is called
// with the validated options instead of reading (or changing) the values.
func NewCmdValues(f *cmdutil.Factory, runF func(*ValuesOptions) error) *cobra.Command {
	opts := &ValuesOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	var color string
	cmd := &cobra.Command{
		Use:   "values [KEY [VALUE]]",
		Short: "List tag values; register one (--create) or recolour it (--color)",
		Example: "  abctl tags values\n" +
			"  abctl tags values env\n" +
			"  abctl tags values env prod --create --color green\n" +
			"  abctl tags values env prod --color red",
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key, opts.Value, opts.Color = "", nil, nil
			if len(args) > 0 {
				opts.Key = args[0]
			}
			if len(args) == 2 {
				opts.Value = &args[1]
			}
			if cmd.Flags().Changed("color") {
				opts.Color = &color
			}
			return cmdutil.Run(cmd, opts, runF, runValues)
		},
	}
	cmd.Flags().BoolVar(&opts.Create, "create", false, "register KEY VALUE before any agent uses it")
	cmd.Flags().StringVar(&color, "color", "", "palette colour: "+palette())
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

// recolor reports whether the command changes a value's colour.
func (o *ValuesOptions) recolor() bool { return o.Color != nil && !o.Create }

// color is the colour given, "" when none.
func (o *ValuesOptions) color() string {
	if o.Color == nil {
		return ""
	}
	return *o.Color
}

// Validate checks that --create and --color come with their value, and
// that the colour is one of the palette.
func (o *ValuesOptions) Validate() error {
	if (o.Create || o.recolor()) && o.Value == nil {
		return cmdutil.UsageErrorf("--create and --color need KEY and VALUE")
	}
	if c := o.color(); c != "" && !client.TagColor(c).IsKnown() {
		return cmdutil.UsageErrorf("--color %q is not a palette colour (%s)", c, palette())
	}
	return nil
}

func runValues(ctx context.Context, opts *ValuesOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	var values []*client.TagValue
	switch {
	case opts.Create:
		v, err := c.Tags.CreateValue(ctx, &client.TagValueCreateRequest{Key: opts.Key, Value: *opts.Value, Color: client.TagColor(opts.color())})
		if err != nil {
			return fmt.Errorf("create tag value %s=%s: %w", opts.Key, *opts.Value, err)
		}
		values = []*client.TagValue{v}
	case opts.recolor():
		v, err := c.Tags.UpdateValue(ctx, opts.Key, *opts.Value, client.TagColor(opts.color()))
		if err != nil {
			return fmt.Errorf("recolour tag value %s=%s: %w", opts.Key, *opts.Value, err)
		}
		values = []*client.TagValue{v}
	default:
		values, err = c.Tags.ListValues(ctx, opts.Key)
		if err != nil {
			return fmt.Errorf("list the tag values: %w", err)
		}
		if opts.Value != nil {
			var one []*client.TagValue
			for _, v := range values {
				if v.Value == *opts.Value {
					one = append(one, v)
				}
			}
			values = one
		}
	}
	return listing.TagValues(values).Print(opts.IO, opts.Now(), opts.Format)
}

// RenameOptions are the inputs of `abctl tags rename`.
type RenameOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	Key, Value, NewValue string
}

// NewCmdRename returns `abctl tags rename`. runF, when not nil, is called
// with the options instead of renaming.
func NewCmdRename(f *cmdutil.Factory, runF func(*RenameOptions) error) *cobra.Command {
	opts := &RenameOptions{IO: f.IO, Client: f.Client}
	return &cobra.Command{
		Use:     "rename KEY VALUE NEW_VALUE",
		Short:   "Rename a tag value on every agent that carries it",
		Example: "  abctl tags rename env staging preprod",
		Args:    cmdutil.ExactArgs(3, "KEY, VALUE and NEW_VALUE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key, opts.Value, opts.NewValue = args[0], args[1], args[2]
			return cmdutil.Run(cmd, opts, runF, runRename)
		},
	}
}

func runRename(ctx context.Context, opts *RenameOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	res, err := c.Tags.RenameValue(ctx, opts.Key, opts.Value, opts.NewValue)
	if err != nil {
		return fmt.Errorf("rename %s=%s: %w", opts.Key, opts.Value, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Renamed %s=%s to %s=%s on %d agent(s).\n", opts.Key, opts.Value, res.Key, res.Value, res.RenamedWorkflowCount)
	return nil
}

// DeleteOptions are the inputs of `abctl tags delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// Key is the key to delete, with all its values unless Value (not
	// nil) names the one to delete.
	Key   string
	Value *string
	Yes   bool
}

// NewCmdDelete returns `abctl tags delete`. runF, when not nil, is called
// with the validated options instead of deleting.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete KEY [VALUE]",
		Short: "Delete a tag key (and all its values) or one value, from every agent and run",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key, opts.Value = args[0], nil
			if len(args) == 2 {
				opts.Value = &args[1]
			}
			return cmdutil.Run(cmd, opts, runF, runDelete)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// what is what the command deletes, in words.
func (o *DeleteOptions) what() string {
	if o.Value != nil {
		return "tag value " + o.Key + "=" + *o.Value
	}
	return "tag key " + o.Key + " and every value of it"
}

// Validate checks that the deletion can be confirmed: --yes, or a terminal
// to ask on.
func (o *DeleteOptions) Validate() error {
	return cmdutil.CanConfirm(o.IO, o.Yes, "deleting "+o.what()+" removes it from every agent and run")
}

func runDelete(ctx context.Context, opts *DeleteOptions) error {
	what := opts.what()
	if !opts.Yes {
		if err := cmdutil.ConfirmOrStop(opts.IO, "Delete "+what+" from every agent and run?"); err != nil {
			return err
		}
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if opts.Value != nil {
		res, err := c.Tags.DeleteValue(ctx, opts.Key, *opts.Value)
		if err != nil {
			return fmt.Errorf("delete %s: %w", what, err)
		}
		fmt.Fprintf(opts.IO.ErrOut, "Deleted %s: removed from %d agent(s) and %d run(s).\n", what, res.RemovedFromWorkflowCount, res.RemovedFromRunCount)
		return nil
	}
	res, err := c.Tags.DeleteKey(ctx, opts.Key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", what, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Deleted %s: removed from %d agent(s) and %d run(s).\n", what, res.RemovedFromWorkflowCount, res.RemovedFromRunCount)
	return nil
}
