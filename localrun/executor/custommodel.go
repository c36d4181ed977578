package executor

import (
	"fmt"
	"log/slog"
)

// CustomModelIDPrefix begins the id of every custom model
// (/v1/custom-llms): the daemon's id prefix for them (daemon/ids
// PrefixCustomLLM) and its separator. A model object naming such an id
// asks for an organization's custom model, never for the daemon's own.
const CustomModelIDPrefix = "cllm_"

// CustomModel is a model endpoint an organization registered
// (/v1/custom-llms), with its key unsealed, as the daemon hands it to the
// executor in Job.CustomModels: the runs of that organization, and only
// theirs, may name it by ID in an agent's, block's or task's model object.
//
// APIKey is a secret: String and LogValue leave it out, and the executor
// never writes it anywhere but to the endpoint.
type CustomModel struct {
	ID          string
	DisplayName string
	// Provider is "openai_compatible", "ollama" or "openrouter".
	Provider  string
	ModelName string
	// APIBase is the API root; "" takes the provider's default.
	APIBase    string
	APIKey     string
	APIVersion string
	// Vision says whether screenshots are sent.
	Vision bool
	// MaxCompletionTokens caps each answer; 0 leaves it to the call.
	MaxCompletionTokens int
	// Temperature is nil for the endpoint's default.
	Temperature     *float64
	ReasoningEffort string
}

// String describes the model without its key.
func (m CustomModel) String() string {
	key := "none"
	if m.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("custom model %s (%q: %s %s at %s, api_key=%s)", m.ID, m.DisplayName, m.Provider, m.ModelName, m.APIBase, key)
}

// LogValue keeps the key out of slog records.
func (m CustomModel) LogValue() slog.Value { return slog.StringValue(m.String()) }

// GoString keeps the key out of %#v.
func (m CustomModel) GoString() string { return m.String() }
