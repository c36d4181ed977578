package run

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// LoginOptions are the inputs of `abctl login`.
type LoginOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	// Embedded reports whether Client started the daemon inside this
	// command (see RunOptions).
	Embedded func() bool
	// Watch follows the run once started.
	Watch follow.Watcher

	// Credential is the stored credential to sign in with, without the
	// credential/ of -o name.
	Credential string
	// URL is the sign-in page; it may be left out in a browser session,
	// which then signs in on the page the session shows.
	URL string
	// Prompt, when given, says how to sign in, in words.
	Prompt string
	// BrowserSession and BrowserProfile are as in RunOptions.
	BrowserSession, BrowserProfile string
	// Detach prints the run id and returns instead of following the run.
	Detach bool
	Follow follow.Flags
}

// NewCmdLogin returns `abctl login`. runF, when not nil, is called with the
// validated options instead of starting the run.
func NewCmdLogin(f *cmdutil.Factory, runF func(*LoginOptions) error) *cobra.Command {
	opts := &LoginOptions{IO: f.IO, Client: f.Client, Embedded: f.Embedded, Watch: follow.NewWatcher(f)}
	cmd := &cobra.Command{
		Use:   "login --credential ID --url URL",
		Short: "Sign in to a website with a stored credential (a login run), and follow it",
		Long: "login starts a login run: the browser opens the sign-in page and signs in with a credential\n" +
			"stored with 'abctl credentials' (its password, and its one-time code when the site asks),\n" +
			"without an agent. It follows the run as 'abctl run' does and prints its output as JSON.\n\n" +
			"A login run on its own keeps nothing once it ends. To use the sign-in afterwards, sign in\n" +
			"inside a browser session ('abctl browser-sessions create'), then run in that session with\n" +
			"'abctl run --browser-session ID'. In a session, --url may be left out: the run signs in on\n" +
			"the page the session shows. With --browser-profile the run starts from a profile's saved\n" +
			"state, and finds nothing to fill when the profile is still signed in.\n\n" +
			"This signs a browser in to a website. It is not how abctl reaches its service: that is the\n" +
			"API key of the configuration profile ('abctl config').\n\n" +
			"Exit status: as 'abctl run': 0 completed; 1 failed, terminated or canceled; 3 timed_out;\n" +
			"8 still running when --timeout expired or you left it; 2 a wrong command line.",
		Example: "  abctl login --credential cred_123 --url https://portal.example.com/login\n" +
			"  abctl login --credential cred_123 --url https://portal.example.com/login --browser-session pbs_123\n" +
			"  abctl login --credential cred_123 --browser-session pbs_123      # on the page the session shows\n" +
			"  abctl login --credential cred_123 --url https://portal.example.com --prompt 'Sign in with the company account'",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmdutil.Run(cmd, opts, runF, runLogin)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Credential, "credential", "", "the stored credential to sign in with (cred_..., see 'abctl credentials'; required)")
	fl.StringVar(&opts.URL, "url", "", "the site's sign-in page (required, unless in a browser session)")
	fl.StringVar(&opts.Prompt, "prompt", "", "how to sign in, in words, when the form alone does not say (needs a language model)")
	fl.StringVar(&opts.BrowserSession, "browser-session", "", "sign in inside this open browser session (pbs_..., see 'abctl browser-sessions')")
	fl.StringVar(&opts.BrowserProfile, "browser-profile", "", "start from this browser profile (bp_..., see 'abctl browser-profiles')")
	fl.BoolVar(&opts.Detach, "detach", false, "print the run id and return without following the run")
	opts.Follow.Add(cmd)
	cmd.MarkFlagsMutuallyExclusive("detach", "timeout")
	return cmd
}

// Validate checks the credential, that there is a page to sign in on, and
// the browser flags.
func (o *LoginOptions) Validate() error {
	if o.Credential == "" {
		return cmdutil.UsageErrorf("--credential is required: give the stored credential (cred_...) to sign in with; 'abctl credentials list' shows them")
	}
	id, err := resource.Credential.Flag("--credential", o.Credential)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.Credential = id
	if err := readBrowserFlags(&o.BrowserProfile, &o.BrowserSession); err != nil {
		return err
	}
	if o.URL == "" && o.BrowserSession == "" {
		return cmdutil.UsageErrorf("--url is required: give the site's sign-in page (in a browser session, --browser-session, it may be left out to sign in on the page the session shows)")
	}
	return nil
}

func runLogin(ctx context.Context, opts *LoginOptions) error {
	c, err := cmdutil.DetachableClient(ctx, opts.Client, opts.Embedded, opts.Detach)
	if err != nil {
		return err
	}
	run, err := c.Runs.Login(ctx, &client.LoginRequest{
		CredentialID: opts.Credential, URL: opts.URL, Prompt: opts.Prompt,
		BrowserSessionID: opts.BrowserSession, BrowserProfileID: opts.BrowserProfile,
	})
	if err != nil {
		return fmt.Errorf("start the login run with credential %s: %w", opts.Credential, err)
	}
	return started(ctx, opts.IO, c, run, "Login run", opts.Detach, opts.Watch, opts.Follow)
}
