package runs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// ArtifactOptions are the inputs of `abctl runs artifact`.
type ArtifactOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// ArtifactID is the artifact to read (a_...).
	ArtifactID string
	// Out is the file to write; "" or "-" writes to stdout.
	Out string
}

// NewCmdArtifact returns `abctl runs artifact`. runF, when not nil, is
// called with the validated options instead of reading.
func NewCmdArtifact(f *cmdutil.Factory, runF func(*ArtifactOptions) error) *cobra.Command {
	opts := &ArtifactOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "artifact ARTIFACT_ID",
		Short: "Write the content of a run's file, or of an uploaded one, by its artifact id",
		Long: "artifact reads the content of an artifact (GET /v1/artifacts/{id}/content) with the\n" +
			"API key: a file of a run, whose id 'abctl runs artifacts RUN_ID -o json' lists, or a\n" +
			"file uploaded with 'abctl upload'. It goes to stdout, or to the file --out names\n" +
			"(created, or truncated when it exists).",
		Example: "  abctl runs artifact a_490440779503358012 --out report.csv\n" +
			"  abctl runs artifact a_490440779503358012 | head",
		Args: cmdutil.ExactArgs(1, "an artifact id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ArtifactID = args[0]
			return cmdutil.Run(cmd, opts, runF, runArtifact)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", "", "write the content to this file instead of stdout")
	return cmd
}

// Validate reads the artifact id.
func (o *ArtifactOptions) Validate() error {
	o.ArtifactID = strings.TrimSpace(o.ArtifactID)
	if !strings.HasPrefix(o.ArtifactID, "a_") {
		return cmdutil.UsageErrorf("%q is not an artifact id: artifact ids start with a_", o.ArtifactID)
	}
	return nil
}

func runArtifact(ctx context.Context, opts *ArtifactOptions) (err error) {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	ac, err := c.Files.Content(ctx, opts.ArtifactID, nil)
	if err != nil {
		return fmt.Errorf("read artifact %s: %w", opts.ArtifactID, err)
	}
	defer ac.Body.Close()
	var dst io.Writer = opts.IO.Out
	if opts.Out != "" && opts.Out != "-" {
		f, err := os.Create(opts.Out)
		if err != nil {
			return fmt.Errorf("read artifact %s: %w", opts.ArtifactID, err)
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		dst = f
	}
	if _, err := io.Copy(dst, ac.Body); err != nil {
		return fmt.Errorf("read artifact %s: %w", opts.ArtifactID, err)
	}
	return nil
}
