package daemoncmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/config"
	"github.com/abctl/abctl/localrun/llm"
)

// llmConfigOf parses the daemon's model flags and layers them over env.
func llmConfigOf(t *testing.T, env map[string]string, args ...string) (llm.Config, error) {
	t.Helper()
	return llmConfigWithFile(t, &config.File{}, env, args...)
}

// llmConfigWithFile is llmConfigOf over a configuration file.
func llmConfigWithFile(t *testing.T, file *config.File, env map[string]string, args ...string) (llm.Config, error) {
	t.Helper()
	var lf llmFlags
	cmd := &cobra.Command{Use: "daemon"}
	lf.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return lf.config(cmd, func(k string) string { return env[k] }, file)
}

// TestDaemonLLMConfigFile: the file's llm section is the lowest layer.
func TestDaemonLLMConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("llm:\n  provider: openai-compatible\n  base_url: http://127.0.0.1:9000/v1\n  model: from-file\n  timeout: 45s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := llmConfigWithFile(t, file, nil)
	if err != nil || cfg.Provider != llm.ProviderOpenAICompatible || cfg.BaseURL != "http://127.0.0.1:9000/v1" || cfg.Model != "from-file" || cfg.Timeout != 45*time.Second {
		t.Errorf("from the file: %+v %v", cfg, err)
	}
	cfg, err = llmConfigWithFile(t, file, map[string]string{llm.EnvModel: "from-env"}, "--llm-timeout", "5s")
	if err != nil || cfg.Model != "from-env" || cfg.Timeout != 5*time.Second || cfg.BaseURL != "http://127.0.0.1:9000/v1" {
		t.Errorf("env and flag over the file: %+v %v", cfg, err)
	}
	if err := os.WriteFile(path, []byte("llm:\n  modle: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(path); err == nil || !strings.Contains(err.Error(), "modle") {
		t.Errorf("a misspelt llm key gave %v", err)
	}
}

// TestDaemonLLMFlags: flags win over ABCTL_LLM_*, which win over the
// defaults; bad values are refused with the flag's name.
func TestDaemonLLMFlags(t *testing.T) {
	cfg, err := llmConfigOf(t, nil)
	if err != nil || cfg.Provider != llm.ProviderOllama || cfg.BaseURL != llm.DefaultOllamaBaseURL || cfg.Model != llm.DefaultOllamaModel {
		t.Errorf("defaults: %v %v", cfg, err)
	}
	env := map[string]string{llm.EnvProvider: "openai-compatible", llm.EnvBaseURL: "http://127.0.0.1:8000/v1", llm.EnvModel: "from-env", llm.EnvTimeout: "30s"}
	cfg, err = llmConfigOf(t, env, "--llm-model", "from-flag", "--llm-vision=false", "--llm-schema", "json_object", "--llm-max-retries", "-1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != llm.ProviderOpenAICompatible || cfg.BaseURL != "http://127.0.0.1:8000/v1" || cfg.Model != "from-flag" ||
		cfg.Timeout != 30*time.Second || cfg.Vision == nil || *cfg.Vision || cfg.Schema != llm.SchemaJSONObject || cfg.MaxRetries != -1 {
		t.Errorf("layered: %+v", cfg)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--llm-provider", "bogus"}, "--llm-provider"},
		{[]string{"--llm-schema", "xml"}, "--llm-schema"},
		{[]string{"--llm-timeout", "-1s"}, "--llm-timeout must be positive"},
		{[]string{"--llm-api-key", "sk-123"}, "not where to send it"},
	} {
		if _, err := llmConfigOf(t, nil, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		} else if strings.Contains(err.Error(), "sk-123") {
			t.Errorf("the error shows the key: %v", err)
		}
	}
}
