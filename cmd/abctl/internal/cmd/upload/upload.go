// Package upload is `abctl upload`: store a file with the service for runs
// to use, and print the URL that runs fetch it by. Reading a file back by
// its artifact id is `abctl runs artifact`.
package upload

import (
	"context"
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
			opts.Path = args[0]
			return cmdutil.Run(cmd, opts, runF, runUpload)
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the file's name on the service (default: FILE's base name; required with FILE -)")
	printer.AddFlag(cmd, &opts.Format, formatURL, printer.JSON, printer.YAML)
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
