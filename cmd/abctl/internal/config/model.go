package config

import (
	"github.com/abctl/abctl/localrun/llm"
)

// ModelSettings are the local daemon's language-model settings as `abctl
// config view` shows them: each value and where it came from. The key
// itself is never kept, only whether one is set and where from.
type ModelSettings struct {
	Provider     string
	ProviderFrom string
	BaseURL      string
	BaseURLFrom  string
	Model        string
	ModelFrom    string
	// APIKeySet says whether a key is set; APIKeyFrom is where it comes
	// from.
	APIKeySet  bool
	APIKeyFrom string
}

// ModelSettings resolves the model the local daemon would use without
// --llm-* flags (`abctl daemon` with none, or the daemon a command starts
// inside itself): the file's llm section under the ABCTL_LLM_* environment,
// then the defaults (llm.Config.WithDefaults). The error says which
// setting is wrong.
func (f *File) ModelSettings(getenv Getenv) (ModelSettings, error) {
	env, err := llm.ReadEnv(getenv)
	if err != nil {
		return ModelSettings{}, err
	}
	var file llm.Config
	if f.LLM != nil {
		file = *f.LLM
	}
	cfg, err := file.Merge(env).WithDefaults(getenv)
	if err != nil {
		return ModelSettings{}, err
	}
	fromFile := func(key string) string {
		return "configuration file " + f.path + " (llm." + key + ")"
	}
	// source says where a setting came from: the environment over the
	// file; otherwise the defaults filled it.
	source := func(envSet, fileSet bool, envName, key, fallback string) string {
		switch {
		case envSet:
			return "environment " + envName
		case fileSet:
			return fromFile(key)
		}
		return fallback
	}
	m := ModelSettings{
		Provider: string(cfg.Provider), BaseURL: cfg.BaseURL, Model: cfg.Model, APIKeySet: cfg.APIKey != "",
	}
	m.ProviderFrom = source(env.Provider != "", file.Provider != "", llm.EnvProvider, "provider", "default (inferred from the other settings)")
	m.BaseURLFrom = source(env.BaseURL != "", file.BaseURL != "", llm.EnvBaseURL, "base_url", "default of provider "+m.Provider)
	m.ModelFrom = source(env.Model != "", file.Model != "", llm.EnvModel, "model", "default of provider "+m.Provider)
	if m.APIKeySet {
		vendor := ""
		switch cfg.Provider {
		case llm.ProviderOpenAI:
			vendor = "environment " + llm.EnvOpenAIKey
		case llm.ProviderAnthropic:
			vendor = "environment " + llm.EnvAnthropicKey
		}
		m.APIKeyFrom = source(env.APIKey != "", file.APIKey != "", llm.EnvAPIKey, "api_key", vendor)
	}
	return m, nil
}
