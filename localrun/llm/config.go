package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Provider names a protocol and a service.
type Provider string

// The providers.
const (
	// ProviderOpenAI is api.openai.com (chat completions, a key needed).
	ProviderOpenAI Provider = "openai"
	// ProviderAnthropic is api.anthropic.com (Messages API, a key needed).
	ProviderAnthropic Provider = "anthropic"
	// ProviderOllama is a local Ollama server through its OpenAI-compatible
	// endpoint (no key).
	ProviderOllama Provider = "ollama"
	// ProviderOpenAICompatible is any other server speaking OpenAI chat
	// completions: llama.cpp, vLLM, LM Studio, gateways. The key is
	// optional; the model name is required.
	ProviderOpenAICompatible Provider = "openai-compatible"
)

// Defaults of the configuration.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOllamaBaseURL    = "http://127.0.0.1:11434/v1"

	// DefaultOpenAIModel is a fast, cheap model with vision and schema
	// support.
	DefaultOpenAIModel = "gpt-4.1-mini"
	// DefaultAnthropicModel is the Anthropic model used when none is named.
	DefaultAnthropicModel = "claude-sonnet-4-5"
	// DefaultOllamaModel is a local vision model that follows JSON
	// schemas and fits in 8 GB of (V)RAM: `ollama pull qwen2.5vl:7b`.
	DefaultOllamaModel = "qwen2.5vl:7b"

	// DefaultTimeout bounds each HTTP request to a model.
	DefaultTimeout = 90 * time.Second
	// DefaultMaxRetries is the number of retries after a first failed
	// attempt (so four attempts in all).
	DefaultMaxRetries = 3
	// MaxRetryWait is the longest wait between attempts: a Retry-After
	// asking for more makes the call fail at once, saying so.
	MaxRetryWait = time.Minute
)

// Environment variables read by ReadEnv and WithDefaults.
const (
	EnvProvider   = "ABCTL_LLM_PROVIDER"
	EnvBaseURL    = "ABCTL_LLM_BASE_URL"
	EnvAPIKey     = "ABCTL_LLM_API_KEY"
	EnvModel      = "ABCTL_LLM_MODEL"
	EnvVision     = "ABCTL_LLM_VISION"
	EnvSchema     = "ABCTL_LLM_SCHEMA"
	EnvTimeout    = "ABCTL_LLM_TIMEOUT"
	EnvMaxRetries = "ABCTL_LLM_MAX_RETRIES"

	// EnvOpenAIKey and EnvAnthropicKey are the vendors' own variables.
	// They select a provider when nothing more explicit is set, and are
	// only ever sent to that vendor.
	EnvOpenAIKey    = "OPENAI_API_KEY"
	EnvAnthropicKey = "ANTHROPIC_API_KEY"
)

// Flag names for the same settings, as `abctl daemon` spells them. Errors
// that tell people how to configure a model name them.
const (
	FlagProvider   = "--llm-provider"
	FlagBaseURL    = "--llm-base-url"
	FlagAPIKey     = "--llm-api-key"
	FlagModel      = "--llm-model"
	FlagVision     = "--llm-vision"
	FlagSchema     = "--llm-schema"
	FlagTimeout    = "--llm-timeout"
	FlagMaxRetries = "--llm-max-retries"
)

// Config selects and tunes a model provider. The zero value means "a local
// Ollama with DefaultOllamaModel". Layers (config file, environment, flags)
// are combined with Merge, then WithDefaults fills what is left.
type Config struct {
	// Provider is "openai", "anthropic", "ollama" or "openai-compatible";
	// empty infers it (see WithDefaults).
	Provider Provider `json:"provider,omitempty" yaml:"provider,omitempty"`
	// BaseURL is the API root: https://api.openai.com/v1,
	// https://api.anthropic.com, http://127.0.0.1:11434/v1. For
	// OpenAI-compatible servers a URL without a path gets /v1.
	BaseURL string `json:"base_url,omitempty" yaml:"base_url,omitempty"`
	// APIKey authenticates to the provider; optional for Ollama and
	// OpenAI-compatible servers. It never appears in errors or logs.
	APIKey string `json:"api_key,omitempty" yaml:"api_key,omitempty"`
	// Model is the default model name; agents and blocks may name another
	// (see Registry).
	Model string `json:"model,omitempty" yaml:"model,omitempty"`
	// Vision overrides whether images are sent (default by model name).
	Vision *bool `json:"vision,omitempty" yaml:"vision,omitempty"`
	// Schema overrides how structured answers are asked for (default by
	// provider and model name).
	Schema SchemaMode `json:"schema,omitempty" yaml:"schema,omitempty"`
	// Timeout bounds each HTTP request (default DefaultTimeout). A call
	// that retries can take up to (MaxRetries+1) times as long plus the
	// waits; the caller's context bounds the whole.
	Timeout time.Duration `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	// MaxRetries is the number of retries after a failed attempt: 0 means
	// DefaultMaxRetries, a negative number none.
	MaxRetries int `json:"max_retries,omitempty" yaml:"max_retries,omitempty"`

	// schemaDefaulted records that complete chose Schema, so that a
	// server rejecting it may be retried with a weaker mode.
	schemaDefaulted bool
}

// String shows the configuration without the key.
func (c Config) String() string {
	key := "none"
	if c.APIKey != "" {
		key = "set"
	}
	vision := "auto"
	if c.Vision != nil {
		vision = strconv.FormatBool(*c.Vision)
	}
	return fmt.Sprintf("provider=%s base_url=%s model=%s api_key=%s vision=%s schema=%s timeout=%s max_retries=%d",
		orDash(string(c.Provider)), orDash(c.BaseURL), orDash(c.Model), key, vision, orDash(string(c.Schema)), c.Timeout, c.MaxRetries)
}

// LogValue keeps the key out of slog records.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ConfigFromEnv reads the ABCTL_LLM_* variables (ReadEnv) and fills the
// rest (WithDefaults). getenv is os.Getenv in programs, a map in tests.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c, err := ReadEnv(getenv)
	if err != nil {
		return Config{}, err
	}
	return c.WithDefaults(getenv)
}

// ReadEnv returns what the ABCTL_LLM_* variables set, and nothing else:
// ABCTL_LLM_PROVIDER, ABCTL_LLM_BASE_URL, ABCTL_LLM_API_KEY,
// ABCTL_LLM_MODEL, ABCTL_LLM_VISION (true/false, yes/no, 1/0),
// ABCTL_LLM_SCHEMA (json_schema, json_object, tool, prompt),
// ABCTL_LLM_TIMEOUT (a Go duration such as 90s, or seconds) and
// ABCTL_LLM_MAX_RETRIES.
func ReadEnv(getenv func(string) string) (Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	var c Config
	var errs []error
	if v := get(EnvProvider); v != "" {
		p, err := ParseProvider(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvProvider, err))
		}
		c.Provider = p
	}
	c.BaseURL = get(EnvBaseURL)
	c.APIKey = get(EnvAPIKey)
	c.Model = get(EnvModel)
	if v := get(EnvVision); v != "" {
		b, err := parseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", EnvVision, v))
		} else {
			c.Vision = &b
		}
	}
	if v := get(EnvSchema); v != "" {
		m, err := ParseSchemaMode(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvSchema, err))
		}
		c.Schema = m
	}
	if v := get(EnvTimeout); v != "" {
		d, err := parseSeconds(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s=%q: want a positive duration such as 90s or 2m", EnvTimeout, v))
		}
		c.Timeout = d
	}
	if v := get(EnvMaxRetries); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want a whole number", EnvMaxRetries, v))
		}
		c.MaxRetries = n
	}
	return c, errors.Join(errs...)
}

// ParseProvider reads a provider name ("openai_compatible" is accepted for
// "openai-compatible").
func ParseProvider(s string) (Provider, error) {
	p := Provider(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-"))
	switch p {
	case ProviderOpenAI, ProviderAnthropic, ProviderOllama, ProviderOpenAICompatible:
		return p, nil
	}
	return "", fmt.Errorf("unknown provider %q: want openai, anthropic, ollama or openai-compatible", s)
}

// ParseSchemaMode reads a schema mode ("none" is accepted for "prompt").
func ParseSchemaMode(s string) (SchemaMode, error) {
	m := SchemaMode(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_"))
	switch m {
	case SchemaJSONSchema, SchemaJSONObject, SchemaTool, SchemaPrompt:
		return m, nil
	case "none":
		return SchemaPrompt, nil
	}
	return "", fmt.Errorf("unknown schema mode %q: want json_schema, json_object, tool or prompt", s)
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "t", "true", "yes", "y", "on":
		return true, nil
	case "0", "f", "false", "no", "n", "off":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", s)
}

// parseSeconds reads a Go duration, or a bare number of seconds.
func parseSeconds(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

// Merge returns c with every field that over sets replaced by over's:
// file.Merge(env).Merge(flags) gives flags precedence over the environment
// over the file.
func (c Config) Merge(over Config) Config {
	if over.Provider != "" {
		c.Provider = over.Provider
	}
	if over.BaseURL != "" {
		c.BaseURL = over.BaseURL
	}
	if over.APIKey != "" {
		c.APIKey = over.APIKey
	}
	if over.Model != "" {
		c.Model = over.Model
	}
	if over.Vision != nil {
		v := *over.Vision
		c.Vision = &v
	}
	if over.Schema != "" {
		c.Schema, c.schemaDefaulted = over.Schema, over.schemaDefaulted
	}
	if over.Timeout != 0 {
		c.Timeout = over.Timeout
	}
	if over.MaxRetries != 0 {
		c.MaxRetries = over.MaxRetries
	}
	return c
}

// WithDefaults fills what c leaves empty, reading the vendors' key
// variables through getenv, and checks the result.
//
// The provider, when not set, is the first of:
//  1. the one the base URL names: api.openai.com is openai,
//     api.anthropic.com anthropic, port 11434 ollama, anything else
//     openai-compatible;
//  2. the vendor of the model name (claude-* is anthropic; gpt-4*, gpt-5*,
//     o1*, o3*, o4*, chatgpt-* are openai) when a key for it is at hand
//     (APIKey, or the vendor's variable);
//  3. ollama when a model name that is not a vendor's is set;
//  4. openai when OPENAI_API_KEY is set, else anthropic when
//     ANTHROPIC_API_KEY is set;
//  5. ollama at http://127.0.0.1:11434/v1.
//
// An APIKey with nothing that says where to send it is an error, and so is
// a vendor's model name without a key for that vendor. The key, when not
// set, is OPENAI_API_KEY for openai and ANTHROPIC_API_KEY for anthropic;
// those variables are never sent anywhere else.
func (c Config) WithDefaults(getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if c.Provider == "" {
		p, err := inferProvider(c, env)
		if err != nil {
			return Config{}, err
		}
		c.Provider = p
	}
	if c.APIKey == "" {
		c.APIKey = vendorKey(c.Provider, env)
	}
	return c.complete()
}

func vendorKey(p Provider, env func(string) string) string {
	switch p {
	case ProviderOpenAI:
		return env(EnvOpenAIKey)
	case ProviderAnthropic:
		return env(EnvAnthropicKey)
	}
	return ""
}

func inferProvider(c Config, env func(string) string) (Provider, error) {
	if c.BaseURL != "" {
		return providerOfURL(c.BaseURL), nil
	}
	if v := vendorOf(c.Model); v != "" {
		if c.APIKey != "" || vendorKey(v, env) != "" {
			return v, nil
		}
		return "", fmt.Errorf("llm: model %q is served by %s, but no key for it is configured: set %s (or %s with %s=%s)",
			c.Model, v, vendorKeyVar(v), EnvAPIKey, EnvProvider, v)
	}
	if c.APIKey != "" {
		return "", fmt.Errorf("llm: an API key is configured (%s or %s) but not where to send it: set %s (openai, anthropic, openai-compatible) or %s",
			EnvAPIKey, FlagAPIKey, EnvProvider, EnvBaseURL)
	}
	if c.Model != "" {
		// An open-weight model named on its own runs locally, whatever
		// vendor keys the environment holds for other programs.
		return ProviderOllama, nil
	}
	if env(EnvOpenAIKey) != "" {
		return ProviderOpenAI, nil
	}
	if env(EnvAnthropicKey) != "" {
		return ProviderAnthropic, nil
	}
	return ProviderOllama, nil
}

func vendorKeyVar(p Provider) string {
	if p == ProviderAnthropic {
		return EnvAnthropicKey
	}
	return EnvOpenAIKey
}

func providerOfURL(raw string) Provider {
	u, err := url.Parse(raw)
	if err != nil {
		return ProviderOpenAICompatible
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case host == "api.openai.com":
		return ProviderOpenAI
	case host == "api.anthropic.com":
		return ProviderAnthropic
	case u.Port() == "11434":
		return ProviderOllama
	}
	return ProviderOpenAICompatible
}

// complete fills the static defaults (no environment) and checks c.
func (c Config) complete() (Config, error) {
	if c.Provider == "" {
		p, err := inferProvider(c, func(string) string { return "" })
		if err != nil {
			return Config{}, err
		}
		c.Provider = p
	}
	if _, err := ParseProvider(string(c.Provider)); err != nil {
		return Config{}, fmt.Errorf("llm: %w", err)
	}
	if c.BaseURL == "" {
		switch c.Provider {
		case ProviderOpenAI:
			c.BaseURL = DefaultOpenAIBaseURL
		case ProviderAnthropic:
			c.BaseURL = DefaultAnthropicBaseURL
		case ProviderOllama:
			c.BaseURL = DefaultOllamaBaseURL
		default:
			return Config{}, fmt.Errorf("llm: provider %s needs a base URL: set %s or %s", c.Provider, EnvBaseURL, FlagBaseURL)
		}
	}
	base, err := normaliseBaseURL(c.Provider, c.BaseURL)
	if err != nil {
		return Config{}, err
	}
	c.BaseURL = base
	if c.Model == "" {
		switch c.Provider {
		case ProviderOpenAI:
			c.Model = DefaultOpenAIModel
		case ProviderAnthropic:
			c.Model = DefaultAnthropicModel
		case ProviderOllama:
			c.Model = DefaultOllamaModel
		default:
			return Config{}, fmt.Errorf("llm: provider %s needs a model name: set %s or %s", c.Provider, EnvModel, FlagModel)
		}
	}
	if c.APIKey == "" && (c.Provider == ProviderOpenAI || c.Provider == ProviderAnthropic) {
		return Config{}, fmt.Errorf("llm: provider %s needs an API key: set %s (or %s, %s)", c.Provider, vendorKeyVar(c.Provider), EnvAPIKey, FlagAPIKey)
	}
	if c.Schema == "" {
		c.Schema = defaultSchemaMode(c.Provider, c.Model)
		c.schemaDefaulted = true
	} else if _, err := ParseSchemaMode(string(c.Schema)); err != nil {
		return Config{}, fmt.Errorf("llm: %w", err)
	}
	switch {
	case c.Provider == ProviderAnthropic && (c.Schema == SchemaJSONSchema || c.Schema == SchemaJSONObject):
		return Config{}, fmt.Errorf("llm: schema mode %s is not available with provider anthropic: use tool or prompt", c.Schema)
	case c.Provider != ProviderAnthropic && c.Schema == SchemaTool:
		return Config{}, fmt.Errorf("llm: schema mode tool is only available with provider anthropic: use json_schema, json_object or prompt")
	}
	if c.Timeout < 0 {
		return Config{}, fmt.Errorf("llm: timeout %s is negative", c.Timeout)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
	}
	return c, nil
}

// normaliseBaseURL checks the URL and gives it the path the protocol
// expects: OpenAI-compatible roots end in /v1 (added when the URL has no
// path), the Anthropic root has none (/v1 is part of the endpoint).
func normaliseBaseURL(p Provider, raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("llm: base URL %q: want http:// or https:// and a host, such as %s", raw, DefaultOllamaBaseURL)
	}
	if u.User != nil {
		return "", fmt.Errorf("llm: base URL %q: put credentials in the API key, not the URL", u.Redacted())
	}
	u.RawQuery, u.Fragment = "", ""
	path := strings.TrimRight(u.Path, "/")
	switch p {
	case ProviderAnthropic:
		path = strings.TrimSuffix(path, "/v1")
	default:
		if path == "" {
			path = "/v1"
		}
	}
	u.Path, u.RawPath = path, ""
	return u.String(), nil
}

// Capabilities returns the capabilities of c's model: the defaults for its
// provider and name, with c's overrides.
func (c Config) Capabilities() Capabilities {
	caps := Capabilities{Vision: defaultVision(c.Provider, c.Model), Schema: c.Schema}
	if caps.Schema == "" {
		caps.Schema = defaultSchemaMode(c.Provider, c.Model)
	}
	if c.Vision != nil {
		caps.Vision = *c.Vision
	}
	return caps
}
