package run

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
)

func parseLogin(t *testing.T, args ...string) (*LoginOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	var got *LoginOptions
	err := cmdtest.Exec(NewCmdLogin(f, func(o *LoginOptions) error { got = o; return nil }), args...)
	return got, err
}

func TestLoginFlags(t *testing.T) {
	o, err := parseLogin(t, "--credential", "credential/cred_1", "--url", "https://portal.example.com/login", "--prompt", "Use the company account",
		"--browser-session", "session/pbs_1", "--timeout", "2m", "--no-tui")
	if err != nil {
		t.Fatal(err)
	}
	if o.Credential != "cred_1" || o.URL != "https://portal.example.com/login" || o.Prompt != "Use the company account" ||
		o.BrowserSession != "pbs_1" || o.BrowserProfile != "" || o.Follow.Timeout != 2*time.Minute || !o.Follow.NoTUI || o.Detach {
		t.Errorf("options %+v", o)
	}
	if o.Watch == nil || o.Embedded == nil || o.Client == nil {
		t.Error("the options lack the factory's parts")
	}
	// In a session, the page the session shows will do.
	if o, err := parseLogin(t, "--credential", "cred_1", "--browser-session", "pbs_1", "--detach"); err != nil || o.URL != "" || !o.Detach {
		t.Errorf("a login in a session without --url: %+v %v", o, err)
	}
	if o, err := parseLogin(t, "--credential", "cred_1", "--url", "https://x", "--browser-profile", "profile/bp_1"); err != nil || o.BrowserProfile != "bp_1" {
		t.Errorf("--browser-profile: %+v %v", o, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--credential is required: give the stored credential (cred_...) to sign in with; 'abctl credentials list' shows them"},
		{[]string{"--url", "https://x"}, "--credential is required"},
		{[]string{"--credential", "cred_1"}, "--url is required: give the site's sign-in page (in a browser session, --browser-session, it may be left out"},
		{[]string{"--credential", "profile/bp_1", "--url", "https://x"}, `--credential "profile/bp_1" names a browser profile, not a credential: give a credential id (cred_...)`},
		{[]string{"--credential", "credential/", "--url", "https://x"}, `--credential "credential/" names no credential`},
		{[]string{"--credential", "cred_1", "--browser-session", "run/wr_1"}, `--browser-session "run/wr_1" names a run, not a browser session`},
		{[]string{"--credential", "cred_1", "--browser-session", "pbs_1", "--browser-profile", "bp_1"}, "give --browser-profile or --browser-session, not both"},
		{[]string{"--credential", "cred_1", "--url", "https://x", "extra"}, "takes no arguments"},
	} {
		o, err := parseLogin(t, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("login %q: %v, want the usage error %q before the run", tc.args, err, tc.want)
		}
	}
	if _, err := parseLogin(t, "--credential", "cred_1", "--url", "https://x", "--detach", "--timeout", "1m"); err == nil {
		t.Error("--detach with --timeout was accepted")
	}
}

// TestLogin: the request of POST /v1/run/tasks/login, then the run is
// followed as `abctl run` follows one (or its id printed with --detach).
func TestLogin(t *testing.T) {
	var body []byte
	status := http.StatusOK
	reply := `{"run_id":"wr_7","status":"queued","run_type":"workflow_run"}`
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/run/tasks/login", func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(status)
		io.WriteString(w, reply)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("abk_test"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	var followed []string
	embedded := false
	exec := func(args ...string) (*cmdtest.Streams, error) {
		body = nil
		f, streams := cmdtest.NewFactory(t, nil)
		err := cmdtest.Exec(NewCmdLogin(f, func(o *LoginOptions) error {
			o.Client = func(context.Context) (*client.Client, error) { return c, nil }
			o.Embedded = func() bool { return embedded }
			o.Watch = func(_ context.Context, _ *client.Client, runID string, fl follow.Flags) error {
				followed = append(followed, runID)
				if fl.Timeout != 3*time.Second {
					t.Errorf("the follow flags %+v did not reach the watcher", fl)
				}
				return cmdutil.Silent(cmdutil.ExitError) // as a failed run does
			}
			return runLogin(t.Context(), o)
		}), args...)
		return streams, err
	}

	streams, err := exec("--credential", "cred_1", "--url", "https://portal.example.com/login", "--browser-session", "pbs_1",
		"--prompt", "Use the company account", "--timeout", "3s")
	if cmdtest.ExitCode(err) != cmdutil.ExitError {
		t.Errorf("the watcher's exit status was lost: %v", err)
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"credential_type": "skyvern", "credential_id": "cred_1", "url": "https://portal.example.com/login",
		"prompt": "Use the company account", "browser_session_id": "pbs_1"}
	if len(req) != len(want) {
		t.Errorf("request %s, want the members of %v", body, want)
	}
	for k, v := range want {
		if req[k] != v {
			t.Errorf("request %s: %s = %v, want %v", body, k, req[k], v)
		}
	}
	if strings.Join(followed, ",") != "wr_7" || streams.ErrOut.String() != "Login run wr_7 started (queued).\n" || streams.Out.Len() != 0 {
		t.Errorf("followed %v, stderr %q, stdout %q", followed, streams.ErrOut.String(), streams.Out.String())
	}

	// --detach prints the id alone, and follows nothing.
	followed = nil
	streams, err = exec("--credential", "cred_1", "--url", "https://x", "--browser-profile", "bp_1", "--detach")
	if err != nil || streams.Out.String() != "wr_7\n" || len(followed) != 0 {
		t.Errorf("--detach: %v, stdout %q, followed %v", err, streams.Out.String(), followed)
	}
	if !strings.Contains(string(body), `"browser_profile_id":"bp_1"`) {
		t.Errorf("request %s", body)
	}
	// ... but not from a daemon that stops with the command.
	embedded = true
	if _, err := exec("--credential", "cred_1", "--url", "https://x", "--detach"); !cmdtest.IsUsage(err) || body != nil {
		t.Errorf("--detach with an embedded daemon: %v, sent %s", err, body)
	}
	embedded = false

	// The service's refusal names the credential.
	status, reply = http.StatusConflict, `{"detail":"Browser session pbs_1 is closed: open a new one"}`
	if _, err := exec("--credential", "cred_1", "--browser-session", "pbs_1", "--timeout", "3s"); err == nil ||
		!strings.Contains(err.Error(), "start the login run with credential cred_1") || !strings.Contains(err.Error(), "is closed: open a new one") {
		t.Errorf("a closed session: %v", err)
	}
}
