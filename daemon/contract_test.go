package daemon_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/api"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
)

// env is a daemon handler on loopback over a real bbolt file, with two
// organizations and a client for each.
type env struct {
	t     *testing.T
	url   string
	store *boltstore.Store
	key   string         // organization A's key
	a, b  *client.Client // clients of organizations A and B
	orgA  string         // the organizations' ids
	orgB  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvLogging(t, nil)
}

// newEnvLogging is newEnv with the handler's logs (its access log too)
// written to logs.
func newEnvLogging(t *testing.T, logs io.Writer) *env {
	t.Helper()
	secret := make([]byte, store.SecretSize)
	rand.Read(secret)
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "abctl.db"), store.Options{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	orgA, keyA, err := st.CreateOrganization(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	orgB, keyB, err := st.CreateOrganization(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	srv := httptest.NewServer(api.NewServer(st, logger))
	t.Cleanup(srv.Close)
	mk := func(key string) *client.Client {
		c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(key), client.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return &env{t: t, url: srv.URL, store: st, key: keyA, a: mk(keyA), b: mk(keyB), orgA: orgA.ID, orgB: orgB.ID}
}

// raw sends a request by hand, for what the client would never send.
func (e *env) raw(method, path, contentType, body string, header ...string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-Api-Key", e.key)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const contactYAML = `title: Contact Forms
description: Fill the contact form on the website
webhook_callback_url: https://example.com/webhook
workflow_definition:
  parameters:
    - key: website_url
      description: the site
      parameter_type: workflow
      workflow_parameter_type: string
      default_value: null
  blocks:
    - label: Fill_Out_Contact_Form
      block_type: navigation
      url: "{{website_url}}"
      navigation_goal: Find the contact form and submit it.
    - label: Extract_Email
      block_type: extraction
      data_extraction_goal: Extract a company email if available
`

func definition(title string) *client.AgentDefinition {
	return &client.AgentDefinition{
		Title: title,
		WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{{Key: "email", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString, Description: "where replies go"}},
			Blocks:     client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: "https://example.com/"}},
		},
	}
}

func TestHealthzNeedsNoKey(t *testing.T) {
	e := newEnv(t)
	resp, err := http.Get(e.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
}

func TestMissingOrUnknownKeyIs403(t *testing.T) {
	e := newEnv(t)
	for _, key := range []string{"", "abk_not_a_key"} {
		c, _ := client.New(client.WithBaseURL(e.url), client.WithAPIKey(key), client.WithMaxRetries(0))
		_, err := c.Agents.List(t.Context(), nil)
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 403 || apiErr.Detail != "Invalid credentials" {
			t.Errorf("key %q: %v", key, err)
		}
	}
}

func TestAgentLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()

	created, err := e.a.Agents.CreateYAML(ctx, contactYAML, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(created.WorkflowPermanentID, "wpid_") || !strings.HasPrefix(created.WorkflowID, "w_") ||
		created.Version != 1 || created.AgentID != created.WorkflowPermanentID || created.Status != client.AgentStatusPublished {
		t.Errorf("created: %+v", created)
	}
	if n := len(created.WorkflowDefinition.Blocks); n != 2 {
		t.Fatalf("%d blocks", n)
	}
	nav, ok := created.WorkflowDefinition.Blocks[0].(*client.NavigationBlock)
	if !ok || nav.URL != "{{website_url}}" || nav.Label != "Fill_Out_Contact_Form" {
		t.Errorf("first block %#v", created.WorkflowDefinition.Blocks[0])
	}

	got, err := e.a.Agents.Get(ctx, created.WorkflowPermanentID, nil)
	if err != nil || got.Title != "Contact Forms" || got.WorkflowID != created.WorkflowID {
		t.Fatalf("get: %+v %v", got, err)
	}

	updated, err := e.a.Agents.Update(ctx, created.WorkflowPermanentID, definition("Contact Forms v2"))
	if err != nil {
		t.Fatal(err)
	}
	if updated.Version != 2 || updated.WorkflowPermanentID != created.WorkflowPermanentID || updated.WorkflowID == created.WorkflowID {
		t.Errorf("update: version %d wpid %s w %s", updated.Version, updated.WorkflowPermanentID, updated.WorkflowID)
	}
	v1, err := e.a.Agents.Get(ctx, created.WorkflowPermanentID, &client.GetAgentOptions{Version: 1})
	if err != nil || v1.Title != "Contact Forms" {
		t.Errorf("version 1: %+v %v", v1, err)
	}
	versions, err := e.a.Agents.Versions(ctx, created.WorkflowPermanentID)
	if err != nil || len(versions) != 2 {
		t.Errorf("versions: %d %v", len(versions), err)
	}
	if _, err := e.a.Agents.Get(ctx, created.WorkflowPermanentID, &client.GetAgentOptions{Version: 9}); !errors.Is(err, client.ErrNotFound) ||
		!strings.Contains(err.Error(), "version=9") {
		t.Errorf("missing version: %v", err)
	}

	if err := e.a.Agents.Delete(ctx, created.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	if err := e.a.Agents.Delete(ctx, created.WorkflowPermanentID); err != nil {
		t.Errorf("a second delete: %v", err)
	}
	if _, err := e.a.Agents.Get(ctx, created.WorkflowPermanentID, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
}

func TestCreateBodyForms(t *testing.T) {
	e := newEnv(t)
	defJSON, _ := json.Marshal(definition("Bare JSON"))
	cases := []struct {
		name, contentType, body, title string
	}{
		{"json wrapper", "application/json", `{"json_definition":` + string(definitionJSON(t, "Wrapped")) + `}`, "Wrapped"},
		{"yaml wrapper", "application/json", mustMarshal(map[string]string{"yaml_definition": contactYAML}), "Contact Forms"},
		{"bare object", "application/json", string(defJSON), "Bare JSON"},
		{"text/plain yaml", "text/plain", contactYAML, "Contact Forms"},
		{"application/yaml", "application/yaml; charset=utf-8", contactYAML, "Contact Forms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.raw("POST", "/v1/agents", tc.contentType, tc.body)
			if status != 200 {
				t.Fatalf("%d %s", status, body)
			}
			var a client.Agent
			if err := json.Unmarshal([]byte(body), &a); err != nil || a.Title != tc.title {
				t.Errorf("agent %+v %v", a, err)
			}
		})
	}
}

func TestIdempotentCreate(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	first, err := e.a.Agents.Create(ctx, definition("One"), nil, client.WithIdempotencyKey("agents/one.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.a.Agents.Create(ctx, definition("Different body"), nil, client.WithIdempotencyKey("agents/one.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if again.WorkflowPermanentID != first.WorkflowPermanentID || again.Title != "One" {
		t.Errorf("replay returned %s %q, want %s \"One\"", again.WorkflowPermanentID, again.Title, first.WorkflowPermanentID)
	}
	if len(first.WorkflowPermanentID) != len("wpid_")+64 {
		t.Errorf("an idempotent id is wpid_ and 64 hex digits, got %s", first.WorkflowPermanentID)
	}
	other, err := e.b.Agents.Create(ctx, definition("B's"), nil, client.WithIdempotencyKey("agents/one.yaml"))
	if err != nil || other.WorkflowPermanentID == first.WorkflowPermanentID {
		t.Errorf("another organization's key derived the same id: %v", err)
	}
	for _, bad := range []string{"", "has space", strings.Repeat("k", 256), "tab\there"} {
		status, body := e.raw("POST", "/v1/agents", "application/json", `{"json_definition":`+string(definitionJSON(t, "x"))+`}`, "Idempotency-Key", bad)
		if bad == "" {
			// An empty header is not sent by net/http; skip.
			continue
		}
		if status != 422 || !strings.Contains(body, "Idempotency-Key must contain 1 to 255 visible ASCII bytes.") {
			t.Errorf("key %q: %d %s", bad, status, body)
		}
	}
}

func TestInvalidRequestsAre4xxAndChangeNothing(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, method, path, ct, body string
		status                       int
		want                         string
	}{
		{"malformed json", "POST", "/v1/agents", "application/json", `{"json_definition": {`, 422, `"json_invalid"`},
		{"not an object", "POST", "/v1/agents", "application/json", `[1,2]`, 422, `model_attributes_type`},
		{"no definition", "POST", "/v1/agents", "application/json", `{"json_definition": null}`, 422, "Workflow should be provided in either yaml or json format"},
		{"missing title and blocks", "POST", "/v1/agents", "application/json", `{"json_definition": {"workflow_definition": {"parameters": []}}}`, 422, `"loc":["body","json_definition","title"]`},
		{"missing blocks", "POST", "/v1/agents", "application/json", `{"json_definition": {"title":"t","workflow_definition": {"parameters": []}}}`, 422, `"loc":["body","json_definition","workflow_definition","blocks"]`},
		{"wrong type", "POST", "/v1/agents", "application/json", `{"json_definition": {"title": 7, "workflow_definition": {"parameters": [], "blocks": []}}}`, 422, `string_type`},
		{"duplicate labels", "POST", "/v1/agents", "application/json", `{"title":"t","workflow_definition":{"parameters":[],"blocks":[{"block_type":"wait","label":"a"},{"block_type":"wait","label":"a"}]}}`, 422, `Duplicate block label \"a\"`},
		{"bad label", "POST", "/v1/agents", "application/json", `{"title":"t","workflow_definition":{"parameters":[],"blocks":[{"block_type":"wait","label":"1st"}]}}`, 422, `"loc":["body","workflow_definition","blocks",0,"label"]`},
		{"a required block key", "POST", "/v1/agents", "application/json", `{"title":"t","workflow_definition":{"parameters":[],"blocks":[{"block_type":"for_loop","label":"l","loop_variable_reference":"x","loop_blocks":[{"block_type":"goto_url","label":"a"}]}]}}`, 422, `"loc":["body","workflow_definition","blocks",0,"loop_blocks",0,"url"],"msg":"Field required"`},
		{"a required block key in YAML", "POST", "/v1/agents", "application/json", `{"yaml_definition":"title: t\nworkflow_definition:\n  parameters: []\n  blocks:\n    - block_type: send_email\n      label: m\n      sender: a@example.com\n      recipients: [b@example.com]\n      body: hi\n"}`, 422, `"subject"],"msg":"Field required"`},
		{"output parameter", "POST", "/v1/agents", "application/json", `{"title":"t","workflow_definition":{"parameters":[{"key":"x","parameter_type":"output"}],"blocks":[]}}`, 422, "Cannot manually create output parameters"},
		{"block without type", "POST", "/v1/agents", "application/json", `{"title":"t","workflow_definition":{"parameters":[],"blocks":[{"label":"a"}]}}`, 422, `blocks[0]`},
		{"bad yaml", "POST", "/v1/agents", "text/plain", "title: [unclosed\n", 422, "Invalid YAML"},
		{"yaml not a mapping", "POST", "/v1/agents", "text/plain", "- a\n- b\n", 422, "must be a mapping"},
		{"unsupported content type", "POST", "/v1/agents", "application/xml", `<a/>`, 422, "Content-Type"},
		{"page zero", "GET", "/v1/agents?page=0", "", "", 422, `"loc":["query","page"]`},
		{"page size not a number", "GET", "/v1/agents?page_size=ten", "", "", 422, `int_parsing`},
		{"bad bool", "GET", "/v1/agents?only_workflows=maybe", "", "", 422, `bool_parsing`},
		{"exclusive flags", "GET", "/v1/agents?only_workflows=true&only_saved_tasks=true", "", "", 400, "cannot be used together"},
		{"unknown agent update", "POST", "/v1/agents/wpid_404", "application/json", string(definitionJSON(t, "x")), 404, "Workflow not found. workflow_permanent_id=wpid_404"},
		{"folder page size", "GET", "/v1/folders?page_size=501", "", "", 422, `less_than_equal`},
		{"folder empty title", "POST", "/v1/folders", "application/json", `{"title":""}`, 422, `string_too_short`},
		{"folder long title", "POST", "/v1/folders", "application/json", `{"title":"` + strings.Repeat("x", 256) + `"}`, 422, `string_too_long`},
		{"folder without title", "POST", "/v1/folders", "application/json", `{}`, 422, `"type":"missing"`},
		{"folder json as text", "POST", "/v1/folders", "text/plain", `{"title":"x"}`, 422, `"loc":["body"]`},
		{"unknown folder", "GET", "/v1/folders/fld_404", "", "", 404, "Folder fld_404 not found"},
		{"set unknown folder", "PUT", "/v1/agents/wpid_1/folder", "application/json", `{"folder_id":"fld_404"}`, 400, "Folder fld_404 not found"},
		{"unknown route", "GET", "/v1/nothing-here", "", "", 404, "Not Found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := e.raw(tc.method, tc.path, tc.ct, tc.body)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s\nwant %d containing %s", status, body, tc.status, tc.want)
			}
			if !json.Valid([]byte(body)) || !strings.Contains(body, `"detail"`) {
				t.Errorf("body is not a detail object: %s", body)
			}
		})
	}
	agents, err := e.a.Agents.List(t.Context(), nil)
	folders, ferr := e.a.Folders.List(t.Context(), nil)
	if err != nil || ferr != nil || len(agents) != 0 || len(folders) != 0 {
		t.Errorf("bad requests left %d agents and %d folders (%v %v)", len(agents), len(folders), err, ferr)
	}
}

func TestListSearchAndPaging(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	folder, err := e.a.Folders.Create(ctx, &client.FolderCreateRequest{Title: "Billing Portal"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, title := range []string{"Login flow", "Invoice download", "Contact form", "Search products"} {
		a, err := e.a.Agents.Create(ctx, definition(title), nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.WorkflowPermanentID)
	}
	if _, err := e.a.Agents.SetFolder(ctx, ids[1], folder.FolderID); err != nil {
		t.Fatal(err)
	}
	titles := func(opts *client.ListAgentsOptions) string {
		t.Helper()
		var out []string
		for a, err := range e.a.Agents.All(ctx, opts) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a.Title)
		}
		return strings.Join(out, "|")
	}
	if got := titles(nil); got != "Search products|Contact form|Invoice download|Login flow" {
		t.Errorf("newest first: %s", got)
	}
	if got := titles(&client.ListAgentsOptions{PageSize: 3}); got != "Search products|Contact form|Invoice download|Login flow" {
		t.Errorf("paged by 3: %s", got)
	}
	for term, want := range map[string]string{
		"LOGIN": "Login flow", "billing": "Invoice download", "replies go": "Search products|Contact form|Invoice download|Login flow",
		ids[2][len(ids[2])-8:]: "Contact form",
	} {
		if got := titles(&client.ListAgentsOptions{SearchKey: term}); got != want {
			t.Errorf("search %q: %s, want %s", term, got, want)
		}
	}
	if got := titles(&client.ListAgentsOptions{FolderID: folder.FolderID}); got != "Invoice download" {
		t.Errorf("folder filter: %s", got)
	}
	if _, err := e.a.Agents.Update(ctx, ids[0], definition("Login flow v2")); err != nil {
		t.Fatal(err)
	}
	if got := titles(&client.ListAgentsOptions{PageSize: 1}); !strings.HasPrefix(got, "Login flow v2|") {
		t.Errorf("an update moves the agent first: %s", got)
	}
	f, err := e.a.Folders.Get(ctx, folder.FolderID)
	if err != nil || f.WorkflowCount != 1 {
		t.Errorf("folder count %+v %v", f, err)
	}
}

func TestFolders(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	f, err := e.a.Folders.Create(ctx, &client.FolderCreateRequest{Title: "Ops", Description: "Runbooks"})
	if err != nil || !strings.HasPrefix(f.FolderID, "fld_") || *f.Description != "Runbooks" || f.OrganizationID == "" {
		t.Fatalf("create %+v %v", f, err)
	}
	f, err = e.a.Folders.Update(ctx, f.FolderID, &client.FolderUpdateRequest{Title: client.Ptr("Operations")})
	if err != nil || f.Title != "Operations" || *f.Description != "Runbooks" {
		t.Errorf("update %+v %v", f, err)
	}
	if list, err := e.a.Folders.List(ctx, &client.ListFoldersOptions{Search: "runbook"}); err != nil || len(list) != 1 {
		t.Errorf("search %d %v", len(list), err)
	}
	agent, err := e.a.Agents.Create(ctx, definition("In folder"), &client.CreateAgentOptions{FolderID: f.FolderID})
	if err != nil || agent.FolderID == nil || *agent.FolderID != f.FolderID {
		t.Fatalf("create in folder %+v %v", agent, err)
	}
	res, err := e.a.Folders.Delete(ctx, f.FolderID, &client.DeleteFolderOptions{DeleteAgents: true})
	if err != nil || res.Status != "deleted" || !res.WorkflowsDeleted {
		t.Errorf("delete %+v %v", res, err)
	}
	if _, err := e.a.Agents.Get(ctx, agent.WorkflowPermanentID, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("agent of a folder deleted with its agents: %v", err)
	}
	if _, err := e.a.Folders.Delete(ctx, f.FolderID, nil); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

func TestOrganizationsAreIsolated(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	agent, err := e.a.Agents.Create(ctx, definition("A's agent"), nil)
	if err != nil {
		t.Fatal(err)
	}
	folder, err := e.a.Folders.Create(ctx, &client.FolderCreateRequest{Title: "A's folder"})
	if err != nil {
		t.Fatal(err)
	}
	id := agent.WorkflowPermanentID
	checks := map[string]error{}
	_, checks["get agent"] = e.b.Agents.Get(ctx, id, nil)
	_, checks["update agent"] = e.b.Agents.Update(ctx, id, definition("hijack"))
	_, checks["set folder"] = e.b.Agents.SetFolder(ctx, id, "")
	_, checks["get folder"] = e.b.Folders.Get(ctx, folder.FolderID)
	_, checks["update folder"] = e.b.Folders.Update(ctx, folder.FolderID, &client.FolderUpdateRequest{Title: client.Ptr("x")})
	_, checks["delete folder"] = e.b.Folders.Delete(ctx, folder.FolderID, nil)
	for name, err := range checks {
		if !errors.Is(err, client.ErrNotFound) {
			t.Errorf("%s across organizations: %v, want 404", name, err)
		}
	}
	if list, _ := e.b.Agents.List(ctx, nil); len(list) != 0 {
		t.Errorf("B lists %d of A's agents", len(list))
	}
	if list, _ := e.b.Folders.List(ctx, nil); len(list) != 0 {
		t.Errorf("B lists %d of A's folders", len(list))
	}
	if v, _ := e.b.Agents.Versions(ctx, id); len(v) != 0 {
		t.Errorf("B sees %d versions of A's agent", len(v))
	}
	if err := e.b.Agents.Delete(ctx, id); err != nil {
		t.Errorf("delete answers null even for unknown ids: %v", err)
	}
	if got, err := e.a.Agents.Get(ctx, id, nil); err != nil || got.Title != "A's agent" {
		t.Errorf("A's agent after B's attempts: %+v %v", got, err)
	}
}

func TestRunServesAndShutsDown(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan string, 1)
	var stderr syncBuffer // the daemon writes to it while the test reads it
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Config{Addr: "127.0.0.1:0", DataDir: dir, Stderr: &stderr, Ready: func(a string) { ready <- a }})
	}()
	addr := <-ready
	key, err := readKeyFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key))
	if _, err := c.Folders.Create(ctx, &client.FolderCreateRequest{Title: "kept"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), key) {
		t.Errorf("the first key was not announced on stderr")
	}
	// A second daemon on the same data directory fails at once.
	err = daemon.Run(t.Context(), daemon.Config{Addr: "127.0.0.1:0", DataDir: dir, Stderr: io.Discard})
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("second daemon: %v, want ErrLocked", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Restart: the folder and the key survive, and the key is not announced again.
	ctx2, cancel2 := context.WithCancel(t.Context())
	defer cancel2()
	stderr.Reset()
	go func() {
		done <- daemon.Run(ctx2, daemon.Config{Addr: "127.0.0.1:0", DataDir: dir, Stderr: &stderr, APIKey: "ci-chosen-key-123", Ready: func(a string) { ready <- a }})
	}()
	addr = <-ready
	for _, k := range []string{key, "ci-chosen-key-123"} {
		c, _ := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(k))
		list, err := c.Folders.List(ctx2, nil)
		if err != nil || len(list) != 1 || list[0].Title != "kept" {
			t.Errorf("key %q after restart: %v %v", k[:6], list, err)
		}
	}
	if strings.Contains(stderr.String(), key) {
		t.Error("the key was announced again on restart")
	}
	cancel2()
	<-done
}

func readKeyFile(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, datadir.KeyFileName))
	return strings.TrimSpace(string(b)), err
}

func definitionJSON(t *testing.T, title string) []byte {
	b, err := json.Marshal(definition(title))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// syncBuffer is a bytes.Buffer safe to write and read from several
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}

// TestRepeatedQueryParameterTakesTheLast: the hosted service (FastAPI)
// reads a repeated scalar query parameter as its last value, so
// ?page_size=100&page_size=1 is a page of one; list parameters keep every
// value.
func TestRepeatedQueryParameterTakesTheLast(t *testing.T) {
	e := newEnv(t)
	for _, title := range []string{"first", "second", "third"} {
		if _, err := e.a.Agents.Create(t.Context(), definition(title), nil); err != nil {
			t.Fatal(err)
		}
	}
	count := func(path string) int {
		t.Helper()
		status, body := e.raw("GET", path, "", "")
		if status != 200 {
			t.Fatalf("GET %s: %d %s", path, status, body)
		}
		var list []json.RawMessage
		if err := json.Unmarshal([]byte(body), &list); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, body)
		}
		return len(list)
	}
	if n := count("/v1/agents?page_size=100&page_size=1"); n != 1 {
		t.Errorf("?page_size=100&page_size=1 answered %d agents, want 1 (the last value)", n)
	}
	if n := count("/v1/agents?page_size=1&page_size=100"); n != 3 {
		t.Errorf("?page_size=1&page_size=100 answered %d agents, want 3 (the last value)", n)
	}
	if status, body := e.raw("GET", "/v1/agents?page_size=ten&page_size=2", "", ""); status != 200 {
		t.Errorf("a bad value followed by a good one: %d %s, want 200 (the last value counts)", status, body)
	}
	if status, body := e.raw("GET", "/v1/agents?page_size=2&page_size=ten", "", ""); status != 422 || !strings.Contains(body, "int_parsing") {
		t.Errorf("a good value followed by a bad one: %d %s, want 422 int_parsing", status, body)
	}
}
