package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The browser session tools open, list, show and close browser sessions:
// browsers the service keeps open between runs, in which the runs that
// name them (browser_session_id) execute one at a time. skyvern_login
// signs in with a stored credential, in a session or not, and waits for
// the run as skyvern_run_task does.

// Session timeouts, in minutes, as the service bounds them.
const (
	defaultSessionMinutes = 60
	minSessionMinutes     = 5
	maxSessionMinutes     = 240
)

// sessionsHowTo ends the descriptions of the session tools.
const sessionsHowTo = " Runs execute in a session when they name it: browser_session_id of skyvern_workflow_run and skyvern_login, " +
	"one run at a time, each starting where the previous one left the browser (signed in, on the same page)."

// BrowserSessionCreateInput is the input of skyvern_browser_session_create.
type BrowserSessionCreateInput struct {
	Timeout                int    `json:"timeout,omitempty" jsonschema:"minutes the session stays open, from 5 to 240; it closes then, whatever runs in it"`
	BrowserProfileID       string `json:"browser_profile_id,omitempty" jsonschema:"a browser profile (bp_...) whose saved state the session starts from, signed in where it was"`
	GenerateBrowserProfile bool   `json:"generate_browser_profile,omitempty" jsonschema:"keep the session's browser state when it closes, so that a browser profile can be made of it"`
}

// BrowserSessionListInput is the input of skyvern_browser_session_list
// (none).
type BrowserSessionListInput struct{}

// BrowserSessionIDInput names one session.
type BrowserSessionIDInput struct {
	SessionID string `json:"session_id" jsonschema:"the session's id (pbs_...)"`
}

// BrowserSessionInfo describes a session.
type BrowserSessionInfo struct {
	BrowserSessionID       string `json:"browser_session_id" jsonschema:"the session's id (pbs_...), which runs name as browser_session_id"`
	Status                 string `json:"status" jsonschema:"running while open; closed, timed_out or ended_by_restart once ended"`
	Open                   bool   `json:"open" jsonschema:"true while runs can use the session (status running)"`
	Timeout                int    `json:"timeout,omitempty" jsonschema:"minutes the session stays open from its start"`
	BrowserProfileID       string `json:"browser_profile_id,omitempty" jsonschema:"the browser profile the session started from"`
	GenerateBrowserProfile bool   `json:"generate_browser_profile" jsonschema:"true when the session keeps its browser state as it closes"`
	StartedAt              string `json:"started_at,omitempty"`
	CompletedAt            string `json:"completed_at,omitempty" jsonschema:"when the session ended; absent while it is open"`
	CreatedAt              string `json:"created_at,omitempty"`
	Note                   string `json:"note,omitempty" jsonschema:"what to do next, when there is something to say"`
}

// BrowserSessionList is the answer of skyvern_browser_session_list.
type BrowserSessionList struct {
	BrowserSessions []BrowserSessionInfo `json:"browser_sessions" jsonschema:"the sessions, newest first, open and ended"`
	Open            int                  `json:"open" jsonschema:"how many are open (status running)"`
}

// LoginInput is the input of skyvern_login.
type LoginInput struct {
	CredentialID     string `json:"credential_id" jsonschema:"the stored credential (cred_...) to sign in with; skyvern_credential_list shows them"`
	URL              string `json:"url,omitempty" jsonschema:"the site's sign-in page; in a browser session it may be left out to sign in on the page the session shows"`
	Prompt           string `json:"prompt,omitempty" jsonschema:"how to sign in, in plain language, when the form alone does not say"`
	BrowserSessionID string `json:"browser_session_id,omitempty" jsonschema:"an open browser session (pbs_...) to sign in inside, so that later runs in it are signed in"`
	BrowserProfileID string `json:"browser_profile_id,omitempty" jsonschema:"a browser profile (bp_...) to start from; not with browser_session_id"`
	TOTPIdentifier   string `json:"totp_identifier,omitempty" jsonschema:"the e-mail address or phone number one-time codes are sent to, when the credential does not name it"`
	TimeoutSeconds   int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait for the result; the run goes on after it"`
}

// browserSessionTools open, list, show and close browser sessions, and
// sign in with a stored credential.
type browserSessionTools struct {
	sessions *client.BrowserSessionsService
	runs     *client.RunsService // for skyvern_login
	follower runFollower
}

func (t *browserSessionTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_browser_session_create",
		title: "Open a browser session",
		description: "Open a browser session: a browser kept open between runs, with its cookies and pages, for up to timeout " +
			"minutes (default 60). Sign in once in it (skyvern_login with browser_session_id), then run agents in it signed in. " +
			"Close it with skyvern_browser_session_close when done. Files runs download are not kept in a session." + sessionsHowTo,
		annotations: writes(false),
		refine: func(p map[string]*jsonschema.Schema) {
			bounds(p["timeout"], minSessionMinutes, maxSessionMinutes)
			withDefault(p["timeout"], fmt.Sprint(defaultSessionMinutes))
		},
	}, t.browserSessionCreate)

	addTool(s, spec{
		name:        "skyvern_browser_session_list",
		title:       "List browser sessions",
		description: "List the browser sessions, newest first, open (running) and ended, with their timeouts and the profile each started from." + sessionsHowTo,
		annotations: readOnly(),
	}, t.browserSessionList)

	addTool(s, spec{
		name:        "skyvern_browser_session_get",
		title:       "Get a browser session",
		description: "Get one browser session by id: whether it is still open, its timeout, and whether it keeps its browser state." + sessionsHowTo,
		annotations: readOnly(),
		refine:      nonEmptyArgs("session_id"),
	}, t.browserSessionGet)

	addTool(s, spec{
		name:  "skyvern_browser_session_close",
		title: "Close a browser session",
		description: "Close a browser session, after the run executing in it, if any. Runs can no longer use it. Closing a " +
			"session that has already ended changes nothing.",
		annotations: destroys(true),
		refine:      nonEmptyArgs("session_id"),
	}, t.browserSessionClose)

	addTool(s, spec{
		name:  "skyvern_login",
		title: "Sign in with a stored credential",
		description: "Sign in to a website with a credential the user stored (its password, and its one-time code when the site " +
			"asks), without an agent, and get the result. No secret passes through you: give the credential's id. With " +
			"browser_session_id the sign-in happens in that open session, and later runs in the session are signed in. " +
			"It waits up to timeout_seconds for the run to end; if it is still going then, it says so and skyvern_workflow_status gets the result later.",
		annotations: browses(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "credential_id")
			refineTimeout(p, defaultTaskTimeout)
		},
	}, t.login)
}

func (t *browserSessionTools) browserSessionCreate(ctx context.Context, in BrowserSessionCreateInput) (*BrowserSessionInfo, error) {
	bs, err := t.sessions.Create(ctx, &client.BrowserSessionCreateRequest{
		Timeout: in.Timeout, BrowserProfileID: in.BrowserProfileID, GenerateBrowserProfile: in.GenerateBrowserProfile,
	})
	if err != nil {
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusServiceUnavailable {
			return nil, fmt.Errorf("%v (this service cannot open a browser session now: run without browser_session_id instead)", describeError(err))
		}
		return nil, err
	}
	info := browserSessionInfo(bs)
	info.Note = fmt.Sprintf("The session is open for %d minutes. Pass browser_session_id %s to skyvern_login or skyvern_workflow_run to run in it, "+
		"and close it with skyvern_browser_session_close when done.", info.Timeout, bs.BrowserSessionID)
	return &info, nil
}

func (t *browserSessionTools) browserSessionList(ctx context.Context, _ BrowserSessionListInput) (*BrowserSessionList, error) {
	ss, err := t.sessions.List(ctx)
	if err != nil {
		return nil, err
	}
	out := &BrowserSessionList{BrowserSessions: shapeAll(ss, browserSessionInfo)}
	for _, info := range out.BrowserSessions {
		if info.Open {
			out.Open++
		}
	}
	return out, nil
}

func (t *browserSessionTools) browserSessionGet(ctx context.Context, in BrowserSessionIDInput) (*BrowserSessionInfo, error) {
	return answerWith(browserSessionInfo)(t.sessions.Get(ctx, in.SessionID))
}

func (t *browserSessionTools) browserSessionClose(ctx context.Context, in BrowserSessionIDInput) (*BrowserSessionInfo, error) {
	if err := t.sessions.Close(ctx, in.SessionID); err != nil {
		return nil, err
	}
	// The session as it stands is a courtesy: the close itself worked.
	bs, err := t.sessions.Get(ctx, in.SessionID)
	if err != nil {
		return &BrowserSessionInfo{BrowserSessionID: in.SessionID, Status: "closed"}, nil
	}
	info := browserSessionInfo(bs)
	if bs.GenerateBrowserProfile {
		info.Note = fmt.Sprintf("The session kept its browser state: skyvern_browser_profile_create with browser_session_id %s "+
			"saves it as a browser profile.", bs.BrowserSessionID)
	}
	return &info, nil
}

func (t *browserSessionTools) login(ctx context.Context, in LoginInput) (*RunResult, error) {
	if in.BrowserSessionID != "" && in.BrowserProfileID != "" {
		return nil, argError("browser_profile_id", "give browser_session_id or browser_profile_id, not both: a run in a session uses the session's browser "+
			"as it is (open the session from the profile with skyvern_browser_session_create to combine them)")
	}
	if in.URL == "" && in.BrowserSessionID == "" {
		return nil, argError("url", "the sign-in page is required, unless the login runs in a browser session (browser_session_id), where it signs in on the page the session shows")
	}
	run, err := t.runs.Login(ctx, &client.LoginRequest{
		CredentialID: in.CredentialID, URL: in.URL, Prompt: in.Prompt, TOTPIdentifier: in.TOTPIdentifier,
		BrowserSessionID: in.BrowserSessionID, BrowserProfileID: in.BrowserProfileID,
	})
	if err != nil {
		return nil, err
	}
	return t.follower.follow(ctx, run, true, in.TimeoutSeconds, false)
}

// browserSessionInfo copies what a model needs of a session.
func browserSessionInfo(bs *client.BrowserSession) BrowserSessionInfo {
	status := ptr.Value(bs.Status)
	return BrowserSessionInfo{
		BrowserSessionID: bs.BrowserSessionID, Status: status, Open: status == "running",
		Timeout: ptr.Value(bs.Timeout), BrowserProfileID: ptr.Value(bs.BrowserProfileID),
		GenerateBrowserProfile: bs.GenerateBrowserProfile,
		StartedAt:              timeText(bs.StartedAt), CompletedAt: timeText(bs.CompletedAt), CreatedAt: timeText(&bs.CreatedAt),
	}
}
