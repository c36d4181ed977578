package llm_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		// want: provider, base URL, model, key, or an error text
		provider llm.Provider
		base     string
		model    string
		key      string
		err      string
	}{
		{name: "nothing: local ollama", provider: llm.ProviderOllama, base: llm.DefaultOllamaBaseURL, model: llm.DefaultOllamaModel},
		{name: "OPENAI_API_KEY selects openai", env: []string{"OPENAI_API_KEY", "sk-o"},
			provider: llm.ProviderOpenAI, base: llm.DefaultOpenAIBaseURL, model: llm.DefaultOpenAIModel, key: "sk-o"},
		{name: "ANTHROPIC_API_KEY selects anthropic", env: []string{"ANTHROPIC_API_KEY", "sk-a"},
			provider: llm.ProviderAnthropic, base: llm.DefaultAnthropicBaseURL, model: llm.DefaultAnthropicModel, key: "sk-a"},
		{name: "both vendor keys: openai", env: []string{"ANTHROPIC_API_KEY", "sk-a", "OPENAI_API_KEY", "sk-o"},
			provider: llm.ProviderOpenAI, base: llm.DefaultOpenAIBaseURL, model: llm.DefaultOpenAIModel, key: "sk-o"},
		{name: "explicit provider wins", env: []string{"ABCTL_LLM_PROVIDER", "anthropic", "OPENAI_API_KEY", "sk-o", "ANTHROPIC_API_KEY", "sk-a"},
			provider: llm.ProviderAnthropic, base: llm.DefaultAnthropicBaseURL, model: llm.DefaultAnthropicModel, key: "sk-a"},
		{name: "explicit key wins over the vendor's", env: []string{"ABCTL_LLM_PROVIDER", "openai", "ABCTL_LLM_API_KEY", "sk-mine", "OPENAI_API_KEY", "sk-o"},
			provider: llm.ProviderOpenAI, base: llm.DefaultOpenAIBaseURL, model: llm.DefaultOpenAIModel, key: "sk-mine"},
		{name: "model name picks its vendor", env: []string{"ABCTL_LLM_MODEL", "claude-opus-4-1", "OPENAI_API_KEY", "sk-o", "ANTHROPIC_API_KEY", "sk-a"},
			provider: llm.ProviderAnthropic, base: llm.DefaultAnthropicBaseURL, model: "claude-opus-4-1", key: "sk-a"},
		{name: "open model name stays local", env: []string{"ABCTL_LLM_MODEL", "llama3.2-vision"},
			provider: llm.ProviderOllama, base: llm.DefaultOllamaBaseURL, model: "llama3.2-vision"},
		{name: "gpt-oss is an open model", env: []string{"ABCTL_LLM_MODEL", "gpt-oss:20b", "OPENAI_API_KEY", "sk-o"},
			provider: llm.ProviderOllama, base: llm.DefaultOllamaBaseURL, model: "gpt-oss:20b"},
		{name: "base URL: other server, no vendor key sent", env: []string{"ABCTL_LLM_BASE_URL", "http://127.0.0.1:8080", "ABCTL_LLM_MODEL", "qwen", "OPENAI_API_KEY", "sk-o"},
			provider: llm.ProviderOpenAICompatible, base: "http://127.0.0.1:8080/v1", model: "qwen"},
		{name: "base URL with the ollama port", env: []string{"ABCTL_LLM_BASE_URL", "http://gpu-box:11434/"},
			provider: llm.ProviderOllama, base: "http://gpu-box:11434/v1", model: llm.DefaultOllamaModel},
		{name: "base URL of openai", env: []string{"ABCTL_LLM_BASE_URL", "https://api.openai.com/v1", "OPENAI_API_KEY", "sk-o"},
			provider: llm.ProviderOpenAI, base: "https://api.openai.com/v1", model: llm.DefaultOpenAIModel, key: "sk-o"},
		{name: "anthropic base URL loses /v1", env: []string{"ABCTL_LLM_PROVIDER", "anthropic", "ABCTL_LLM_BASE_URL", "https://gw.example/anthropic/v1/", "ABCTL_LLM_API_KEY", "k"},
			provider: llm.ProviderAnthropic, base: "https://gw.example/anthropic", model: llm.DefaultAnthropicModel, key: "k"},
		{name: "gateway with a key", env: []string{"ABCTL_LLM_PROVIDER", "openai_compatible", "ABCTL_LLM_BASE_URL", "https://gw.example/api/v1", "ABCTL_LLM_API_KEY", "gw", "ABCTL_LLM_MODEL", "anthropic/claude-sonnet-4.5"},
			provider: llm.ProviderOpenAICompatible, base: "https://gw.example/api/v1", model: "anthropic/claude-sonnet-4.5", key: "gw"},

		{name: "vendor model without its key", env: []string{"ABCTL_LLM_MODEL", "claude-sonnet-4-5", "OPENAI_API_KEY", "sk-o"}, err: "ANTHROPIC_API_KEY"},
		{name: "key without a destination", env: []string{"ABCTL_LLM_API_KEY", "k"}, err: "not where to send it"},
		{name: "openai without a key", env: []string{"ABCTL_LLM_PROVIDER", "openai"}, err: "needs an API key: set OPENAI_API_KEY"},
		{name: "compatible without a base URL", env: []string{"ABCTL_LLM_PROVIDER", "openai-compatible", "ABCTL_LLM_MODEL", "m"}, err: "needs a base URL"},
		{name: "compatible without a model", env: []string{"ABCTL_LLM_BASE_URL", "http://127.0.0.1:8080"}, err: "needs a model name"},
		{name: "unknown provider", env: []string{"ABCTL_LLM_PROVIDER", "gemini"}, err: `ABCTL_LLM_PROVIDER: unknown provider "gemini"`},
		{name: "bad vision", env: []string{"ABCTL_LLM_VISION", "maybe"}, err: `ABCTL_LLM_VISION="maybe"`},
		{name: "bad timeout", env: []string{"ABCTL_LLM_TIMEOUT", "soon"}, err: `ABCTL_LLM_TIMEOUT="soon"`},
		{name: "bad schema mode", env: []string{"ABCTL_LLM_SCHEMA", "xml"}, err: `unknown schema mode "xml"`},
		{name: "tool mode is anthropic's", env: []string{"ABCTL_LLM_SCHEMA", "tool"}, err: "only available with provider anthropic"},
		{name: "bad URL", env: []string{"ABCTL_LLM_BASE_URL", "127.0.0.1:8080"}, err: "want http:// or https://"},
		{name: "credentials in URL", env: []string{"ABCTL_LLM_BASE_URL", "https://user:pw@gw.example/v1", "ABCTL_LLM_MODEL", "m"}, err: "put credentials in the API key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := llm.ConfigFromEnv(env(c.env...))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				if strings.Contains(err.Error(), "pw@") {
					t.Errorf("error %q shows the URL's password", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Provider != c.provider || cfg.BaseURL != c.base || cfg.Model != c.model || cfg.APIKey != c.key {
				t.Errorf("got %s key %q\nwant provider=%s base_url=%s model=%s key %q", cfg, cfg.APIKey, c.provider, c.base, c.model, c.key)
			}
			if cfg.Timeout != llm.DefaultTimeout || cfg.MaxRetries != llm.DefaultMaxRetries {
				t.Errorf("timeout %v retries %d", cfg.Timeout, cfg.MaxRetries)
			}
		})
	}
}

func TestConfigFromEnvTunings(t *testing.T) {
	cfg, err := llm.ConfigFromEnv(env("ABCTL_LLM_VISION", "no", "ABCTL_LLM_TIMEOUT", "45", "ABCTL_LLM_SCHEMA", "json-object", "ABCTL_LLM_MAX_RETRIES", "-1"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Vision == nil || *cfg.Vision || cfg.Timeout != 45*time.Second || cfg.Schema != llm.SchemaJSONObject || cfg.MaxRetries != -1 {
		t.Errorf("got %s", cfg)
	}
	if caps := cfg.Capabilities(); caps.Vision || caps.Schema != llm.SchemaJSONObject {
		t.Errorf("capabilities %+v: the overrides win over the model's defaults", caps)
	}
	cfg, err = llm.ConfigFromEnv(env("ABCTL_LLM_TIMEOUT", "2m30s"))
	if err != nil || cfg.Timeout != 150*time.Second {
		t.Errorf("timeout %v, %v", cfg.Timeout, err)
	}
}

func TestConfigMergeAndString(t *testing.T) {
	file := llm.Config{Provider: llm.ProviderOllama, Model: "llava:13b", Timeout: 10 * time.Second, Vision: boolp(true)}
	fromEnv, err := llm.ReadEnv(env("ABCTL_LLM_MODEL", "qwen2.5vl:32b", "OPENAI_API_KEY", "sk-ignored-here"))
	if err != nil {
		t.Fatal(err)
	}
	flags := llm.Config{Vision: boolp(false)}
	cfg, err := file.Merge(fromEnv).Merge(flags).WithDefaults(env("OPENAI_API_KEY", "sk-o"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != llm.ProviderOllama || cfg.Model != "qwen2.5vl:32b" || cfg.Timeout != 10*time.Second || *cfg.Vision || cfg.APIKey != "" {
		t.Errorf("merged %s key %q", cfg, cfg.APIKey)
	}

	secret := llm.Config{Provider: llm.ProviderOpenAI, APIKey: "sk-very-secret"}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("config", "llm", secret)
	for _, s := range []string{secret.String(), fmt.Sprintf("%v", secret), fmt.Sprintf("%+v", secret), logged.String()} {
		if strings.Contains(s, "sk-very-secret") || !strings.Contains(s, "api_key=set") {
			t.Errorf("%q shows the key, or not that one is set", s)
		}
	}
}

func TestDefaultCapabilities(t *testing.T) {
	cases := []struct {
		provider llm.Provider
		model    string
		vision   bool
		schema   llm.SchemaMode
	}{
		{llm.ProviderOllama, "qwen2.5vl:7b", true, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "qwen3-vl:8b", true, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "llava:13b", true, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "llama3.2-vision:11b", true, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "gemma3:12b", true, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "gemma3:1b", false, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "gemma3:270m", false, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "llama3.1:8b", false, llm.SchemaJSONSchema},
		{llm.ProviderOllama, "gpt-oss:20b", false, llm.SchemaJSONSchema},
		{llm.ProviderOpenAICompatible, "mistral-small3.2:24b", true, llm.SchemaJSONSchema},
		{llm.ProviderOpenAICompatible, "openai/gpt-4.1", true, llm.SchemaJSONSchema},
		{llm.ProviderOpenAICompatible, "deepseek-r1:14b", false, llm.SchemaJSONSchema},
		{llm.ProviderOpenAI, "gpt-4.1-mini", true, llm.SchemaJSONSchema},
		{llm.ProviderOpenAI, "gpt-4o", true, llm.SchemaJSONSchema},
		{llm.ProviderOpenAI, "gpt-5", true, llm.SchemaJSONSchema},
		{llm.ProviderOpenAI, "o3-mini", false, llm.SchemaJSONSchema},
		{llm.ProviderOpenAI, "gpt-3.5-turbo", false, llm.SchemaJSONObject},
		{llm.ProviderOpenAI, "gpt-4-turbo", true, llm.SchemaJSONObject},
		{llm.ProviderAnthropic, "claude-sonnet-4-5", true, llm.SchemaTool},
		{llm.ProviderAnthropic, "claude-3-5-haiku-latest", true, llm.SchemaTool},
	}
	for _, c := range cases {
		caps := llm.Config{Provider: c.provider, Model: c.model}.Capabilities()
		if caps.Vision != c.vision || caps.Schema != c.schema {
			t.Errorf("%s %s: vision %v schema %s, want %v %s", c.provider, c.model, caps.Vision, caps.Schema, c.vision, c.schema)
		}
	}
}

func TestRegistryResolve(t *testing.T) {
	reg, err := llm.NewRegistry(llm.Config{Model: llm.DefaultOllamaModel}, env("ANTHROPIC_API_KEY", "sk-a"))
	if err != nil {
		t.Fatal(err)
	}
	if reg.Config().Provider != llm.ProviderOllama {
		t.Fatalf("primary %s, want ollama (an open model was named)", reg.Config())
	}
	cases := []struct {
		model    client.Model
		provider llm.Provider
		name     string
		err      string
	}{
		{nil, llm.ProviderOllama, llm.DefaultOllamaModel, ""},
		{client.Model{}, llm.ProviderOllama, llm.DefaultOllamaModel, ""},
		{client.Model{"name": "llava:13b"}, llm.ProviderOllama, "llava:13b", ""},
		{client.Model{"model_name": "qwen3-vl:8b"}, llm.ProviderOllama, "qwen3-vl:8b", ""},
		{client.Model{"name": "claude-haiku-4-5"}, llm.ProviderAnthropic, "claude-haiku-4-5", ""},
		{client.Model{"name": "gpt-4.1"}, "", "", "OPENAI_API_KEY"},
	}
	for _, c := range cases {
		m, err := reg.Resolve(c.model)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Resolve(%v): error %v, want one with %q", c.model, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%v): %v", c.model, err)
			continue
		}
		if info := m.Info(); info.Provider != c.provider || info.Model != c.name {
			t.Errorf("Resolve(%v) = %s, want %s %q", c.model, info, c.provider, c.name)
		}
	}
	a, _ := reg.Resolve(client.Model{"name": "llava:13b"})
	b, _ := reg.Resolve(client.Model{"model_name": "llava:13b"})
	if a != b {
		t.Error("the same name gave two models")
	}
}

func TestRegistryWithBothVendors(t *testing.T) {
	reg, err := llm.NewRegistry(llm.Config{}, env("OPENAI_API_KEY", "sk-o", "ANTHROPIC_API_KEY", "sk-a"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := reg.Resolve(client.Model{"name": "claude-sonnet-4-5"})
	if err != nil || m.Info().Provider != llm.ProviderAnthropic {
		t.Fatalf("claude name with an OpenAI primary: %v %v", m, err)
	}
	if reg.Default().Info().Provider != llm.ProviderOpenAI {
		t.Errorf("default %s", reg.Default().Info())
	}
}

func TestRegistryOverridesStayWithThePrimary(t *testing.T) {
	reg, err := llm.NewRegistry(llm.Config{Provider: llm.ProviderOllama, Vision: boolp(false), Schema: llm.SchemaPrompt}, env("ANTHROPIC_API_KEY", "sk-a"))
	if err != nil {
		t.Fatal(err)
	}
	local, _ := reg.Resolve(client.Model{"name": "qwen2.5vl:7b"})
	if c := local.Info().Capabilities; c.Vision || c.Schema != llm.SchemaPrompt {
		t.Errorf("primary provider's model %+v: the overrides apply", c)
	}
	claude, _ := reg.Resolve(client.Model{"name": "claude-sonnet-4-5"})
	if c := claude.Info().Capabilities; !c.Vision || c.Schema != llm.SchemaTool {
		t.Errorf("Anthropic model %+v: its own defaults apply", c)
	}
}

func TestRegistryGatewayServesEveryName(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("from the gateway")})
	cfg := srv.OpenAIConfig()
	reg, err := llm.NewRegistry(cfg, env("OPENAI_API_KEY", "sk-o"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := reg.Resolve(client.Model{"name": "claude-sonnet-4-5"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(testCtx(t), hello)
	if err != nil {
		t.Fatal(err)
	}
	call := srv.Calls()[0]
	if resp.Text != "from the gateway" || call.Model != "claude-sonnet-4-5" || call.KeySent() {
		t.Errorf("text %q, model %q, key sent %v: a gateway gets the name and never the vendor's key", resp.Text, call.Model, call.KeySent())
	}
}
