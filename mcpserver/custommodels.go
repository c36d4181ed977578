package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The custom model tool lists the organization's own model endpoints, so
// that an assistant writing an agent can name one in a block's model. No
// tool creates or changes one: that means handing over the endpoint's API
// key, which must not pass through an assistant (see the credential
// tools); the user runs `abctl models create` themselves.

// CustomModelListInput is the input of skyvern_custom_model_list.
type CustomModelListInput struct {
	ValidOnly bool `json:"valid_only,omitempty" jsonschema:"list only the models whose endpoint answered its test call"`
}

// CustomModelList is the answer of skyvern_custom_model_list.
type CustomModelList struct {
	Models []CustomModelInfo `json:"models" jsonschema:"the organization's custom models, newest first"`
}

// CustomModelInfo describes a custom model without its key.
type CustomModelInfo struct {
	ID          string `json:"id" jsonschema:"the model's id (cllm_...): name it in an agent's or block's model as {\"model_name\": ID}"`
	DisplayName string `json:"display_name"`
	Provider    string `json:"provider" jsonschema:"openai_compatible, ollama or openrouter"`
	ModelName   string `json:"model_name" jsonschema:"the model's name at its endpoint"`
	APIBase     string `json:"api_base,omitempty" jsonschema:"the endpoint's API root"`
	Vision      bool   `json:"supports_vision" jsonschema:"whether the model is sent screenshots"`
	Valid       bool   `json:"valid" jsonschema:"whether the endpoint answered a test call when the model was last saved"`
}

// customModelTools list the organization's custom models.
type customModelTools struct {
	models *client.CustomLLMsService
}

func (t *customModelTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_custom_model_list",
		title: "List custom models",
		description: "List the organization's own model endpoints (custom LLMs), newest first. An agent or block uses one by " +
			"naming its id in its model: {\"model_name\": \"cllm_...\"}. Keys are never shown, and no tool adds a model " +
			"(its key must not pass through an assistant): the user runs 'abctl models create NAME --provider ... --model ...'." + ownTool,
		annotations: readOnly(),
	}, t.customModelList)
}

func (t *customModelTools) customModelList(ctx context.Context, in CustomModelListInput) (*CustomModelList, error) {
	ms, err := t.models.List(ctx)
	if err != nil {
		return nil, err
	}
	out := &CustomModelList{Models: make([]CustomModelInfo, 0, len(ms))}
	for _, m := range ms {
		if in.ValidOnly && !m.Valid {
			continue
		}
		out.Models = append(out.Models, customModelInfo(m))
	}
	return out, nil
}

func customModelInfo(m *client.CustomLLM) CustomModelInfo {
	return CustomModelInfo{ID: m.ID, DisplayName: m.Config.DisplayName, Provider: string(m.Config.Provider), ModelName: m.Config.ModelName,
		APIBase: ptr.Value(m.Config.APIBase), Vision: m.Config.SupportsVision == nil || *m.Config.SupportsVision, Valid: m.Valid}
}
