package store

import (
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
)

// RecordCustomLLM names custom models in the store's errors.
const RecordCustomLLM Record = "custom LLM"

// CustomLLMInput is a custom model to store.
type CustomLLMInput struct {
	// Config is the configuration; its APIKey is ignored (see Key).
	Config client.CustomLLMConfig
	// Key is the API key: on Update, nil keeps the stored one and ""
	// removes it; on Create, nil and "" both mean none.
	Key *string
	// Valid is the outcome of the check the caller made of the endpoint.
	Valid bool
}

// CustomModelOf is the model a configuration describes, for the executor,
// with the configuration's APIKey (if any) as its key.
func CustomModelOf(id string, cfg client.CustomLLMConfig) executor.CustomModel {
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	m := executor.CustomModel{ID: id, DisplayName: cfg.DisplayName, Provider: string(cfg.Provider), ModelName: cfg.ModelName,
		APIBase: deref(cfg.APIBase), APIKey: deref(cfg.APIKey), APIVersion: deref(cfg.APIVersion), Vision: true,
		Temperature: cfg.Temperature, ReasoningEffort: deref(cfg.ReasoningEffort)}
	if cfg.SupportsVision != nil {
		m.Vision = *cfg.SupportsVision
	}
	if cfg.MaxCompletionTokens != nil {
		m.MaxCompletionTokens = *cfg.MaxCompletionTokens
	}
	return m
}
