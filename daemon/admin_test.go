package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/store"
)

const testAdminToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// adminEnv is a daemon handler with the admin routes on, served on loopback
// over a real bbolt file holding a default organization.
type adminEnv struct {
	t     *testing.T
	url   string
	store *store.Store
	srv   *api.Server
}

func newAdminEnv(t *testing.T) *adminEnv {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "abctl.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, _, err := st.CreateOrganization(t.Context(), "default"); err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(st, nil)
	srv.EnableAdmin(testAdminToken)
	t.Cleanup(func() { srv.EnableAdmin("") })
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &adminEnv{t: t, url: hs.URL, store: st, srv: srv}
}

// do sends a request with the given admin token ("" for none).
func (e *adminEnv) do(method, path, token, contentType, body string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Admin-Token", token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdminCreateOrganization(t *testing.T) {
	e := newAdminEnv(t)
	code, body := e.do("POST", "/admin/organizations", testAdminToken, "application/json", `{"name": "  acme  "}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	var fields map[string]string
	if err := json.Unmarshal([]byte(body), &fields); err != nil {
		t.Fatalf("create answered %s: %v", body, err)
	}
	if len(fields) != 2 || !strings.HasPrefix(fields["organization_id"], "o_") || !strings.HasPrefix(fields["api_key"], store.APIKeyPrefix) {
		t.Fatalf("create answered %s, want exactly organization_id and api_key", body)
	}
	org, err := e.store.Authenticate(t.Context(), fields["api_key"])
	if err != nil {
		t.Fatalf("the new key does not authenticate: %v", err)
	}
	if org.ID != fields["organization_id"] || org.Name != "acme" {
		t.Errorf("the key authenticates as %+v, want %s named acme", org, fields["organization_id"])
	}

	code, body = e.do("GET", "/admin/organizations", testAdminToken, "", "")
	if code != 200 {
		t.Fatalf("list: %d %s", code, body)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0]["name"] != "default" || list[1]["name"] != "acme" || list[1]["organization_id"] != org.ID || list[1]["created_at"] == nil {
		t.Errorf("list = %s, want default then acme", body)
	}
}

func TestAdminRejectsBadCredentials(t *testing.T) {
	e := newAdminEnv(t)
	for _, tc := range []struct{ name, method, token string }{
		{"no token", "POST", ""},
		{"wrong token", "POST", strings.Repeat("0", len(testAdminToken))},
		{"token prefix", "POST", testAdminToken[:10]},
		{"list without token", "GET", ""},
		{"an API key instead", "GET", "abk_whatever"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do(tc.method, "/admin/organizations", tc.token, "application/json", `{"name":"x"}`)
			if code != 403 || body != `{"detail":"Invalid credentials"}` {
				t.Errorf("got %d %s, want 403 Invalid credentials", code, body)
			}
		})
	}
	orgs, err := e.store.Organizations(t.Context())
	if err != nil || len(orgs) != 1 {
		t.Errorf("organizations after rejected requests: %v, %v; want only the default", orgs, err)
	}
}

func TestAdminAnswersOnlyLoopback(t *testing.T) {
	e := newAdminEnv(t)
	for _, tc := range []struct {
		remote string
		want   int
	}{
		{"203.0.113.5:1234", 403},
		{"[2001:db8::1]:1234", 403},
		{"[::ffff:203.0.113.5]:1234", 403},
		{"garbage", 403},
		{"127.0.0.1:1234", 200},
		{"127.8.9.10:1234", 200},
		{"[::1]:1234", 200},
		{"[::ffff:127.0.0.1]:1234", 200},
	} {
		t.Run(tc.remote, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/admin/organizations", nil)
			req.RemoteAddr = tc.remote
			req.Header.Set("X-Admin-Token", testAdminToken)
			rec := httptest.NewRecorder()
			e.srv.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("got %d %s, want %d", rec.Code, rec.Body, tc.want)
			}
			if tc.want == 403 && !strings.Contains(rec.Body.String(), "only requests from loopback") {
				t.Errorf("body %s does not say that the routes answer only loopback", rec.Body)
			}
		})
	}
}

func TestAdminRejectsBadBodies(t *testing.T) {
	e := newAdminEnv(t)
	for _, tc := range []struct {
		name, contentType, body, wantType string
	}{
		{"malformed JSON", "application/json", `{"name":`, "json_invalid"},
		{"empty body", "application/json", ``, "missing"},
		{"no name", "application/json", `{}`, "missing"},
		{"null name", "application/json", `{"name": null}`, "missing"},
		{"name not a string", "application/json", `{"name": 5}`, "string_type"},
		{"empty name", "application/json", `{"name": "   "}`, "string_too_short"},
		{"long name", "application/json", `{"name": "` + strings.Repeat("é", 256) + `"}`, "string_too_long"},
		{"control character", "application/json", `{"name": "a\u0007b"}`, "value_error"},
		{"not JSON", "text/plain", `name=x`, "model_attributes_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := e.do("POST", "/admin/organizations", testAdminToken, tc.contentType, tc.body)
			if code != 422 {
				t.Fatalf("got %d %s, want 422", code, body)
			}
			var got struct {
				Detail []struct {
					Type string `json:"type"`
					Loc  []any  `json:"loc"`
				} `json:"detail"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil || len(got.Detail) != 1 || got.Detail[0].Type != tc.wantType {
				t.Errorf("body %s, want one %s entry", body, tc.wantType)
			}
		})
	}
	// A name of exactly the limit is fine.
	if code, body := e.do("POST", "/admin/organizations", testAdminToken, "application/json",
		`{"name": "`+strings.Repeat("é", admin.MaxOrganizationNameLength)+`"}`); code != 200 {
		t.Errorf("a name of %d characters: %d %s", admin.MaxOrganizationNameLength, code, body)
	}
	// The body limit applies.
	huge := `{"name": "x", "pad": "` + strings.Repeat("a", 9<<20) + `"}`
	if code, body := e.do("POST", "/admin/organizations", testAdminToken, "application/json", huge); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than") {
		t.Errorf("a 9 MiB body: %d %.200s", code, body)
	}
	orgs, _ := e.store.Organizations(t.Context())
	if len(orgs) != 2 {
		t.Errorf("%d organizations after the bad bodies, want 2 (default and the one of the longest name)", len(orgs))
	}
}

func TestAdminRoutingAndDisabled(t *testing.T) {
	e := newAdminEnv(t)
	if code, body := e.do("DELETE", "/admin/organizations", testAdminToken, "", ""); code != 405 || body != `{"detail":"Method Not Allowed"}` {
		t.Errorf("DELETE: %d %s", code, body)
	}
	if code, body := e.do("GET", "/admin/keys", testAdminToken, "", ""); code != 404 || body != `{"detail":"Not Found"}` {
		t.Errorf("unknown admin path: %d %s", code, body)
	}
	// The admin token is not an API key, and the admin routes do not take one.
	if code, _ := e.do("GET", "/v1/agents", testAdminToken, "", ""); code != 403 {
		t.Errorf("/v1/agents with only the admin token: %d, want 403", code)
	}

	e.srv.EnableAdmin("")
	for _, token := range []string{testAdminToken, ""} {
		if code, body := e.do("GET", "/admin/organizations", token, "", ""); code != 404 || body != `{"detail":"Not Found"}` {
			t.Errorf("disabled admin, token %q: %d %s, want 404", token, code, body)
		}
	}
	// A server that never had a token answers 404 too.
	st := e.store
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/admin/organizations", nil)
	req.RemoteAddr = "127.0.0.1:1234"
	api.NewServer(st, nil).ServeHTTP(rec, req)
	if rec.Code != 404 {
		t.Errorf("server without admin: %d %s", rec.Code, rec.Body)
	}
}

func TestAdminClient(t *testing.T) {
	e := newAdminEnv(t)
	addr := strings.TrimPrefix(e.url, "http://")
	ac, err := admin.NewClient(admin.State{Addr: addr, AdminToken: testAdminToken})
	if err != nil {
		t.Fatal(err)
	}
	created, err := ac.CreateOrganization(t.Context(), "team b")
	if err != nil {
		t.Fatal(err)
	}
	if org, err := e.store.Authenticate(t.Context(), created.APIKey); err != nil || org.ID != created.OrganizationID {
		t.Errorf("Authenticate(new key) = %+v, %v", org, err)
	}
	orgs, err := ac.Organizations(t.Context())
	if err != nil || len(orgs) != 2 || orgs[1].Name != "team b" {
		t.Errorf("Organizations = %+v, %v", orgs, err)
	}
	_, err = ac.CreateOrganization(t.Context(), "")
	var ae *admin.Error
	if !errors.As(err, &ae) || ae.StatusCode != 422 || !strings.Contains(ae.Detail, "empty") {
		t.Errorf("empty name: %v", err)
	}

	bad, _ := admin.NewClient(admin.State{Addr: addr, AdminToken: "nope"})
	if _, err := bad.Organizations(context.Background()); !errors.As(err, &ae) || ae.StatusCode != 403 || ae.Detail != "Invalid credentials" {
		t.Errorf("wrong token: %v", err)
	}

	for addr, want := range map[string]string{
		"0.0.0.0:8780":   "127.0.0.1:8780",
		"[::]:8780":      "[::1]:8780",
		"[::1]:8780":     "[::1]:8780",
		"localhost:8780": "127.0.0.1:8780",
	} {
		c, err := admin.NewClient(admin.State{Addr: addr, AdminToken: "t"})
		if err != nil || c.Addr() != want {
			t.Errorf("NewAdminClient(%s): %v, %v; want %s", addr, c, err, want)
		}
	}
	if _, err := admin.NewClient(admin.State{Addr: "192.0.2.7:8780", AdminToken: "t"}); err == nil || !strings.Contains(err.Error(), "not on loopback") {
		t.Errorf("non-loopback address: %v", err)
	}
}

func TestValidateOrganizationName(t *testing.T) {
	for in, want := range map[string]string{"acme": "acme", "  Team B\t": "Team B", strings.Repeat("x", 255): strings.Repeat("x", 255)} {
		if got, err := admin.ValidateOrganizationName(in); err != nil || got != want {
			t.Errorf("ValidateOrganizationName(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", " \n ", strings.Repeat("x", 256), "a\nb", "a\x00b", "a\u0085b", "\xff"} {
		if _, err := admin.ValidateOrganizationName(in); err == nil {
			t.Errorf("ValidateOrganizationName(%q) accepted", in)
		}
	}
}
