// Package apply is `abctl apply`: make the service's agents match a set of
// agent files (a GitOps repository), creating, updating and, with --prune,
// deleting agents.
package apply

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/applier"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// ApplyOptions are the inputs of `abctl apply`.
type ApplyOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	Files  cmdutil.FileFlags
	DryRun bool
	Prune  bool
	Yes    bool
}

// NewCmdApply returns `abctl apply`. runF, when not nil, is called with
// the validated options instead of applying.
func NewCmdApply(f *cmdutil.Factory, runF func(*ApplyOptions) error) *cobra.Command {
	opts := &ApplyOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "apply -f FILE_OR_DIR",
		Short: "Create or update agents from agent files",
		Long: "apply makes the service's agents match the agent files: it creates the agents that do\n" +
			"not exist, updates those whose definition or tags differ (a new version), and leaves\n" +
			"the others untouched (no new version). It prints one line per agent on stdout:\n" +
			"agent/<name> created, configured or unchanged.\n\n" +
			"An agent's identity is its name: the file's `name:`, or the file's name without its\n" +
			"extension. The service derives the agent's id from it, so the same file always\n" +
			"updates the same agent, from any machine, with no state file.\n\n" +
			"Every file is checked before anything is sent; problems are listed with their file\n" +
			"and line, and nothing is applied (exit status 2). An agent the service rejects is\n" +
			"reported and the others are still applied (exit status 1).\n\n" +
			"What the service accepts but abctl does not know (a key the service ignores, a block\n" +
			"type newer than abctl, a {{ reference }} to a name the agent does not define) is a\n" +
			"warning on stderr by default; --validate=strict makes it an error, --validate=ignore\n" +
			"says nothing. A key or block type close to a known one is taken for a typo: an error\n" +
			"with \"did you mean\", but with --validate=ignore.\n\n" +
			"--prune also deletes the agents applied earlier (tagged abctl.name) whose names are\n" +
			"not in these files: give it the whole set. It asks first on a terminal; elsewhere it\n" +
			"needs --yes.",
		Example: "  abctl apply -f agents/ -R\n" +
			"  abctl apply -f contact-form.yaml --dry-run\n" +
			"  abctl apply -f agents/ -R --validate=strict   # in CI: no warnings either\n" +
			"  abctl apply -f agents/ -R --prune --yes     # in CI, on merge",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd, opts, runF, runApply)
		},
	}
	opts.Files.Add(cmd)
	opts.Files.AddValidate(cmd)
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "only say what would be done")
	cmd.Flags().BoolVar(&opts.Prune, "prune", false, "delete the agents applied earlier whose names are not in these files")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask before pruning")
	return cmd
}

// Validate checks the options before anything is read: the files must be
// given. Whether --prune may go without --yes depends on the terminal, and
// is checked once the files are read.
func (o *ApplyOptions) Validate() error {
	return o.Files.Require()
}

func runApply(ctx context.Context, opts *ApplyOptions) error {
	agents, err := opts.Files.Load(opts.IO.In, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	if opts.Prune && !opts.Yes && !opts.DryRun && !opts.IO.CanPrompt() {
		return cmdutil.UsageErrorf("--prune deletes agents: add --yes when no terminal can confirm")
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	// Each file's agent is looked up, a number of requests that does not
	// grow with the organization; --prune must know every agent.
	read := applier.Prefetch(agents)
	if opts.Prune {
		read = applier.ReadAll()
	}
	ap, err := applier.New(ctx, c, read)
	if err != nil {
		return err
	}
	suffix := ""
	if opts.DryRun {
		suffix = " (dry run)"
	}
	failed := 0
	names := map[string]bool{}
	for _, fa := range agents {
		names[fa.Name] = true
		res := ap.Apply(ctx, fa, opts.DryRun)
		if res.Err != nil {
			failed++
			fmt.Fprintf(opts.IO.ErrOut, "agent/%s (%s:%d): %v\n", fa.Name, fa.File, fa.Line, res.Err)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "agent/%s %s%s\n", res.Name, res.Action, suffix)
	}
	if ap.TagsRefused {
		fmt.Fprintln(opts.IO.ErrOut, "abctl: warning: the service refused to tag the agents, so they carry no abctl.name tag: 'get' shows no names and --prune cannot find them")
	}
	if opts.Prune {
		n, err := pruneOrphans(ctx, opts, ap, names, suffix)
		if err != nil {
			return err
		}
		failed += n
	}
	if failed > 0 {
		return &cmdutil.CodeError{Code: cmdutil.ExitError, Err: fmt.Errorf("%d agent(s) could not be applied", failed)}
	}
	return nil
}

// pruneOrphans deletes (or lists, on a dry run) the applied agents whose
// files are gone; it returns how many could not be deleted.
func pruneOrphans(ctx context.Context, opts *ApplyOptions, ap *applier.Applier, names map[string]bool, suffix string) (int, error) {
	orphans, err := ap.Orphans(ctx, names)
	if err != nil {
		return 0, err
	}
	if len(orphans) == 0 {
		return 0, nil
	}
	if !opts.DryRun && !opts.Yes {
		list := make([]string, len(orphans))
		for i, o := range orphans {
			list[i] = o.Name
		}
		ok, err := cmdutil.Confirm(opts.IO, fmt.Sprintf("Delete %d agent(s) no longer in the files: %s?", len(orphans), strings.Join(list, ", ")))
		if err != nil {
			return 0, err
		}
		if !ok {
			fmt.Fprintln(opts.IO.ErrOut, "Nothing pruned.")
			return 0, nil
		}
	}
	failed := 0
	for _, o := range orphans {
		if !opts.DryRun {
			o = ap.Prune(ctx, o)
		}
		if o.Err != nil {
			failed++
			fmt.Fprintf(opts.IO.ErrOut, "agent/%s: %v\n", o.Name, o.Err)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "agent/%s pruned%s\n", o.Name, suffix)
	}
	return failed, nil
}
