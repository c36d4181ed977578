package daemon_test

// Custom models (/v1/custom-llms) through the client over real HTTP, on a
// real daemon whose check reaches a scripted model server: what answers
// show and never show, valid, organizations kept apart, bad input, the
// upstream shapes.

import (
	"bytes"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor/scripted"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

const leakModelKey = "sk-model-key-9a8b7c6d5e4f3a2b1c0d"

func init() {
	served = append(served, "GET /v1/custom-llms", "POST /v1/custom-llms",
		"PUT /v1/custom-llms/{custom_llm_id}", "DELETE /v1/custom-llms/{custom_llm_id}")
	moreExercises = append(moreExercises, exerciseCustomLLMs)
}

// closedModelBase is the URL of a loopback port nothing listens on.
func closedModelBase(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// exerciseCustomLLMs calls every custom-LLM operation for the upstream
// schema test, with answers that succeed and answers that fail.
func exerciseCustomLLMs(t *testing.T, c *client.Client, raw func(method, path, body string) int) {
	ctx := t.Context()
	base := closedModelBase(t)
	cfg := client.CustomLLMConfig{DisplayName: "Unreachable", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "m", APIBase: &base, APIKey: new("k-1")}
	m, err := c.CustomLLMs.Create(ctx, &client.CustomLLMRequest{Config: cfg})
	if err != nil {
		t.Fatalf("create a custom LLM: %v", err)
	}
	if _, err := c.CustomLLMs.List(ctx); err != nil {
		t.Errorf("list custom LLMs: %v", err)
	}
	cfg.APIKey = nil
	if _, err := c.CustomLLMs.Update(ctx, m.ID, &client.CustomLLMRequest{Config: cfg}); err != nil {
		t.Errorf("update a custom LLM: %v", err)
	}
	for _, call := range []struct{ method, path, body string }{
		{"POST", "/v1/custom-llms", `{}`},
		{"POST", "/v1/custom-llms", `{"config":{"display_name":"","provider":"azure","model_name":"m"}}`},
		{"PUT", "/v1/custom-llms/" + m.ID, `{"config":{"display_name":"x","provider":"ollama"}}`},
		{"PUT", "/v1/custom-llms/cllm_404", `{"config":{"display_name":"x","provider":"ollama","model_name":"m"}}`},
		{"DELETE", "/v1/custom-llms/cllm_404", ""},
	} {
		if status := raw(call.method, call.path, call.body); status < 400 {
			t.Errorf("%s %s %s: %d, want a 4xx", call.method, call.path, call.body, status)
		}
	}
	if err := c.CustomLLMs.Delete(ctx, m.ID); err != nil {
		t.Errorf("delete a custom LLM: %v", err)
	}
}

func TestCustomLLMs(t *testing.T) {
	var logs syncBuffer
	srv := llmtest.New(t, llmtest.Step{Kind: engine.KindCustomModelCheck, Reply: llmtest.Text("OK"), Times: -1})
	e := newCustomLLMDaemon(t, &logs)
	rec := &recorder{}
	a, err := client.New(client.WithBaseURL(e.url), client.WithAPIKey(e.keyA), client.WithMaxRetries(0), client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.New(client.WithBaseURL(e.url), client.WithAPIKey(e.keyB), client.WithMaxRetries(0), client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if list, err := a.CustomLLMs.List(ctx); err != nil || len(list) != 0 {
		t.Fatalf("an empty list: %v %v", list, err)
	}

	// Create: the endpoint is called with the key; the answer shows the
	// configuration without it, with valid true and the defaults.
	apiBase := srv.URL() + "/v1"
	m, err := a.CustomLLMs.Create(ctx, &client.CustomLLMRequest{Config: client.CustomLLMConfig{
		DisplayName: "Team model", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "team-7b",
		APIBase: &apiBase, APIKey: new(leakModelKey), MaxCompletionTokens: new(2048)}})
	if err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if !m.Valid || !strings.HasPrefix(m.ID, "cllm_") || m.OrganizationID != e.orgA || m.Config.APIKey != nil ||
		m.Config.SupportsVision == nil || !*m.Config.SupportsVision || m.Config.AddAssistantPrefix == nil || *m.Config.AddAssistantPrefix ||
		m.Config.MaxCompletionTokens == nil || *m.Config.MaxCompletionTokens != 2048 || m.CreatedAt.IsZero() {
		t.Errorf("created: %+v", m)
	}
	if len(calls) != 1 || !calls[0].SentKey(leakModelKey) || calls[0].Model != "team-7b" {
		t.Fatalf("the check's calls: %d", len(calls))
	}

	// An endpoint that does not answer: saved, with valid false.
	closed := closedModelBase(t)
	down, err := a.CustomLLMs.Create(ctx, &client.CustomLLMRequest{Config: client.CustomLLMConfig{
		DisplayName: "Down", Provider: client.CustomLLMProviderOllama, ModelName: "llama3", APIBase: &closed}})
	if err != nil || down.Valid {
		t.Fatalf("an unreachable endpoint: %+v %v", down, err)
	}
	list, err := a.CustomLLMs.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != down.ID || list[1].ID != m.ID {
		t.Fatalf("list, newest first: %+v %v", list, err)
	}

	// Update without a key keeps it (the check still sends it).
	vision := false
	upd, err := a.CustomLLMs.Update(ctx, m.ID, &client.CustomLLMRequest{Config: client.CustomLLMConfig{
		DisplayName: "Team model, text only", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "team-7b",
		APIBase: &apiBase, SupportsVision: &vision}})
	if err != nil || !upd.Valid || upd.Config.DisplayName != "Team model, text only" || *upd.Config.SupportsVision || upd.Config.MaxCompletionTokens != nil {
		t.Fatalf("update: %+v %v", upd, err)
	}
	if calls := srv.Calls(); len(calls) != 2 || !calls[1].SentKey(leakModelKey) {
		t.Errorf("the update's check did not send the kept key")
	}

	// Another organization's models do not exist for it.
	if list, err := b.CustomLLMs.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("organization B lists %+v %v", list, err)
	}
	if _, err := b.CustomLLMs.Update(ctx, m.ID, &client.CustomLLMRequest{Config: upd.Config}); !isStatus(err, 404, "Custom LLM "+m.ID+" not found") {
		t.Errorf("organization B's update of A's model: %v", err)
	}
	if err := b.CustomLLMs.Delete(ctx, m.ID); !isStatus(err, 404, "Custom LLM "+m.ID+" not found") {
		t.Errorf("organization B's delete of A's model: %v", err)
	}

	// Bad input: a 422 that says what and where, and never repeats a key.
	long := strings.Repeat("k", 1001)
	for _, tc := range []struct {
		name, body, loc, msg string
	}{
		{"no config", `{}`, "body.config", "Field required"},
		{"no model name", `{"config":{"display_name":"x","provider":"ollama"}}`, "body.config.model_name", "Field required"},
		{"empty display name", `{"config":{"display_name":"","provider":"ollama","model_name":"m"}}`, "body.config.display_name", "at least 1 character"},
		{"unknown provider", `{"config":{"display_name":"x","provider":"azure","model_name":"m"}}`, "body.config.provider", "'openai_compatible', 'ollama' or 'openrouter'"},
		{"compatible without a base", `{"config":{"display_name":"x","provider":"openai_compatible","model_name":"m","api_key":"` + leakModelKey + `"}}`, "body.config.api_base", "needs api_base"},
		{"base not a URL", `{"config":{"display_name":"x","provider":"ollama","model_name":"m","api_base":"localhost:11434"}}`, "body.config.api_base", "http:// or https://"},
		{"key too long", `{"config":{"display_name":"x","provider":"ollama","model_name":"m","api_key":"` + long + `"}}`, "body.config.api_key", "at most 1000 characters"},
		{"temperature 3", `{"config":{"display_name":"x","provider":"ollama","model_name":"m","temperature":3}}`, "body.config.temperature", "less than or equal to 2"},
		{"no tokens", `{"config":{"display_name":"x","provider":"ollama","model_name":"m","max_completion_tokens":0}}`, "body.config.max_completion_tokens", "greater than or equal to 1"},
		{"a number for the key", `{"config":{"display_name":"x","provider":"ollama","model_name":"m","api_key":5}}`, "body.config.api_key", "valid string"},
	} {
		status, body := e.raw("POST", "/v1/custom-llms", e.keyA, tc.body)
		rec.bodies.WriteString(body)
		if status != 422 || !strings.Contains(body, tc.msg) || !strings.Contains(body, locJSON(tc.loc)) {
			t.Errorf("%s: %d %s; want 422 at %s saying %q", tc.name, status, body, tc.loc, tc.msg)
		}
		if strings.Contains(body, long) {
			t.Errorf("%s: the answer repeats the key", tc.name)
		}
	}
	if status, body := e.raw("PUT", "/v1/custom-llms/cllm_1", e.keyA, `{"config":{"display_name":"x","provider":"ollama","model_name":"m"}}`); status != 404 || !strings.Contains(body, "Custom LLM cllm_1 not found") {
		t.Errorf("update of an unknown id: %d %s", status, body)
	}

	// Delete: success, then 404.
	if err := a.CustomLLMs.Delete(ctx, down.ID); err != nil {
		t.Fatal(err)
	}
	if err := a.CustomLLMs.Delete(ctx, down.ID); !isStatus(err, 404, "not found") {
		t.Errorf("delete twice: %v", err)
	}

	// The key is nowhere: the data directory's files, the logs, the answers.
	e.stop()
	leaks := map[string][]byte{"the logs": []byte(logs.String()), "the answers": rec.bodies.Bytes()}
	for _, path := range e.files(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		leaks[path] = data
	}
	for where, data := range leaks {
		if bytes.Contains(data, []byte(leakModelKey)) {
			t.Errorf("%s hold the model's key", where)
		}
	}
	if !bytes.Contains(rec.bodies.Bytes(), []byte(`"display_name":"Team model"`)) || !strings.Contains(logs.String(), "custom-llms") {
		t.Error("the leak search saw no answers or no logs: it proves nothing")
	}
}

// customLLMDaemon is a real daemon (daemon.Run) with two organizations.
type customLLMDaemon struct {
	url, dir   string
	keyA, keyB string
	orgA, orgB string
	stop       func() error
}

// newCustomLLMDaemon starts a daemon whose logs (access log included) go to
// logs, with its default organization (A) and another (B).
func newCustomLLMDaemon(t *testing.T, logs io.Writer) *customLLMDaemon {
	t.Helper()
	const key = "abk_custom_llms_test_key_a"
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// Two organizations whose models answer on loopback: the operator
	// allows private networks (a shared daemon refuses them otherwise,
	// as engine/egress_blocks_test.go shows).
	addr, stop := daemontest.Start(t, dir, daemon.Config{APIKey: key, Executor: &scripted.Executor{}, Workers: 1, Logger: logger,
		Egress: egress.Config{Private: egress.PrivateAllow}})
	ac := admin.NewClient(admin.SocketPath(dir))
	other, err := ac.CreateOrganization(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	e := &customLLMDaemon{url: "http://" + addr, dir: dir, keyA: key, keyB: other.APIKey, orgB: other.OrganizationID, stop: stop}
	c, err := client.New(client.WithBaseURL(e.url), client.WithAPIKey(key), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	// The default organization's id, from an answer that carries it.
	m, err := c.CustomLLMs.Create(t.Context(), &client.CustomLLMRequest{Config: client.CustomLLMConfig{
		DisplayName: "probe", Provider: client.CustomLLMProviderOllama, ModelName: "m", APIBase: new(closedModelBase(t))}})
	if err != nil {
		t.Fatal(err)
	}
	e.orgA = m.OrganizationID
	if err := c.CustomLLMs.Delete(t.Context(), m.ID); err != nil {
		t.Fatal(err)
	}
	return e
}

// raw sends a request with the API key and a JSON body, and returns the
// status and the body of the answer.
func (e *customLLMDaemon) raw(method, path, key, body string) (int, string) {
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("X-Api-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// files lists every file of the data directory.
func (e *customLLMDaemon) files(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(e.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
