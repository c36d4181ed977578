package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

// TestCustomModels: the tool lists the models stored through the SDK, by
// the id blocks name, and never shows a key.
func TestCustomModels(t *testing.T) {
	const key = "sk-mcp-custom-model-key-7d6c5b"
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		base := "http://127.0.0.1:1/v1" // nothing answers: the model is saved with valid false
		m, err := e.c.CustomLLMs.Create(t.Context(), &client.CustomLLMRequest{Config: client.CustomLLMConfig{
			DisplayName: "Team GPU", Provider: client.CustomLLMProviderOpenAICompatible, ModelName: "team-7b", APIBase: &base, APIKey: new(key)}})
		if err != nil {
			t.Fatal(err)
		}
		list, text := callText[mcpserver.CustomModelList](t, s, "skyvern_custom_model_list", nil)
		if len(list.Models) != 1 || list.Models[0].ID != m.ID || list.Models[0].ModelName != "team-7b" || list.Models[0].Valid || !list.Models[0].Vision {
			t.Errorf("list: %+v", list)
		}
		if strings.Contains(text, key) {
			t.Error("the tool's answer holds the key")
		}
		if valid := call[mcpserver.CustomModelList](t, s, "skyvern_custom_model_list", map[string]any{"valid_only": true}); len(valid.Models) != 0 {
			t.Errorf("valid_only: %+v", valid)
		}
	})
}
