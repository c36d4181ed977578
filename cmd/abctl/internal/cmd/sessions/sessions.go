// Package sessions is `abctl browser-sessions`: open a browser that stays
// open between runs (a browser session), in which runs that name it execute
// one at a time; list and show sessions; say whether a session keeps its
// browser state when it closes; and close one, optionally saving its state
// as a browser profile.
package sessions

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
	"github.com/abctl/abctl/internal/ptr"
)

// The bounds of a session's timeout, in minutes, as the service sets them.
const (
	defaultMinutes = 60
	minMinutes     = 5
	maxMinutes     = 240
)

// running is the status of an open session.
const running = "running"

// NewCmdSessions returns `abctl browser-sessions`.
func NewCmdSessions(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "browser-sessions",
		Aliases: []string{"browser-session", "sessions"},
		Short:   "Keep a browser open between runs (browser sessions)",
		Long: "A browser session is a browser the service keeps open between runs, with its cookies and\n" +
			"its pages. Runs that name it ('abctl run --browser-session', 'abctl login\n" +
			"--browser-session'; browser_session_id in the API) execute in it one at a time, each\n" +
			"starting where the previous one left the browser: sign in once with a login run, then\n" +
			"run agents and tasks behind the sign-in.\n\n" +
			"A session is running while it is open. It ends as closed ('close'), timed_out (its\n" +
			"timeout, 5 to 240 minutes, default 60, passed) or ended_by_restart (the daemon stopped).\n" +
			"Files the runs download are not kept in a session: its browser refuses downloads.\n\n" +
			"A session can keep its browser state when it closes ('create --keep-profile',\n" +
			"'keep-profile'); 'close --save-profile NAME' then saves that state as a browser profile,\n" +
			"which later runs start from ('abctl browser-profiles').\n\n" +
			"SESSION_ID is an id (pbs_...) or session/ID, as -o name prints it.",
		Example: "  abctl browser-sessions create --url https://portal.example.com/login --keep-profile\n" +
			"  abctl login --credential cred_123 --browser-session pbs_123\n" +
			"  abctl run --agent monthly-invoices --browser-session pbs_123\n" +
			"  abctl browser-sessions close pbs_123 --save-profile 'Portal, signed in'",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdCreate(f, nil), NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdKeepProfile(f, nil), NewCmdClose(f, nil))
	return cmd
}

// kind is how -o name prints a session: session/ID.
const kind = resource.Session

// parseMinutes reads --timeout: whole minutes (30), or a duration of
// whole minutes (90m, 2h).
func parseMinutes(s string) (int, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d%time.Minute != 0 {
		return 0, fmt.Errorf("--timeout %q is not a number of minutes: give whole minutes, such as 30, or a duration such as 90m or 2h", s)
	}
	return int(d / time.Minute), nil
}

// sessionsListing shows sessions: ID, STATUS, TIMEOUT (with the minutes
// left while open), PROFILE (the profile it started from, and whether it
// keeps its state) and CREATED. single means one was asked for by id,
// which JSON and YAML then show alone.
func sessionsListing(ss []*client.BrowserSession, single bool, now time.Time) printer.Listing {
	if ss == nil {
		ss = []*client.BrowserSession{}
	}
	l := printer.Listing{Value: listing.One(ss, single), Headers: []string{"id", "status", "timeout", "profile", "created"}}
	for _, s := range ss {
		l.Names = append(l.Names, kind.Name(s.BrowserSessionID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, s := range ss {
			t.AddRow(s.BrowserSessionID, statusOf(s), timeoutOf(s, now), profileOf(s), t.Time(s.CreatedAt.Time))
		}
	}
	return l
}

func statusOf(s *client.BrowserSession) string {
	if st := ptr.Value(s.Status); st != "" {
		return st
	}
	return "-"
}

// timeoutOf is the TIMEOUT cell: "60 min", and while the session is open
// the minutes left before it closes.
func timeoutOf(s *client.BrowserSession, now time.Time) string {
	if s.Timeout == nil {
		return "-"
	}
	cell := fmt.Sprintf("%d min", *s.Timeout)
	if ptr.Value(s.Status) == running && s.StartedAt != nil && !s.StartedAt.IsZero() {
		left := s.StartedAt.Add(time.Duration(*s.Timeout) * time.Minute).Sub(now)
		if left <= 0 {
			return cell + " (closing)"
		}
		cell += fmt.Sprintf(" (%d left)", int((left+time.Minute-1)/time.Minute))
	}
	return cell
}

// profileOf is the PROFILE cell: the profile the session started from, and
// whether it keeps its state when it closes (kept, once closed); "-" for
// neither.
func profileOf(s *client.BrowserSession) string {
	var parts []string
	if p := ptr.Value(s.BrowserProfileID); p != "" {
		parts = append(parts, "from "+p)
	}
	if s.GenerateBrowserProfile {
		if ptr.Value(s.Status) == running {
			parts = append(parts, "keeps its state")
		} else {
			parts = append(parts, "state kept")
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// CreateOptions are the inputs of `abctl browser-sessions create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	// Embedded reports whether Client started the daemon inside this
	// command: a session would end with it.
	Embedded func() bool
	Now      func() time.Time

	// URL is a page to open in the session; "" for none.
	URL string
	// Minutes is how long the session stays open; 0 leaves it to the
	// service (60).
	Minutes int
	// BrowserProfile is the profile the session starts from, without the
	// profile/ of -o name; "" for a fresh browser.
	BrowserProfile string
	// KeepProfile keeps the session's browser state when it closes
	// (generate_browser_profile).
	KeepProfile bool
	Format      printer.Format
}

// NewCmdCreate returns `abctl browser-sessions create`. runF, when not nil,
// is called with the validated options instead of opening the session.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IO, Client: f.Client, Embedded: f.Embedded, Now: f.Now}
	var timeout string
	cmd := &cobra.Command{
		Use:   "create [--url URL] [--timeout MINUTES] [--browser-profile ID] [--keep-profile]",
		Short: "Open a browser session and print its id",
		Long: "create opens a browser session and prints its id (session/pbs_... by default), which runs\n" +
			"name with --browser-session. It stays open until 'close', or until --timeout minutes\n" +
			"(5 to 240, default 60) have passed since it opened, whatever runs in it.\n\n" +
			"--url opens a page in it; --browser-profile starts it from a profile's saved state;\n" +
			"--keep-profile keeps its browser state when it closes, for 'close --save-profile'.\n\n" +
			"A session lives in the daemon: it needs a daemon that outlives this command ('abctl\n" +
			"daemon'), and it ends, as ended_by_restart, when that daemon stops.",
		Example: "  abctl browser-sessions create --url https://portal.example.com/login --timeout 30\n" +
			"  SESSION=$(abctl browser-sessions create --browser-profile bp_123 --timeout 2h)\n" +
			"  abctl browser-sessions create --keep-profile -o json",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Minutes = 0
			if cmd.Flags().Changed("timeout") {
				minutes, err := parseMinutes(timeout)
				if err != nil {
					return cmdutil.UsageErrorf("%v", err)
				}
				opts.Minutes = minutes
				if opts.Minutes < minMinutes || opts.Minutes > maxMinutes {
					return cmdutil.UsageErrorf("--timeout %s is %d minutes: a session stays open %d to %d minutes (default %d)",
						strings.TrimSpace(timeout), opts.Minutes, minMinutes, maxMinutes, defaultMinutes)
				}
			}
			return cmdutil.Run(cmd, opts, runF, runCreate)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.URL, "url", "", "a page to open in the session")
	fl.StringVar(&timeout, "timeout", "", fmt.Sprintf("how long the session stays open: minutes from %d to %d (or 90m, 2h); default %d", minMinutes, maxMinutes, defaultMinutes))
	fl.StringVar(&opts.BrowserProfile, "browser-profile", "", "start the session from this browser profile (bp_..., see 'abctl browser-profiles')")
	fl.BoolVar(&opts.KeepProfile, "keep-profile", false, "keep the session's browser state when it closes, to save it as a profile ('close --save-profile')")
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

// Validate reads --browser-profile and checks --url.
func (o *CreateOptions) Validate() error {
	if o.URL != "" && strings.TrimSpace(o.URL) == "" {
		return cmdutil.UsageErrorf("--url is blank: give the page to open, or leave --url out")
	}
	if o.BrowserProfile != "" {
		id, err := resource.Profile.Flag("--browser-profile", o.BrowserProfile)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		o.BrowserProfile = id
	}
	return nil
}

func runCreate(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if opts.Embedded() {
		return cmdutil.UsageErrorf("a browser session lives in the daemon, and the daemon runs inside abctl here: " +
			"it would stop, and end the session, as abctl exits. Start 'abctl daemon' first, then open the session")
	}
	s, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{
		URL: opts.URL, Timeout: opts.Minutes, BrowserProfileID: opts.BrowserProfile, GenerateBrowserProfile: opts.KeepProfile,
	})
	if err != nil {
		return fmt.Errorf("open a browser session: %w", err)
	}
	if err := sessionsListing([]*client.BrowserSession{s}, true, opts.Now()).Print(opts.IO, opts.Now(), opts.Format); err != nil {
		return err
	}
	minutes := opts.Minutes
	if s.Timeout != nil {
		minutes = *s.Timeout
	}
	if minutes == 0 {
		minutes = defaultMinutes
	}
	fmt.Fprintf(opts.IO.ErrOut, "Browser session %s is open for %d minutes. Run in it with --browser-session %s; close it with 'abctl browser-sessions close %s'.\n",
		s.BrowserSessionID, minutes, s.BrowserSessionID, s.BrowserSessionID)
	return nil
}

// ListOptions are the inputs of `abctl browser-sessions list`.
type ListOptions = listing.ListOptions

// NewCmdList returns `abctl browser-sessions list`. runF, when not nil, is called
// with the validated options instead of listing.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	return listing.NewListCmd(f, opts, "", &cobra.Command{
		Use:   "list",
		Short: "List browser sessions, newest first, open and ended",
		Example: "  abctl browser-sessions list\n" +
			"  abctl browser-sessions list -o json",
	}, func(cmd *cobra.Command, _ []string) error {
		return cmdutil.Run(cmd, opts, runF, runList)
	})
}

func runList(ctx context.Context, opts *ListOptions) error {
	ss, err := listing.ReadAll(ctx, opts, "list the browser sessions", func(c *client.Client) ([]*client.BrowserSession, error) { return c.BrowserSessions.List(ctx) })
	if err != nil {
		return err
	}
	return opts.Print(sessionsListing(ss, false, opts.Now()))
}

// GetOptions are the inputs of `abctl browser-sessions get`: the sessions
// to show, by id.
type GetOptions = listing.GetOptions

var getter = listing.Getter[*client.BrowserSession]{
	Kind: kind,
	Noun: "browser session",
	Get: func(ctx context.Context, c *client.Client, id string) (*client.BrowserSession, error) {
		return c.BrowserSessions.Get(ctx, id)
	},
	Show: sessionsListing,
}

// NewCmdGet returns `abctl browser-sessions get`. runF, when not nil, is
// called with the validated options instead of reading the sessions.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	return getter.NewCmd(f, &cobra.Command{
		Use:     "get SESSION_ID...",
		Short:   "Show browser sessions by id",
		Example: "  abctl browser-sessions get pbs_123 -o yaml",
		Args:    cmdutil.MinArgs(1, "one or more browser session ids (pbs_...)"),
	}, runF)
}

func runGet(ctx context.Context, opts *GetOptions) error { return getter.Run(ctx, opts) }

// KeepProfileOptions are the inputs of `abctl browser-sessions keep-profile`.
type KeepProfileOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// SessionID is the session to change, without the session/ of -o name.
	SessionID string
	// Off stops the session keeping its state.
	Off    bool
	Format printer.Format
}

// NewCmdKeepProfile returns `abctl browser-sessions keep-profile`. runF,
// when not nil, is called with the validated options instead of changing
// the session.
func NewCmdKeepProfile(f *cmdutil.Factory, runF func(*KeepProfileOptions) error) *cobra.Command {
	opts := &KeepProfileOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "keep-profile SESSION_ID [--off]",
		Short: "Say whether an open session keeps its browser state when it closes",
		Long: "keep-profile makes an open session keep its browser state (its cookies, and the local\n" +
			"storage of the sites open at the end) when it closes, as create --keep-profile does;\n" +
			"--off makes it keep nothing. 'close --save-profile NAME' saves the kept state as a\n" +
			"browser profile. Only an open (running) session can change.",
		Example: "  abctl browser-sessions keep-profile pbs_123\n" +
			"  abctl browser-sessions keep-profile pbs_123 --off",
		Args: cmdutil.ExactArgs(1, "a browser session id (pbs_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := kind.Arg(cmd, args[0])
			if err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			opts.SessionID = id
			return cmdutil.Run(cmd, opts, runF, runKeepProfile)
		},
	}
	cmd.Flags().BoolVar(&opts.Off, "off", false, "keep nothing when the session closes")
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

func runKeepProfile(ctx context.Context, opts *KeepProfileOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	s, err := c.BrowserSessions.SetGenerateProfile(ctx, opts.SessionID, !opts.Off)
	if err != nil {
		return fmt.Errorf("change browser session %s: %w", opts.SessionID, err)
	}
	if err := sessionsListing([]*client.BrowserSession{s}, true, opts.Now()).Print(opts.IO, opts.Now(), opts.Format); err != nil {
		return err
	}
	if opts.Off {
		fmt.Fprintf(opts.IO.ErrOut, "Browser session %s will keep nothing when it closes.\n", opts.SessionID)
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "Browser session %s will keep its browser state when it closes: save it with 'abctl browser-sessions close %s --save-profile NAME'.\n",
			opts.SessionID, opts.SessionID)
	}
	return nil
}

// CloseOptions are the inputs of `abctl browser-sessions close`.
type CloseOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// SessionID is the session to close, without the session/ of -o name.
	SessionID string
	// SaveProfile, when not "", is the name of a browser profile made of
	// the session's browser state once it is closed.
	SaveProfile string
}

// NewCmdClose returns `abctl browser-sessions close`. runF, when not nil,
// is called with the validated options instead of closing the session.
func NewCmdClose(f *cmdutil.Factory, runF func(*CloseOptions) error) *cobra.Command {
	opts := &CloseOptions{IO: f.IO, Client: f.Client}
	var saveProfile string
	cmd := &cobra.Command{
		Use:   "close SESSION_ID [--save-profile NAME]",
		Short: "Close a browser session (after the run in it), optionally saving its state as a profile",
		Long: "close closes a browser session; a run executing in it ends first. Runs that name the\n" +
			"session afterwards are refused.\n\n" +
			"--save-profile NAME saves the session's browser state as a browser profile called NAME and\n" +
			"prints profile/<id>: the session is made to keep its state first, when it does not\n" +
			"already. A session that has already ended can still be saved when it kept its state.",
		Example: "  abctl browser-sessions close pbs_123\n" +
			"  abctl browser-sessions close pbs_123 --save-profile 'Portal, signed in'",
		Args: cmdutil.ExactArgs(1, "a browser session id (pbs_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := kind.Arg(cmd, args[0])
			if err != nil {
				return cmdutil.UsageErrorf("%v", err)
			}
			opts.SessionID, opts.SaveProfile = id, ""
			if cmd.Flags().Changed("save-profile") {
				if strings.TrimSpace(saveProfile) == "" {
					return cmdutil.UsageErrorf("--save-profile is empty: give the name of the browser profile to save the session's state as")
				}
				opts.SaveProfile = saveProfile
			}
			return cmdutil.Run(cmd, opts, runF, runClose)
		},
	}
	cmd.Flags().StringVar(&saveProfile, "save-profile", "", "save the session's browser state as a browser profile with this name")
	return cmd
}

func runClose(ctx context.Context, opts *CloseOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	id := opts.SessionID
	s, err := c.BrowserSessions.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("get browser session %s: %w", id, err)
	}
	open := ptr.Value(s.Status) == running
	if opts.SaveProfile != "" && !s.GenerateBrowserProfile {
		if !open {
			return fmt.Errorf("browser session %s ended (%s) without keeping its browser state, so no profile can be made of it: "+
				"open a new session with 'abctl browser-sessions create --keep-profile'", id, statusOf(s))
		}
		if _, err := c.BrowserSessions.SetGenerateProfile(ctx, id, true); err != nil {
			return fmt.Errorf("make browser session %s keep its browser state: %w", id, err)
		}
	}
	if open {
		if err := c.BrowserSessions.Close(ctx, id); err != nil {
			return fmt.Errorf("close browser session %s: %w", id, err)
		}
		fmt.Fprintf(opts.IO.ErrOut, "Browser session %s closed.\n", id)
	} else {
		fmt.Fprintf(opts.IO.ErrOut, "Browser session %s had already ended (%s).\n", id, statusOf(s))
	}
	if opts.SaveProfile == "" {
		return nil
	}
	p, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: opts.SaveProfile, BrowserSessionID: id})
	if err != nil {
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusBadRequest && open {
			// It was asked to keep its state: the browser gave none as it closed.
			return fmt.Errorf("save browser session %s as the profile %q: %w (the session is closed, but its browser gave no state as it closed; a local daemon's log says why)", id, opts.SaveProfile, err)
		}
		return fmt.Errorf("save browser session %s as the profile %q: %w", id, opts.SaveProfile, err)
	}
	fmt.Fprintln(opts.IO.Out, "profile/"+p.BrowserProfileID)
	fmt.Fprintf(opts.IO.ErrOut, "Its browser state is saved as browser profile %s (%q): runs start from it with --browser-profile %s.\n",
		p.BrowserProfileID, p.Name, p.BrowserProfileID)
	return nil
}
