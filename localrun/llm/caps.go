package llm

import (
	"regexp"
	"strings"
)

// The defaults below go by the model's name. A gateway's "vendor/model"
// names are judged by the part after the last slash.

var (
	// openAIName matches OpenAI's own model families. gpt-oss (open
	// weights, served by Ollama and others) is deliberately not one.
	openAIName = regexp.MustCompile(`^(gpt-[3-9]|o[1-9]($|-)|chatgpt-)`)
	// openAINoVision matches OpenAI models that read no images.
	openAINoVision = regexp.MustCompile(`^(gpt-3\.5|gpt-4($|-0[36])|o1-mini|o3-mini)`)
	// openAIJSONObject matches OpenAI models older than structured
	// outputs: JSON mode only.
	openAIJSONObject = regexp.MustCompile(`^(gpt-3\.5|gpt-4($|-))`)
	// localVision matches open-weight models known to read images.
	localVision = regexp.MustCompile(`(vl\b|vl:|-vl|llava|vision|minicpm-v|moondream|pixtral|internvl|multimodal|llama4|mistral-small3\.[12]|gemma3(:([4-9]|[1-9][0-9])b|:latest|$)|omni)`)
	// reasoningModel matches OpenAI reasoning models, which reject any
	// temperature but the default.
	reasoningModel = regexp.MustCompile(`^(o[1-9]|gpt-5)`)
)

func baseName(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	return m
}

// vendorOf returns the provider whose name the model carries (claude-* is
// anthropic, gpt-4.1 openai) or "" for open-weight and unknown names.
func vendorOf(model string) Provider {
	m := baseName(model)
	switch {
	case strings.HasPrefix(m, "claude-"):
		return ProviderAnthropic
	case openAIName.MatchString(m):
		return ProviderOpenAI
	}
	return ""
}

// defaultVision says whether a model reads images, by its name.
func defaultVision(p Provider, model string) bool {
	m := baseName(model)
	switch vendorOf(m) {
	case ProviderAnthropic:
		return !strings.HasPrefix(m, "claude-2") && !strings.HasPrefix(m, "claude-instant")
	case ProviderOpenAI:
		return !openAINoVision.MatchString(m)
	}
	if p == ProviderAnthropic {
		return true
	}
	return localVision.MatchString(m)
}

// defaultSchemaMode is the strongest structured-output mode the provider
// and model are known to accept.
func defaultSchemaMode(p Provider, model string) SchemaMode {
	if p == ProviderAnthropic {
		return SchemaTool
	}
	if vendorOf(model) == ProviderOpenAI && openAIJSONObject.MatchString(baseName(model)) {
		return SchemaJSONObject
	}
	return SchemaJSONSchema
}

// fixedTemperature reports the models that must get no temperature.
func fixedTemperature(model string) bool {
	m := baseName(model)
	return reasoningModel.MatchString(m) && !strings.HasPrefix(m, "gpt-5-chat")
}
