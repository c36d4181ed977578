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
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// NewCmd returns `abctl action`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
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
	cmd.AddCommand(
		newActionCmd(f, "click", client.ActionClick, "Click an element", ""),
		newActionCmd(f, "input-text", client.ActionInputText, "Type text into a field (cleared first)", "value"),
		newActionCmd(f, "select-option", client.ActionSelectOption, "Choose an option of a select", "value"),
		newActionCmd(f, "upload-file", client.ActionUploadFile, "Upload a file (by URL) into a file input", "file-url"),
	)
	return cmd
}

func newActionCmd(f *cmdutil.Factory, use string, typ client.ActionType, short, valueFlag string) *cobra.Command {
	var (
		url, run, selector, intention, value, output, browser string
		timeout                                               time.Duration
	)
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "json" && output != "id" {
				return cmdutil.Usagef(cmd, "-o must be json or id, not %q", output)
			}
			run = strings.TrimPrefix(strings.TrimSpace(run), "run/")
			if url == "" && run == "" {
				return cmdutil.Usagef(cmd, "give --url (a new page) or --run (a page opened by an earlier action)")
			}
			if selector == "" && intention == "" {
				return cmdutil.Usagef(cmd, "give --selector, --intention, or both")
			}
			if valueFlag != "" && !cmd.Flags().Changed(valueFlag) {
				return cmdutil.Usagef(cmd, "%s needs --%s", use, valueFlag)
			}
			if timeout < 0 {
				return cmdutil.Usagef(cmd, "--timeout must be positive, not %s", timeout)
			}
			a := client.Action{Type: typ, Selector: selector, Intention: intention}
			switch valueFlag {
			case "value":
				a.Value = value
			case "file-url":
				a.FileURL = value
			}
			if timeout > 0 {
				a.Timeout = client.Ptr(float64(timeout.Milliseconds()))
			}
			c, err := f.Client(cmd.Context())
			if err != nil {
				return err
			}
			res, err := c.Actions.Run(cmd.Context(), &client.RunActionRequest{
				URL: url, Action: a, WorkflowRunID: run, BrowserAddress: browser,
			})
			if err != nil {
				return fmt.Errorf("%s: %w", use, err)
			}
			if output == "id" {
				_, err := fmt.Fprintln(f.IO.Out, res.WorkflowRunID)
				return err
			}
			return printer.WriteJSON(f.IO.Out, res)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&url, "url", "", "the page to open (for a new run; with --run, go there first)")
	fl.StringVar(&run, "run", "", "continue on the page of this run (wr_...) from an earlier action, as it is")
	fl.StringVar(&selector, "selector", "", "the element: CSS, or XPath as xpath=//...")
	fl.StringVar(&intention, "intention", "", "the element in plain words, for the model (used when the selector is absent or fails)")
	fl.DurationVar(&timeout, "timeout", 0, "how long to wait for the element (default: the service's)")
	fl.StringVar(&browser, "browser-address", "", "a browser to use over CDP (http://host:9222) instead of the service's")
	fl.StringVarP(&output, "output", "o", "json", "output: json (the whole result) or id (the run id)")
	_ = cmd.RegisterFlagCompletionFunc("run", completion.Runs(f, completion.ActiveRun))
	switch valueFlag {
	case "value":
		fl.StringVar(&value, "value", "", "the text to type, or the option to choose (its value or label)")
	case "file-url":
		fl.StringVar(&value, "file-url", "", "URL of the file to upload")
	}
	return cmd
}
