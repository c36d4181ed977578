package listing

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// GetOptions are the inputs of a command that shows resources of one kind
// by id, such as `abctl credentials get`.
type GetOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// IDs are the resources to show, without the kind/ of -o name.
	IDs    []string
	Format printer.Format
}

// Getter is how the get command of one kind of resource reads and shows
// it.
type Getter[T any] struct {
	Kind resource.Kind
	// Noun is what errors call one resource: "get browser profile bp_1: ...".
	Noun string
	// Get reads one resource by id with c.
	Get func(ctx context.Context, c *client.Client, id string) (T, error)
	// Show lists the resources read; single means one was asked for, which
	// JSON and YAML then show alone.
	Show func(items []T, single bool, now time.Time) printer.Listing
}

// NewCmd completes cmd, which says what the command is (Use, Short,
// Example, Args), into the get command of g's kind: its arguments are ids
// (or kind/ID, as -o name prints them), and -o is table, json, yaml or
// name. runF, when not nil, is called with the options instead of reading
// the resources.
func (g Getter[T]) NewCmd(f *cmdutil.Factory, cmd *cobra.Command, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ids, err := g.Kind.Args(cmd, args)
		if err != nil {
			return err
		}
		opts.IDs = ids
		return cmdutil.Run(cmd, opts, runF, g.Run)
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

// Run reads the resources of opts, in order, and prints them.
func (g Getter[T]) Run(ctx context.Context, opts *GetOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	items, err := Each(ctx, opts.IDs, func(ctx context.Context, id string) (T, error) { return g.Get(ctx, c, id) }, g.Noun)
	if err != nil {
		return err
	}
	now := opts.Now()
	return g.Show(items, len(items) == 1, now).Print(opts.IO, now, opts.Format)
}
