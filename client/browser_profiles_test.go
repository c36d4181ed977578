package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

// Profiles as the service answers them: one made from an agent's run, one
// empty, one deleted.
const (
	runProfileReply = `{"browser_profile_id":"bp_1","organization_id":"o_1","name":"Billing, signed in","description":"the billing portal",
		"source_browser_type":null,"proxy_location":null,"proxy_session_id":null,"is_managed":false,"workflow_permanent_id":"wpid_7",
		"browser_profile_key_digest":null,"created_at":"2026-01-31T15:20:42.160725","modified_at":"2026-01-31T15:20:42.160725","deleted_at":null,"new_field":1}`
	emptyProfileReply = `{"browser_profile_id":"bp_2","organization_id":"o_1","name":"Fresh","description":null,"source_browser_type":null,
		"proxy_location":null,"proxy_session_id":null,"is_managed":false,"workflow_permanent_id":null,"browser_profile_key_digest":null,
		"created_at":"2026-01-31T15:21:02","modified_at":"2026-01-31T15:21:02","deleted_at":null}`
	deletedProfileReply = `{"browser_profile_id":"bp_3","organization_id":"o_1","name":"Old","description":null,"is_managed":false,
		"workflow_permanent_id":null,"created_at":"2026-01-30T09:00:00","modified_at":"2026-01-31T10:00:00","deleted_at":"2026-01-31T10:00:00"}`
)

// TestBrowserProfileOperations: each method's route, query and body, and
// what it decodes of the reply.
func TestBrowserProfileOperations(t *testing.T) {
	created := time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC)
	for _, op := range []operation{
		{
			name: "create from a run", route: "POST /v1/browser_profiles", reply: runProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{
					Name: "Billing, signed in", Description: "the billing portal", WorkflowRunID: "wr_1"})
			},
			wantPath: "/v1/browser_profiles",
			wantBody: `{"name":"Billing, signed in","description":"the billing portal","workflow_run_id":"wr_1"}`,
			check: func(t *testing.T, got any) {
				p := got.(*client.BrowserProfile)
				if p.BrowserProfileID != "bp_1" || p.OrganizationID != "o_1" || p.Name != "Billing, signed in" ||
					p.Description == nil || *p.Description != "the billing portal" || p.WorkflowPermanentID == nil ||
					*p.WorkflowPermanentID != "wpid_7" || p.IsManaged || p.DeletedAt != nil || !p.CreatedAt.Equal(created) {
					t.Errorf("profile: %+v", p)
				}
			},
		},
		{
			// An empty profile: only the name is sent.
			name: "create empty", route: "POST /v1/browser_profiles", reply: emptyProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "Fresh"})
			},
			wantPath: "/v1/browser_profiles",
			wantBody: `{"name":"Fresh"}`,
			check: func(t *testing.T, got any) {
				p := got.(*client.BrowserProfile)
				if p.BrowserProfileID != "bp_2" || p.Description != nil || p.WorkflowPermanentID != nil {
					t.Errorf("profile: %+v", p)
				}
			},
		},
		{
			name: "create from a browser session", route: "POST /v1/browser_profiles", reply: emptyProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "Fresh", BrowserSessionID: "pbs_1"})
			},
			wantPath: "/v1/browser_profiles",
			wantBody: `{"name":"Fresh","browser_session_id":"pbs_1"}`,
		},
		{
			name: "list profiles", route: "GET /v1/browser_profiles",
			reply: "[" + runProfileReply + "," + emptyProfileReply + "," + deletedProfileReply + "]",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.List(ctx, &client.ListBrowserProfilesOptions{Page: 2, PageSize: 25, SearchKey: "billing", IncludeDeleted: true})
			},
			wantPath:  "/v1/browser_profiles",
			wantQuery: map[string][]string{"page": {"2"}, "page_size": {"25"}, "search_key": {"billing"}, "include_deleted": {"true"}},
			check: func(t *testing.T, got any) {
				list := got.([]*client.BrowserProfile)
				if len(list) != 3 || list[0].BrowserProfileID != "bp_1" || list[1].BrowserProfileID != "bp_2" ||
					list[2].DeletedAt == nil || !list[2].DeletedAt.Equal(time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC)) {
					t.Errorf("profiles: %+v", list)
				}
			},
		},
		{
			name: "list profiles without options", route: "GET /v1/browser_profiles", reply: `[]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.List(ctx, nil)
			},
			wantPath: "/v1/browser_profiles",
			check: func(t *testing.T, got any) {
				if list := got.([]*client.BrowserProfile); list == nil || len(list) != 0 {
					t.Errorf("an empty list: %#v, want empty and not nil", list)
				}
			},
		},
		{
			name: "get profile", route: "GET /v1/browser_profiles/{id}", reply: runProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Get(ctx, "bp_1")
			},
			wantPath: "/v1/browser_profiles/bp_1",
			check: func(t *testing.T, got any) {
				if p := got.(*client.BrowserProfile); p.BrowserProfileID != "bp_1" {
					t.Errorf("profile: %+v", p)
				}
			},
		},
		{
			// The id is one path segment, however odd.
			name: "get profile with an odd id", route: "GET /v1/browser_profiles/{id}", reply: runProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Get(ctx, "a/b?c")
			},
			wantPath: "/v1/browser_profiles/a%2Fb%3Fc",
		},
		{
			name: "rename profile", route: "PATCH /v1/browser_profiles/{id}", reply: runProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Update(ctx, "bp_1", &client.BrowserProfileUpdateRequest{Name: client.Ptr("Billing portal")})
			},
			wantPath: "/v1/browser_profiles/bp_1",
			// The description is left as it is: not sent.
			wantBody: `{"name":"Billing portal"}`,
		},
		{
			// An empty description is sent: it clears the description.
			name: "clear a profile's description", route: "PATCH /v1/browser_profiles/{id}", reply: emptyProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Update(ctx, "bp_2", &client.BrowserProfileUpdateRequest{Description: client.Ptr("")})
			},
			wantPath: "/v1/browser_profiles/bp_2",
			wantBody: `{"description":""}`,
		},
		{
			name: "update profile without a request", route: "PATCH /v1/browser_profiles/{id}", reply: emptyProfileReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.BrowserProfiles.Update(ctx, "bp_2", nil)
			},
			wantPath: "/v1/browser_profiles/bp_2",
			wantBody: `{}`,
		},
		{
			name: "delete profile", route: "DELETE /v1/browser_profiles/{id}", reply: "",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.BrowserProfiles.Delete(ctx, "bp_3")
			},
			wantPath: "/v1/browser_profiles/bp_3",
		},
		{
			name: "reset an agent's kept state", route: "POST /v1/agents/{id}/browser_session/reset_profile", reply: "",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.Agents.ResetProfile(ctx, "wpid_7")
			},
			wantPath: "/v1/agents/wpid_7/browser_session/reset_profile",
		},
		{
			// Runs name a profile with browser_profile_id.
			name: "start an agent run from a profile", route: "POST /v1/run/agents",
			reply: `{"run_id":"wr_2","status":"queued","run_type":"workflow_run"}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: "wpid_8", BrowserProfileID: "bp_1"})
			},
			wantPath: "/v1/run/agents",
			wantBody: `{"workflow_id":"wpid_8","browser_profile_id":"bp_1"}`,
		},
		{
			name: "start a login run from a profile", route: "POST /v1/run/tasks/login",
			reply: `{"run_id":"wr_3","status":"queued","run_type":"workflow_run"}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.Login(ctx, &client.LoginRequest{CredentialID: "cred_1", URL: "https://example.com/login", BrowserProfileID: "bp_1"})
			},
			wantPath: "/v1/run/tasks/login",
			wantBody: `{"credential_type":"skyvern","credential_id":"cred_1","url":"https://example.com/login","browser_profile_id":"bp_1"}`,
		},
	} {
		t.Run(op.name, func(t *testing.T) {
			ts := newTestServer(t)
			status := http.StatusOK
			if op.reply == "" {
				status = http.StatusNoContent // as the service answers a delete and a reset
			}
			ts.reply(op.route, status, op.reply)
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
			wantQuery := op.wantQuery
			if wantQuery == nil {
				wantQuery = map[string][]string{}
			}
			if !reflect.DeepEqual(req.Query, wantQuery) {
				t.Errorf("query %v, want %v", req.Query, wantQuery)
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

// TestBrowserProfileChecks: requests that cannot be right are refused
// before anything is sent, with a message naming what is missing.
func TestBrowserProfileChecks(t *testing.T) {
	ts := newTestServer(t)
	ctx := t.Context()
	c := ts.client
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"create nil", func() error { _, err := c.BrowserProfiles.Create(ctx, nil); return err }, "BrowserProfiles.Create: the request's Name is required"},
		{"create without a name", func() error {
			_, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{WorkflowRunID: "wr_1"})
			return err
		}, "BrowserProfiles.Create: the request's Name is required"},
		{"get without an id", func() error { _, err := c.BrowserProfiles.Get(ctx, ""); return err }, "browser profile id must not be empty"},
		{"get with a blank id", func() error { _, err := c.BrowserProfiles.Get(ctx, " \t"); return err }, "browser profile id must not be empty"},
		{"update without an id", func() error {
			_, err := c.BrowserProfiles.Update(ctx, "", &client.BrowserProfileUpdateRequest{Name: client.Ptr("n")})
			return err
		}, "browser profile id must not be empty"},
		{"delete without an id", func() error { return c.BrowserProfiles.Delete(ctx, "") }, "browser profile id must not be empty"},
		{"reset without an agent id", func() error { return c.Agents.ResetProfile(ctx, "  ") }, "agent id must not be empty"},
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

// TestBrowserProfileErrors: the service's refusals come back as
// *client.Error with its detail.
func TestBrowserProfileErrors(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("GET /v1/browser_profiles/{id}", http.StatusNotFound, `{"detail":"Browser profile bp_404 not found"}`)
	ts.reply("POST /v1/browser_profiles", http.StatusBadRequest,
		`{"detail":"Workflow run wr_9 kept no browser state: only the runs of an agent with persist_browser_session keep theirs, when they end"}`)
	ts.reply("POST /v1/agents/{id}/browser_session/reset_profile", http.StatusNotFound, `{"detail":"Agent wpid_404 not found"}`)

	_, err := ts.client.BrowserProfiles.Get(t.Context(), "bp_404")
	if !errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), "Browser profile bp_404 not found") {
		t.Errorf("unknown profile: %v, want ErrNotFound with the service's detail", err)
	}
	_, err = ts.client.BrowserProfiles.Create(t.Context(), &client.BrowserProfileCreateRequest{Name: "x", WorkflowRunID: "wr_9"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "kept no browser state") {
		t.Errorf("a run that kept nothing: %v, want the 400 with its detail", err)
	}
	if err := ts.client.Agents.ResetProfile(t.Context(), "wpid_404"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("reset of an unknown agent: %v, want ErrNotFound", err)
	}
}

// TestBrowserProfileRetries: creating and deleting are not repeated after
// a failure that may have taken effect; reading, renaming and resetting
// are.
func TestBrowserProfileRetries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		route string
		call  func(ctx context.Context, c *client.Client) error
		want  int
	}{
		{"create", "POST /v1/browser_profiles", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "n"})
			return err
		}, 1},
		{"delete", "DELETE /v1/browser_profiles/{id}", func(ctx context.Context, c *client.Client) error {
			return c.BrowserProfiles.Delete(ctx, "bp_1")
		}, 1},
		{"update", "PATCH /v1/browser_profiles/{id}", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserProfiles.Update(ctx, "bp_1", &client.BrowserProfileUpdateRequest{Name: client.Ptr("n")})
			return err
		}, 3},
		{"get", "GET /v1/browser_profiles/{id}", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserProfiles.Get(ctx, "bp_1")
			return err
		}, 3},
		{"list", "GET /v1/browser_profiles", func(ctx context.Context, c *client.Client) error {
			_, err := c.BrowserProfiles.List(ctx, nil)
			return err
		}, 3},
		{"reset", "POST /v1/agents/{id}/browser_session/reset_profile", func(ctx context.Context, c *client.Client) error {
			return c.Agents.ResetProfile(ctx, "wpid_1")
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, client.WithMaxRetries(2), client.WithRetryBackoff(time.Millisecond, time.Millisecond))
			ts.reply(tc.route, http.StatusServiceUnavailable, `{"detail":"try later"}`)
			if err := tc.call(t.Context(), ts.client); err == nil {
				t.Fatal("want the 503")
			}
			if n := len(ts.requests()); n != tc.want {
				t.Errorf("%d requests, want %d", n, tc.want)
			}
		})
	}
}

// TestBrowserProfilesAll walks the pages of GET /v1/browser_profiles with
// the caller's filters, 100 a page unless asked otherwise.
func TestBrowserProfilesAll(t *testing.T) {
	ts := newTestServer(t)
	const total = 5
	ts.mux.HandleFunc("GET /v1/browser_profiles", func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		size, _ := strconv.Atoi(r.URL.Query().Get("page_size"))
		var items []string
		for i := (page - 1) * size; i < min(page*size, total); i++ {
			items = append(items, fmt.Sprintf(`{"browser_profile_id":"bp_%d","organization_id":"o_1","name":"p%d","is_managed":false,
				"created_at":"2026-01-31T15:21:02","modified_at":"2026-01-31T15:21:02"}`, i, i))
		}
		w.Write([]byte("[" + strings.Join(items, ",") + "]"))
	})
	opts := &client.ListBrowserProfilesOptions{PageSize: 2, SearchKey: "p", IncludeDeleted: true}
	var ids []string
	for p, err := range ts.client.BrowserProfiles.All(t.Context(), opts) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.BrowserProfileID)
	}
	if strings.Join(ids, ",") != "bp_0,bp_1,bp_2,bp_3,bp_4" {
		t.Errorf("ids %v", ids)
	}
	reqs := ts.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (pages of 2, 2 and 1)", len(reqs))
	}
	for i, r := range reqs {
		if q := url.Values(r.Query); q.Get("page") != strconv.Itoa(i+1) || q.Get("page_size") != "2" ||
			q.Get("search_key") != "p" || q.Get("include_deleted") != "true" {
			t.Errorf("request %d query %v", i, r.Query)
		}
	}
	if opts.Page != 0 {
		t.Errorf("the caller's options were modified: %+v", opts)
	}

	ts = newTestServer(t)
	ts.reply("GET /v1/browser_profiles", http.StatusOK, `[]`)
	for range ts.client.BrowserProfiles.All(t.Context(), nil) {
		t.Error("an empty list yielded an item")
	}
	if q := url.Values(ts.only().Query); q.Get("page") != "1" || q.Get("page_size") != "100" {
		t.Errorf("default paging: %v", q)
	}
}
