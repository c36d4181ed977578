package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
	"github.com/abctl/abctl/mcpserver"
)

// keptState is the browser state recordingSessions gives back for a
// session closed with keepState.
const keptState = `{"cookies":[{"name":"sid","value":"signed-in","domain":"portal.example.com"}]}`

// recordingSessions keeps browser sessions for a daemon whose executor (the
// scripted one) keeps none: it opens no browser, and records what the
// daemon asked of it.
type recordingSessions struct {
	mu     sync.Mutex
	opened []openCall
	closed []closeCall
}

type openCall struct {
	orgID, id string
	opts      executor.BrowserSessionOptions
}

type closeCall struct {
	orgID, id string
	keepState bool
}

func (r *recordingSessions) OpenBrowserSession(_ context.Context, orgID, id string, o executor.BrowserSessionOptions) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opened = append(r.opened, openCall{orgID, id, o})
	return nil
}

func (r *recordingSessions) CloseBrowserSession(_ context.Context, orgID, id string, keepState bool) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = append(r.closed, closeCall{orgID, id, keepState})
	if keepState {
		return []byte(keptState), nil
	}
	return nil, nil
}

func (r *recordingSessions) opens() []openCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]openCall(nil), r.opened...)
}

func (r *recordingSessions) closes() []closeCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]closeCall(nil), r.closed...)
}

// startSessionEnv is startEnv with rec keeping the daemon's browser
// sessions.
func startSessionEnv(t *testing.T, rec *recordingSessions) *env {
	t.Helper()
	e := &env{exec: &scripted.Executor{}, hooks: newHookReceiver(t)}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: e.exec, Sessions: rec, Workers: 2})
	t.Cleanup(e.exec.ReleaseAll)
	e.addr = addr
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	return e
}

// sessionFaces is faces for a daemon that keeps browser sessions in rec.
func sessionFaces(t *testing.T, f func(t *testing.T, e *env, rec *recordingSessions, s *mcp.ClientSession)) {
	t.Run("stdio", func(t *testing.T) {
		rec := &recordingSessions{}
		e := startSessionEnv(t, rec)
		f(t, e, rec, e.stdioSession(t))
	})
	t.Run("streamable_http", func(t *testing.T) {
		rec := &recordingSessions{}
		e := startSessionEnv(t, rec)
		f(t, e, rec, e.httpSession(t, testKey))
	})
}

// TestBrowserSessions: the tools open, list, show and close sessions, the
// daemon's executor opens and closes what they say, a login runs inside a
// session, a closed session keeps its state for a profile, and a profile's
// state reaches a session opened from it.
func TestBrowserSessions(t *testing.T) {
	sessionFaces(t, func(t *testing.T, e *env, rec *recordingSessions, s *mcp.ClientSession) {
		ctx := t.Context()
		keeper := call[mcpserver.BrowserSessionInfo](t, s, "skyvern_browser_session_create",
			map[string]any{"timeout": 30, "generate_browser_profile": true})
		id := keeper.BrowserSessionID
		if !strings.HasPrefix(id, "pbs_") || keeper.Status != "running" || !keeper.Open || keeper.Timeout != 30 ||
			!keeper.GenerateBrowserProfile || keeper.BrowserProfileID != "" || keeper.StartedAt == "" || keeper.CompletedAt != "" ||
			!strings.Contains(keeper.Note, "browser_session_id "+id) {
			t.Fatalf("browser_session_create = %+v", keeper)
		}
		if opens := rec.opens(); len(opens) != 1 || opens[0].id != id || opens[0].orgID == "" || opens[0].opts.State != nil || opens[0].opts.URL != "" {
			t.Fatalf("the executor was asked to open %+v", opens)
		}
		plain := call[mcpserver.BrowserSessionInfo](t, s, "skyvern_browser_session_create", nil)
		if plain.Timeout != 60 || plain.GenerateBrowserProfile || !plain.Open {
			t.Errorf("browser_session_create with the defaults = %+v", plain)
		}
		if bs, err := e.c.BrowserSessions.Get(ctx, id); err != nil || *bs.Status != "running" || !bs.GenerateBrowserProfile {
			t.Fatalf("the session the tool opened reads as %+v (%v)", bs, err)
		}

		list := call[mcpserver.BrowserSessionList](t, s, "skyvern_browser_session_list", nil)
		if len(list.BrowserSessions) != 2 || list.Open != 2 || list.BrowserSessions[0].BrowserSessionID != plain.BrowserSessionID ||
			list.BrowserSessions[1].BrowserSessionID != id {
			t.Errorf("browser_session_list = %+v, want the two, newest first", list)
		}
		got := call[mcpserver.BrowserSessionInfo](t, s, "skyvern_browser_session_get", map[string]any{"session_id": id})
		want := keeper
		want.Note = ""
		if got != want {
			t.Errorf("browser_session_get = %+v\nwant %+v", got, want)
		}

		// A login in the session: the run executes in it.
		cred, err := e.c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Portal",
			Credential: &client.PasswordCredential{Username: "ada@example.com", Password: testPassword}})
		if err != nil {
			t.Fatal(err)
		}
		login := call[mcpserver.RunResult](t, s, "skyvern_login", map[string]any{"credential_id": cred.CredentialID, "browser_session_id": id,
			"totp_identifier": "ada@example.com"})
		if login.Status != "completed" || !login.Finished || !strings.HasPrefix(login.RunID, "wr_") || login.StillRunning {
			t.Fatalf("login in a session = %+v", login)
		}
		if job, ok := e.exec.Job(login.RunID); !ok || job.BrowserSessionID != id {
			t.Errorf("the login run executed in session %q, want %s", job.BrowserSessionID, id)
		}
		run, err := e.c.Runs.Get(ctx, login.RunID)
		if err != nil {
			t.Fatal(err)
		}
		var req map[string]any
		if err := json.Unmarshal(run.RunRequest, &req); err != nil || req["credential_id"] != cred.CredentialID ||
			req["browser_session_id"] != id || req["totp_identifier"] != "ada@example.com" {
			t.Errorf("the login run's request: %s %v", run.RunRequest, err)
		}

		// Closing: the executor keeps the state it was asked to keep.
		closed := call[mcpserver.BrowserSessionInfo](t, s, "skyvern_browser_session_close", map[string]any{"session_id": id})
		if closed.Status != "closed" || closed.Open || closed.CompletedAt == "" || !strings.Contains(closed.Note, "skyvern_browser_profile_create with browser_session_id "+id) {
			t.Errorf("browser_session_close = %+v", closed)
		}
		if closes := rec.closes(); len(closes) != 1 || closes[0].id != id || !closes[0].keepState {
			t.Errorf("the executor was asked to close %+v", closes)
		}
		// Again: nothing changes, and the executor is not asked.
		if again := call[mcpserver.BrowserSessionInfo](t, s, "skyvern_browser_session_close", map[string]any{"session_id": id}); again.Status != "closed" {
			t.Errorf("closing a closed session = %+v", again)
		}
		if n := len(rec.closes()); n != 1 {
			t.Errorf("the executor was asked to close %d times", n)
		}
		if l := call[mcpserver.BrowserSessionList](t, s, "skyvern_browser_session_list", nil); l.Open != 1 {
			t.Errorf("after the close, browser_session_list = %+v", l)
		}
		msg := callError(t, s, "skyvern_login", map[string]any{"credential_id": cred.CredentialID, "browser_session_id": id})
		if !strings.Contains(msg, "409") || !strings.Contains(msg, "is closed") {
			t.Errorf("a login in a closed session: %q", msg)
		}

		// Its state becomes a profile (through the tool the close's note
		// names), which a new session starts from.
		made := call[mcpserver.BrowserProfileInfo](t, s, "skyvern_browser_profile_create", map[string]any{"name": "Portal, signed in", "browser_session_id": id})
		profile, err := e.c.BrowserProfiles.Get(ctx, made.BrowserProfileID)
		if err != nil {
			t.Fatalf("a profile from the closed session: %v", err)
		}
		fromProfile := call[mcpserver.BrowserSessionInfo](t, s, "skyvern_browser_session_create",
			map[string]any{"browser_profile_id": profile.BrowserProfileID, "timeout": 5})
		if fromProfile.BrowserProfileID != profile.BrowserProfileID || fromProfile.Timeout != 5 {
			t.Errorf("browser_session_create from a profile = %+v", fromProfile)
		}
		opens := rec.opens()
		if last := opens[len(opens)-1]; last.id != fromProfile.BrowserSessionID || string(last.opts.State) != keptState {
			t.Errorf("the session from the profile was opened with state %q, want the kept one", last.opts.State)
		}

		// A session that keeps nothing makes no profile.
		call[mcpserver.BrowserSessionInfo](t, s, "skyvern_browser_session_close", map[string]any{"session_id": plain.BrowserSessionID})
		if closes := rec.closes(); closes[len(closes)-1].id != plain.BrowserSessionID || closes[len(closes)-1].keepState {
			t.Errorf("the executor was asked to close %+v", closes)
		}
		_, err = e.c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "x", BrowserSessionID: plain.BrowserSessionID})
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "kept no browser state") {
			t.Errorf("a profile from a session that kept nothing: %v", err)
		}

		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"skyvern_browser_session_create", map[string]any{"timeout": 4}, "timeout"},
			{"skyvern_browser_session_create", map[string]any{"timeout": 241}, "timeout"},
			{"skyvern_browser_session_create", map[string]any{"browser_profile_id": "bp_404"}, "404"},
			{"skyvern_browser_session_get", map[string]any{}, "session_id"},
			{"skyvern_browser_session_get", map[string]any{"session_id": ""}, "session_id"},
			{"skyvern_browser_session_get", map[string]any{"session_id": "pbs_404"}, "404"},
			{"skyvern_browser_session_close", map[string]any{}, "session_id"},
			{"skyvern_browser_session_close", map[string]any{"session_id": "pbs_404"}, "404"},
			{"skyvern_login", map[string]any{"browser_session_id": fromProfile.BrowserSessionID}, "credential_id"},
			{"skyvern_login", map[string]any{"credential_id": cred.CredentialID, "browser_session_id": "pbs_404"}, "Browser session pbs_404 not found"},
		} {
			if msg := callError(t, s, tc.tool, tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("%s(%v): error %q does not mention %q", tc.tool, tc.args, msg, tc.want)
			}
		}
		if n := len(rec.opens()); n != 3 {
			t.Errorf("the executor was asked to open %d sessions, want 3: a refused request opens none", n)
		}
	})
}

// TestLogin: skyvern_login signs in with a stored credential and answers
// the run's status and output once it ended; its arguments are checked
// before anything starts.
func TestLogin(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		ctx := t.Context()
		cred, err := e.c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Portal",
			Credential: &client.PasswordCredential{Username: "ada@example.com", Password: testPassword}})
		if err != nil {
			t.Fatal(err)
		}
		res, text := callText[mcpserver.RunResult](t, s, "skyvern_login", map[string]any{"credential_id": cred.CredentialID,
			"url": "https://portal.example.com/login", "prompt": "Use the company account", "timeout_seconds": 60})
		noSecrets(t, "login", text)
		if res.Status != "completed" || !res.Finished || res.RunType != "workflow_run" || !strings.HasPrefix(res.RunID, "wr_") || res.Note != "" {
			t.Fatalf("login = %+v", res)
		}
		run, err := e.c.Runs.Get(ctx, res.RunID)
		if err != nil || run.Status != client.RunStatusCompleted {
			t.Fatalf("the login run reads as %+v (%v)", run, err)
		}
		var req map[string]any
		if err := json.Unmarshal(run.RunRequest, &req); err != nil || req["credential_id"] != cred.CredentialID ||
			req["url"] != "https://portal.example.com/login" || req["prompt"] != "Use the company account" || req["browser_session_id"] != nil {
			t.Errorf("the login run's request: %s %v", run.RunRequest, err)
		}
		if job, ok := e.exec.Job(res.RunID); !ok || job.BrowserSessionID != "" {
			t.Errorf("a login without a session executed in %q", job.BrowserSessionID)
		}

		for _, tc := range []struct {
			args map[string]any
			want string
		}{
			{map[string]any{"url": "https://x"}, "credential_id"},
			{map[string]any{"credential_id": "", "url": "https://x"}, "credential_id"},
			{map[string]any{"credential_id": cred.CredentialID}, `argument "url": the sign-in page is required, unless the login runs in a browser session`},
			{map[string]any{"credential_id": cred.CredentialID, "browser_session_id": "pbs_1", "browser_profile_id": "bp_1"},
				"give browser_session_id or browser_profile_id, not both"},
			{map[string]any{"credential_id": "cred_404", "url": "https://x"}, "404"},
			{map[string]any{"credential_id": cred.CredentialID, "url": "https://x", "browser_profile_id": "bp_404"}, "404"},
			{map[string]any{"credential_id": cred.CredentialID, "url": "https://x", "timeout_seconds": 0}, "timeout_seconds"},
		} {
			if msg := callError(t, s, "skyvern_login", tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("skyvern_login(%v): error %q does not mention %q", tc.args, msg, tc.want)
			}
		}
		// Two runs: callText called the tool twice; the refused calls
		// started none.
		if runs, err := e.c.Runs.List(ctx, nil); err != nil || len(runs) != 2 {
			t.Errorf("%d runs (%v), want the 2 of the first call: the refused logins must start none", len(runs), err)
		}
	})
}

// TestBrowserSessionsUnavailable: a daemon whose executor keeps no
// browser sessions (the scripted one, alone) answers 503 to opening one;
// the assistant reads why, and what to do instead.
func TestBrowserSessionsUnavailable(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		msg := callError(t, s, "skyvern_browser_session_create", map[string]any{"timeout": 30})
		for _, want := range []string{"503", "keeps no browser sessions", "run without browser_session_id instead"} {
			if !strings.Contains(msg, want) {
				t.Errorf("browser_session_create on a daemon without sessions: %q lacks %q", msg, want)
			}
		}
		if l := call[mcpserver.BrowserSessionList](t, s, "skyvern_browser_session_list", nil); len(l.BrowserSessions) != 0 || l.Open != 0 {
			t.Errorf("browser_session_list = %+v", l)
		}
		if msg := callError(t, s, "skyvern_browser_session_get", map[string]any{"session_id": "pbs_1"}); !strings.Contains(msg, "404") {
			t.Errorf("browser_session_get of no session: %q", msg)
		}
	})
}
