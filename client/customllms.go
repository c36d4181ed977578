package client

import (
	"context"
	"errors"
)

// CustomLLMsService manages an organization's own model endpoints
// (/v1/custom-llms): an OpenAI-compatible server, an Ollama or OpenRouter,
// with its model name, address and key.
//
// Agents and blocks use one by naming its id in their model object
// ({"model_name": "cllm_..."}); runs of other organizations cannot. The key
// goes in when the model is created or updated and never comes back:
// answers carry api_key null. Valid says whether the endpoint answered a
// short test call when the model was last saved.
type CustomLLMsService service

// CustomLLMProvider is the protocol and service of a custom model.
type CustomLLMProvider string

// The providers of custom models.
const (
	// CustomLLMProviderOpenAICompatible is any server speaking OpenAI chat
	// completions (vLLM, llama.cpp, LM Studio, a gateway); APIBase is
	// required.
	CustomLLMProviderOpenAICompatible CustomLLMProvider = "openai_compatible"
	// CustomLLMProviderOllama is an Ollama server (APIBase defaults to
	// http://127.0.0.1:11434).
	CustomLLMProviderOllama CustomLLMProvider = "ollama"
	// CustomLLMProviderOpenRouter is openrouter.ai (APIBase defaults to
	// https://openrouter.ai/api/v1).
	CustomLLMProviderOpenRouter CustomLLMProvider = "openrouter"
)

// CustomLLMConfig describes a custom model endpoint (upstream
// CustomLLMConfig). DisplayName, Provider and ModelName are required.
type CustomLLMConfig struct {
	DisplayName string            `json:"display_name"`
	Provider    CustomLLMProvider `json:"provider"`
	ModelName   string            `json:"model_name"`
	// APIBase is the API root, such as http://127.0.0.1:8000/v1.
	APIBase *string `json:"api_base,omitempty"`
	// APIKey is sent as the bearer token. Requests set it; answers never
	// carry it. On update, a nil APIKey keeps the stored key and an empty
	// one removes it.
	APIKey     *string `json:"api_key,omitempty"`
	APIVersion *string `json:"api_version,omitempty"`
	// SupportsVision says whether screenshots are sent (default true).
	SupportsVision *bool `json:"supports_vision,omitempty"`
	// AddAssistantPrefix is accepted and stored for compatibility.
	AddAssistantPrefix  *bool    `json:"add_assistant_prefix,omitempty"`
	MaxCompletionTokens *int     `json:"max_completion_tokens,omitempty"`
	Temperature         *float64 `json:"temperature,omitempty"`
	ReasoningEffort     *string  `json:"reasoning_effort,omitempty"`
}

// CustomLLM is a custom model of the organization (upstream CustomLLM).
type CustomLLM struct {
	ID             string          `json:"id"`
	OrganizationID string          `json:"organization_id"`
	Config         CustomLLMConfig `json:"config"`
	CreatedAt      Time            `json:"created_at"`
	ModifiedAt     Time            `json:"modified_at"`
	// Valid says whether the endpoint answered a test call when the model
	// was last created or updated.
	Valid bool `json:"valid"`
}

// CustomLLMRequest is the body of a create or an update.
type CustomLLMRequest struct {
	Config CustomLLMConfig `json:"config"`
}

type customLLMResponse struct {
	CustomLLM *CustomLLM `json:"custom_llm"`
}

type customLLMListResponse struct {
	CustomLLMs []*CustomLLM `json:"custom_llms"`
}

func checkCustomLLMRequest(method string, req *CustomLLMRequest) error {
	switch {
	case req == nil:
		return errors.New("client: CustomLLMs." + method + ": nil request")
	case req.Config.DisplayName == "" || req.Config.Provider == "" || req.Config.ModelName == "":
		return errors.New("client: CustomLLMs." + method + ": the config's DisplayName, Provider and ModelName are required")
	}
	return nil
}

// List returns the organization's custom models, newest first (GET
// /v1/custom-llms).
func (s *CustomLLMsService) List(ctx context.Context, opts ...Option) ([]*CustomLLM, error) {
	var out customLLMListResponse
	if _, err := s.client.do(ctx, request{method: "GET", path: "/v1/custom-llms", idempotent: true}, &out, opts); err != nil {
		return nil, err
	}
	if out.CustomLLMs == nil {
		out.CustomLLMs = []*CustomLLM{}
	}
	return out.CustomLLMs, nil
}

// Create adds a custom model (POST /v1/custom-llms). The endpoint is tried
// before the answer: Valid says whether it answered.
func (s *CustomLLMsService) Create(ctx context.Context, req *CustomLLMRequest, opts ...Option) (*CustomLLM, error) {
	if err := checkCustomLLMRequest("Create", req); err != nil {
		return nil, err
	}
	var out customLLMResponse
	if _, err := s.client.do(ctx, request{method: "POST", path: "/v1/custom-llms", body: req}, &out, opts); err != nil {
		return nil, err
	}
	return out.CustomLLM, nil
}

// Update replaces a custom model's configuration, keeping its id (PUT
// /v1/custom-llms/{id}). A nil Config.APIKey keeps the stored key.
func (s *CustomLLMsService) Update(ctx context.Context, id string, req *CustomLLMRequest, opts ...Option) (*CustomLLM, error) {
	if err := requireID("custom LLM id", id); err != nil {
		return nil, err
	}
	if err := checkCustomLLMRequest("Update", req); err != nil {
		return nil, err
	}
	var out customLLMResponse
	if _, err := s.client.do(ctx, request{method: "PUT", path: pathf("/v1/custom-llms/%s", id), body: req, idempotent: true}, &out, opts); err != nil {
		return nil, err
	}
	return out.CustomLLM, nil
}

// Delete deletes a custom model (DELETE /v1/custom-llms/{id}); its key goes
// with it. Agents that name it fail to run afterwards, saying so.
func (s *CustomLLMsService) Delete(ctx context.Context, id string, opts ...Option) error {
	if err := requireID("custom LLM id", id); err != nil {
		return err
	}
	var out struct {
		Success bool `json:"success"`
	}
	_, err := s.client.do(ctx, request{method: "DELETE", path: pathf("/v1/custom-llms/%s", id), idempotent: true}, &out, opts)
	return err
}
