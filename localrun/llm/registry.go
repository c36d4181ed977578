package llm

import (
	"fmt"
	"strings"
	"sync"

	"github.com/abctl/abctl/client"
)

// Registry hands out the Model for an agent's or block's `model` object:
// the configured provider by default, with the name the object gives. It
// is safe for concurrent use and builds each (provider, name) once.
type Registry struct {
	primary Config
	// vendors are the configurations of OpenAI and Anthropic when their
	// keys are at hand and they are not the primary provider, for model
	// names that belong to them.
	vendors map[Provider]Config
	opts    []Option

	mu     sync.Mutex
	models map[registryKey]Model
}

// maxCachedModels bounds the models a Registry keeps; names are chosen by
// API users, so their number is not ours to trust.
const maxCachedModels = 256

type registryKey struct {
	provider Provider
	name     string
}

// NewRegistry completes cfg (Config.WithDefaults with getenv) and prepares
// the models it allows. Besides the primary provider, OpenAI is available
// for its model names when OPENAI_API_KEY is set, and Anthropic when
// ANTHROPIC_API_KEY is; the primary's Vision and Schema overrides apply to
// the primary provider only. getenv may be nil.
func NewRegistry(cfg Config, getenv func(string) string, opts ...Option) (*Registry, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	primary, err := cfg.WithDefaults(getenv)
	if err != nil {
		return nil, err
	}
	r := &Registry{primary: primary, vendors: map[Provider]Config{}, opts: opts, models: map[registryKey]Model{}}
	for _, v := range []Provider{ProviderOpenAI, ProviderAnthropic} {
		if v == primary.Provider {
			continue
		}
		if key := strings.TrimSpace(getenv(vendorKeyVar(v))); key != "" {
			vc, err := Config{Provider: v, APIKey: key, Timeout: primary.Timeout, MaxRetries: primary.MaxRetries}.complete()
			if err != nil {
				return nil, err
			}
			r.vendors[v] = vc
		}
	}
	if _, err := r.build(primary); err != nil {
		return nil, err
	}
	return r, nil
}

// Config is the primary configuration, completed.
func (r *Registry) Config() Config { return r.primary }

// Default is the configured model.
func (r *Registry) Default() Model {
	m, _ := r.build(r.primary) // built once by NewRegistry
	return m
}

// Resolve returns the model an agent or block asks for. The object's
// "name" (the documented field) or "model_name" (what the hosted service
// reads) picks the model; an empty or absent object means the default.
func (r *Registry) Resolve(m client.Model) (Model, error) {
	return r.ResolveName(m.Name())
}

// ResolveName returns the model of that name. A name that belongs to
// OpenAI or Anthropic goes to that vendor when it is not the primary
// provider and its key is set; with no key, it is an error for primaries
// that cannot serve it (only an OpenAI-compatible gateway may). Any other
// name is the primary provider's.
func (r *Registry) ResolveName(name string) (Model, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return r.Default(), nil
	}
	cfg := r.primary
	if v := vendorOf(name); v != "" && v != cfg.Provider && cfg.Provider != ProviderOpenAICompatible {
		vc, ok := r.vendors[v]
		if !ok {
			return nil, fmt.Errorf("llm: model %q is served by %s, which is not configured (the configured provider is %s): set %s, or name a model of %s",
				name, v, cfg.Provider, vendorKeyVar(v), cfg.Provider)
		}
		cfg = vc
	}
	if cfg.Model != name {
		cfg.Model = name
		if cfg.schemaDefaulted {
			cfg.Schema = "" // the new name's own default
		}
	}
	return r.build(cfg)
}

func (r *Registry) build(cfg Config) (Model, error) {
	k := registryKey{cfg.Provider, cfg.Model}
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.models[k]; ok {
		return m, nil
	}
	m, err := New(cfg, r.opts...)
	if err != nil {
		return nil, err
	}
	if len(r.models) < maxCachedModels {
		r.models[k] = m
	}
	return m, nil
}
