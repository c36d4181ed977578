package engine_test

// Custom models (/v1/custom-llms) through a real daemon and engine: an
// organization's model serves its runs and no other organization's, its
// key reaches the endpoint and nothing else, and an unreachable one fails
// the run naming it.

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

func TestCustomModelServesItsOrganizationOnly(t *testing.T) {
	needBrowser(t)
	const key = "sk-org-a-custom-5f3e1d2c9b8a7f6e"
	// The daemon's own model is never called: every call here names a
	// custom model.
	daemonModel := llmtest.New(t)
	custom := llmtest.New(t,
		llmtest.Step{Kind: engine.KindCustomModelCheck, Reply: llmtest.Text("OK")},
		llmtest.Step{Kind: llm.KindPrompt, Match: `Write a one-line greeting`, Reply: llmtest.Text("Hello from the custom model")},
	)
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := modelEngine(t, daemonModel, engine.Config{Logger: logger})
	dir := t.TempDir()
	// Two organizations whose model answers on loopback: the operator
	// allows private networks, which a shared daemon refuses otherwise.
	addr, _ := daemontest.Start(t, dir, daemon.Config{APIKey: testKey, Executor: e, Workers: 2, Logger: logger,
		Egress: egress.Config{Private: egress.PrivateAllow}})
	a, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ac := admin.NewClient(admin.SocketPath(dir))
	other, err := ac.CreateOrganization(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(other.APIKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	apiBase := custom.URL() + "/v1"
	cm, err := a.CustomLLMs.Create(ctx, &client.CustomLLMRequest{Config: client.CustomLLMConfig{
		DisplayName: "Team model", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "team-7b",
		APIBase: &apiBase, APIKey: new(key)}})
	if err != nil {
		t.Fatal(err)
	}
	if !cm.Valid || cm.Config.APIKey != nil {
		t.Fatalf("created: valid %v, api_key %v", cm.Valid, cm.Config.APIKey)
	}
	greeter := func(label string) client.WorkflowDefinition {
		blk := &client.TextPromptBlock{BlockBase: base(label), Prompt: "Write a one-line greeting for Ada."}
		blk.Model = client.Model{"model_name": cm.ID}
		return client.WorkflowDefinition{Blocks: client.Blocks{blk}}
	}
	run := func(c *client.Client, title string) *client.Run {
		t.Helper()
		ag, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: title, WorkflowDefinition: greeter("greet")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: ag.WorkflowPermanentID})
		if err != nil {
			t.Fatal(err)
		}
		done, err := c.Runs.Wait(ctx, r.RunID, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return done
	}

	// Organization A's run goes to its model, with its key.
	done := run(a, "Greeter")
	if done.Status != client.RunStatusCompleted {
		t.Fatalf("organization A's run: %s: %s", done.Status, done.GetFailureReason())
	}
	if !strings.Contains(string(done.Output), "Hello from the custom model") {
		t.Errorf("output %s", done.Output)
	}
	calls := custom.Calls()
	if len(calls) != 2 || calls[1].Kind != llm.KindPrompt || calls[1].Model != "team-7b" || !calls[1].SentKey(key) || !calls[0].SentKey(key) {
		t.Fatalf("the custom endpoint's calls: %d", len(calls))
	}
	if n := len(daemonModel.Calls()); n != 0 {
		t.Errorf("the daemon's own model got %d calls", n)
	}

	// Organization B names the same model: unknown to it, before any call.
	done = run(b, "Greeter of B")
	t.Logf("organization B's run: %s", done.GetFailureReason())
	if done.Status != client.RunStatusFailed || !strings.Contains(done.GetFailureReason(), cm.ID) ||
		!strings.Contains(done.GetFailureReason(), "no custom model") {
		t.Errorf("organization B's run: %s: %s", done.Status, done.GetFailureReason())
	}
	if n := len(custom.Calls()); n != 2 {
		t.Errorf("organization B's run reached A's model (%d calls)", n)
	}

	// An unreachable model: saved with valid false, and a run that names
	// it fails saying which model.
	gone := closedURL(t)
	if _, err := a.CustomLLMs.Update(ctx, cm.ID, &client.CustomLLMRequest{Config: client.CustomLLMConfig{
		DisplayName: "Team model", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "team-7b", APIBase: &gone}}); err != nil {
		t.Fatal(err)
	}
	if list, err := a.CustomLLMs.List(ctx); err != nil || len(list) != 1 || list[0].Valid {
		t.Fatalf("after pointing it at a closed port: %+v %v", list, err)
	}
	done = run(a, "Greeter, unreachable")
	t.Logf("the unreachable model's run: %s", done.GetFailureReason())
	if done.Status != client.RunStatusFailed || !strings.Contains(done.GetFailureReason(), cm.ID) {
		t.Errorf("a run of an unreachable model: %s: %s", done.Status, done.GetFailureReason())
	}

	// The key is nowhere: the data directory, the logs, the run.
	leaks := map[string][]byte{"the logs": logs.Bytes(), "the run": []byte(done.GetFailureReason())}
	if err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil {
			leaks[path] = data
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for where, data := range leaks {
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("%s hold the key", where)
		}
	}
	if !bytes.Contains(logs.Bytes(), []byte("custom")) {
		t.Error("the leak search saw no logs about the custom model: it proves nothing")
	}
}
