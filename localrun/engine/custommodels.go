package engine

// Custom models: the model endpoints an organization registered
// (/v1/custom-llms) reach a run in executor.Job.CustomModels, keys
// unsealed. The run's model set is the engine's registry plus these, by
// id: the engine is shared by every organization, so they live in the
// run, never in the engine.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// DefaultOpenRouterBaseURL is the API root of OpenRouter custom models
// that name none.
const DefaultOpenRouterBaseURL = "https://openrouter.ai/api/v1"

// DefaultCustomModelCheck bounds the test call made when a custom model is
// saved (CheckCustomModel).
const DefaultCustomModelCheck = 10 * time.Second

// customModelConfig is the llm configuration of a custom model.
func customModelConfig(m executor.CustomModel) (llm.Config, error) {
	cfg := llm.Config{Model: m.ModelName, BaseURL: m.APIBase, APIKey: m.APIKey}
	vision := m.Vision
	cfg.Vision = &vision
	switch m.Provider {
	case "openai_compatible":
		cfg.Provider = llm.ProviderOpenAICompatible
	case "ollama":
		cfg.Provider = llm.ProviderOllama
	case "openrouter":
		cfg.Provider = llm.ProviderOpenAICompatible
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultOpenRouterBaseURL
		}
	default:
		return llm.Config{}, fmt.Errorf("provider %q is not one of openai_compatible, ollama or openrouter", m.Provider)
	}
	if cfg.Provider == llm.ProviderOpenAICompatible && cfg.BaseURL == "" {
		return llm.Config{}, errors.New("an openai_compatible model needs its api_base")
	}
	return cfg, nil
}

// CustomModel returns the model that m describes, whose errors name it
// (by id and display name, never with its key).
func CustomModel(m executor.CustomModel, opts ...llm.Option) (llm.Model, error) {
	cfg, err := customModelConfig(m)
	if err != nil {
		return nil, fmt.Errorf("custom model %s (%q): %w", m.ID, m.DisplayName, err)
	}
	return newCustomModel(m, cfg, opts...)
}

func newCustomModel(m executor.CustomModel, cfg llm.Config, opts ...llm.Option) (llm.Model, error) {
	model, err := llm.New(cfg, opts...)
	if err != nil {
		return nil, fmt.Errorf("custom model %s (%q): %w", m.ID, m.DisplayName, err)
	}
	return &customModel{Model: model, id: m.ID, name: m.DisplayName, maxTokens: m.MaxCompletionTokens}, nil
}

// customModel is an organization's model: its answers capped at its
// max_completion_tokens, its errors naming it.
type customModel struct {
	llm.Model
	id, name  string
	maxTokens int
}

func (c *customModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if c.maxTokens > 0 && (req.MaxTokens == 0 || req.MaxTokens > c.maxTokens) {
		cp := *req
		cp.MaxTokens = c.maxTokens
		req = &cp
	}
	resp, err := c.Model.Complete(ctx, req)
	if err != nil {
		err = c.explain(err)
	}
	return resp, err
}

// explain names the model in err. The llm package's advice on
// configuring the daemon's model (its flags and variables) does not apply
// to an organization's model, which is changed through the API: that
// advice is replaced.
func (c *customModel) explain(err error) error {
	var le *llm.Error
	if errors.As(err, &le) {
		plain := &llm.Error{Provider: le.Provider, Model: le.Model, Endpoint: le.Endpoint, Kind: le.Kind, StatusCode: le.StatusCode,
			Type: le.Type, Message: le.Message, Attempts: le.Attempts, Err: le.Err}
		return fmt.Errorf("custom model %s (%q): %w; check its api_base, model_name and api_key (PUT /v1/custom-llms/%s)", c.id, c.name, plain, c.id)
	}
	return fmt.Errorf("custom model %s (%q): %w", c.id, c.name, err)
}

// CheckCustomModel tells whether m's endpoint answers: one short call,
// without retries, bounded by timeout (0 means DefaultCustomModelCheck).
// The error says what failed, never with the key.
func CheckCustomModel(ctx context.Context, m executor.CustomModel, timeout time.Duration, opts ...llm.Option) error {
	if timeout <= 0 {
		timeout = DefaultCustomModelCheck
	}
	cfg, err := customModelConfig(m)
	if err != nil {
		return fmt.Errorf("custom model %s (%q): %w", m.ID, m.DisplayName, err)
	}
	cfg.Timeout, cfg.MaxRetries = timeout, -1
	model, err := newCustomModel(m, cfg, opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err = model.Complete(ctx, &llm.Request{Kind: KindCustomModelCheck, MaxTokens: 16,
		Messages: []llm.Message{llm.UserText("Reply with the word OK.")}})
	return err
}

// KindCustomModelCheck is the call kind (llm.Request.Kind) of the test
// call CheckCustomModel makes.
const KindCustomModelCheck = "custom_model_check"

// runModels is the model set of a job: the engine's, with the custom
// models of the job's organization by id. A custom model whose
// configuration cannot make a model is left out, with the reason: naming
// it fails the run saying why.
func (e *Engine) runModels(job *executor.Job) agent.Models {
	if len(job.CustomModels) == 0 {
		return e.models
	}
	ms := e.models
	ms.Custom = make(map[string]agent.CustomModel, len(job.CustomModels))
	opts := []llm.Option{llm.WithLogger(e.log)}
	if hc := e.modelClient(job.OrgID); hc != nil {
		opts = append(opts, llm.WithHTTPClient(hc))
	}
	for _, cm := range job.CustomModels {
		model, err := CustomModel(cm, opts...)
		ms.Custom[cm.ID] = agent.CustomModel{Model: model, Err: err}
	}
	return ms
}

// modelClient is the HTTP client of an organization's custom models: its
// api_base is the organization's to give, so its connections go through
// the organization's egress guard (one client per organization, its
// connections reused from run to run). nil without a policy: the llm
// package's own client. The engine's own models (Config.Models, the
// operator's flags) are not guarded.
func (e *Engine) modelClient(orgID string) *http.Client {
	g := e.guard(orgID)
	if g == nil {
		return nil
	}
	if c, ok := e.modelClients.Load(orgID); ok {
		return c.(*http.Client)
	}
	c, _ := e.modelClients.LoadOrStore(orgID, CustomModelClient(g, 0))
	return c.(*http.Client)
}

// CustomModelClient is the HTTP client of an organization's custom models
// under its egress guard g: each connection, and each request's URL,
// checked (timeout 0: none; the model's calls have their own). nil for a
// nil guard (no policy).
func CustomModelClient(g *egress.Guard, timeout time.Duration) *http.Client {
	if g == nil {
		return nil
	}
	return g.HTTPClient(timeout)
}
