// Package files is `abctl upload`, which stores a file with the service for
// runs to use, and `abctl runs artifact`, which reads the content of a
// run's file (or an uploaded one) by its artifact id.
package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// UploadOptions are the inputs of `abctl upload`.
type UploadOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// Path is the file to upload; "-" reads stdin (Name is then required).
	Path string
	// Name is the file's name on the service; "" means Path's base name.
	Name   string
	Format printer.Format // formatURL, printer.JSON or printer.YAML
}

// formatURL, upload's default output, is the URL alone on a line.
const formatURL printer.Format = "url"

// NewCmdUpload returns `abctl upload`. runF, when not nil, is called with
// the validated options instead of uploading.
func NewCmdUpload(f *cmdutil.Factory, runF func(*UploadOptions) error) *cobra.Command {
	opts := &UploadOptions{IO: f.IO, Client: f.Client}
	var output string
	cmd := &cobra.Command{
		Use:   "upload FILE",
		Short: "Upload a file for runs to use and print its URL",
		Long: "upload stores FILE with the service (POST /v1/upload_file) and prints a URL that\n" +
			"fetches it without an API key: give it to a run wherever a file URL goes (a file_url\n" +
			"parameter, a file_url_parser block, an upload_file action). FILE - reads stdin, with\n" +
			"--name. -o json or yaml prints the whole answer, with s3_uri, the file's stable name\n" +
			"(abctl://uploads/<artifact id>/<name> on the local daemon, whose URLs stay valid for\n" +
			"seven days; 'abctl runs artifact ARTIFACT_ID' reads the file with the key at any time).\n" +
			"The local daemon refuses a file over its --max-upload-size (100MiB unless set).",
		Example: "  abctl upload invoices.csv\n" +
			"  abctl run agents/read-invoices.yaml --param invoices=$(abctl upload invoices.csv)\n" +
			"  some-report | abctl upload - --name report.csv -o json",
		Args: cmdutil.ExactArgs(1, "a file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.Check(cmd, output)
			if err != nil {
				return err
			}
			opts.Format, opts.Path = format, args[0]
			if err := opts.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runUpload(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the file's name on the service (default: FILE's base name; required with FILE -)")
	printer.AddFlag(cmd, &output, formatURL, printer.JSON, printer.YAML)
	return cmd
}

// Validate checks that stdin comes with a name and fills the name in.
func (o *UploadOptions) Validate() error {
	o.Name = strings.TrimSpace(o.Name)
	if o.Path == "-" {
		if o.Name == "" {
			return cmdutil.UsageErrorf("--name is required when the file is read from stdin (FILE -)")
		}
		return nil
	}
	if o.Name == "" {
		o.Name = filepath.Base(o.Path)
	}
	return nil
}

func runUpload(ctx context.Context, opts *UploadOptions) error {
	var src io.Reader = opts.IO.In
	if opts.Path != "-" {
		f, err := os.Open(opts.Path)
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return cmdutil.UsageErrorf("%s is a directory: upload takes one file", opts.Path)
		}
		src = f
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	up, err := c.Files.Upload(ctx, opts.Name, src)
	if err != nil {
		return fmt.Errorf("upload %s: %w", opts.Name, err)
	}
	switch opts.Format {
	case printer.JSON:
		return printer.WriteJSON(opts.IO.Out, up)
	case printer.YAML:
		return printer.WriteYAML(opts.IO.Out, up)
	}
	_, err = fmt.Fprintln(opts.IO.Out, up.PresignedURL)
	return err
}

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
			if err := opts.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runArtifact(cmd.Context(), opts)
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
