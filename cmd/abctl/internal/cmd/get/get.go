// Package get is `abctl get`: list or show agents, runs, folders and tags in
// the format -o asks for.
//
// `abctl get agent NAME -o yaml` writes the agent file that `abctl apply`
// reads back as unchanged: the way to bring an agent made elsewhere (the
// hosted service's editor, the API) into a repository.
package get

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmd returns `abctl get`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
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
	cmd.AddCommand(newAgentsCmd(f), newRunsCmd(f), newFoldersCmd(f), newTagsCmd(f))
	cmd.ValidArgsFunction = completion.Kinds // agent, run... beside agents, runs...
	return cmd
}

func newAgentsCmd(f *cmdutil.Factory) *cobra.Command {
	var (
		output, search, folder string
		status, tags           []string
		limit, version         int
	)
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
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			if limit < 0 {
				return cmdutil.Usagef(cmd, "--limit must be 0 (all) or more, not %d", limit)
			}
			if version != 0 && len(args) == 0 {
				return cmdutil.Usagef(cmd, "--version needs an agent name or id")
			}
			if folder, err = resource.Folder.Arg(cmd, folder); err != nil {
				return err
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			var agents []*client.Agent
			if len(args) > 0 {
				for _, ref := range args {
					a, err := getAgent(cmd, c, ref, version)
					if err != nil {
						return err
					}
					agents = append(agents, a)
				}
			} else {
				opts := &client.ListAgentsOptions{SearchKey: search, FolderID: folder, Tags: tags, PageSize: 100}
				for _, s := range status {
					opts.Status = append(opts.Status, client.AgentStatus(s))
				}
				if limit > 0 && limit < 100 {
					opts.PageSize = limit
				}
				for a, err := range c.Agents.All(cmd.Context(), opts) {
					if err != nil {
						return fmt.Errorf("list the agents: %w", err)
					}
					agents = append(agents, a)
					if limit > 0 && len(agents) == limit {
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
				tags, err = agentref.Tags(cmd.Context(), c, ids)
				if err != nil && format == printer.YAML && !agentref.TagsRefused(err) {
					return fmt.Errorf("read the agents' tags: %w", err)
				}
			}
			return printAgents(f, format, agents, tags, len(args) == 1)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&search, "search", "", "only agents whose title, folder, id or parameters contain this text")
	fl.StringVar(&folder, "folder", "", "only the agents of this folder (fld_...)")
	fl.StringArrayVar(&tags, "tag", nil, "only agents with this tag: label, key:value or key:* (repeatable: all must match)")
	fl.StringArrayVar(&status, "status", nil, "only agents of this status: published, draft, auto_generated, import_failed (repeatable)")
	fl.IntVar(&limit, "limit", 0, "at most this many agents (0: all)")
	fl.IntVar(&version, "version", 0, "show this version instead of the latest")
	printer.AddFlag(cmd, &output, printer.AllFormats...)
	return cmd
}

func getAgent(cmd *cobra.Command, c *client.Client, ref string, version int) (*client.Agent, error) {
	if version == 0 {
		return agentref.Get(cmd.Context(), c, ref)
	}
	id, err := agentref.Resolve(cmd.Context(), c, ref)
	if err != nil {
		return nil, err
	}
	a, err := c.Agents.Get(cmd.Context(), id, &client.GetAgentOptions{Version: version})
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
func printAgents(f *cmdutil.Factory, format printer.Format, agents []*client.Agent, tags map[string][]client.TagItem, single bool) error {
	names := agentref.NamesIn(tags)
	if format == printer.YAML {
		// Agent files, not the API's JSON as YAML: they apply back as they are.
		var b strings.Builder
		for i, a := range agents {
			doc, err := agentfile.Render(a, names[a.WorkflowPermanentID], fileTags(f, a, names, tags[a.WorkflowPermanentID]), "yaml")
			if err != nil {
				return fmt.Errorf("render agent %s: %w", a.WorkflowPermanentID, err)
			}
			if i > 0 {
				b.WriteString("---\n")
			}
			b.Write(doc)
		}
		_, err := fmt.Fprint(f.IO.Out, b.String())
		return err
	}
	wide := format == printer.Wide
	// NAME is the name an agent was applied under, or its id: ids of
	// applied agents are 69 characters long, too long for a terminal.
	records := make([]namedAgent, len(agents))
	for i, a := range agents {
		records[i] = namedAgent{Name: names[a.WorkflowPermanentID], Agent: a}
	}
	l := printer.Listing{Value: one(records, single), Headers: []string{"name", "title", "version", "status", "updated"}}
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
	return l.Print(f.IO, f.Now(), format)
}

// fileTags returns the tags of agent a that its file carries: the key: value
// tags a file can hold. The service's and abctl's own (abctl.name) stay out
// silently; a label, or a value a file cannot hold, with a warning, since
// the file then says less than the agent carries (apply leaves such tags as
// they are).
func fileTags(f *cmdutil.Factory, a *client.Agent, names map[string]string, items []client.TagItem) map[string]string {
	var out map[string]string
	who := func() string {
		if n := names[a.WorkflowPermanentID]; n != "" {
			return resource.Agent.Name(n)
		}
		return resource.Agent.Name(a.WorkflowPermanentID)
	}
	for _, t := range items {
		switch {
		case t.Key == nil:
			fmt.Fprintf(f.IO.ErrOut, "%s: label %q is not in the file: agent files hold key: value tags only\n", who(), t.Value)
		case agentfile.ReservedTagKey(*t.Key):
		case agentfile.TagProblem(*t.Key, t.Value) != "":
			fmt.Fprintf(f.IO.ErrOut, "%s: tag %s=%s is not in the file: %s\n", who(), *t.Key, t.Value, agentfile.TagProblem(*t.Key, t.Value))
		default:
			if out == nil {
				out = map[string]string{}
			}
			out[*t.Key] = t.Value
		}
	}
	return out
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
