package runs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// FrameOptions are the inputs of `abctl runs frame`.
type FrameOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// RunID is the run to show, without the run/ of -o name.
	RunID string
	// Out is the file to write the JPEG to; "" or "-" writes it to
	// stdout, which must not be a terminal then.
	Out string
}

// NewCmdFrame returns `abctl runs frame`. runF, when not nil, is called
// with the validated options instead of reading the frame.
func NewCmdFrame(f *cmdutil.Factory, runF func(*FrameOptions) error) *cobra.Command {
	opts := &FrameOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "frame RUN_ID",
		Short: "Write a picture (JPEG) of the page a running run's browser shows now",
		Long: "frame reads a picture of the page the browser of a running run shows now, at most about\n" +
			"a second old (GET /v1/runs/{id}/frame), and writes the JPEG to the file --out names\n" +
			"(created, or truncated when it exists), or to stdout when stdout is not a terminal.\n" +
			"When the picture was taken goes to stderr. A run that is over, or that has not opened\n" +
			"its browser yet, has no picture: the error says which.",
		Example: "  abctl runs frame wr_490440779503358012 -o now.jpg\n" +
			"  abctl runs frame wr_490440779503358012 > now.jpg",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cmdutil.Run(cmd, opts, runF, runFrame)
		},
	}
	cmd.Flags().StringVarP(&opts.Out, "out", "o", "", "write the JPEG to this file instead of stdout")
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.AnyRun))
	return cmd
}

// Validate reads the run id, and refuses to write a JPEG to a terminal.
func (o *FrameOptions) Validate() error {
	id, err := runID(o.RunID)
	if err != nil {
		return err
	}
	o.RunID = id
	if (o.Out == "" || o.Out == "-") && o.IO.IsStdoutTTY() {
		return cmdutil.UsageErrorf("stdout is a terminal, which cannot show a JPEG: name a file with --out (-o now.jpg), or redirect stdout (> now.jpg)")
	}
	return nil
}

func runFrame(ctx context.Context, opts *FrameOptions) (err error) {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	fr, err := c.Runs.Frame(ctx, opts.RunID)
	if err != nil {
		return fmt.Errorf("the frame of run %s: %w", opts.RunID, err)
	}
	var dst io.Writer = opts.IO.Out
	if opts.Out != "" && opts.Out != "-" {
		f, err := os.Create(opts.Out)
		if err != nil {
			return fmt.Errorf("the frame of run %s: %w", opts.RunID, err)
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		dst = f
	}
	if _, err := dst.Write(fr.JPEG); err != nil {
		return fmt.Errorf("the frame of run %s: %w", opts.RunID, err)
	}
	if !fr.Taken.IsZero() {
		fmt.Fprintf(opts.IO.ErrOut, "The page of run %s as it was at %s.\n", opts.RunID, fr.Taken.Local().Format(time.RFC3339Nano))
	}
	return nil
}
