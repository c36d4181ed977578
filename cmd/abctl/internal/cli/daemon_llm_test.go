package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/localrun/llm"
)

// llmConfigOf parses the daemon's model flags and layers them over env.
func llmConfigOf(t *testing.T, env map[string]string, args ...string) (llm.Config, error) {
	t.Helper()
	var lf llmFlags
	cmd := &cobra.Command{Use: "daemon"}
	lf.register(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return lf.config(cmd, func(k string) string { return env[k] })
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
