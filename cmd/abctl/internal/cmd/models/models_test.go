package models

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor/scripted"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

const testKey = "abk_models_cli_test_key"

// daemonVars runs a real daemon and returns the environment of a CLI
// that talks to it.
func daemonVars(t *testing.T) map[string]string {
	t.Helper()
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: &scripted.Executor{}, Workers: 1})
	return map[string]string{"ABCTL_BASE_URL": "http://" + addr, "ABCTL_API_KEY": testKey, "ABCTL_EMBED": "false"}
}

// TestCreateListDelete: a model created with its key piped in, listed
// without it, deleted; the key reaches the endpoint's test call and no
// output.
func TestCreateListDelete(t *testing.T) {
	const key = "sk-cli-model-key-0f1e2d3c4b5a"
	srv := llmtest.New(t, llmtest.Step{Kind: engine.KindCustomModelCheck, Reply: llmtest.Text("OK"), Times: -1})
	f, s := cmdtest.NewFactory(t, daemonVars(t))
	s.In.WriteString(key + "\n")
	cmd := NewCmdModels(f)
	if err := cmdtest.Exec(cmd, "create", "Team GPU", "--provider", "openai_compatible", "--model", "team-7b",
		"--api-base", srv.URL()+"/v1", "--api-key-stdin", "-o", "json"); err != nil {
		t.Fatalf("create: %v (%s)", err, s.ErrOut)
	}
	var created client.CustomLLM
	if err := json.Unmarshal(s.Out.Bytes(), &created); err != nil || !created.Valid || !strings.HasPrefix(created.ID, "cllm_") {
		t.Fatalf("create printed %s (%v)", s.Out, err)
	}
	if calls := srv.Calls(); len(calls) != 1 || !calls[0].SentKey(key) {
		t.Fatalf("the test call did not carry the key")
	}

	s.Out.Reset()
	if err := cmdtest.Exec(NewCmdModels(f), "list"); err != nil {
		t.Fatal(err)
	}
	if out := s.Out.String(); !strings.Contains(out, created.ID) || !strings.Contains(out, "Team GPU") || !strings.Contains(out, "true") {
		t.Errorf("list:\n%s", out)
	}
	s.Out.Reset()
	if err := cmdtest.Exec(NewCmdModels(f), "list", "-o", "name"); err != nil || strings.TrimSpace(s.Out.String()) != "model/"+created.ID {
		t.Errorf("list -o name: %q %v", s.Out, err)
	}

	// Update changes what the flags say and keeps the rest, and the key.
	s.Out.Reset()
	if err := cmdtest.Exec(NewCmdModels(f), "update", created.ID, "--name", "Team GPU 2", "--vision=false", "-o", "json"); err != nil {
		t.Fatalf("update: %v (%s)", err, s.ErrOut)
	}
	var updated client.CustomLLM
	if err := json.Unmarshal(s.Out.Bytes(), &updated); err != nil || updated.Config.DisplayName != "Team GPU 2" || updated.Config.ModelName != "team-7b" ||
		*updated.Config.SupportsVision || !updated.Valid {
		t.Fatalf("update printed %s (%v)", s.Out, err)
	}
	if calls := srv.Calls(); len(calls) != 2 || !calls[1].SentKey(key) {
		t.Fatalf("the update's test call did not carry the kept key")
	}
	if err := cmdtest.Exec(NewCmdModels(f), "update", created.ID, "--remove-key"); err != nil {
		t.Fatal(err)
	}
	if calls := srv.Calls(); len(calls) != 3 || calls[2].KeySent() {
		t.Fatalf("the key was sent after --remove-key")
	}
	if err := cmdtest.Exec(NewCmdModels(f), "update", "cllm_404", "--name", "x"); err == nil || !strings.Contains(err.Error(), "no custom model cllm_404") {
		t.Errorf("update of an unknown model: %v", err)
	}

	// Deleting needs --yes without a terminal; model/ID is accepted.
	if err := cmdtest.Exec(NewCmdModels(f), "delete", created.ID); !cmdtest.IsUsage(err) {
		t.Errorf("delete without --yes: %v", err)
	}
	if err := cmdtest.Exec(NewCmdModels(f), "delete", "model/"+created.ID, "--yes"); err != nil {
		t.Fatal(err)
	}
	s.Out.Reset()
	if err := cmdtest.Exec(NewCmdModels(f), "list", "-o", "json"); err != nil || strings.TrimSpace(s.Out.String()) != "[]" {
		t.Errorf("list after delete: %s %v", s.Out, err)
	}
	for what, b := range map[string]*bytes.Buffer{"stdout": s.Out, "stderr": s.ErrOut} {
		if strings.Contains(b.String(), key) {
			t.Errorf("%s shows the key", what)
		}
	}
}

// TestCreateChecksBeforeReadingTheKey: bad flags are usage errors, found
// before stdin is read or the daemon is called.
func TestCreateChecksBeforeReadingTheKey(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no provider", []string{"x", "--model", "m"}, "--provider is required"},
		{"unknown provider", []string{"x", "--provider", "azure", "--model", "m"}, "not one of"},
		{"no model", []string{"x", "--provider", "ollama"}, "--model is required"},
		{"compatible without a base", []string{"x", "--provider", "openai_compatible", "--model", "m"}, "--api-base"},
	} {
		f, _ := cmdtest.NewFactory(t, nil)
		err := cmdtest.Exec(NewCmdCreate(f, nil), tc.args...)
		if !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a usage error saying %q", tc.name, err, tc.want)
		}
	}
	// An empty piped key stores nothing, and the daemon is not called.
	f, _ := cmdtest.NewFactory(t, nil)
	if err := cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error {
		o.Client = cmdtest.NoClient(t)
		return runCreate(t.Context(), o)
	}), "x", "--provider", "ollama", "--model", "m", "--api-key-stdin"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty key: %v", err)
	}
}

// TestNoFlagCarriesAKey walks every command of the group: none has a flag
// a key could be given with, and such a flag is refused as unknown.
func TestNoFlagCarriesAKey(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if strings.Contains(fl.Name, "key") && fl.Name != "api-key-stdin" && fl.Name != "remove-key" {
				t.Errorf("%s has the flag --%s", c.CommandPath(), fl.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdModels(f))
	if err := cmdtest.Exec(NewCmdCreate(f, nil), "x", "--provider", "ollama", "--model", "m", "--api-key", "sk-1"); !cmdtest.IsUsage(err) {
		t.Errorf("--api-key: %v", err)
	}
}
