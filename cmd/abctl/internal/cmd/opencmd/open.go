// Package opencmd is `abctl open`: sign the user's browser in to the
// daemon's web UI with a one-time link, on the runs list, a run or an
// agent.
package opencmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// OpenOptions are the inputs of `abctl open`.
type OpenOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	// Embedded reports whether Client started the daemon inside this
	// command, which then has to keep it up for the link to work.
	Embedded func() bool
	// Getenv reads BROWSER.
	Getenv func(string) string

	// ID is the run (tsk_…, wr_…) or agent (wpid_…, or its name) to
	// open; "" opens the runs list.
	ID string
	// Print writes the link on stdout instead of opening a browser.
	Print bool

	// next is the web UI's page the link opens, from ID.
	next string
	// agent is the agent's name when ID is one: its page is known once
	// the name is resolved in the key's organization.
	agent string
}

// NewCmdOpen returns `abctl open`. runF, when not nil, is called with the
// validated options instead of opening anything.
func NewCmdOpen(f *cmdutil.Factory, runF func(*OpenOptions) error) *cobra.Command {
	opts := &OpenOptions{IO: f.IO, Client: f.Client, Embedded: f.Embedded, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "open [RUN_ID|AGENT]",
		Short: "Open the daemon's web UI in a browser, signed in",
		Long: "open asks the daemon for a one-time sign-in link to its web UI, for the organization\n" +
			"of the API key abctl uses, and opens it in your browser: on the runs list, or on the\n" +
			"run (tsk_…, wr_…) or agent (wpid_… or its name) given. The link signs in once, within\n" +
			"two minutes.\n\n" +
			"The BROWSER environment variable names the program to open it with (its arguments\n" +
			"may follow, the link comes last); without it abctl uses xdg-open (open on macOS).\n" +
			"--print writes the link on stdout and opens nothing, as abctl does when stdout is\n" +
			"not a terminal and BROWSER is not set. The web UI is the daemon's own: the hosted\n" +
			"service has none at its API address. See docs/web-ui.md.",
		Example: "  abctl open\n" +
			"  abctl open wr_494469342201718946\n" +
			"  abctl open contact-form\n" +
			"  abctl open --print",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completion.First(completion.Runs(f, completion.AnyRun)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			return cmdutil.Run(cmd, opts, runF, runOpen)
		},
	}
	cmd.Flags().BoolVar(&opts.Print, "print", false, "print the sign-in link on stdout instead of opening a browser")
	return cmd
}

// Validate turns the id into the page to open.
func (o *OpenOptions) Validate() error {
	id := strings.TrimSpace(o.ID)
	switch {
	case id == "":
		o.next = "/ui/runs"
	case strings.HasPrefix(id, "tsk_") || strings.HasPrefix(id, "wr_"):
		o.next = "/ui/runs/" + url.PathEscape(id)
	case strings.HasPrefix(id, "wpid_"):
		o.next = "/ui/agents/" + url.PathEscape(id)
	case agentfile.ValidName(strings.TrimPrefix(id, "agent/")):
		o.agent = id // resolved in runOpen, which has the client
	default:
		return cmdutil.UsageErrorf("%q is neither a run id (tsk_…, wr_…), an agent id (wpid_…) nor an agent's name; 'abctl get runs' and 'abctl get agents' list them", id)
	}
	return nil
}

// Next is the web UI's page the link opens (after Validate).
func (o *OpenOptions) Next() string { return o.next }

func runOpen(ctx context.Context, opts *OpenOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if opts.agent != "" {
		a, err := agentref.Get(ctx, c, opts.agent)
		if err != nil {
			return fmt.Errorf("%w; 'abctl get agents' lists the agents", err)
		}
		opts.next = "/ui/agents/" + url.PathEscape(a.WorkflowPermanentID)
	}
	link, err := c.SignInLink(ctx, opts.next)
	if err != nil {
		var ae *client.Error
		if errors.As(err, &ae) && (ae.StatusCode == http.StatusNotFound || ae.StatusCode == http.StatusMethodNotAllowed) {
			return fmt.Errorf("the service at %s has no web UI (answered %d): 'abctl open' works with an abctl daemon, not the hosted service; "+
				"check --base-url and ABCTL_BASE_URL ('abctl config view')", c.BaseURL(), ae.StatusCode)
		}
		return fmt.Errorf("ask for a sign-in link to the web UI: %w", err)
	}

	if err := show(ctx, opts, link.URL, c.BaseURL()+opts.next); err != nil {
		return err
	}
	if opts.Embedded != nil && opts.Embedded() {
		// The daemon lives in this process: the link and the pages die with
		// it, so stay up until the user is done.
		fmt.Fprintln(opts.IO.ErrOut, "abctl: the web UI is served by this command's daemon: press Ctrl-C to stop it "+
			"(run 'abctl daemon' in another terminal to keep one running)")
		<-ctx.Done()
	}
	return nil
}

// show prints the link or opens it in a browser. page is where the link
// leads, without its token, to name it on stderr.
func show(ctx context.Context, opts *OpenOptions, link, page string) error {
	browser := ""
	if opts.Getenv != nil {
		browser = strings.TrimSpace(opts.Getenv("BROWSER"))
	}
	if opts.Print || (browser == "" && !opts.IO.IsStdoutTTY()) {
		_, err := fmt.Fprintln(opts.IO.Out, link)
		return err
	}
	var argv []string
	if browser != "" {
		argv = strings.Fields(browser)
	} else {
		argv = systemOpener()
		if _, err := exec.LookPath(argv[0]); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "abctl: there is no %s here to open a browser with (set BROWSER to choose one); open this link within two minutes:\n", argv[0])
			_, err := fmt.Fprintln(opts.IO.Out, link)
			return err
		}
	}
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], link)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opts.IO.In, opts.IO.ErrOut, opts.IO.ErrOut
	if err := cmd.Run(); err != nil {
		from := "the system's"
		if browser != "" {
			from = "BROWSER's"
		}
		// The error names the program, never the link: it carries the token.
		return fmt.Errorf("could not open a browser with %s program %q: %v; run 'abctl open --print' and open the link yourself", from, argv[0], err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Opened %s in your browser (the sign-in link works once, for two minutes).\n", page)
	return nil
}

// systemOpener is the program that opens a URL in the default browser.
func systemOpener() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"open"}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler"}
	}
	return []string{"xdg-open"}
}
