// Package diff is `abctl diff`: how a set of agent files differs from the
// service's agents, as a unified diff, with diff(1)'s exit statuses.
package diff

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/applier"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// DiffOptions are the inputs of `abctl diff`.
type DiffOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	Files cmdutil.FileFlags
}

// NewCmdDiff returns `abctl diff`. runF, when not nil, is called with the
// validated options instead of comparing.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "diff -f FILE_OR_DIR",
		Short: "Show how the agent files differ from the service's agents",
		Long: "diff prints, for each agent whose file differs from the agent on the service, a unified\n" +
			"diff of the two normalised definitions (the service's first, the file's second), with\n" +
			"the tags the file sets as comments at the top. An agent that does not exist yet shows\n" +
			"as entirely added.\n\n" +
			"The files are checked as apply checks them: warnings (--validate) go to stderr, so that\n" +
			"stdout holds only the diff.\n\n" +
			"Exit status, as diff(1): 0 no differences, 1 differences, 2 or more an error.",
		Example: "  abctl diff -f agents/ -R           # in review: what merging would change",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return cmdutil.DiffError(err)
			}
			if runF != nil {
				return runF(opts)
			}
			return runDiff(cmd.Context(), opts)
		},
	}
	opts.Files.Add(cmd)
	opts.Files.AddValidate(cmd)
	return cmd
}

// Validate checks the options before anything is read: the files must be
// given.
func (o *DiffOptions) Validate() error {
	return o.Files.Require()
}

// runDiff writes the differences. Its errors exit with 2 or more
// (cmdutil.DiffError); differences are Silent(1).
func runDiff(ctx context.Context, opts *DiffOptions) error {
	agents, err := opts.Files.Load(opts.IO.In, opts.IO.ErrOut)
	if err != nil {
		return cmdutil.DiffError(err)
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return cmdutil.DiffError(err)
	}
	ap, err := applier.New(ctx, c, applier.Prefetch(agents))
	if err != nil {
		return cmdutil.DiffError(err)
	}
	var b strings.Builder
	differ := false
	for _, fa := range agents {
		action, have, want, err := ap.Plan(ctx, fa)
		if err != nil {
			return cmdutil.DiffError(fmt.Errorf("agent/%s: %w", fa.Name, err))
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
	if _, err := io.WriteString(opts.IO.Out, b.String()); err != nil {
		return cmdutil.DiffError(err)
	}
	if differ {
		return cmdutil.Silent(1)
	}
	return nil
}
