package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/llm"
)

// TestConfigViewModel: 'abctl config view' shows the local daemon's model
// (provider, base URL, model) and where each setting comes from, and
// whether a key is set and where from, never the key.
func TestConfigViewModel(t *testing.T) {
	e := newCLIEnv(t)
	const fileKey, envKey, vendorKey = "sk-in-the-file-0001", "sk-in-the-env-0002", "sk-vendor-0003"
	view := func() (string, map[string]any) {
		t.Helper()
		r := e.run("", "config", "view").expect(t, 0)
		j := e.run("", "config", "view", "-o", "json").expect(t, 0)
		for _, out := range []string{r.stdout, j.stdout} {
			for _, key := range []string{fileKey, envKey, vendorKey} {
				if strings.Contains(out, key) {
					t.Errorf("config view shows a key:\n%s", out)
				}
			}
		}
		var v struct {
			LLM map[string]any `json:"llm"`
		}
		if err := json.Unmarshal([]byte(j.stdout), &v); err != nil {
			t.Fatalf("config view -o json: %v\n%s", err, j.stdout)
		}
		return r.stdout, v.LLM
	}

	// Nothing set: the defaults, a local Ollama without a key.
	out, j := view()
	contains(t, "config view", out,
		"model provider\tollama\tdefault",
		"model base URL\t"+llm.DefaultOllamaBaseURL+"\tdefault of provider ollama",
		"model\t"+llm.DefaultOllamaModel+"\tdefault of provider ollama",
		"model API key\t(not set)")
	if j["provider"] != "ollama" || j["base_url"] != llm.DefaultOllamaBaseURL || j["model"] != llm.DefaultOllamaModel || j["api_key"] != "(not set)" {
		t.Errorf("config view -o json: llm = %v", j)
	}

	// The file's llm section, under the environment.
	path := filepath.Join(e.vars["ABCTL_CONFIG_DIR"], "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	file := "llm:\n  provider: openai-compatible\n  base_url: http://127.0.0.1:9000/v1\n  model: from-file\n  api_key: " + fileKey + "\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars[llm.EnvModel] = "from-env"
	out, j = view()
	contains(t, "config view", out,
		"model provider\topenai-compatible\tconfiguration file "+path+" (llm.provider)",
		"model base URL\thttp://127.0.0.1:9000/v1\tconfiguration file "+path+" (llm.base_url)",
		"model\tfrom-env\tenvironment "+llm.EnvModel,
		"model API key\t(set)\tconfiguration file "+path+" (llm.api_key)")
	if j["api_key"] != "(set)" || j["api_key_from"] != "configuration file "+path+" (llm.api_key)" {
		t.Errorf("config view -o json: llm = %v", j)
	}
	e.vars[llm.EnvAPIKey] = envKey
	out, _ = view()
	contains(t, "config view", out, "model API key\t(set)\tenvironment "+llm.EnvAPIKey)

	// A vendor's own variable, alone, selects that vendor.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	delete(e.vars, llm.EnvModel)
	delete(e.vars, llm.EnvAPIKey)
	e.vars[llm.EnvOpenAIKey] = vendorKey
	out, _ = view()
	contains(t, "config view", out, "model provider\topenai\t", "model API key\t(set)\tenvironment "+llm.EnvOpenAIKey)

	// A wrong setting is named, and the rest of the view still shows.
	e.vars[llm.EnvProvider] = "bogus"
	out, j = view()
	contains(t, "config view", out, "base URL\t", "model\t(invalid) ", llm.EnvProvider, "bogus")
	if e, _ := j["error"].(string); !strings.Contains(e, llm.EnvProvider) {
		t.Errorf("config view -o json: llm = %v", j)
	}
}

// TestConfigViewEmbed: for the local profile, config view says whether a
// command may start the daemon inside itself, and why not when a base URL
// was given.
func TestConfigViewEmbed(t *testing.T) {
	e := newCLIEnv(t)
	delete(e.vars, "ABCTL_API_KEY")
	delete(e.vars, "ABCTL_EMBED")
	r := e.run("", "config", "view").expect(t, 0)
	contains(t, "config view", r.stdout, "embedded daemon\tfalse\toff: the base URL (from environment ABCTL_BASE_URL) is not the local daemon's own address")
	delete(e.vars, "ABCTL_BASE_URL")
	r = e.run("", "config", "view").expect(t, 0)
	contains(t, "config view", r.stdout, "embedded daemon\ttrue\tdefault")
}

// TestConfigViewRunningDaemon: config view shows the base URL the commands
// really talk to: the address of the daemon that runs over the profile's
// data directory, from its state file, not the default address (issue 30:
// it said "http://127.0.0.1:8780 default" while the commands went to the
// daemon started with --listen elsewhere). Without a daemon, it says that
// a command starts one.
func TestConfigViewRunningDaemon(t *testing.T) {
	home := t.TempDir()
	dataDir := filepath.Join(home, "data")
	vars := map[string]string{"HOME": home, "ABCTL_DATA_DIR": dataDir, "ABCTL_CONFIG_DIR": filepath.Join(home, "config")}
	view := func() string {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		f := newTestFactory(t, ios, vars)
		if code := RunFactory(t.Context(), []string{"config", "view"}, f); code != ExitOK {
			t.Fatalf("config view: exit %d\n%s", code, errOut.String())
		}
		return out.String()
	}
	out := view()
	contains(t, "config view without a daemon", out, "base URL\thttp://127.0.0.1:", "no daemon is running over "+dataDir, "a command starts one there")

	addr, _ := daemontest.Start(t, dataDir, daemon.Config{})
	out = view()
	contains(t, "config view", out, "base URL\thttp://"+addr+"\tthe daemon's state file "+filepath.Join(dataDir, datadir.StateFileName))
}
