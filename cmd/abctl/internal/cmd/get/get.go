// Package get is `abctl get`: list or show agents, runs, folders and tags in
// the format -o asks for.
//
// `abctl get agent NAME -o yaml` writes the agent file that `abctl apply`
// reads back as unchanged: the way to bring an agent made elsewhere (the
// hosted service's editor, the API) into a repository.
package get

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmdGet returns `abctl get`.
func NewCmdGet(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Show agents, runs, folders or tags",
		Long: "get lists a kind of resource, or shows one by its id (or, for agents, its name), as a\n" +
			"table (-o wide adds columns), JSON, YAML, or kind/id names for scripts.",
		Example: "  abctl get agents --search contact\n" +
			"  abctl get agent contact-form -o yaml > agents/contact-form.yaml\n" +
			"  abctl get runs --status failed -o json\n" +
			"  abctl get run wr_490440779503358000",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdAgents(f, nil), NewCmdRuns(f, nil), NewCmdFolders(f, nil), NewCmdTags(f, nil))
	cmd.ValidArgsFunction = completion.Kinds // agent, run... beside agents, runs...
	return cmd
}

// AgentsOptions are the inputs of `abctl get agents`.
type AgentsOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Refs are the agents to show, by name or id; none lists them.
	Refs   []string
	Format printer.Format
	// Search, Folder (fld_..., or folder/ID), Tags and Status filter the
	// list.
	Search, Folder string
	Tags, Status   []string
	// Limit bounds the list; 0 means all.
	Limit int
	// Version shows this version of the agents of Refs instead of the
	// latest; 0 means the latest.
	Version int
}

// NewCmdAgents returns `abctl get agents`. runF, when not nil, is called
// with the validated options instead of reading the agents.
func NewCmdAgents(f *cmdutil.Factory, runF func(*AgentsOptions) error) *cobra.Command {
	opts := &AgentsOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "agents [NAME_OR_ID...]",
		Aliases: []string{"agent"},
		Short:   "List agents, or show some by name or id",
		Long: "Without arguments, lists the latest version of each agent, most recently changed first.\n" +
			"With names or ids (or agent/NAME, as -o name prints), shows those agents.\n\n" +
			"-o yaml writes agent files that 'abctl apply' reads back as unchanged: the name (or the\n" +
			"id of an agent made elsewhere), the tags and the definition. -o json writes the\n" +
			"service's records, each with its name.",
		Example: "  abctl get agents --tag env:prod --limit 20\n" +
			"  abctl get agent contact-form -o yaml\n" +
			"  abctl get agent wpid_490440779503358000 --version 2 -o json",
		ValidArgsFunction: completion.Agents(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return cmdutil.Run(cmd, opts, runF, runAgents)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Search, "search", "", "only agents whose title, folder, id or parameters contain this text")
	fl.StringVar(&opts.Folder, "folder", "", "only the agents of this folder (fld_...)")
	fl.StringArrayVar(&opts.Tags, "tag", nil, "only agents with this tag: label, key:value or key:* (repeatable: all must match)")
	fl.StringArrayVar(&opts.Status, "status", nil, "only agents of this status: published, draft, auto_generated, import_failed (repeatable)")
	fl.IntVar(&opts.Limit, "limit", 0, "at most this many agents (0: all)")
	fl.IntVar(&opts.Version, "version", 0, "show this version instead of the latest")
	printer.AddFlag(cmd, &opts.Format, printer.AllFormats...)
	return cmd
}

// Validate checks the flags and reads the folder's id.
func (o *AgentsOptions) Validate() error {
	if err := listing.CheckLimit(o.Limit); err != nil {
		return err
	}
	if o.Version != 0 && len(o.Refs) == 0 {
		return cmdutil.UsageErrorf("--version needs an agent name or id")
	}
	folder, err := resource.Folder.ID(o.Folder)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.Folder = folder
	return nil
}

func runAgents(ctx context.Context, opts *AgentsOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	var agents []*client.Agent
	if len(opts.Refs) > 0 {
		for _, ref := range opts.Refs {
			a, err := getAgent(ctx, c, ref, opts.Version)
			if err != nil {
				return err
			}
			agents = append(agents, a)
		}
	} else {
		lo := &client.ListAgentsOptions{SearchKey: opts.Search, FolderID: opts.Folder, Tags: opts.Tags, PageSize: 100}
		for _, s := range opts.Status {
			lo.Status = append(lo.Status, client.AgentStatus(s))
		}
		if opts.Limit > 0 && opts.Limit < 100 {
			lo.PageSize = opts.Limit
		}
		for a, err := range c.Agents.All(ctx, lo) {
			if err != nil {
				return fmt.Errorf("list the agents: %w", err)
			}
			agents = append(agents, a)
			if opts.Limit > 0 && len(agents) == opts.Limit {
				break
			}
		}
	}
	ids := make([]string, len(agents))
	for i, a := range agents {
		ids[i] = a.WorkflowPermanentID
	}
	var tags map[string][]client.TagItem
	if len(ids) > 0 {
		// Names (abctl.name) in every format; the agent files of
		// -o yaml carry the tags too, so they must be complete.
		tags, err = agentref.Tags(ctx, c, ids)
		if err != nil && opts.Format == printer.YAML && !agentref.TagsRefused(err) {
			return fmt.Errorf("read the agents' tags: %w", err)
		}
	}
	return printAgents(opts, agents, tags, len(opts.Refs) == 1)
}

func getAgent(ctx context.Context, c *client.Client, ref string, version int) (*client.Agent, error) {
	if version == 0 {
		return agentref.Get(ctx, c, ref)
	}
	id, err := agentref.Resolve(ctx, c, ref)
	if err != nil {
		return nil, err
	}
	a, err := c.Agents.Get(ctx, id, &client.GetAgentOptions{Version: version})
	if err != nil {
		return nil, fmt.Errorf("get version %d of %s: %w", version, ref, err)
	}
	return a, nil
}

// namedAgent is an agent as -o json writes it: the service's record, after
// the name it was applied under (its agent file's identity), when it has one.
type namedAgent struct {
	Name string `json:"name,omitempty"`
	*client.Agent
}

// printAgents writes agents in format, with the tags of each (names come
// from their abctl.name tags). YAML is a stream of agent files, one
// document per agent, that apply reads back as unchanged: name (or id),
// tags and definition.
func printAgents(opts *AgentsOptions, agents []*client.Agent, tags map[string][]client.TagItem, single bool) error {
	format := opts.Format
	names := agentref.NamesIn(tags)
	if format == printer.YAML {
		// Agent files, not the API's JSON as YAML: they apply back as they are.
		var b strings.Builder
		for i, a := range agents {
			doc, left, err := agentfile.RenderTagged(a, tags[a.WorkflowPermanentID], "yaml")
			if err != nil {
				return fmt.Errorf("render agent %s: %w", a.WorkflowPermanentID, err)
			}
			warnLeftOut(opts.IO.ErrOut, a, names, left)
			if i > 0 {
				b.WriteString("---\n")
			}
			b.Write(doc)
		}
		_, err := fmt.Fprint(opts.IO.Out, b.String())
		return err
	}
	wide := format == printer.Wide
	// NAME is the name an agent was applied under, or its id: ids of
	// applied agents are 69 characters long, too long for a terminal.
	records := make([]namedAgent, len(agents))
	for i, a := range agents {
		records[i] = namedAgent{Name: names[a.WorkflowPermanentID], Agent: a}
	}
	l := printer.Listing{Value: listing.One(records, single), Headers: []string{"name", "title", "version", "status", "updated"}}
	if wide {
		l.Headers = append(l.Headers, "id", "folder", "blocks", "parameters")
	}
	name := func(a *client.Agent) string {
		if n := names[a.WorkflowPermanentID]; n != "" {
			return n
		}
		return a.WorkflowPermanentID
	}
	for _, a := range agents {
		l.Names = append(l.Names, resource.Agent.Name(name(a)))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, a := range agents {
			row := []string{name(a), a.Title, fmt.Sprint(a.Version), string(a.Status), t.Time(a.ModifiedAt.Time)}
			if wide {
				var params []string
				for _, p := range a.WorkflowDefinition.Parameters {
					if p.ParameterType == client.ParameterTypeWorkflow {
						params = append(params, p.Key)
					}
				}
				row = append(row, a.WorkflowPermanentID, deref(a.FolderID), fmt.Sprint(countBlocks(a.WorkflowDefinition.Blocks)), strings.Join(params, ","))
			}
			t.AddRow(row...)
		}
	}
	return l.Print(opts.IO, opts.Now(), format)
}

// warnLeftOut tells of the tags of agent a that its file leaves out (a
// label, or a value a file cannot hold): the file then says less than the
// agent carries, and apply leaves such tags as they are.
func warnLeftOut(warn io.Writer, a *client.Agent, names map[string]string, left []agentfile.LeftOutTag) {
	who := resource.Agent.Name(a.WorkflowPermanentID)
	if n := names[a.WorkflowPermanentID]; n != "" {
		who = resource.Agent.Name(n)
	}
	for _, l := range left {
		if l.Tag.Key == nil {
			fmt.Fprintf(warn, "%s: label %q is not in the file: %s\n", who, l.Tag.Value, l.Why)
		} else {
			fmt.Fprintf(warn, "%s: tag %s=%s is not in the file: %s\n", who, *l.Tag.Key, l.Tag.Value, l.Why)
		}
	}
}

func countBlocks(bs client.Blocks) int {
	n := 0
	for _, b := range bs {
		n++
		switch lb := b.(type) {
		case *client.ForLoopBlock:
			n += countBlocks(lb.LoopBlocks)
		case *client.WhileLoopBlock:
			n += countBlocks(lb.LoopBlocks)
		}
	}
	return n
}
