package client_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

// Sessions as the service answers them: one open, from a profile, that
// keeps its state when it closes; one that ended at its timeout.
const (
	openSessionReply = `{"browser_session_id":"pbs_1","organization_id":"o_1","status":"running","runnable_type":null,"runnable_id":null,
		"timeout":60,"browser_address":null,"app_url":null,"extensions":null,"browser_type":null,"browser_profile_id":"bp_1",
		"generate_browser_profile":true,"vnc_streaming_supported":false,"download_path":null,"downloaded_files":null,"recordings":null,
		"started_at":"2026-02-01T09:00:00","completed_at":null,"created_at":"2026-02-01T09:00:00.250000","modified_at":"2026-02-01T09:00:00.250000",
		"deleted_at":null,"new_field":1}`
	timedOutSessionReply = `{"browser_session_id":"pbs_2","organization_id":"o_1","status":"timed_out","timeout":5,"browser_profile_id":null,
		"generate_browser_profile":false,"started_at":"2026-02-01T08:00:00","completed_at":"2026-02-01T08:05:00",
		"created_at":"2026-02-01T08:00:00","modified_at":"2026-02-01T08:05:00","deleted_at":null}`
)

// TestBrowserSessionOperations: each method's route and body, and what it
// decodes of the reply; and the runs that name a session.
func TestBrowserSessionOperations(t *testing.T) {
	created := time.Date(2026, 2, 1, 9, 0, 0, 250000000, time.UTC)
	for _, op := range []operation{
		{
			name: "open a session", route: "POST /v1/browser_sessions", reply: openSessionReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{
					URL: "https://example.com/login", Timeout: 60, BrowserProfileID: "bp_1", GenerateBrowserProfile: true})
			},
			wantPath: "/v1/browser_sessions",
			wantBody: `{"url":"https://example.com/login","timeout":60,"browser_profile_id":"bp_1","generate_browser_profile":true}`,
			check: func(t *testing.T, got any) {
				s := got.(*client.BrowserSession)
				if s.BrowserSessionID != "pbs_1" || s.OrganizationID != "o_1" || s.Status == nil || *s.Status != "running" ||
					s.Timeout == nil || *s.Timeout != 60 || s.BrowserProfileID == nil || *s.BrowserProfileID != "bp_1" ||
					!s.GenerateBrowserProfile || s.StartedAt == nil || s.CompletedAt != nil || !s.CreatedAt.Equal(created) {
					t.Errorf("session: %+v", s)
				}
			},
		},
		{
			// Nothing given: an empty object, and the service's defaults
			// (60 minutes, no page, no profile).
			name: "open a session with the defaults", route: "POST /v1/browser_sessions", reply: openSessionReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{})
			},
			wantPath: "/v1/browser_sessions",
			wantBody: `{}`,
		},
		{
			name: "open a session without a request", route: "POST /v1/browser_sessions", reply: openSessionReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.Create(ctx, nil)
			},
			wantPath: "/v1/browser_sessions",
			wantBody: `{}`,
		},
		{
			name: "list sessions", route: "GET /v1/browser_sessions", reply: "[" + openSessionReply + "," + timedOutSessionReply + "]",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.List(ctx)
			},
			wantPath: "/v1/browser_sessions",
			check: func(t *testing.T, got any) {
				list := got.([]*client.BrowserSession)
				if len(list) != 2 || list[0].BrowserSessionID != "pbs_1" || *list[1].Status != "timed_out" ||
					list[1].CompletedAt == nil || !list[1].CompletedAt.Equal(time.Date(2026, 2, 1, 8, 5, 0, 0, time.UTC)) ||
					list[1].BrowserProfileID != nil || list[1].GenerateBrowserProfile {
					t.Errorf("sessions: %+v", list)
				}
			},
		},
		{
			name: "list no sessions", route: "GET /v1/browser_sessions", reply: `[]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.List(ctx)
			},
			wantPath: "/v1/browser_sessions",
			check: func(t *testing.T, got any) {
				if list := got.([]*client.BrowserSession); len(list) != 0 {
					t.Errorf("an empty list: %#v", list)
				}
			},
		},
		{
			name: "get a session", route: "GET /v1/browser_sessions/{id}", reply: timedOutSessionReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.Get(ctx, "pbs_2")
			},
			wantPath: "/v1/browser_sessions/pbs_2",
			check: func(t *testing.T, got any) {
				if s := got.(*client.BrowserSession); s.BrowserSessionID != "pbs_2" || *s.Timeout != 5 {
					t.Errorf("session: %+v", s)
				}
			},
		},
		{
			// The id is one path segment, however odd.
			name: "get a session with an odd id", route: "GET /v1/browser_sessions/{id}", reply: openSessionReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.Get(ctx, "a/b?c")
			},
			wantPath: "/v1/browser_sessions/a%2Fb%3Fc",
		},
		{
			name: "keep the state", route: "PATCH /v1/browser_sessions/{id}", reply: openSessionReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.SetGenerateProfile(ctx, "pbs_1", true)
			},
			wantPath: "/v1/browser_sessions/pbs_1",
			wantBody: `{"generate_browser_profile":true}`,
			check: func(t *testing.T, got any) {
				if s := got.(*client.BrowserSession); !s.GenerateBrowserProfile {
					t.Errorf("session: %+v", s)
				}
			},
		},
		{
			// false is sent, not left out: it is the change.
			name: "stop keeping the state", route: "PATCH /v1/browser_sessions/{id}", reply: openSessionReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserSessions.SetGenerateProfile(ctx, "pbs_1", false)
			},
			wantPath: "/v1/browser_sessions/pbs_1",
			wantBody: `{"generate_browser_profile":false}`,
		},
		{
			name: "close a session", route: "POST /v1/browser_sessions/{id}/close", reply: `{}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.BrowserSessions.Close(ctx, "pbs_1")
			},
			wantPath: "/v1/browser_sessions/pbs_1/close",
		},
		{
			name: "make a profile from a closed session", route: "POST /v1/browser_profiles", reply: emptyProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "Signed in", BrowserSessionID: "pbs_1"})
			},
			wantPath: "/v1/browser_profiles",
			wantBody: `{"name":"Signed in","browser_session_id":"pbs_1"}`,
		},
		{
			// Runs name a session with browser_session_id.
			name: "start a task in a session", route: "POST /v1/run/tasks",
			reply: `{"run_id":"tsk_v2_1","status":"queued","run_type":"task_v1"}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "Read the balance", BrowserSessionID: "pbs_1"})
			},
			wantPath: "/v1/run/tasks",
			wantBody: `{"prompt":"Read the balance","browser_session_id":"pbs_1"}`,
		},
		{
			name: "start an agent run in a session", route: "POST /v1/run/agents",
			reply: `{"run_id":"wr_1","status":"queued","run_type":"workflow_run"}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: "wpid_1", BrowserSessionID: "pbs_1"})
			},
			wantPath: "/v1/run/agents",
			wantBody: `{"workflow_id":"wpid_1","browser_session_id":"pbs_1"}`,
		},
		{
			name: "start a login run in a session", route: "POST /v1/run/tasks/login",
			reply: `{"run_id":"wr_2","status":"queued","run_type":"workflow_run"}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.Login(ctx, &client.LoginRequest{CredentialID: "cred_1", URL: "https://example.com/login", BrowserSessionID: "pbs_1"})
			},
			wantPath: "/v1/run/tasks/login",
			wantBody: `{"credential_type":"skyvern","credential_id":"cred_1","url":"https://example.com/login","browser_session_id":"pbs_1"}`,
		},
	} {
		t.Run(op.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.reply(op.route, http.StatusOK, op.reply)
			got, err := op.call(t.Context(), ts.client)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			req := ts.only()
			if want := strings.Fields(op.route)[0]; req.Method != want {
				t.Errorf("method %s, want %s", req.Method, want)
			}
			if req.Path != op.wantPath {
				t.Errorf("path %s, want %s", req.Path, op.wantPath)
			}
			if len(req.Query) != 0 {
				t.Errorf("query %v, want none", req.Query)
			}
			if k := req.Header.Get("X-Api-Key"); k != testAPIKey {
				t.Errorf("x-api-key %q", k)
			}
			if op.wantBody == "" {
				if len(req.Body) != 0 {
					t.Errorf("unexpected body %s", req.Body)
				}
			} else {
				if ct := req.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				assertJSONEqual(t, "body", req.Body, op.wantBody)
			}
			if op.check != nil {
				op.check(t, got)
			}
		})
	}
}

// TestBrowserSessionChecks: a session id that cannot be right is refused
// before anything is sent, with a message naming what is missing.
func TestBrowserSessionChecks(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	c := ts.client
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"get without an id", func() error { _, err := c.BrowserSessions.Get(ctx, ""); return err }, "browser session id must not be empty"},
		{"get with a blank id", func() error { _, err := c.BrowserSessions.Get(ctx, " \t"); return err }, "browser session id must not be empty"},
		{"keep without an id", func() error { _, err := c.BrowserSessions.SetGenerateProfile(ctx, "", true); return err }, "browser session id must not be empty"},
		{"keep with a blank id", func() error { _, err := c.BrowserSessions.SetGenerateProfile(ctx, "  ", false); return err }, "browser session id must not be empty"},
		{"close without an id", func() error { return c.BrowserSessions.Close(ctx, "") }, "browser session id must not be empty"},
		{"close with a blank id", func() error { return c.BrowserSessions.Close(ctx, " ") }, "browser session id must not be empty"},
	} {
		err := tc.call()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if reqs := ts.requests(); len(reqs) != 0 {
		t.Errorf("%d requests were sent; the checks must refuse before sending: %+v", len(reqs), reqs)
	}
}

// TestBrowserSessionErrors: the service's refusals come back as
// *client.Error with its detail: an unknown session, a closed one named by
// a run or changed, a bad timeout, an executor that keeps no sessions, and
// a profile asked of a session that is still open.
func TestBrowserSessionErrors(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("GET /v1/browser_sessions/{id}", http.StatusNotFound, `{"detail":"Browser session pbs_404 not found"}`)
	ts.reply("PATCH /v1/browser_sessions/{id}", http.StatusConflict,
		`{"detail":"Browser session pbs_2 is timed_out: only an open session can change"}`)
	ts.reply("POST /v1/run/agents", http.StatusConflict, `{"detail":"Browser session pbs_2 is closed: open a new one"}`)
	ts.reply("POST /v1/browser_sessions", http.StatusUnprocessableEntity,
		`{"detail":[{"type":"value_error","loc":["body","timeout"],"msg":"timeout is in minutes, from 5 to 240","input":1}]}`)
	ts.reply("POST /v1/browser_profiles", http.StatusConflict,
		`{"detail":"Browser session pbs_1 is still open: close it first (with generate_browser_profile true), then make the profile"}`)

	_, err := ts.client.BrowserSessions.Get(t.Context(), "pbs_404")
	if !errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), "Browser session pbs_404 not found") {
		t.Errorf("an unknown session: %v, want ErrNotFound with the service's detail", err)
	}
	var apiErr *client.Error
	_, err = ts.client.BrowserSessions.SetGenerateProfile(t.Context(), "pbs_2", true)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), "only an open session can change") {
		t.Errorf("a session that ended: %v, want the 409 with its detail", err)
	}
	_, err = ts.client.Runs.StartAgent(t.Context(), &client.AgentRunRequest{AgentID: "wpid_1", BrowserSessionID: "pbs_2"})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), "is closed") {
		t.Errorf("a run in a closed session: %v, want the 409", err)
	}
	_, err = ts.client.BrowserSessions.Create(t.Context(), &client.BrowserSessionCreateRequest{Timeout: 1})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "from 5 to 240") {
		t.Errorf("a timeout of 1 minute: %v, want the 422 with its detail", err)
	}
	_, err = ts.client.BrowserProfiles.Create(t.Context(), &client.BrowserProfileCreateRequest{Name: "x", BrowserSessionID: "pbs_1"})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict || !strings.Contains(err.Error(), "still open") {
		t.Errorf("a profile of an open session: %v, want the 409", err)
	}

	ts = newTestServer(t, client.WithMaxRetries(0))
	ts.reply("POST /v1/browser_sessions", http.StatusServiceUnavailable, `{"detail":"This daemon's executor keeps no browser sessions"}`)
	_, err = ts.client.BrowserSessions.Create(t.Context(), nil)
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "keeps no browser sessions") {
		t.Errorf("an executor without sessions: %v, want the 503 with its detail", err)
	}
}

// TestBrowserSessionRetries: opening a session is not repeated after a
// failure that may have opened one; reading, changing and closing are.
func TestBrowserSessionRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		route string
		call  func(ctx context.Context, c *client.Client) error
		want  int
	}{
		{"create", "POST /v1/browser_sessions", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{Timeout: 30})
			return err
		}, 1},
		{"list", "GET /v1/browser_sessions", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserSessions.List(ctx)
			return err
		}, 3},
		{"get", "GET /v1/browser_sessions/{id}", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserSessions.Get(ctx, "pbs_1")
			return err
		}, 3},
		{"keep the state", "PATCH /v1/browser_sessions/{id}", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserSessions.SetGenerateProfile(ctx, "pbs_1", true)
			return err
		}, 3},
		{"close", "POST /v1/browser_sessions/{id}/close", func(ctx context.Context, c *client.Client) error {
			return c.BrowserSessions.Close(ctx, "pbs_1")
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, client.WithMaxRetries(2), client.WithRetryBackoff(time.Millisecond, time.Millisecond))
			ts.reply(tc.route, http.StatusServiceUnavailable, `{"detail":"try later"}`)
			if err := tc.call(t.Context(), ts.client); err == nil {
				t.Fatal("want the 503")
			}
			reqs := ts.requests()
			if len(reqs) != tc.want {
				t.Errorf("%d requests, want %d", len(reqs), tc.want)
			}
			// A retry sends the same body again.
			for _, r := range reqs[1:] {
				if !reflect.DeepEqual(r.Body, reqs[0].Body) {
					t.Errorf("a retry sent %s, the first attempt %s", r.Body, reqs[0].Body)
				}
			}
		})
	}
}
