package listing

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// ListOptions are the inputs that every command listing the resources of
// one kind has, such as `abctl credentials list`. A command's own options
// embed them and add its filters.
type ListOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Limit bounds the list; 0 means all. Only a command with --limit sets
	// it.
	Limit  int
	Format printer.Format
}

// Validate checks the limit.
func (o *ListOptions) Validate() error {
	return CheckLimit(o.Limit)
}

// Print prints l in the format of -o.
func (o *ListOptions) Print(l printer.Listing) error {
	return l.Print(o.IO, o.Now(), o.Format)
}

// NewListCmd completes cmd, which says what the command is (Use, Short,
// Example, and Args when it takes any), into a list command whose common
// inputs are opts: it is also called ls, takes no arguments unless cmd says
// otherwise, and prints as -o table, json, yaml or name. limitOf, when not
// "", adds --limit, "at most this many <limitOf>". run is the command's
// RunE; it normally ends with cmdutil.Run on the command's own options.
func NewListCmd(f *cmdutil.Factory, opts *ListOptions, limitOf string, cmd *cobra.Command, run func(*cobra.Command, []string) error) *cobra.Command {
	opts.IO, opts.Client, opts.Now = f.IO, f.Client, f.Now
	cmd.Aliases = []string{"ls"}
	if cmd.Args == nil {
		cmd.Args = cmdutil.NoArgs
	}
	cmd.RunE = run
	if limitOf != "" {
		cmd.Flags().IntVar(&opts.Limit, "limit", 0, "at most this many "+limitOf+" (0: all)")
	}
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

// Read reads up to opts.Limit resources (0: all) from the pages of all,
// which lists them pageSize at a time with c; an error says what was being
// listed ("list the credentials: ...").
func Read[T any](ctx context.Context, opts *ListOptions, what string, all func(c *client.Client, pageSize int) iter.Seq2[T, error]) ([]T, error) {
	c, err := opts.Client(ctx)
	if err != nil {
		return nil, err
	}
	return Collect(all(c, PageSize(opts.Limit)), opts.Limit, what)
}

// ReadAll reads a list that the service answers whole, with list; an
// error of list starts with failed ("list the browser sessions: ...").
func ReadAll[T any](ctx context.Context, opts *ListOptions, failed string, list func(c *client.Client) ([]T, error)) ([]T, error) {
	c, err := opts.Client(ctx)
	if err != nil {
		return nil, err
	}
	items, err := list(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", failed, err)
	}
	return items, nil
}
