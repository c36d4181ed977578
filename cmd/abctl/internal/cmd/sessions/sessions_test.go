package sessions

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

// fakeService answers the routes a test registers and records every
// request it receives.
type fakeService struct {
	t    *testing.T
	mux  *http.ServeMux
	mu   sync.Mutex
	reqs []seenRequest
	c    *client.Client
}

type seenRequest struct {
	Method, Path string
	Body         string
}

func newFake(t *testing.T) *fakeService {
	t.Helper()
	fs := &fakeService{t: t, mux: http.NewServeMux()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.reqs = append(fs.reqs, seenRequest{r.Method, r.URL.Path, string(b)})
		fs.mu.Unlock()
		fs.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("abk_test"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	fs.c = c
	return fs
}

func (fs *fakeService) reply(pattern string, status int, body string) {
	fs.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

func (fs *fakeService) client(context.Context) (*client.Client, error) { return fs.c, nil }

func (fs *fakeService) requests() []seenRequest {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]seenRequest(nil), fs.reqs...)
}

// sent lists the requests as "METHOD path" lines.
func (fs *fakeService) sent() string {
	var lines []string
	for _, r := range fs.requests() {
		lines = append(lines, r.Method+" "+r.Path)
	}
	return strings.Join(lines, "\n")
}

// last is the last request of method and path.
func (fs *fakeService) last(method, path string) seenRequest {
	fs.t.Helper()
	reqs := fs.requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Method == method && reqs[i].Path == path {
			return reqs[i]
		}
	}
	fs.t.Fatalf("no %s %s among %+v", method, path, reqs)
	return seenRequest{}
}

func assertJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected text is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, strings.Join(strings.Fields(want), " "))
	}
}

// The replies carry every member of the service's answer, so that -o json
// can be compared with them. cmdtest.Now is 2026-11-24 12:00 UTC: the open
// session opened 19 minutes before.
const (
	rest = `"organization_id":"o_1","runnable_type":null,"runnable_id":null,"browser_address":null,"app_url":null,"extensions":null,` +
		`"browser_type":null,"vnc_streaming_supported":false,"download_path":null,"downloaded_files":null,"recordings":null,` +
		`"created_at":"2026-11-24T11:41:00","modified_at":"2026-11-24T11:41:00","deleted_at":null`
	openReply = `{"browser_session_id":"pbs_1","status":"running","timeout":60,"browser_profile_id":"bp_1","generate_browser_profile":true,` +
		`"started_at":"2026-11-24T11:41:00","completed_at":null,` + rest + `}`
	plainReply = `{"browser_session_id":"pbs_2","status":"running","timeout":30,"browser_profile_id":null,"generate_browser_profile":false,` +
		`"started_at":"2026-11-24T11:41:00","completed_at":null,` + rest + `}`
	closedReply = `{"browser_session_id":"pbs_3","status":"closed","timeout":60,"browser_profile_id":null,"generate_browser_profile":true,` +
		`"started_at":"2026-11-24T11:41:00","completed_at":"2026-11-24T11:50:00",` + rest + `}`
	timedOutReply = `{"browser_session_id":"pbs_4","status":"timed_out","timeout":5,"browser_profile_id":null,"generate_browser_profile":false,` +
		`"started_at":"2026-11-24T11:41:00","completed_at":"2026-11-24T11:46:00",` + rest + `}`
	profileReply = `{"browser_profile_id":"bp_9","organization_id":"o_1","name":"Portal, signed in","description":null,"is_managed":false,` +
		`"workflow_permanent_id":null,"created_at":"2026-11-24T12:00:00","modified_at":"2026-11-24T12:00:00","deleted_at":null}`
)

type clientFunc = func(context.Context) (*client.Client, error)

// exec runs the command newCmd makes, against fs, and returns its stdout
// and stderr; tty makes stdout a terminal.
func exec(t *testing.T, fs *fakeService, tty bool, newCmd func(*cmdutil.Factory, clientFunc) *cobra.Command, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	f, streams := cmdtest.NewFactory(t, nil)
	if tty {
		f.IO.SetTTY(false, true, false)
	}
	err = cmdtest.Exec(newCmd(f, fs.client), args...)
	return streams.Out.String(), streams.ErrOut.String(), err
}

// The commands, run against a given client.
var (
	create = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdCreate(f, func(o *CreateOptions) error { o.Client = c; return runCreate(context.Background(), o) })
	}
	list = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdList(f, func(o *ListOptions) error { o.Client = c; return runList(context.Background(), o) })
	}
	get = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdGet(f, func(o *GetOptions) error { o.Client = c; return runGet(context.Background(), o) })
	}
	keep = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdKeepProfile(f, func(o *KeepProfileOptions) error { o.Client = c; return runKeepProfile(context.Background(), o) })
	}
	closeCmd = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdClose(f, func(o *CloseOptions) error { o.Client = c; return runClose(context.Background(), o) })
	}
)

func TestCreateOptions(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *CreateOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil }), args...)
	}
	if err := run("--url", "https://portal.example.com/login", "--timeout", "30", "--browser-profile", "profile/bp_1", "--keep-profile"); err != nil {
		t.Fatal(err)
	}
	if got.URL != "https://portal.example.com/login" || got.Minutes != 30 || got.BrowserProfile != "bp_1" || !got.KeepProfile || got.Format != printer.Name {
		t.Errorf("options %+v", got)
	}
	if err := run("-o", "json"); err != nil || got.Minutes != 0 || got.BrowserProfile != "" || got.KeepProfile || got.Format != printer.JSON {
		t.Errorf("the defaults: %+v %v", got, err)
	}
	for arg, want := range map[string]int{"5": 5, "240": 240, "2h": 120, "90m": 90, " 45 ": 45} {
		if err := run("--timeout", arg); err != nil || got.Minutes != want {
			t.Errorf("--timeout %q: %+v %v, want %d minutes", arg, got, err, want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout", "4"}, "--timeout 4 is 4 minutes: a session stays open 5 to 240 minutes (default 60)"},
		{[]string{"--timeout", "5h"}, "--timeout 5h is 300 minutes"},
		{[]string{"--timeout", "0"}, "a session stays open 5 to 240 minutes"},
		{[]string{"--timeout", "90s"}, `--timeout "90s" is not a number of minutes: give whole minutes, such as 30, or a duration such as 90m or 2h`},
		{[]string{"--timeout", "soon"}, `--timeout "soon" is not a number of minutes`},
		{[]string{"--browser-profile", "run/wr_1"}, `--browser-profile "run/wr_1" names a run, not a browser profile`},
		{[]string{"--browser-profile", "session/pbs_1"}, `names a browser session, not a browser profile`},
		{[]string{"--browser-profile", "profile/"}, `--browser-profile "profile/" names no browser profile`},
		{[]string{"--url", " "}, "--url is blank"},
		{[]string{"extra"}, "takes no arguments"},
		{[]string{"-o", "wide"}, `-o "wide" is not a format`},
	} {
		if err := run(tc.args...); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestCreate(t *testing.T) {
	fs := newFake(t)
	fs.reply("POST /v1/browser_sessions", http.StatusOK, openReply)
	out, stderr, err := exec(t, fs, false, create, "--url", "https://portal.example.com/login", "--timeout", "1h",
		"--browser-profile", "bp_1", "--keep-profile")
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/browser_sessions").Body,
		`{"url":"https://portal.example.com/login","timeout":60,"browser_profile_id":"bp_1","generate_browser_profile":true}`)
	if out != "session/pbs_1\n" {
		t.Errorf("stdout %q, want the session/ID line", out)
	}
	if !strings.Contains(stderr, "Browser session pbs_1 is open for 60 minutes. Run in it with --browser-session pbs_1; close it with 'abctl browser-sessions close pbs_1'.") {
		t.Errorf("stderr %q", stderr)
	}

	// Nothing given: nothing sent but {}, and the service's defaults.
	if out, _, err = exec(t, fs, false, create, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/browser_sessions").Body, `{}`)
	assertJSON(t, "-o json", out, openReply)

	// The service's refusal reaches the user.
	fs = newFake(t)
	fs.reply("POST /v1/browser_sessions", http.StatusServiceUnavailable, `{"detail":"This daemon's executor keeps no browser sessions"}`)
	if _, _, err := exec(t, fs, false, create); err == nil || !strings.Contains(err.Error(), "open a browser session") ||
		!strings.Contains(err.Error(), "keeps no browser sessions") {
		t.Errorf("a daemon without sessions: %v", err)
	}

	// A daemon started inside the command would take the session with it:
	// refused, and nothing is opened.
	fs = newFake(t)
	f, _ := cmdtest.NewFactory(t, nil)
	err = cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error {
		o.Client, o.Embedded = fs.client, func() bool { return true }
		return runCreate(context.Background(), o)
	}))
	if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "Start 'abctl daemon' first") || len(fs.requests()) != 0 {
		t.Errorf("with an embedded daemon: %v, requests %s", err, fs.sent())
	}
}

func TestListAndGet(t *testing.T) {
	fs := newFake(t)
	fs.reply("GET /v1/browser_sessions", http.StatusOK, "["+openReply+","+plainReply+","+closedReply+","+timedOutReply+"]")
	fs.reply("GET /v1/browser_sessions/{id}", http.StatusOK, openReply)

	out, _, err := exec(t, fs, false, list)
	if err != nil {
		t.Fatal(err)
	}
	want := "pbs_1\trunning\t60 min (41 left)\tfrom bp_1, keeps its state\t2026-11-24T11:41:00Z\n" +
		"pbs_2\trunning\t30 min (11 left)\t-\t2026-11-24T11:41:00Z\n" +
		"pbs_3\tclosed\t60 min\tstate kept\t2026-11-24T11:41:00Z\n" +
		"pbs_4\ttimed_out\t5 min\t-\t2026-11-24T11:41:00Z\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	if out, _, err = exec(t, fs, false, list, "-o", "name"); err != nil || out != "session/pbs_1\nsession/pbs_2\nsession/pbs_3\nsession/pbs_4\n" {
		t.Errorf("-o name: %q %v", out, err)
	}
	if out, _, err = exec(t, fs, false, list, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "-o json", out, "["+openReply+","+plainReply+","+closedReply+","+timedOutReply+"]")

	// A terminal gets a header and relative times.
	if out, _, err = exec(t, fs, true, get, "session/pbs_1"); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"ID ", "STATUS", "TIMEOUT", "PROFILE", "CREATED", "from bp_1, keeps its state", "19 minutes ago"} {
		if !strings.Contains(out, w) {
			t.Errorf("get on a terminal lacks %q:\n%s", w, out)
		}
	}
	fs.last("GET", "/v1/browser_sessions/pbs_1")
	if out, _, err = exec(t, fs, false, get, "pbs_1", "-o", "yaml"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "browser_session_id: pbs_1\n") || !strings.Contains(out, "status: running\n") {
		t.Errorf("-o yaml:\n%s", out)
	}
	// Several ids: a list.
	if out, _, err = exec(t, fs, false, get, "pbs_1", "sessions/pbs_1", "-o", "json"); err != nil || !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Errorf("two ids, -o json: %q %v", out, err)
	}

	// An empty list is an empty table, and [] in JSON.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions", http.StatusOK, `[]`)
	if out, _, err = exec(t, fs, false, list); err != nil || out != "" {
		t.Errorf("no sessions: %q %v", out, err)
	}
	if out, _, err = exec(t, fs, false, list, "-o", "json"); err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("no sessions, -o json: %q %v", out, err)
	}

	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/{id}", http.StatusNotFound, `{"detail":"Browser session pbs_404 not found"}`)
	if _, _, err := exec(t, fs, false, get, "pbs_404"); err == nil || !strings.Contains(err.Error(), "get browser session pbs_404") ||
		!strings.Contains(err.Error(), "Browser session pbs_404 not found") {
		t.Errorf("an unknown session: %v", err)
	}

	f, _ := cmdtest.NewFactory(t, nil)
	for _, tc := range []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"extra"}, "takes no arguments"},
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"-o", "wide"}, `-o "wide" is not a format`},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, nil, "takes one or more browser session ids"},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, []string{"profile/bp_1"}, `"profile/bp_1" names a browser profile, not a browser session`},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, []string{"runs/wr_1"}, `"runs/wr_1" names a run, not a browser session`},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, []string{"session/"}, `"session/" names no browser session`},
	} {
		if err := cmdtest.Exec(tc.cmd(), tc.args...); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestKeepProfile(t *testing.T) {
	fs := newFake(t)
	fs.reply("PATCH /v1/browser_sessions/{id}", http.StatusOK, openReply)
	out, stderr, err := exec(t, fs, false, keep, "session/pbs_1")
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("PATCH", "/v1/browser_sessions/pbs_1").Body, `{"generate_browser_profile":true}`)
	if out != "session/pbs_1\n" || !strings.Contains(stderr, "will keep its browser state when it closes: save it with 'abctl browser-sessions close pbs_1 --save-profile NAME'") {
		t.Errorf("stdout %q, stderr %q", out, stderr)
	}
	// --off sends false.
	if _, stderr, err = exec(t, fs, false, keep, "pbs_1", "--off"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("PATCH", "/v1/browser_sessions/pbs_1").Body, `{"generate_browser_profile":false}`)
	if stderr != "Browser session pbs_1 will keep nothing when it closes.\n" {
		t.Errorf("stderr %q", stderr)
	}

	// Only an open session changes: the service's 409 reaches the user.
	fs = newFake(t)
	fs.reply("PATCH /v1/browser_sessions/{id}", http.StatusConflict, `{"detail":"Browser session pbs_3 is closed: only an open session can change"}`)
	if _, _, err := exec(t, fs, false, keep, "pbs_3"); err == nil || !strings.Contains(err.Error(), "change browser session pbs_3") ||
		!strings.Contains(err.Error(), "only an open session can change") {
		t.Errorf("a closed session: %v", err)
	}

	f, _ := cmdtest.NewFactory(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "takes a browser session id"},
		{[]string{"pbs_1", "pbs_2"}, "takes a browser session id"},
		{[]string{"agent/x"}, `"agent/x" names an agent, not a browser session`},
		{[]string{"pbs_1", "--off=maybe"}, "invalid argument"},
	} {
		err := cmdtest.Exec(NewCmdKeepProfile(f, func(*KeepProfileOptions) error { t.Error("ran"); return nil }), tc.args...)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("keep-profile %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestClose(t *testing.T) {
	// An open session: closed, nothing saved.
	fs := newFake(t)
	fs.reply("GET /v1/browser_sessions/pbs_2", http.StatusOK, plainReply)
	fs.reply("POST /v1/browser_sessions/{id}/close", http.StatusOK, `{}`)
	out, stderr, err := exec(t, fs, false, closeCmd, "session/pbs_2")
	if err != nil {
		t.Fatal(err)
	}
	if fs.sent() != "GET /v1/browser_sessions/pbs_2\nPOST /v1/browser_sessions/pbs_2/close" || out != "" || stderr != "Browser session pbs_2 closed.\n" {
		t.Errorf("requests:\n%s\nstdout %q, stderr %q", fs.sent(), out, stderr)
	}
	if b := fs.last("POST", "/v1/browser_sessions/pbs_2/close").Body; b != "" {
		t.Errorf("close sent a body: %s", b)
	}

	// One that ended already: nothing to close.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/pbs_4", http.StatusOK, timedOutReply)
	if _, stderr, err = exec(t, fs, false, closeCmd, "pbs_4"); err != nil || fs.sent() != "GET /v1/browser_sessions/pbs_4" ||
		stderr != "Browser session pbs_4 had already ended (timed_out).\n" {
		t.Errorf("an ended session: %v, requests %s, stderr %q", err, fs.sent(), stderr)
	}

	// --save-profile on a session that does not keep its state yet: it is
	// made to, closed, and saved.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/pbs_2", http.StatusOK, plainReply)
	fs.reply("PATCH /v1/browser_sessions/{id}", http.StatusOK, plainReply)
	fs.reply("POST /v1/browser_sessions/{id}/close", http.StatusOK, `{}`)
	fs.reply("POST /v1/browser_profiles", http.StatusOK, profileReply)
	out, stderr, err = exec(t, fs, false, closeCmd, "pbs_2", "--save-profile", "Portal, signed in")
	if err != nil {
		t.Fatal(err)
	}
	if want := "GET /v1/browser_sessions/pbs_2\nPATCH /v1/browser_sessions/pbs_2\nPOST /v1/browser_sessions/pbs_2/close\nPOST /v1/browser_profiles"; fs.sent() != want {
		t.Errorf("requests:\n%s\nwant:\n%s", fs.sent(), want)
	}
	assertJSON(t, "PATCH", fs.last("PATCH", "/v1/browser_sessions/pbs_2").Body, `{"generate_browser_profile":true}`)
	assertJSON(t, "profile", fs.last("POST", "/v1/browser_profiles").Body, `{"name":"Portal, signed in","browser_session_id":"pbs_2"}`)
	if out != "profile/bp_9\n" || !strings.Contains(stderr, "Browser session pbs_2 closed.\n") ||
		!strings.Contains(stderr, `saved as browser profile bp_9 ("Portal, signed in"): runs start from it with --browser-profile bp_9`) {
		t.Errorf("stdout %q, stderr %q", out, stderr)
	}

	// One that keeps its state already: no PATCH.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/pbs_1", http.StatusOK, openReply)
	fs.reply("POST /v1/browser_sessions/{id}/close", http.StatusOK, `{}`)
	fs.reply("POST /v1/browser_profiles", http.StatusOK, profileReply)
	if _, _, err = exec(t, fs, false, closeCmd, "pbs_1", "--save-profile", "P"); err != nil ||
		fs.sent() != "GET /v1/browser_sessions/pbs_1\nPOST /v1/browser_sessions/pbs_1/close\nPOST /v1/browser_profiles" {
		t.Errorf("a session that keeps its state: %v, requests:\n%s", err, fs.sent())
	}

	// A closed session that kept its state: saved without closing again.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/pbs_3", http.StatusOK, closedReply)
	fs.reply("POST /v1/browser_profiles", http.StatusOK, profileReply)
	if out, _, err = exec(t, fs, false, closeCmd, "pbs_3", "--save-profile", "P"); err != nil || out != "profile/bp_9\n" ||
		fs.sent() != "GET /v1/browser_sessions/pbs_3\nPOST /v1/browser_profiles" {
		t.Errorf("a closed session that kept its state: %v, stdout %q, requests:\n%s", err, out, fs.sent())
	}

	// One that ended without keeping it: nothing can be saved, and the
	// message says what to do instead.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/pbs_4", http.StatusOK, timedOutReply)
	if _, _, err = exec(t, fs, false, closeCmd, "pbs_4", "--save-profile", "P"); err == nil ||
		!strings.Contains(err.Error(), "browser session pbs_4 ended (timed_out) without keeping its browser state") ||
		!strings.Contains(err.Error(), "abctl browser-sessions create --keep-profile") || fs.sent() != "GET /v1/browser_sessions/pbs_4" {
		t.Errorf("an ended session that kept nothing: %v, requests %s", err, fs.sent())
	}

	// The profile's refusal names the session and the profile.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/pbs_1", http.StatusOK, openReply)
	fs.reply("POST /v1/browser_sessions/{id}/close", http.StatusOK, `{}`)
	fs.reply("POST /v1/browser_profiles", http.StatusBadRequest,
		`{"detail":"Browser session pbs_1 kept no browser state: set generate_browser_profile to true before it closes"}`)
	if _, _, err = exec(t, fs, false, closeCmd, "pbs_1", "--save-profile", "P"); err == nil ||
		!strings.Contains(err.Error(), `save browser session pbs_1 as the profile "P"`) || !strings.Contains(err.Error(), "its browser gave no state as it closed") {
		t.Errorf("a session whose state could not be read: %v", err)
	}

	// An unknown session.
	fs = newFake(t)
	fs.reply("GET /v1/browser_sessions/{id}", http.StatusNotFound, `{"detail":"Browser session pbs_404 not found"}`)
	if _, _, err = exec(t, fs, false, closeCmd, "pbs_404"); err == nil || !strings.Contains(err.Error(), "Browser session pbs_404 not found") {
		t.Errorf("an unknown session: %v", err)
	}

	f, _ := cmdtest.NewFactory(t, nil)
	var got *CloseOptions
	if err := cmdtest.Exec(NewCmdClose(f, func(o *CloseOptions) error { got = o; return nil }), "session/pbs_1", "--save-profile", "P"); err != nil ||
		got.SessionID != "pbs_1" || got.SaveProfile != "P" {
		t.Errorf("options %+v %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "takes a browser session id"},
		{[]string{"pbs_1", "--save-profile", " "}, "--save-profile is empty"},
		{[]string{"folder/fld_1"}, `"folder/fld_1" names a folder, not a browser session`},
	} {
		err := cmdtest.Exec(NewCmdClose(f, func(*CloseOptions) error { t.Error("ran"); return nil }), tc.args...)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("close %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

// TestNewCmdSessions: the group's names and subcommands.
func TestNewCmdSessions(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	cmd := NewCmdSessions(f)
	if cmd.Name() != "browser-sessions" || strings.Join(cmd.Aliases, ",") != "browser-session,sessions" {
		t.Errorf("name %q, aliases %q", cmd.Name(), cmd.Aliases)
	}
	var names []string
	for _, c := range cmd.Commands() {
		names = append(names, c.Name())
	}
	if strings.Join(names, ",") != "close,create,get,keep-profile,list" {
		t.Errorf("subcommands %v", names)
	}
}
