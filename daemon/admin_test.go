package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
)

// adminEnv is a daemon handler with the admin routes served on a real
// admin socket (admin.Listen in a temporary data directory) and the API
// served over TCP on loopback, over a real bbolt file holding a default
// organization.
type adminEnv struct {
	t      *testing.T
	socket string // the admin socket's path
	apiURL string // the TCP API's base URL
	key    string // the default organization's API key
	store  store.Store
	srv    *api.Server
	hc     *http.Client // reaches the admin socket
}

func newAdminEnv(t *testing.T, opts ...api.ServerOption) *adminEnv {
	t.Helper()
	dir := t.TempDir()
	st, err := boltstore.Open(filepath.Join(dir, "abctl.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	_, key, err := st.CreateOrganization(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(st, nil, opts...)
	ln, err := admin.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	adminSrv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: srv.AdminHandler()}}
	adminSrv.Start()
	t.Cleanup(adminSrv.Close)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	socket := admin.SocketPath(dir)
	hc := &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		},
	}}
	t.Cleanup(hc.CloseIdleConnections)
	return &adminEnv{t: t, socket: socket, apiURL: hs.URL, key: key, store: st, srv: srv, hc: hc}
}

// do sends a request to the admin socket.
func (e *adminEnv) do(method, path, contentType, body string) (int, string) {
	e.t.Helper()
	return e.send(e.hc, "http://abctl", method, path, nil, contentType, body)
}

// doTCP sends a request to the TCP API with the given headers.
func (e *adminEnv) doTCP(method, path string, header map[string]string, contentType, body string) (int, string) {
	e.t.Helper()
	return e.send(http.DefaultClient, e.apiURL, method, path, header, contentType, body)
}

func (e *adminEnv) send(hc *http.Client, base, method, path string, header map[string]string, contentType, body string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdminCreateOrganization(t *testing.T) {
	e := newAdminEnv(t)
	code, body := e.do("POST", "/admin/organizations", "application/json", `{"name": "  acme  "}`)
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

	code, body = e.do("GET", "/admin/organizations", "", "")
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

// The TCP API has no admin routes: /admin/... answers as any unknown path,
// whatever credentials come with it and wherever from (loopback here, as
// a run's http_request block or browser page would send it).
func TestAdminNotOnTheAPI(t *testing.T) {
	e := newAdminEnv(t)
	for _, tc := range []struct {
		name   string
		header map[string]string
	}{
		{"API key and the former admin token header", map[string]string{"X-Api-Key": e.key, "X-Admin-Token": strings.Repeat("ab", 32)}},
		{"API key", map[string]string{"X-Api-Key": e.key}},
		{"nothing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode, wantBody := e.doTCP("GET", "/no/such/path", tc.header, "", "")
			for _, method := range []string{"GET", "POST"} {
				for _, path := range []string{"/admin/organizations", "/admin/", "/admin"} {
					code, body := e.doTCP(method, path, tc.header, "application/json", `{"name":"intruder"}`)
					if code != wantCode || body != wantBody {
						t.Errorf("%s %s over TCP: %d %s, want %d %s as for an unknown path", method, path, code, body, wantCode, wantBody)
					}
				}
			}
			if tc.header["X-Api-Key"] != "" && wantCode != 404 {
				t.Errorf("an unknown path with a valid API key: %d %s, want 404", wantCode, wantBody)
			}
		})
	}
	orgs, err := e.store.Organizations(t.Context())
	if err != nil || len(orgs) != 1 {
		t.Errorf("organizations after the requests over TCP: %v, %v; want only the default", orgs, err)
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
			code, body := e.do("POST", "/admin/organizations", tc.contentType, tc.body)
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
	if code, body := e.do("POST", "/admin/organizations", "application/json",
		`{"name": "`+strings.Repeat("é", admin.MaxOrganizationNameLength)+`"}`); code != 200 {
		t.Errorf("a name of %d characters: %d %s", admin.MaxOrganizationNameLength, code, body)
	}
	// The body limit applies.
	huge := `{"name": "x", "pad": "` + strings.Repeat("a", 9<<20) + `"}`
	if code, body := e.do("POST", "/admin/organizations", "application/json", huge); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than") {
		t.Errorf("a 9 MiB body: %d %.200s", code, body)
	}
	orgs, _ := e.store.Organizations(t.Context())
	if len(orgs) != 2 {
		t.Errorf("%d organizations after the bad bodies, want 2 (default and the one of the longest name)", len(orgs))
	}
}

// The admin socket serves the admin routes and nothing else.
func TestAdminSocketRouting(t *testing.T) {
	e := newAdminEnv(t)
	if code, body := e.do("DELETE", "/admin/organizations", "", ""); code != 405 || body != `{"detail":"Method Not Allowed"}` {
		t.Errorf("DELETE: %d %s", code, body)
	}
	for _, path := range []string{"/admin/keys", "/v1/agents", "/healthz", "/metrics", "/"} {
		if code, body := e.do("GET", path, "", ""); code != 404 || body != `{"detail":"Not Found"}` {
			t.Errorf("GET %s on the admin socket: %d %s, want 404", path, code, body)
		}
	}
}

func TestAdminClient(t *testing.T) {
	e := newAdminEnv(t)
	ac := admin.NewClient(e.socket)
	if ac.Socket() != e.socket {
		t.Errorf("Socket() = %q, want %q", ac.Socket(), e.socket)
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

	// No socket there: the error names the path, and no request went
	// anywhere else.
	missing := filepath.Join(t.TempDir(), "admin.sock")
	if _, err := admin.NewClient(missing).Organizations(context.Background()); err == nil || !strings.Contains(err.Error(), missing) || errors.As(err, &ae) {
		t.Errorf("client of a missing socket: %v, want a connection error naming %s", err, missing)
	}
	long := "/" + strings.Repeat("d", admin.MaxSocketPath()) + "/admin.sock"
	if _, err := admin.NewClient(long).Organizations(context.Background()); err == nil || !strings.Contains(err.Error(), "more than the") {
		t.Errorf("client of a socket path too long: %v", err)
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

// Go's profiles answer on the admin socket with WithPprof (abctl daemon
// --pprof), and nowhere without it; the TCP port never answers them, not
// even to an API key (its cmdline would show the daemon's --api-key).
func TestPprofOnlyOnTheAdminSocket(t *testing.T) {
	paths := []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1", "/debug/pprof/heap", "/debug/pprof/symbol"}
	key := func(e *adminEnv) map[string]string { return map[string]string{"X-Api-Key": e.key} }
	t.Run("without the flag", func(t *testing.T) {
		e := newAdminEnv(t)
		for _, p := range paths {
			if code, body := e.do("GET", p, "", ""); code != 404 {
				t.Errorf("GET %s on the admin socket: %d %.200s, want 404", p, code, body)
			}
			if code, body := e.doTCP("GET", p, key(e), "", ""); code != 404 {
				t.Errorf("GET %s over TCP: %d %.200s, want 404", p, code, body)
			}
		}
	})
	t.Run("with the flag", func(t *testing.T) {
		e := newAdminEnv(t, api.WithPprof(true))
		for _, p := range paths {
			if code, body := e.do("GET", p, "", ""); code != 200 || body == "" {
				t.Errorf("GET %s on the admin socket: %d %.200s, want 200 and a profile", p, code, body)
			}
			if code, body := e.doTCP("GET", p, key(e), "", ""); code != 404 {
				t.Errorf("GET %s over TCP: %d %.200s, want 404", p, code, body)
			}
		}
		if _, body := e.do("GET", "/debug/pprof/goroutine?debug=1", "", ""); !strings.Contains(body, "goroutine profile:") {
			t.Errorf("the goroutine profile reads %.200s", body)
		}
		// A CPU profile of one second, as `go tool pprof` fetches it.
		if code, body := e.do("GET", "/debug/pprof/profile?seconds=1", "", ""); code != 200 || len(body) == 0 {
			t.Errorf("CPU profile: %d, %d bytes", code, len(body))
		}
	})
}
