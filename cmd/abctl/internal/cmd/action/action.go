// Package action is `abctl action`: one browser action on a page, without
// an agent (POST /v1/sdk/run_action).
//
// The first action opens the page in a new run and prints its id; actions
// given --run continue in the same browser page (without --url, on the page
// as the earlier actions left it), so a few commands can fill and submit a
// form:
//
//	RUN=$(abctl action input-text --url http://127.0.0.1:8000/form.html --selector '#text' --value Ada -o id)
//	abctl action click --run "$RUN" --selector '#submit-button'
package action

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// NewCmdAction returns `abctl action`.
func NewCmdAction(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "action",
		Short: "Run one browser action on a page (click, type, select, upload)",
		Long: "action runs one action in a browser page, without an agent. The first one opens --url in\n" +
			"a new run and keeps its browser open for a while; pass that run's id with --run to act\n" +
			"again on the same page, as the earlier actions left it (with --url too, it goes there\n" +
			"first unless the page is already there; the hosted service needs --url every time).\n" +
			"An action finds its element by --selector (CSS, or XPath with an xpath= prefix) or,\n" +
			"when the service has a model, by --intention in plain words.\n\n" +
			"It prints the result as JSON ({\"workflow_run_id\", \"result\"}) on stdout, or only the\n" +
			"run id with -o id.",
		Example: "  RUN=$(abctl action input-text --url http://127.0.0.1:8000/form.html --selector '#text' --value Ada -o id)\n" +
			"  abctl action select-option --run \"$RUN\" --selector '#country' --value Japan\n" +
			"  abctl action click --run \"$RUN\" --selector '#submit-button'",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	for _, k := range Kinds {
		cmd.AddCommand(NewCmdKind(f, k, nil))
	}
	return cmd
}

// Kind is one kind of action, a subcommand of `abctl action`.
type Kind struct {
	// Use is the subcommand's name; Short its help line.
	Use, Short string
	Type       client.ActionType
	// ValueFlag is the flag of the action's value: "value", "file-url", or
	// "" for an action without one.
	ValueFlag string
}

// Kinds are the subcommands of `abctl action`.
var Kinds = []Kind{
	{"click", "Click an element", client.ActionClick, ""},
	{"input-text", "Type text into a field (cleared first)", client.ActionInputText, "value"},
	{"select-option", "Choose an option of a select", client.ActionSelectOption, "value"},
	{"upload-file", "Upload a file (by URL) into a file input", client.ActionUploadFile, "file-url"},
}

// ActionOptions are the inputs of an `abctl action` subcommand.
type ActionOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	Kind Kind
	// URL opens a page; Run continues on the page of a run (wr_..., or
	// run/ID, without the run/ once validated).
	URL, Run string
	// Selector and Intention find the element.
	Selector, Intention string
	// Value is the text, option or file URL of ValueFlag; ValueSet says
	// whether the flag was given.
	Value    string
	ValueSet bool
	// Timeout bounds the wait for the element (0: the service's).
	Timeout        time.Duration
	BrowserAddress string
	// Output is json (the whole result) or id (the run id).
	Output string
}

// NewCmdKind returns the subcommand of `abctl action` of kind k. runF,
// when not nil, is called with the validated options instead of acting.
func NewCmdKind(f *cmdutil.Factory, k Kind, runF func(*ActionOptions) error) *cobra.Command {
	opts := &ActionOptions{IO: f.IO, Client: f.Client, Kind: k}
	cmd := &cobra.Command{
		Use:   k.Use,
		Short: k.Short,
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ValueSet = k.ValueFlag != "" && cmd.Flags().Changed(k.ValueFlag)
			return cmdutil.Run(cmd, opts, runF, runAction)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.URL, "url", "", "the page to open (for a new run; with --run, go there first)")
	fl.StringVar(&opts.Run, "run", "", "continue on the page of this run (wr_...) from an earlier action, as it is")
	fl.StringVar(&opts.Selector, "selector", "", "the element: CSS, or XPath as xpath=//...")
	fl.StringVar(&opts.Intention, "intention", "", "the element in plain words, for the model (used when the selector is absent or fails)")
	fl.DurationVar(&opts.Timeout, "timeout", 0, "how long to wait for the element (default: the service's)")
	fl.StringVar(&opts.BrowserAddress, "browser-address", "", "a browser to use over CDP (http://host:9222) instead of the service's")
	fl.StringVarP(&opts.Output, "output", "o", "json", "output: json (the whole result) or id (the run id)")
	_ = cmd.RegisterFlagCompletionFunc("run", completion.Runs(f, completion.ActiveRun))
	switch k.ValueFlag {
	case "value":
		fl.StringVar(&opts.Value, "value", "", "the text to type, or the option to choose (its value or label)")
	case "file-url":
		fl.StringVar(&opts.Value, "file-url", "", "URL of the file to upload")
	}
	return cmd
}

// Validate checks that the options say where to act, on what, and with
// which value; it takes the run/ off Run.
func (o *ActionOptions) Validate() error {
	if o.Output != "json" && o.Output != "id" {
		return cmdutil.UsageErrorf("-o must be json or id, not %q", o.Output)
	}
	o.Run = strings.TrimPrefix(strings.TrimSpace(o.Run), "run/")
	if o.URL == "" && o.Run == "" {
		return cmdutil.UsageErrorf("give --url (a new page) or --run (a page opened by an earlier action)")
	}
	if o.Selector == "" && o.Intention == "" {
		return cmdutil.UsageErrorf("give --selector, --intention, or both")
	}
	if o.Kind.ValueFlag != "" && !o.ValueSet {
		return cmdutil.UsageErrorf("%s needs --%s", o.Kind.Use, o.Kind.ValueFlag)
	}
	if o.Timeout < 0 {
		return cmdutil.UsageErrorf("--timeout must be positive, not %s", o.Timeout)
	}
	return nil
}

func runAction(ctx context.Context, opts *ActionOptions) error {
	a := client.Action{Type: opts.Kind.Type, Selector: opts.Selector, Intention: opts.Intention}
	switch opts.Kind.ValueFlag {
	case "value":
		a.Value = opts.Value
	case "file-url":
		a.FileURL = opts.Value
	}
	if opts.Timeout > 0 {
		a.Timeout = new(float64(opts.Timeout.Milliseconds()))
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	res, err := c.Actions.Run(ctx, &client.RunActionRequest{
		URL: opts.URL, Action: a, WorkflowRunID: opts.Run, BrowserAddress: opts.BrowserAddress,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", opts.Kind.Use, err)
	}
	if opts.Output == "id" {
		_, err := fmt.Fprintln(opts.IO.Out, res.WorkflowRunID)
		return err
	}
	return printer.WriteJSON(opts.IO.Out, res)
}
