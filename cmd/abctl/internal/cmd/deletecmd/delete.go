// Package deletecmd is `abctl delete`: delete agents named on the command
// line or defined in agent files.
package deletecmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmd returns `abctl delete`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var files []string
	var recursive, yes, ignoreMissing bool
	cmd := &cobra.Command{
		Use:   "delete [agent NAME_OR_ID...] [-f FILE_OR_DIR]",
		Short: "Delete agents, by name, id, or the files that define them",
		Long: "delete removes agents: those named as arguments (after the word 'agent' or 'agents'),\n" +
			"and those defined in the agent files given with -f. A deleted agent keeps its runs and\n" +
			"versions, and applying its file again brings it back under the same id.\n\n" +
			"It asks first on a terminal; elsewhere it needs --yes.",
		Example: "  abctl delete agent contact-form\n" +
			"  abctl delete -f agents/old/ -R --yes",
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []string{"agent", "agents"}, cobra.ShellCompDirectiveNoFileComp
			}
			if args[0] == "agent" || args[0] == "agents" {
				return completion.Agents(f)(cmd, args[1:], toComplete)
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var refs []string
			if len(args) > 0 {
				if args[0] != "agent" && args[0] != "agents" {
					// agent/NAME, as -o name prints it.
					switch id, err := resource.Agent.ID(args[0]); {
					case err != nil:
						return cmdutil.Usagef(cmd, "%v", err)
					case id == args[0]:
						return cmdutil.Usagef(cmd, "say what to delete: 'abctl delete agent NAME', or -f FILE")
					}
					refs = args
				} else {
					refs = args[1:]
				}
			}
			var loaded []*agentfile.Agent
			if len(files) > 0 {
				var err error
				loaded, err = agentfile.Load(files, agentfile.LoadOptions{Recursive: recursive, Stdin: f.IO.In})
				if err != nil {
					return &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: err}
				}
				for _, a := range loaded {
					refs = append(refs, a.Name)
				}
			}
			if len(refs) == 0 {
				return cmdutil.Usagef(cmd, "name the agents to delete, or give -f FILE")
			}
			if !yes {
				if !f.IO.CanPrompt() {
					return cmdutil.Usagef(cmd, "delete needs --yes when it cannot ask on a terminal")
				}
				ok, err := cmdutil.Confirm(f.IO, fmt.Sprintf("Delete %d agent(s): %s?", len(refs), strings.Join(refs, ", ")))
				if err != nil || !ok {
					return cmdutil.Silent(cmdutil.ExitError)
				}
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			failed := false
			for _, ref := range refs {
				if err := deleteOne(cmd, f, c, ref, ignoreMissing); err != nil {
					fmt.Fprintf(f.IO.ErrOut, "%s: %v\n", shown(ref), err)
					failed = true
				}
			}
			if failed {
				return cmdutil.Silent(cmdutil.ExitError)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&files, "filename", "f", nil, "agent file, directory, or - for stdin (repeatable)")
	fl.BoolVarP(&recursive, "recursive", "R", false, "read the directories given with -f recursively")
	fl.BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	fl.BoolVar(&ignoreMissing, "ignore-not-found", false, "an agent that does not exist is not an error")
	return cmd
}

func deleteOne(cmd *cobra.Command, f *cmdutil.Factory, c *client.Client, ref string, ignoreMissing bool) error {
	a, err := agentref.Get(cmd.Context(), c, ref)
	if errors.Is(err, agentref.ErrNotFound) && ignoreMissing {
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.Agents.Delete(cmd.Context(), a.WorkflowPermanentID); err != nil {
		return fmt.Errorf("delete %s: %w", a.WorkflowPermanentID, err)
	}
	fmt.Fprintf(f.IO.Out, "%s deleted\n", shown(ref))
	return nil
}

// shown is an agent reference as messages show it: agent/NAME.
func shown(ref string) string {
	if id, err := resource.Agent.ID(ref); err == nil {
		ref = id
	}
	return resource.Agent.Name(ref)
}
