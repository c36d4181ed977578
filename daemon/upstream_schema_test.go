package daemon_test

// The daemon against the hosted service's OpenAPI description: every
// response of every operation the daemon serves, driven through the SDK and
// by hand over real HTTP (the real daemon, daemon.Run, with the scripted
// executor), is validated against the upstream schema of that operation and
// status, with a JSON Schema validator over the reference file itself. The
// file is not part of this repository: see upstreamSpecPath.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// upstreamSpecName is where the reference sits beside a checkout:
// ../shared/spec/upstream-openapi.json from the repository's root.
const upstreamSpecName = "shared/spec/upstream-openapi.json"

// upstreamSpecPath finds the hosted service's OpenAPI description:
// $ABCTL_UPSTREAM_OPENAPI when set; else shared/spec/upstream-openapi.json
// beside the repository or one of its parent directories; else beside the
// repository a clean clone was made from (its origin, when that is a local
// directory, as CI's clone of a working tree is). "" when none is found.
func upstreamSpecPath(t *testing.T) string {
	if p := os.Getenv("ABCTL_UPSTREAM_OPENAPI"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("ABCTL_UPSTREAM_OPENAPI: %v", err)
		}
		return p
	}
	var roots []string
	if wd, err := os.Getwd(); err == nil {
		roots = append(roots, wd)
	}
	if out, err := exec.Command("git", "config", "--get", "remote.origin.url").Output(); err == nil {
		if origin := strings.TrimSpace(string(out)); filepath.IsAbs(origin) {
			roots = append(roots, origin)
		}
	}
	for _, root := range roots {
		for dir := root; ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, upstreamSpecName)
			if _, err := os.Stat(p); err == nil {
				return p
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return ""
}

// operation is one operation of the upstream description.
type operation struct {
	id       string
	method   string
	template string   // /v1/agents/{workflow_id}
	segments []string // "" for a {parameter}
	// schemas holds the JSON pointer of the response schema per status,
	// for the statuses that declare a JSON body.
	schemas map[int]string
}

func (o *operation) String() string { return o.method + " " + o.template }

// literals counts the literal segments, to prefer /v1/agents/runs to
// /v1/agents/{workflow_id}.
func (o *operation) literals() int {
	n := 0
	for _, s := range o.segments {
		if s != "" {
			n++
		}
	}
	return n
}

func (o *operation) matches(method string, segs []string) bool {
	if method != o.method || len(segs) != len(o.segments) {
		return false
	}
	for i, s := range o.segments {
		if s != "" && s != segs[i] {
			return false
		}
	}
	return true
}

// upstream is the parsed description and its compiled response schemas.
type upstream struct {
	ops      []*operation
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

const upstreamURL = "file:///upstream-openapi.json"

func loadUpstream(t *testing.T, path string) *upstream {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020) // OpenAPI 3.1's schema dialect
	if err := c.AddResource(upstreamURL, doc); err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Responses   map[string]struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	u := &upstream{compiler: c, compiled: map[string]*jsonschema.Schema{}}
	escape := strings.NewReplacer("~", "~0", "/", "~1")
	for tmpl, methods := range spec.Paths {
		for method, op := range methods {
			o := &operation{id: op.OperationID, method: strings.ToUpper(method), template: tmpl, schemas: map[int]string{}}
			for _, s := range strings.Split(strings.Trim(tmpl, "/"), "/") {
				if strings.HasPrefix(s, "{") {
					s = ""
				}
				o.segments = append(o.segments, s)
			}
			for status, r := range op.Responses {
				var code int
				if _, err := fmt.Sscan(status, &code); err != nil {
					continue
				}
				if _, ok := r.Content["application/json"]; ok {
					o.schemas[code] = "#/paths/" + escape.Replace(tmpl) + "/" + method + "/responses/" + status + "/content/application~1json/schema"
				}
			}
			u.ops = append(u.ops, o)
		}
	}
	return u
}

// find returns the operation a request is for, nil for a route the hosted
// service does not describe.
func (u *upstream) find(method, path string) *operation {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *operation
	for _, o := range u.ops {
		if o.matches(method, segs) && (best == nil || o.literals() > best.literals()) {
			best = o
		}
	}
	return best
}

func (u *upstream) schema(ptr string) (*jsonschema.Schema, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if s, ok := u.compiled[ptr]; ok {
		return s, nil
	}
	s, err := u.compiler.Compile(upstreamURL + ptr)
	if err != nil {
		return nil, err
	}
	u.compiled[ptr] = s
	return s, nil
}

// deviation is a response of the daemon that deliberately differs from the
// upstream schema of its operation and status, and why.
type deviation struct {
	op     string // "GET /v1/runs/{run_id}", as operation.String
	status int
	why    string
}

// deviations are the daemon's deliberate differences from the upstream
// schemas. Each is still sent through the validator; its failure is
// logged with the reason instead of failing the test.
var deviations = []deviation{}

func deviationOf(op *operation, status int) string {
	for _, d := range deviations {
		if d.op == op.String() && d.status == status {
			return d.why
		}
	}
	return ""
}

// checker is an http.RoundTripper that validates every response against
// the upstream schema of its operation and status, and records what it saw.
type checker struct {
	t  *testing.T
	up *upstream

	mu       sync.Mutex
	seen     map[string]map[int]int // operation -> status -> responses
	failures []string
}

func (c *checker) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	op := c.up.find(req.Method, req.URL.Path)
	if op == nil {
		return resp, nil // an abctl route (steps, healthz) or a path no route takes
	}
	c.mu.Lock()
	if c.seen[op.String()] == nil {
		c.seen[op.String()] = map[int]int{}
	}
	c.seen[op.String()][resp.StatusCode]++
	c.mu.Unlock()
	ptr, ok := op.schemas[resp.StatusCode]
	if !ok {
		return resp, nil // the status declares no JSON body
	}
	problem := ""
	if s, err := c.up.schema(ptr); err != nil {
		problem = fmt.Sprintf("the upstream schema %s does not compile: %v", ptr, err)
	} else if v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body)); err != nil {
		problem = fmt.Sprintf("the body is not JSON: %v", err)
	} else if err := s.Validate(v); err != nil {
		problem = err.Error()
	}
	if problem == "" {
		return resp, nil
	}
	msg := fmt.Sprintf("%s %s -> %d (%s): %s\nbody: %.600s", req.Method, req.URL.RequestURI(), resp.StatusCode, op, problem, body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if why := deviationOf(op, resp.StatusCode); why != "" {
		c.t.Logf("deliberate difference: %s\nwhy: %s", msg, why)
		return resp, nil
	}
	c.failures = append(c.failures, msg)
	return resp, nil
}

// served are the upstream operations the daemon serves: each must be seen
// answering 2xx, and every response of each must validate.
var served = []string{
	"POST /v1/run/tasks", "POST /v1/run/agents", "GET /v1/runs/{run_id}", "POST /v1/runs/{run_id}/cancel",
	"POST /v1/runs/cancel", "GET /v1/runs", "GET /v1/runs/{run_id}/timeline", "GET /v1/runs/{run_id}/artifacts",
	"POST /v1/runs/{run_id}/retry_webhook", "POST /v1/sdk/run_action",
	"POST /v1/agents", "GET /v1/agents", "GET /v1/agents/{workflow_permanent_id}", "POST /v1/agents/{workflow_id}",
	"POST /v1/agents/{workflow_id}/delete", "GET /v1/agents/{workflow_permanent_id}/versions",
	"PUT /v1/agents/{workflow_permanent_id}/folder",
	"GET /v1/agents/runs", "GET /v1/agents/{workflow_id}/runs", "POST /v1/agents/runs/{workflow_run_id}/retry",
	"POST /v1/agents/{workflow_permanent_id}/tags", "GET /v1/agents/{workflow_permanent_id}/tags",
	"DELETE /v1/agents/{workflow_permanent_id}/tags/{key}", "GET /v1/agents/{workflow_permanent_id}/tags/history",
	"GET /v1/workflow-tags", "POST /v1/workflow-tags",
	"POST /v1/runs/{workflow_run_id}/tags", "GET /v1/runs/{workflow_run_id}/tags",
	"DELETE /v1/runs/{workflow_run_id}/tags/{key}", "GET /v1/runs/{workflow_run_id}/tags/history",
	"GET /v1/run-tags", "POST /v1/run-tags",
	"GET /v1/tag-keys", "PATCH /v1/tag-keys/{key}", "DELETE /v1/tag-keys/{key}",
	"GET /v1/tag-values", "PATCH /v1/tag-values/{key}", "DELETE /v1/tag-values/{key}", "PATCH /v1/tag-values/{key}/rename",
	"POST /v1/folders", "GET /v1/folders", "GET /v1/folders/{folder_id}", "PUT /v1/folders/{folder_id}", "DELETE /v1/folders/{folder_id}",
	"POST /v1/credentials", "GET /v1/credentials", "GET /v1/credentials/{credential_id}",
	"POST /v1/credentials/{credential_id}/update", "POST /v1/credentials/{credential_id}/delete", "POST /v1/credentials/totp",
	"POST /v1/run/tasks/login",
	"POST /v1/browser_profiles", "GET /v1/browser_profiles", "GET /v1/browser_profiles/{profile_id}",
	"PATCH /v1/browser_profiles/{profile_id}", "DELETE /v1/browser_profiles/{profile_id}",
	"POST /v1/agents/{workflow_permanent_id}/browser_session/reset_profile",
	"POST /v1/browser_sessions", "GET /v1/browser_sessions", "GET /v1/browser_sessions/{browser_session_id}",
	"PATCH /v1/browser_sessions/{browser_session_id}", "POST /v1/browser_sessions/{browser_session_id}/close",
}

// openedSessions is the executor side of browser sessions for this test,
// which checks the API's answers (the engine's tests drive real browsers):
// it records which sessions are open.
type openedSessions struct {
	mu   sync.Mutex
	open map[string]bool
}

func (o *openedSessions) OpenBrowserSession(_ context.Context, _, id string, _ executor.BrowserSessionOptions) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open == nil {
		o.open = map[string]bool{}
	}
	o.open[id] = true
	return nil
}

func (o *openedSessions) CloseBrowserSession(_ context.Context, _, id string, _ bool) ([]byte, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.open, id)
	return nil, nil
}

func TestResponsesMatchTheUpstreamSchema(t *testing.T) {
	path := upstreamSpecPath(t)
	if path == "" {
		t.Skipf("the hosted service's OpenAPI description (%s beside the repository, or $ABCTL_UPSTREAM_OPENAPI) is missing", upstreamSpecName)
	}
	up := loadUpstream(t, path)
	for _, s := range served {
		found := false
		for _, o := range up.ops {
			found = found || o.String() == s
		}
		if !found {
			t.Errorf("%s is listed as served but is not in %s", s, path)
		}
	}
	// The validator is live: a run answer without its status, and with a
	// number for its id, does not validate.
	if s, err := up.schema(up.find("GET", "/v1/runs/wr_1").schemas[200]); err != nil {
		t.Fatal(err)
	} else if v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"run_id":5,"run_type":"workflow_run"}`)); s.Validate(v) == nil {
		t.Fatal("a run without a status and with a numeric id validates against the upstream schema: the checker checks nothing")
	}
	chk := &checker{t: t, up: up, seen: map[string]map[int]int{}}
	const key = "abk_upstream_schema_test_key"
	acts := &fakeActions{open: map[string]*fakeSession{}}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: key, Executor: &scripted.Executor{}, Actions: acts, Sessions: &openedSessions{}, Workers: 2})
	base := "http://" + addr
	hc := &http.Client{Transport: chk}
	c, err := client.New(client.WithBaseURL(base), client.WithAPIKey(key), client.WithMaxRetries(0), client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	raw := func(method, path, body string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	exerciseEveryOperation(t, c, raw, acts)
	for _, exercise := range moreExercises {
		exercise(t, c, raw)
	}

	chk.mu.Lock()
	defer chk.mu.Unlock()
	for _, f := range chk.failures {
		t.Errorf("a response does not match the upstream schema: %s", f)
	}
	var missing []string
	for _, s := range served {
		ok := false
		for status := range chk.seen[s] {
			ok = ok || status/100 == 2
		}
		if !ok {
			missing = append(missing, s)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations the daemon serves that the test never saw answer 2xx:\n  %s", strings.Join(missing, "\n  "))
	}
	var lines []string
	for op, statuses := range chk.seen {
		lines = append(lines, fmt.Sprintf("%s %v", op, statuses))
	}
	sort.Strings(lines)
	t.Logf("responses validated, by operation and status:\n  %s", strings.Join(lines, "\n  "))
}

// moreExercises call the operations that files of their own add to
// served (schedules_schema_test.go and the like), as exerciseEveryOperation
// does for the rest: each is run against the same daemon, after it.
var moreExercises []func(t *testing.T, c *client.Client, raw func(method, path, body string) int)

// exerciseEveryOperation calls every operation the daemon serves, with
// answers that succeed and answers that fail (404, 422), so that the
// checker sees each.
func exerciseEveryOperation(t *testing.T, c *client.Client, raw func(method, path, body string) int, acts *fakeActions) {
	ctx := t.Context()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	wait := func(id string) *client.Run {
		t.Helper()
		run, err := c.Runs.Wait(ctx, id, &client.WaitOptions{Interval: 10_000_000, MaxInterval: 50_000_000})
		must(err)
		return run
	}

	// Folders and agents.
	folder, err := c.Folders.Create(ctx, &client.FolderCreateRequest{Title: "Billing", Description: "invoices"})
	must(err)
	_, err = c.Folders.List(ctx, nil)
	must(err)
	_, err = c.Folders.Get(ctx, folder.FolderID)
	must(err)
	_, err = c.Folders.Update(ctx, folder.FolderID, &client.FolderUpdateRequest{Title: client.Ptr("Billing portal")})
	must(err)
	def := &client.AgentDefinition{Title: "Scripted agent", WorkflowDefinition: client.WorkflowDefinition{
		Parameters: []client.Parameter{
			{Key: scripted.ParamKey, ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString, DefaultValue: json.RawMessage(`"steps=2;details"`)},
			{Key: "count", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterInteger, DefaultValue: json.RawMessage(`1`)},
		},
		Blocks: client.Blocks{
			&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"},
			&client.ForLoopBlock{BlockBase: client.BlockBase{Label: "each"}, LoopOverParameterKey: "count",
				LoopBlocks: client.Blocks{&client.NavigationBlock{BlockBase: client.BlockBase{Label: "visit"}, NavigationGoal: "Open it."}}},
		},
	}}
	agent, err := c.Agents.Create(ctx, def, nil)
	must(err)
	wpid := agent.WorkflowPermanentID
	_, err = c.Agents.Update(ctx, wpid, def)
	must(err)
	_, err = c.Agents.Get(ctx, wpid, nil)
	must(err)
	_, err = c.Agents.List(ctx, nil)
	must(err)
	_, err = c.Agents.Versions(ctx, wpid)
	must(err)
	_, err = c.Agents.SetFolder(ctx, wpid, folder.FolderID)
	must(err)
	_, err = c.Agents.ApplyTags(ctx, wpid, &client.TagApplyRequest{Tags: []client.TagInput{{Key: "team", Value: "billing"}, {Value: "nightly"}}})
	must(err)
	_, err = c.Agents.GetTags(ctx, wpid)
	must(err)
	_, err = c.Agents.TagHistory(ctx, wpid, nil)
	must(err)
	raw("GET", "/v1/workflow-tags?workflow_permanent_ids="+wpid, "")
	raw("POST", "/v1/workflow-tags", `{"workflow_permanent_ids":["`+wpid+`"]}`)

	// Runs of every kind, and their reads.
	task, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=2;details;output={\"price\":12}", URL: "https://example.com/"})
	must(err)
	failed, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=1;status=failed;reason=no such page;screenshots=1;downloads=1;recording"})
	must(err)
	agentRun, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: wpid, WebhookURL: "http://127.0.0.1:9/hook"})
	must(err)
	for _, id := range []string{task.RunID, failed.RunID, agentRun.RunID} {
		wait(id)
		_, err = c.Runs.Get(ctx, id)
		must(err)
		_, err = c.Runs.Timeline(ctx, id)
		must(err)
		_, err = c.Runs.ListArtifacts(ctx, id, nil)
		must(err)
	}
	_, err = c.Runs.List(ctx, nil)
	must(err)
	_, err = c.Agents.ListRuns(ctx, nil)
	must(err)
	_, err = c.Agents.ListRuns(ctx, &client.ListAgentRunsOptions{AgentID: wpid, Status: []client.RunStatus{client.RunStatusCompleted, client.RunStatusFailed}})
	must(err)
	retried, err := c.Agents.RetryRun(ctx, agentRun.RunID)
	must(err)
	wait(retried.RunID)
	raw("POST", "/v1/runs/"+failed.RunID+"/retry_webhook", `{"webhook_url":"http://127.0.0.1:9/other"}`)

	// Cancels: one run held at a gate, then cancelled alone, one in bulk.
	held, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: scripted.Prefix + "block"})
	must(err)
	held2, err := c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: scripted.Prefix + "block"})
	must(err)
	must(c.Runs.Cancel(ctx, held.RunID))
	_, err = c.Runs.CancelMany(ctx, []string{held2.RunID, "tsk_404"})
	must(err)
	wait(held.RunID)
	wait(held2.RunID)

	// Run tags and the tag registry.
	_, err = c.Runs.ApplyTags(ctx, agentRun.RunID, &client.TagApplyRequest{Tags: []client.TagInput{{Key: "env", Value: "prod"}}})
	must(err)
	_, err = c.Runs.GetTags(ctx, agentRun.RunID)
	must(err)
	_, err = c.Runs.TagHistory(ctx, agentRun.RunID, nil)
	must(err)
	raw("GET", "/v1/run-tags?workflow_run_ids="+agentRun.RunID, "")
	raw("POST", "/v1/run-tags", `{"workflow_run_ids":["`+agentRun.RunID+`"]}`)
	_, err = c.Runs.DeleteTag(ctx, agentRun.RunID, "env")
	must(err)
	_, err = c.Tags.ListKeys(ctx)
	must(err)
	_, err = c.Tags.UpdateKey(ctx, "team", "who owns it")
	must(err)
	_, err = c.Tags.ListValues(ctx, "team")
	must(err)
	_, err = c.Tags.UpdateValue(ctx, "team", "billing", client.TagColor("blue"))
	must(err)
	_, err = c.Tags.RenameValue(ctx, "team", "billing", "finance")
	must(err)
	_, err = c.Tags.DeleteValue(ctx, "team", "finance")
	must(err)
	_, err = c.Agents.DeleteTag(ctx, wpid, "nightly")
	must(err)
	_, err = c.Tags.DeleteKey(ctx, "env")
	must(err)

	// Credentials and one-time codes.
	for _, data := range []client.CredentialData{
		&client.PasswordCredential{Username: "ada", Password: "correct horse", TOTP: "JBSWY3DPEHPK3PXP", TOTPIdentifier: "ada@example.com"},
		&client.CreditCardCredential{CardNumber: "4111 1111 1111 1111", CardCVV: "123", CardExpMonth: "12", CardExpYear: "2030", CardBrand: "visa", CardHolderName: "Ada Lovelace"},
		&client.SecretCredential{SecretValue: "sk-test", SecretLabel: "API key"},
	} {
		cred, err := c.Credentials.Create(ctx, &client.CredentialRequest{Name: "Portal", Credential: data})
		must(err)
		_, err = c.Credentials.Get(ctx, cred.CredentialID)
		must(err)
		_, err = c.Credentials.Update(ctx, cred.CredentialID, &client.CredentialRequest{Name: "Portal (renamed)", Credential: data})
		must(err)
	}
	creds, err := c.Credentials.List(ctx, nil)
	must(err)
	must(c.Credentials.Delete(ctx, creds[0].CredentialID))
	login, err := c.Runs.Login(ctx, &client.LoginRequest{CredentialID: creds[len(creds)-1].CredentialID, URL: "https://example.com/login"})
	must(err)
	wait(login.RunID)
	_, err = c.Runs.Get(ctx, login.RunID)
	must(err)
	_, err = c.Credentials.SendTOTPCode(ctx, &client.TOTPCodeRequest{TOTPIdentifier: "ada@example.com", Content: "Your code is 123456"})
	must(err)

	// Browser profiles (the scripted executor keeps no browser state: an
	// empty profile).
	profile, err := c.BrowserProfiles.Create(ctx, &client.BrowserProfileCreateRequest{Name: "Billing", Description: "signed in"})
	must(err)
	_, err = c.BrowserProfiles.List(ctx, nil)
	must(err)
	_, err = c.BrowserProfiles.Get(ctx, profile.BrowserProfileID)
	must(err)
	_, err = c.BrowserProfiles.Update(ctx, profile.BrowserProfileID, &client.BrowserProfileUpdateRequest{Name: client.Ptr("Billing portal")})
	must(err)
	must(c.BrowserProfiles.Delete(ctx, profile.BrowserProfileID))
	must(c.Agents.ResetProfile(ctx, wpid))

	// Browser sessions.
	session, err := c.BrowserSessions.Create(ctx, &client.BrowserSessionCreateRequest{URL: "https://example.com/", Timeout: 30})
	must(err)
	_, err = c.BrowserSessions.List(ctx)
	must(err)
	_, err = c.BrowserSessions.Get(ctx, session.BrowserSessionID)
	must(err)
	_, err = c.BrowserSessions.SetGenerateProfile(ctx, session.BrowserSessionID, true)
	must(err)
	must(c.BrowserSessions.Close(ctx, session.BrowserSessionID))

	// A single action.
	action, err := c.Actions.Run(ctx, &client.RunActionRequest{URL: "https://example.com/", Action: client.Action{Type: client.ActionClick, Selector: "#go"}})
	must(err)
	_, err = c.Runs.Get(ctx, action.WorkflowRunID)
	must(err)
	acts.EndActionRuns(context.WithoutCancel(ctx))
	wait(action.WorkflowRunID)

	// Failures: unknown records (404) and requests that do not validate
	// (422), on every kind of route.
	for _, call := range []struct{ method, path, body string }{
		{"GET", "/v1/agents/wpid_404", ""},
		{"GET", "/v1/agents?page_size=ten", ""},
		{"POST", "/v1/agents", `{"json_definition":{"title":""}}`},
		{"POST", "/v1/agents", `{"yaml_definition":"title: [unclosed"}`},
		{"GET", "/v1/runs/tsk_404", ""},
		{"GET", "/v1/runs?status=finished", ""},
		{"POST", "/v1/run/tasks", `{}`},
		{"POST", "/v1/run/tasks", `{"prompt":"x","max_steps":"many"}`},
		{"POST", "/v1/run/agents", `{"workflow_id":"` + wpid + `","parameters":{"count":"many"}}`},
		{"GET", "/v1/agents/runs?status=finished", ""},
		{"GET", "/v1/agents/runs?page=0", ""},
		{"POST", "/v1/agents/runs/wr_404/retry", ""},
		{"GET", "/v1/folders/fld_404", ""},
		{"GET", "/v1/credentials/cred_404", ""},
		{"POST", "/v1/credentials/cred_404/update", `{"name":"x","credential_type":"secret","credential":{"secret_value":"v"}}`},
		{"POST", "/v1/credentials/cred_404/delete", ""},
		{"POST", "/v1/credentials", `{"name":"x","credential_type":"token","credential":{}}`},
		{"GET", "/v1/credentials?page_size=0", ""},
		{"POST", "/v1/credentials/totp", `{"totp_identifier":"ada@example.com"}`},
		{"POST", "/v1/run/tasks/login", `{"credential_type":"bitwarden"}`},
		{"POST", "/v1/browser_profiles", `{}`},
		{"GET", "/v1/browser_profiles/bp_404", ""},
		{"PATCH", "/v1/browser_profiles/bp_404", `{"name":"x"}`},
		{"DELETE", "/v1/browser_profiles/bp_404", ""},
		{"POST", "/v1/agents/wpid_404/browser_session/reset_profile", ""},
		{"POST", "/v1/browser_sessions", `{"timeout":1}`},
		{"GET", "/v1/browser_sessions/pbs_404", ""},
		{"PATCH", "/v1/browser_sessions/pbs_404", `{"generate_browser_profile":true}`},
		{"POST", "/v1/browser_sessions/pbs_404/close", ""},
		{"POST", "/v1/folders", `{}`},
		{"PATCH", "/v1/tag-values/team", `{"value":"x","color":"plaid"}`},
		{"POST", "/v1/sdk/run_action", `{"url":"https://example.com/"}`},
		{"GET", "/v1/runs/tsk_404/timeline", ""},
	} {
		if status := raw(call.method, call.path, call.body); status < 400 {
			t.Errorf("%s %s %s: %d, want a 4xx", call.method, call.path, call.body, status)
		}
	}

	// Deletions last.
	_, err = c.Folders.Delete(ctx, folder.FolderID, nil)
	must(err)
	must(c.Agents.Delete(ctx, wpid))
}
