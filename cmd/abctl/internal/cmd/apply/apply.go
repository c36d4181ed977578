// Package apply is `abctl apply` and `abctl diff`: keep the service's agents
// in step with a set of agent files (a GitOps repository).
package apply

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/applier"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

// FileFlags are -f and -R, shared by apply, diff, delete and run.
type FileFlags struct {
	Files     []string
	Recursive bool
}

// Add adds -f and -R to cmd.
func (ff *FileFlags) Add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&ff.Files, "filename", "f", nil, "agent file (YAML or JSON), directory, or - for stdin (repeatable)")
	cmd.Flags().BoolVarP(&ff.Recursive, "recursive", "R", false, "read the directories given with -f and their subdirectories")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
}

// Load reads the files; problems in them are a usage error (exit 2) that
// lists every one with its file and line.
func (ff *FileFlags) Load(cmd *cobra.Command, in io.Reader) ([]*agentfile.Agent, error) {
	if len(ff.Files) == 0 {
		return nil, cmdutil.Usagef(cmd, "give the agent files with -f FILE, -f DIR (with -R for subdirectories) or -f - (stdin)")
	}
	agents, err := agentfile.Load(ff.Files, agentfile.LoadOptions{Recursive: ff.Recursive, Stdin: in})
	if err != nil {
		return nil, &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: err}
	}
	if len(agents) == 0 {
		return nil, &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: fmt.Errorf("no agent files in %s", strings.Join(ff.Files, ", "))}
	}
	return agents, nil
}

// NewCmd returns `abctl apply`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	var ff FileFlags
	var dryRun, prune, yes bool
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
			"--prune also deletes the agents applied earlier (tagged abctl.name) whose names are\n" +
			"not in these files: give it the whole set. It asks first on a terminal; elsewhere it\n" +
			"needs --yes.",
		Example: "  abctl apply -f agents/ -R\n" +
			"  abctl apply -f contact-form.yaml --dry-run\n" +
			"  abctl apply -f agents/ -R --prune --yes     # in CI, on merge",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			agents, err := ff.Load(cmd, f.IO.In)
			if err != nil {
				return err
			}
			if prune && !yes && !dryRun && !f.IO.CanPrompt() {
				return cmdutil.Usagef(cmd, "--prune deletes agents: add --yes when no terminal can confirm")
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			ap, err := applier.New(cmd.Context(), c)
			if err != nil {
				return err
			}
			suffix := ""
			if dryRun {
				suffix = " (dry run)"
			}
			failed := 0
			names := map[string]bool{}
			for _, fa := range agents {
				names[fa.Name] = true
				res := ap.Apply(cmd.Context(), fa, dryRun)
				if res.Err != nil {
					failed++
					fmt.Fprintf(f.IO.ErrOut, "agent/%s (%s:%d): %v\n", fa.Name, fa.File, fa.Line, res.Err)
					continue
				}
				fmt.Fprintf(f.IO.Out, "agent/%s %s%s\n", res.Name, res.Action, suffix)
			}
			if ap.TagsRefused {
				fmt.Fprintln(f.IO.ErrOut, "abctl: warning: the service refused to tag the agents, so they carry no abctl.name tag: 'get' shows no names and --prune cannot find them")
			}
			if prune {
				n, err := pruneOrphans(cmd, f, ap, names, dryRun, yes, suffix)
				if err != nil {
					return err
				}
				failed += n
			}
			if failed > 0 {
				return &cmdutil.CodeError{Code: cmdutil.ExitError, Err: fmt.Errorf("%d agent(s) could not be applied", failed)}
			}
			return nil
		},
	}
	ff.Add(cmd)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "only say what would be done")
	cmd.Flags().BoolVar(&prune, "prune", false, "delete the agents applied earlier whose names are not in these files")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask before pruning")
	return cmd
}

// pruneOrphans deletes (or lists, on a dry run) the applied agents whose
// files are gone; it returns how many could not be deleted.
func pruneOrphans(cmd *cobra.Command, f *cmdutil.Factory, ap *applier.Applier, names map[string]bool, dryRun, yes bool, suffix string) (int, error) {
	orphans := ap.Orphans(names)
	if len(orphans) == 0 {
		return 0, nil
	}
	if !dryRun && !yes {
		list := make([]string, len(orphans))
		for i, o := range orphans {
			list[i] = o.Name
		}
		ok, err := cmdutil.Confirm(f.IO, fmt.Sprintf("Delete %d agent(s) no longer in the files: %s?", len(orphans), strings.Join(list, ", ")))
		if err != nil {
			return 0, err
		}
		if !ok {
			fmt.Fprintln(f.IO.ErrOut, "Nothing pruned.")
			return 0, nil
		}
	}
	failed := 0
	for _, o := range orphans {
		if !dryRun {
			o = ap.Prune(cmd.Context(), o)
		}
		if o.Err != nil {
			failed++
			fmt.Fprintf(f.IO.ErrOut, "agent/%s: %v\n", o.Name, o.Err)
			continue
		}
		fmt.Fprintf(f.IO.Out, "agent/%s pruned%s\n", o.Name, suffix)
	}
	return failed, nil
}

// NewDiffCmd returns `abctl diff`.
func NewDiffCmd(f *cmdutil.Factory) *cobra.Command {
	var ff FileFlags
	cmd := &cobra.Command{
		Use:   "diff -f FILE_OR_DIR",
		Short: "Show how the agent files differ from the service's agents",
		Long: "diff prints, for each agent whose file differs from the agent on the service, a unified\n" +
			"diff of the two normalised definitions (the service's first, the file's second), with\n" +
			"the tags the file sets as comments at the top. An agent that does not exist yet shows\n" +
			"as entirely added.\n\n" +
			"Exit status, as diff(1): 0 no differences, 1 differences, 2 or more an error.",
		Example: "  abctl diff -f agents/ -R           # in review: what merging would change",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			agents, err := ff.Load(cmd, f.IO.In)
			if err != nil {
				return diffError(err)
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return diffError(err)
			}
			ap, err := applier.New(cmd.Context(), c)
			if err != nil {
				return diffError(err)
			}
			var b strings.Builder
			differ := false
			for _, fa := range agents {
				action, have, want, err := ap.Plan(fa)
				if err != nil {
					return diffError(fmt.Errorf("agent/%s: %w", fa.Name, err))
				}
				if action == applier.Unchanged {
					continue
				}
				differ = true
				from := "agent/" + fa.Name + " (service)"
				if have == nil {
					from = "/dev/null"
				}
				b.WriteString(agentfile.Diff(from, fmt.Sprintf("agent/%s (%s)", fa.Name, fa.File), have, want))
			}
			if _, err := io.WriteString(f.IO.Out, b.String()); err != nil {
				return diffError(err)
			}
			if differ {
				return cmdutil.Silent(1)
			}
			return nil
		},
	}
	ff.Add(cmd)
	return cmd
}

// diffError makes every error of diff exit with 2 or more, since 1 means
// "differences": errors that already exit with 2 or more (usage, agent
// files, a refused key) keep their status and message.
func diffError(err error) error {
	var ce *cmdutil.CodeError
	var ue *cmdutil.UsageError
	var nk *cmdutil.NoKeyError
	var api *client.Error
	switch {
	case errors.As(err, &ce) && ce.Code >= 2, errors.As(err, &ue), errors.As(err, &nk):
		return err
	case errors.As(err, &api) && (api.StatusCode == 401 || api.StatusCode == 403):
		return err
	}
	return &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: err}
}
