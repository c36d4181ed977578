package profiles

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
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
	Query        map[string][]string
	Body         string
}

func newFake(t *testing.T) *fakeService {
	t.Helper()
	fs := &fakeService{t: t, mux: http.NewServeMux()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.reqs = append(fs.reqs, seenRequest{r.Method, r.URL.Path, r.URL.Query(), string(b)})
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
// can be compared with them.
const (
	rest = `"source_browser_type":null,"proxy_location":null,"proxy_session_id":null,"is_managed":false,"browser_profile_key_digest":null,` +
		`"created_at":"2026-11-24T11:00:00","modified_at":"2026-11-24T11:00:00"`
	fromRunReply = `{"browser_profile_id":"bp_1","organization_id":"o_1","name":"Billing, signed in","description":"the billing portal",` +
		`"workflow_permanent_id":"wpid_7","deleted_at":null,` + rest + `}`
	emptyReply = `{"browser_profile_id":"bp_2","organization_id":"o_1","name":"Fresh","description":null,` +
		`"workflow_permanent_id":null,"deleted_at":null,` + rest + `}`
	deletedReply = `{"browser_profile_id":"bp_3","organization_id":"o_1","name":"Old","description":null,` +
		`"workflow_permanent_id":null,"deleted_at":"2026-11-24T11:30:00",` + rest + `}`
)

func TestCreateOptions(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *CreateOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil }), args...)
	}
	if err := run("Billing, signed in", "--from-run", "run/wr_1", "--description", "the billing portal"); err != nil {
		t.Fatal(err)
	}
	if got.Name != "Billing, signed in" || got.FromRun != "wr_1" || got.Description != "the billing portal" || got.Format != printer.Name {
		t.Errorf("options %+v", got)
	}
	if err := run("Fresh", "-o", "json"); err != nil || got.FromRun != "" || got.Format != printer.JSON {
		t.Errorf("an empty profile: %+v %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{" "}, "the profile's name is empty"},
		{[]string{"P", "--from-run", "tsk_1"}, "--from-run tsk_1 is a task run, and task runs keep no browser state"},
		{[]string{"P", "--from-run", "agent/x"}, `--from-run: "agent/x" names an agent, not a run`},
		{[]string{"P", "--from-run", " "}, "--from-run is empty"},
		{[]string{"P", "-o", "wide"}, `-o "wide" is not a format`},
		{nil, "takes the profile's name"},
		{[]string{"P", "--browser-session", "pbs_1"}, "unknown flag: --browser-session"},
	} {
		if err := run(tc.args...); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("create %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

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
	update = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdUpdate(f, func(o *UpdateOptions) error { o.Client = c; return runUpdate(context.Background(), o) })
	}
	remove = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdDelete(f, func(o *DeleteOptions) error { o.Client = c; return runDelete(context.Background(), o) })
	}
	reset = func(f *cmdutil.Factory, c clientFunc) *cobra.Command {
		return NewCmdResetAgent(f, func(o *ResetAgentOptions) error { o.Client = c; return runResetAgent(context.Background(), o) })
	}
)

func TestCreate(t *testing.T) {
	fs := newFake(t)
	fs.reply("POST /v1/browser_profiles", http.StatusOK, fromRunReply)
	out, _, err := exec(t, fs, false, create, "Billing, signed in", "--from-run", "wr_1", "--description", "the billing portal")
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/browser_profiles").Body,
		`{"name":"Billing, signed in","description":"the billing portal","workflow_run_id":"wr_1"}`)
	if out != "profile/bp_1\n" {
		t.Errorf("stdout %q, want the profile/ID line", out)
	}
	if out, _, err = exec(t, fs, false, create, "Fresh", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("POST", "/v1/browser_profiles").Body, `{"name":"Fresh"}`)
	assertJSON(t, "-o json", out, fromRunReply)

	// The service's refusal reaches the user with the run it was about.
	fs = newFake(t)
	fs.reply("POST /v1/browser_profiles", http.StatusBadRequest,
		`{"detail":"Workflow run wr_9 kept no browser state: only the runs of an agent with persist_browser_session keep theirs, when they end"}`)
	_, _, err = exec(t, fs, false, create, "X", "--from-run", "wr_9")
	if err == nil || !strings.Contains(err.Error(), `create the profile "X" from run wr_9`) || !strings.Contains(err.Error(), "kept no browser state") {
		t.Errorf("a run that kept nothing: %v", err)
	}
}

func TestListAndGet(t *testing.T) {
	fs := newFake(t)
	fs.reply("GET /v1/browser_profiles", http.StatusOK, "["+fromRunReply+","+emptyReply+","+deletedReply+"]")
	fs.reply("GET /v1/browser_profiles/{id}", http.StatusOK, fromRunReply)

	out, _, err := exec(t, fs, false, list)
	if err != nil {
		t.Fatal(err)
	}
	want := "bp_1\tBilling, signed in\twpid_7\t2026-11-24T11:00:00Z\n" +
		"bp_2\tFresh\t-\t2026-11-24T11:00:00Z\n" +
		"bp_3\tOld (deleted)\t-\t2026-11-24T11:00:00Z\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	if q := fs.last("GET", "/v1/browser_profiles").Query; !reflect.DeepEqual(q, map[string][]string{"page": {"1"}, "page_size": {"100"}}) {
		t.Errorf("query %v", q)
	}
	if out, _, err = exec(t, fs, false, list, "--search", "billing", "--include-deleted", "--limit", "2", "-o", "name"); err != nil || out != "profile/bp_1\nprofile/bp_2\n" {
		t.Errorf("-o name: %q %v", out, err)
	}
	if q := fs.last("GET", "/v1/browser_profiles").Query; !reflect.DeepEqual(q, map[string][]string{"page": {"1"}, "page_size": {"2"},
		"search_key": {"billing"}, "include_deleted": {"true"}}) {
		t.Errorf("query %v", q)
	}
	if out, _, err = exec(t, fs, false, list, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "-o json", out, "["+fromRunReply+","+emptyReply+","+deletedReply+"]")

	// A terminal gets a header and relative times.
	if out, _, err = exec(t, fs, true, get, "profile/bp_1"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "AGENT") || !strings.Contains(out, "CREATED") ||
		!strings.Contains(out, "wpid_7") || !strings.Contains(out, "1 hour ago") {
		t.Errorf("get on a terminal:\n%s", out)
	}
	if fs.last("GET", "/v1/browser_profiles/bp_1").Method != "GET" {
		t.Error("get did not ask for bp_1")
	}
	if out, _, err = exec(t, fs, false, get, "bp_1", "-o", "yaml"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "browser_profile_id: bp_1\norganization_id: o_1\nname: Billing, signed in\n") {
		t.Errorf("-o yaml:\n%s", out)
	}
	// Several ids: a list.
	if out, _, err = exec(t, fs, false, get, "bp_1", "bp_1", "-o", "json"); err != nil || !strings.HasPrefix(strings.TrimSpace(out), "[") {
		t.Errorf("two ids, -o json: %q %v", out, err)
	}

	fs = newFake(t)
	fs.reply("GET /v1/browser_profiles/{id}", http.StatusNotFound, `{"detail":"Browser profile bp_404 not found"}`)
	if _, _, err := exec(t, fs, false, get, "bp_404"); err == nil || !strings.Contains(err.Error(), "get browser profile bp_404") ||
		!strings.Contains(err.Error(), "Browser profile bp_404 not found") {
		t.Errorf("an unknown profile: %v", err)
	}

	f, _ := cmdtest.NewFactory(t, nil)
	for _, tc := range []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"--limit", "-1"}, "--limit must be 0 (all) or more"},
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"extra"}, "takes no arguments"},
		{func() *cobra.Command { return NewCmdList(f, nil) }, []string{"-o", "wide"}, `-o "wide" is not a format`},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, nil, "takes one or more browser profile ids"},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, []string{"credential/cred_1"}, `"credential/cred_1" names a credential, not a browser profile`},
		{func() *cobra.Command { return NewCmdGet(f, nil) }, []string{"profile/"}, `"profile/" names no browser profile`},
	} {
		if err := cmdtest.Exec(tc.cmd(), tc.args...); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}

func TestUpdate(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *UpdateOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdUpdate(f, func(o *UpdateOptions) error { got = o; return nil }), args...)
	}
	if err := run("profile/bp_1", "--description", ""); err != nil {
		t.Fatal(err)
	}
	if got.ProfileID != "bp_1" || got.Name != nil || got.Description == nil || *got.Description != "" || got.Format != printer.Name {
		t.Errorf("--description \"\": %+v", got)
	}
	if err := run("bp_1", "--name", "Billing portal", "-o", "json"); err != nil || *got.Name != "Billing portal" || got.Description != nil || got.Format != printer.JSON {
		t.Errorf("--name: %+v %v", got, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bp_1"}, "give --name, --description or both"},
		{[]string{"bp_1", "--name", " "}, "--name is empty: a profile needs a name"},
		{[]string{"run/wr_1", "--name", "x"}, `"run/wr_1" names a run, not a browser profile`},
		{nil, "takes a browser profile id"},
	} {
		if err := run(tc.args...); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("update %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}

	fs := newFake(t)
	fs.reply("PATCH /v1/browser_profiles/{id}", http.StatusOK, fromRunReply)
	out, _, err := exec(t, fs, false, update, "bp_1", "--name", "Billing portal")
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("PATCH", "/v1/browser_profiles/bp_1").Body, `{"name":"Billing portal"}`)
	if out != "profile/bp_1\n" {
		t.Errorf("stdout %q", out)
	}
	if _, _, err := exec(t, fs, false, update, "bp_1", "--description", ""); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, "request", fs.last("PATCH", "/v1/browser_profiles/bp_1").Body, `{"description":""}`)
}

func TestDelete(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DeleteOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdDelete(f, func(o *DeleteOptions) error { got = o; return nil }), args...)
	}
	if err := run("profile/bp_1", "--yes"); err != nil || got.ProfileID != "bp_1" || !got.Yes {
		t.Errorf("delete --yes: %+v %v", got, err)
	}
	if err := run("bp_1"); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "add --yes when no terminal can confirm") {
		t.Errorf("without --yes and a terminal: %v", err)
	}
	if err := run("agent/billing", "-y"); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "names an agent, not a browser profile") {
		t.Errorf("an agent: %v", err)
	}
	f.IO.SetTTY(true, false, true)
	if err := run("bp_1"); err != nil || got.Yes {
		t.Errorf("on a terminal: %+v %v", got, err)
	}

	// On a terminal it says what is about to go, and a "no" keeps it.
	fs := newFake(t)
	fs.reply("GET /v1/browser_profiles/{id}", http.StatusOK, fromRunReply)
	fs.reply("DELETE /v1/browser_profiles/{id}", http.StatusNoContent, "")
	for _, answer := range []string{"n\n", "y\n"} {
		f, streams := cmdtest.NewFactory(t, nil)
		f.IO.SetTTY(true, false, true)
		streams.In.WriteString(answer)
		err := cmdtest.Exec(remove(f, fs.client), "bp_1")
		reqs := fs.requests()
		deleted := len(reqs) > 0 && reqs[len(reqs)-1].Method == "DELETE"
		if answer == "n\n" && (cmdtest.ExitCode(err) != cmdutil.ExitError || deleted) {
			t.Errorf("answered no: %v, deleted %v", err, deleted)
		}
		if answer == "y\n" && (err != nil || !deleted || !strings.Contains(streams.ErrOut.String(), `Browser profile bp_1 ("Billing, signed in", from a run of wpid_7) deleted.`)) {
			t.Errorf("answered yes: %v, deleted %v, stderr %q", err, deleted, streams.ErrOut.String())
		}
		if !strings.Contains(streams.ErrOut.String(), `Delete browser profile bp_1 ("Billing, signed in", from a run of wpid_7)? Runs that start from it will no longer start.`) ||
			streams.Out.Len() != 0 {
			t.Errorf("the question %q, stdout %q", streams.ErrOut.String(), streams.Out.String())
		}
	}

	// With --yes, no question and no GET.
	fs = newFake(t)
	fs.reply("DELETE /v1/browser_profiles/{id}", http.StatusNoContent, "")
	_, stderr, err := exec(t, fs, false, remove, "bp_9", "--yes")
	if err != nil {
		t.Fatal(err)
	}
	if reqs := fs.requests(); len(reqs) != 1 || reqs[0].Method != "DELETE" || reqs[0].Path != "/v1/browser_profiles/bp_9" || stderr != "Browser profile bp_9 deleted.\n" {
		t.Errorf("requests %+v, stderr %q", reqs, stderr)
	}
}

func TestResetAgent(t *testing.T) {
	const agentReply = `{"workflow_id":"w_1","organization_id":"o_1","title":"Billing sign-in","workflow_permanent_id":"%s","version":1,
		"persist_browser_session":%s,"workflow_definition":{"parameters":[],"blocks":[]}}`
	byName := agentfile.AgentID("o_1", "billing-sign-in")
	fs := newFake(t)
	fs.reply("GET /v1/agents", http.StatusOK, `[`+fmt.Sprintf(agentReply, "wpid_other", "false")+`]`)
	fs.reply("GET /v1/agents/wpid_1", http.StatusOK, fmt.Sprintf(agentReply, "wpid_1", "true"))
	fs.reply("GET /v1/agents/"+byName, http.StatusOK, fmt.Sprintf(agentReply, byName, "false"))
	fs.reply("POST /v1/agents/{id}/browser_session/reset_profile", http.StatusNoContent, "")

	out, stderr, err := exec(t, fs, false, reset, "agent/wpid_1")
	if err != nil {
		t.Fatal(err)
	}
	if fs.last("POST", "/v1/agents/wpid_1/browser_session/reset_profile").Body != "" {
		t.Error("reset sent a body")
	}
	if out != "" || stderr != "The browser state of agent wpid_1 (\"Billing sign-in\") is forgotten: its next run starts without it.\n" {
		t.Errorf("stdout %q, stderr %q", out, stderr)
	}

	// By name; an agent that keeps nothing gets a note.
	_, stderr, err = exec(t, fs, false, reset, "billing-sign-in")
	if err != nil {
		t.Fatal(err)
	}
	fs.last("POST", "/v1/agents/"+byName+"/browser_session/reset_profile")
	if !strings.Contains(stderr, "Note: the agent does not have persist_browser_session: true") {
		t.Errorf("stderr %q", stderr)
	}

	// An unknown agent: nothing is reset.
	fs = newFake(t)
	fs.reply("GET /v1/agents/{id}", http.StatusNotFound, `{"detail":"Agent wpid_404 not found"}`)
	if _, _, err := exec(t, fs, false, reset, "wpid_404"); err == nil || !strings.Contains(err.Error(), "no agent wpid_404") {
		t.Errorf("an unknown agent: %v", err)
	}
	for _, r := range fs.requests() {
		if r.Method == "POST" {
			t.Errorf("reset was sent for an unknown agent: %+v", r)
		}
	}

	f, _ := cmdtest.NewFactory(t, nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "takes an agent's name or id"},
		{[]string{"run/wr_1"}, `"run/wr_1" names a run, not an agent`},
		{[]string{" "}, "AGENT is empty"},
	} {
		err := cmdtest.Exec(NewCmdResetAgent(f, func(*ResetAgentOptions) error { t.Error("ran"); return nil }), tc.args...)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("reset-agent %q: %v, want the usage error %q", tc.args, err, tc.want)
		}
	}
}
