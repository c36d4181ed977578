// Package deletecmd is `abctl delete`: delete agents named on the command
// line or defined in agent files.
package deletecmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// DeleteOptions are the inputs of `abctl delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// Args are the positional arguments: "agent" (or "agents") and agent
	// names or ids, or agent/NAME references alone.
	Args          []string
	Files         cmdutil.FileFlags
	Yes           bool
	IgnoreMissing bool

	// Refs are the agents named on the command line, which Validate reads
	// from Args.
	Refs []string
}

// NewCmdDelete returns `abctl delete`. runF, when not nil, is called with
// the validated options instead of deleting.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IO, Client: f.Client}
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
			opts.Args = args
			return cmdutil.Run(cmd, opts, runF, runDelete)
		},
	}
	opts.Files.Add(cmd)
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(&opts.IgnoreMissing, "ignore-not-found", false, "an agent that does not exist is not an error")
	return cmd
}

// Validate reads the agents named in Args into Refs: after the word
// "agent" or "agents", or alone in the agent/NAME form that -o name
// prints. Whether anything at all is to be deleted is known once the files
// of -f are read.
func (o *DeleteOptions) Validate() error {
	o.Refs = nil
	if len(o.Args) == 0 {
		return nil
	}
	if o.Args[0] == "agent" || o.Args[0] == "agents" {
		o.Refs = o.Args[1:]
		return nil
	}
	switch id, err := resource.Agent.ID(o.Args[0]); {
	case err != nil:
		return cmdutil.UsageErrorf("%v", err)
	case id == o.Args[0]:
		return cmdutil.UsageErrorf("say what to delete: 'abctl delete agent NAME', or -f FILE")
	}
	o.Refs = o.Args
	return nil
}

func runDelete(ctx context.Context, opts *DeleteOptions) error {
	refs := opts.Refs
	loaded, err := opts.Files.Read(opts.IO.In, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	for _, a := range loaded {
		refs = append(refs, a.Name)
	}
	if len(refs) == 0 {
		return cmdutil.UsageErrorf("name the agents to delete, or give -f FILE")
	}
	if !opts.Yes {
		if !opts.IO.CanPrompt() {
			return cmdutil.UsageErrorf("delete needs --yes when it cannot ask on a terminal")
		}
		if err := cmdutil.ConfirmOrStop(opts.IO, fmt.Sprintf("Delete %d agent(s): %s?", len(refs), strings.Join(refs, ", "))); err != nil {
			return err
		}
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	failed := false
	for _, ref := range refs {
		if err := deleteOne(ctx, opts, c, ref); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "%s: %v\n", shown(ref), err)
			failed = true
		}
	}
	if failed {
		return cmdutil.Silent(cmdutil.ExitError)
	}
	return nil
}

func deleteOne(ctx context.Context, opts *DeleteOptions, c *client.Client, ref string) error {
	a, err := agentref.Get(ctx, c, ref)
	if errors.Is(err, agentref.ErrNotFound) && opts.IgnoreMissing {
		return nil
	}
	if err != nil {
		return err
	}
	if err := c.Agents.Delete(ctx, a.WorkflowPermanentID); err != nil {
		return fmt.Errorf("delete %s: %w", a.WorkflowPermanentID, err)
	}
	fmt.Fprintf(opts.IO.Out, "%s deleted\n", shown(ref))
	return nil
}

// shown is an agent reference as messages show it: agent/NAME.
func shown(ref string) string {
	if id, err := resource.Agent.ID(ref); err == nil {
		ref = id
	}
	return resource.Agent.Name(ref)
}
