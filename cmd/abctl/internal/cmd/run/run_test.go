package run

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
)

func parse(t *testing.T, args ...string) (*RunOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	var got *RunOptions
	err := cmdtest.Exec(NewCmdRun(f, func(o *RunOptions) error { got = o; return nil }), args...)
	return got, err
}

func TestFlags(t *testing.T) {
	o, err := parse(t, "agent.yaml", "--name", "second", "-p", "a=1", "--param", "b=x", "--params-file", "p.json",
		"--title", "nightly", "--webhook-url", "https://hook", "--max-steps", "7", "--timeout", "90s", "--no-tui")
	if err != nil {
		t.Fatal(err)
	}
	if o.File != "agent.yaml" || o.Name != "second" || strings.Join(o.Params, ",") != "a=1,b=x" || o.ParamsFile != "p.json" ||
		o.Title != "nightly" || o.WebhookURL != "https://hook" || o.MaxSteps != 7 || o.Follow.Timeout != 90*time.Second || !o.Follow.NoTUI {
		t.Errorf("agent file options: %+v", o)
	}
	if o.Watch == nil || o.Embedded == nil || o.Client == nil {
		t.Error("the options lack the factory's parts")
	}
	o, err = parse(t, "--prompt", "Find the price", "--url", "https://shop", "--schema", `{"type":"object"}`,
		"--engine", "skyvern-2.0", "--error-code", "NO_STOCK=out of stock", "--detach")
	if err != nil {
		t.Fatal(err)
	}
	if o.File != "" || o.Prompt != "Find the price" || o.URL != "https://shop" || o.Engine != "skyvern-2.0" ||
		strings.Join(o.ErrorCodes, ",") != "NO_STOCK=out of stock" || !o.Detach {
		t.Errorf("task options: %+v", o)
	}
	if o, err := parse(t, "--agent", "contact-form"); err != nil || o.Agent != "contact-form" {
		t.Errorf("--agent: %+v %v", o, err)
	}
	// --browser-profile takes an id, or profile/ID as -o name prints it.
	if o, err := parse(t, "--agent", "contact-form", "--browser-profile", "profile/bp_1"); err != nil || o.BrowserProfile != "bp_1" {
		t.Errorf("--browser-profile: %+v %v", o, err)
	}
	if o, err := parse(t, "--prompt", "p", "--browser-profile", "bp_1", "--engine", "skyvern-2.0"); err != nil || o.BrowserProfile != "bp_1" {
		t.Errorf("a task with --browser-profile: %+v %v", o, err)
	}
	// --browser-session takes an id, or session/ID; a task in a session
	// keeps any engine.
	if o, err := parse(t, "--agent", "contact-form", "--browser-session", "session/pbs_1"); err != nil || o.BrowserSession != "pbs_1" {
		t.Errorf("--browser-session: %+v %v", o, err)
	}
	if o, err := parse(t, "--prompt", "p", "--browser-session", "sessions/pbs_1", "--engine", "skyvern-1.0"); err != nil || o.BrowserSession != "pbs_1" {
		t.Errorf("a task with --browser-session: %+v %v", o, err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give an agent file, --agent NAME, or --prompt TEXT"},
		{[]string{"a.yaml", "--agent", "x"}, "not several"},
		{[]string{"a.yaml", "--prompt", "x"}, "not several"},
		{[]string{"--prompt", "x", "--param", "a=1"}, "--param and --params-file are for agents"},
		{[]string{"--prompt", "x", "--params-file", "p.json"}, "--param and --params-file are for agents"},
		{[]string{"--agent", "x", "--url", "https://x"}, "are for tasks (--prompt)"},
		{[]string{"a.yaml", "--error-code", "A=b"}, "are for tasks (--prompt)"},
		{[]string{"--agent", "x", "--max-steps", "-1"}, "--max-steps must be positive, not -1"},
		{[]string{"--agent", "x", "--browser-profile", "run/wr_1"}, `--browser-profile "run/wr_1" names a run, not a browser profile`},
		{[]string{"--agent", "x", "--browser-profile", "profile/"}, `--browser-profile "profile/" names no browser profile`},
		{[]string{"--prompt", "p", "--browser-profile", "bp_1", "--engine", "skyvern-1.0"}, "--browser-profile works with tasks on engine skyvern-2.0, not skyvern-1.0"},
		{[]string{"--agent", "x", "--browser-profile", "session/pbs_1"}, `--browser-profile "session/pbs_1" names a browser session, not a browser profile`},
		{[]string{"--agent", "x", "--browser-session", "profile/bp_1"}, `--browser-session "profile/bp_1" names a browser profile, not a browser session`},
		{[]string{"--agent", "x", "--browser-session", "run/wr_1"}, `--browser-session "run/wr_1" names a run, not a browser session: give a browser session id (pbs_...)`},
		{[]string{"--agent", "x", "--browser-session", "session/"}, `--browser-session "session/" names no browser session`},
		{[]string{"--agent", "x", "--browser-session", "pbs_1", "--browser-profile", "bp_1"}, "give --browser-profile or --browser-session, not both"},
	} {
		o, err := parse(t, tc.args...)
		if o != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: %v, want the usage error %q before the run", tc.args, err, tc.want)
		}
	}
	if o, err := parse(t, "a.yaml", "b.yaml"); o != nil || err == nil || !strings.Contains(err.Error(), "accepts at most 1 arg") {
		t.Errorf("two files: %v", err)
	}
	// Cobra's own checks of the flag groups come first.
	if _, err := parse(t, "--agent", "x", "--prompt", "y"); err == nil || !strings.Contains(err.Error(), "agent") {
		t.Errorf("--agent with --prompt: %v", err)
	}
	if _, err := parse(t, "--agent", "x", "--detach", "--timeout", "1m"); err == nil {
		t.Error("--detach with --timeout was accepted")
	}
}

func params(defs ...string) []client.Parameter {
	var ps []client.Parameter
	for _, d := range defs {
		key, typ, _ := strings.Cut(d, ":")
		p := client.Parameter{ParameterType: client.ParameterTypeWorkflow, Key: key}
		typ, def, hasDefault := strings.Cut(typ, "=")
		p.WorkflowParameterType = client.WorkflowParameterType(typ)
		if hasDefault {
			p.DefaultValue = json.RawMessage(def)
		}
		ps = append(ps, p)
	}
	return ps
}

// TestParameters: each value is read as its parameter's type; a value for
// no parameter, a wrong one and a missing one are usage errors that say
// which, before anything is started.
func TestParameters(t *testing.T) {
	declared := params("count:integer", "urgent:boolean", "tags:json", "site:string=\"https://x\"")
	who := func() string { return `agent "form"` }
	dir := t.TempDir()
	file := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(file, []byte("count: 3\ntags: [a, b]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &RunOptions{ParamsFile: file, Params: []string{"urgent=true", "count=4"}}
	got, err := o.parameters(who, declared)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"count": "4", "urgent": "true", "tags": `["a","b"]`}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if raw, _ := got[k].(json.RawMessage); string(raw) != v {
			t.Errorf("%s = %s, want %s", k, raw, v)
		}
	}

	for _, tc := range []struct {
		params []string
		file   string
		want   string
	}{
		{[]string{"count=many", "urgent=1", "tags=[]"}, "", "count (integer)"},
		{[]string{"urgent=true", "tags=[]"}, "", `agent "form" needs parameter "count"`},
		{[]string{"tags=[]"}, "", `needs parameters "count", "urgent"`},
		{[]string{"nope=1"}, "", `--param nope: agent "form" has no parameter "nope"; its parameters are: count (integer)`},
		{[]string{"novalue"}, "", `--param "novalue": write key=value`},
		{nil, "[1, 2]", "must hold an object of parameter values"},
		{nil, "other: 1\ncount: 1\nurgent: true\ntags: []\n", "other: not a parameter of the agent"},
	} {
		o := &RunOptions{Params: tc.params}
		if tc.file != "" {
			o.ParamsFile = filepath.Join(dir, "case.yaml")
			if err := os.WriteFile(o.ParamsFile, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := o.parameters(who, declared)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q: %v, want a usage error with %q", tc.params, tc.file, err, tc.want)
		}
	}
	if _, err := (&RunOptions{ParamsFile: filepath.Join(dir, "missing.json")}).parameters(who, nil); !cmdtest.IsUsage(err) {
		t.Errorf("a missing --params-file: %v", err)
	}
}

func TestTaskRequest(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(dir, "schema.yaml")
	if err := os.WriteFile(schema, []byte("type: object\nproperties:\n  price: {type: number}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &RunOptions{Prompt: "p", URL: "https://x", Title: "t", WebhookURL: "https://h", Engine: "skyvern-2.0", MaxSteps: 5,
		Schema: schema, ErrorCodes: []string{"A=first", "B=second=part"}}
	req, err := o.taskRequest()
	if err != nil {
		t.Fatal(err)
	}
	if req.Prompt != "p" || req.URL != "https://x" || req.Title != "t" || req.WebhookURL != "https://h" || req.Engine != "skyvern-2.0" ||
		req.MaxSteps == nil || *req.MaxSteps != 5 || req.ErrorCodeMapping["B"] != "second=part" || len(req.ErrorCodeMapping) != 2 {
		t.Errorf("request %+v", req)
	}
	if string(req.DataExtractionSchema) != `{"properties":{"price":{"type":"number"}},"type":"object"}` {
		t.Errorf("schema from YAML: %s", req.DataExtractionSchema)
	}
	// A profile: the engine that starts tasks from one, unless given.
	o = &RunOptions{Prompt: "p", BrowserProfile: "bp_1"}
	if req, err := o.taskRequest(); err != nil || req.BrowserProfileID != "bp_1" || req.Engine != client.EngineSkyvernV2 {
		t.Errorf("a task from a profile: %+v %v", req, err)
	}
	// A session: no engine is chosen for it.
	o = &RunOptions{Prompt: "p", BrowserSession: "pbs_1"}
	if req, err := o.taskRequest(); err != nil || req.BrowserSessionID != "pbs_1" || req.Engine != "" || req.BrowserProfileID != "" {
		t.Errorf("a task in a session: %+v %v", req, err)
	}
	o = &RunOptions{Prompt: "p", Schema: ` {"type": "object"} `}
	if req, err := o.taskRequest(); err != nil || string(req.DataExtractionSchema) != `{"type": "object"}` || req.MaxSteps != nil {
		t.Errorf("inline schema: %s %v", req.DataExtractionSchema, err)
	}
	for _, o := range []*RunOptions{
		{Prompt: "p", Schema: "{not json"},
		{Prompt: "p", Schema: filepath.Join(dir, "missing.json")},
		{Prompt: "p", ErrorCodes: []string{"=x"}},
		{Prompt: "p", ErrorCodes: []string{"A"}},
	} {
		if _, err := o.taskRequest(); !cmdtest.IsUsage(err) {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

func TestPick(t *testing.T) {
	agents := []*agentfile.Agent{{Name: "first"}, {Name: "second"}}
	if a, err := pick(agents, "second", "f.yaml"); err != nil || a.Name != "second" {
		t.Errorf("--name second: %v %v", a, err)
	}
	if _, err := pick(agents, "", "f.yaml"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "f.yaml holds 2 agents (first, second): choose one with --name") {
		t.Errorf("several without --name: %v", err)
	}
	if _, err := pick(agents, "third", "f.yaml"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), `f.yaml has no agent named "third" (it has: first, second)`) {
		t.Errorf("an unknown --name: %v", err)
	}
	if a, err := pick(agents[:1], "", "f.yaml"); err != nil || a.Name != "first" {
		t.Errorf("the only one: %v %v", a, err)
	}
}

// TestRunChecksBeforeTheService: a wrong parameter for an agent file is
// refused before the service is asked anything.
func TestRunChecksBeforeTheService(t *testing.T) {
	file := filepath.Join(t.TempDir(), "form.yaml")
	content := "title: Form\nworkflow_definition:\n  parameters:\n    - key: count\n      parameter_type: workflow\n      workflow_parameter_type: integer\n" +
		"  blocks:\n    - block_type: goto_url\n      label: open\n      url: https://example.com/\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := cmdtest.NewFactory(t, nil)
	opts := &RunOptions{IO: f.IO, Client: cmdtest.NoClient(t), File: file, Params: []string{"count=lots"}}
	err := runRun(t.Context(), opts)
	if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), `parameters of agent "form"`) || !strings.Contains(err.Error(), "count (integer)") {
		t.Errorf("%v", err)
	}
}

// TestAgentRunFromAProfile: --browser-profile reaches the agent run's
// request as browser_profile_id.
func TestAgentRunFromAProfile(t *testing.T) {
	var body []byte
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agents/wpid_1", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"workflow_id":"w_1","organization_id":"o_1","title":"Invoices","workflow_permanent_id":"wpid_1","version":1,
			"workflow_definition":{"parameters":[],"blocks":[]}}`)
	})
	mux.HandleFunc("POST /v1/run/agents", func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"run_id":"wr_1","status":"queued","run_type":"workflow_run"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("abk_test"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	f, streams := cmdtest.NewFactory(t, nil)
	err = cmdtest.Exec(NewCmdRun(f, func(o *RunOptions) error {
		o.Client = func(context.Context) (*client.Client, error) { return c, nil }
		o.Embedded = func() bool { return false }
		return runRun(t.Context(), o)
	}), "--agent", "wpid_1", "--browser-profile", "bp_1", "--detach")
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil || req["workflow_id"] != "wpid_1" || req["browser_profile_id"] != "bp_1" {
		t.Errorf("request %s %v", body, err)
	}
	if streams.Out.String() != "wr_1\n" {
		t.Errorf("stdout %q", streams.Out.String())
	}
}

// TestRunsInASession: --browser-session reaches the agent run's and the
// task's requests as browser_session_id, and the run is followed.
func TestRunsInASession(t *testing.T) {
	bodies := map[string][]byte{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/agents/wpid_1", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"workflow_id":"w_1","organization_id":"o_1","title":"Invoices","workflow_permanent_id":"wpid_1","version":1,
			"workflow_definition":{"parameters":[],"blocks":[]}}`)
	})
	mux.HandleFunc("POST /v1/run/agents", func(w http.ResponseWriter, r *http.Request) {
		bodies["agent"], _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"run_id":"wr_1","status":"queued","run_type":"workflow_run"}`)
	})
	mux.HandleFunc("POST /v1/run/tasks", func(w http.ResponseWriter, r *http.Request) {
		bodies["task"], _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"run_id":"tsk_1","status":"queued","run_type":"task_v1"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey("abk_test"), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	var followed []string
	exec := func(args ...string) (*cmdtest.Streams, error) {
		f, streams := cmdtest.NewFactory(t, nil)
		err := cmdtest.Exec(NewCmdRun(f, func(o *RunOptions) error {
			o.Client = func(context.Context) (*client.Client, error) { return c, nil }
			o.Embedded = func() bool { return false }
			o.Watch = func(_ context.Context, _ *client.Client, runID string, _ follow.Flags) error {
				followed = append(followed, runID)
				return nil
			}
			return runRun(t.Context(), o)
		}), args...)
		return streams, err
	}
	streams, err := exec("--agent", "wpid_1", "--browser-session", "session/pbs_1")
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(bodies["agent"], &req); err != nil || req["workflow_id"] != "wpid_1" || req["browser_session_id"] != "pbs_1" || req["browser_profile_id"] != nil {
		t.Errorf("agent run request %s %v", bodies["agent"], err)
	}
	if strings.Join(followed, ",") != "wr_1" || streams.ErrOut.String() != "Run wr_1 started (queued).\n" {
		t.Errorf("followed %v, stderr %q", followed, streams.ErrOut.String())
	}
	if _, err := exec("--prompt", "Read the balance", "--browser-session", "pbs_1", "--detach"); err != nil {
		t.Fatal(err)
	}
	req = nil
	if err := json.Unmarshal(bodies["task"], &req); err != nil || req["prompt"] != "Read the balance" || req["browser_session_id"] != "pbs_1" || req["engine"] != nil {
		t.Errorf("task request %s %v", bodies["task"], err)
	}
	if len(followed) != 1 {
		t.Errorf("--detach followed the run: %v", followed)
	}
}
