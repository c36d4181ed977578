// Package llm calls language models for the execution engine: one small
// interface, Model, over two wire protocols.
//
//	reg, err := llm.NewRegistry(cfg, os.Getenv)
//	model, err := reg.Resolve(block.Model)          // client.Model: {"name": ...}
//	resp, err := model.Complete(ctx, &llm.Request{
//		Kind:     llm.KindPlan,
//		System:   "You operate a web browser ...",
//		Messages: []llm.Message{llm.User(llm.Text(obs.Rendered), llm.Image(obs.Screenshot))},
//		Schema:   &llm.Schema{Name: "plan", JSON: planSchema},
//	})
//	// resp.JSON: the answer; resp.Usage: tokens of this call.
//
// # Protocols
//
// OpenAI chat completions (POST {base}/chat/completions) serve OpenAI,
// Ollama, llama.cpp, vLLM, LM Studio and gateways: images go as image_url
// data URLs, temperature is 0 (OpenAI's reasoning models get none, as they
// accept none). The Anthropic Messages API (POST {base}/v1/messages, with
// x-api-key and anthropic-version) takes the system prompt at the top level,
// always a max_tokens (DefaultMaxTokens when the request sets none) and
// images as base64 blocks. Both are plain net/http clients, without SDKs,
// which keeps them compatible with local servers. Every request carries the
// call's kind in the X-Abctl-Call-Kind header (KindHeader): providers ignore
// it, the scripted test server (package llmtest) matches on it.
//
// # Structured answers
//
// A Request with a Schema asks for one JSON value, in the model's schema
// mode (Capabilities.Schema):
//
//   - json_schema: response_format {type: json_schema} with the schema,
//     strict when the schema meets OpenAI's strict rules (every property
//     required, additionalProperties false, no oneOf/allOf/not...), else
//     non-strict, so that any caller schema is accepted;
//   - json_object: JSON mode, with the schema described in the system prompt;
//   - tool (Anthropic): one tool whose input_schema is the schema, forced
//     with tool_choice {type: tool}; the answer is the tool's input;
//   - prompt: the schema described in the system prompt only.
//
// Providers want an object at the root, so a schema with another root
// (an array, a string) is sent as the "data" property of an object and
// unwrapped again in Response.JSON. Whatever the mode, the answer goes
// through ParseJSON, which forgives code fences, prose around the value,
// trailing commas and an answer cut off at the token limit. When a server
// rejects a schema mode that was only a default (an OpenAI-compatible server
// without json_schema answers 400 about response_format), the model falls
// back to json_object, then to prompt, once, and keeps the weaker mode.
//
// # Capabilities
//
// By default, by provider and model name: Anthropic's claude-* models and
// OpenAI's gpt-4o, gpt-4.1, gpt-5, o1, o3 and o4 families read images; an
// open-weight model does when its name says so (qwen2.5vl, *-vl, llava,
// *vision*, minicpm-v, moondream, gemma3 4b and up, llama4, mistral-small
// 3.1/3.2, pixtral...). Anthropic uses tool, OpenAI's pre-2024 models
// json_object, everything else json_schema. Config.Vision and Config.Schema
// override them. A model without vision gets no image parts.
//
// # Configuration
//
// Config holds the provider, base URL, key, default model, the overrides,
// the per-request timeout and the retry count. The daemon layers it: config
// file, then the environment (ReadEnv), then flags, combined with Merge;
// WithDefaults then fills the rest. ConfigFromEnv does the environment part
// alone. The settings and their names:
//
//	flag               environment             config file
//	--llm-provider     ABCTL_LLM_PROVIDER      provider      openai | anthropic | ollama | openai-compatible
//	--llm-base-url     ABCTL_LLM_BASE_URL      base_url
//	--llm-api-key      ABCTL_LLM_API_KEY       api_key
//	--llm-model        ABCTL_LLM_MODEL         model
//	--llm-vision       ABCTL_LLM_VISION        vision        true | false
//	--llm-schema       ABCTL_LLM_SCHEMA        schema        json_schema | json_object | tool | prompt
//	--llm-timeout      ABCTL_LLM_TIMEOUT       timeout       per HTTP request, default 90s
//	--llm-max-retries  ABCTL_LLM_MAX_RETRIES   max_retries   default 3, negative for none
//
// With nothing set, the model is DefaultOllamaModel (qwen2.5vl:7b, a vision
// model that follows schemas) on a local Ollama at
// http://127.0.0.1:11434/v1, without a key, so offline work needs no
// account. Prompts with a page observation run to ~12,000 tokens, more than
// Ollama's default context: start it with OLLAMA_CONTEXT_LENGTH=32768 (or
// more). OPENAI_API_KEY in the environment selects OpenAI
// (DefaultOpenAIModel, gpt-4.1-mini), else ANTHROPIC_API_KEY selects
// Anthropic (DefaultAnthropicModel, claude-sonnet-4-5), unless something
// more explicit is set; see Config.WithDefaults for the full order. Those
// two keys are only ever sent to their vendor.
//
// # Choosing a model per agent or block
//
// Agents and blocks carry a free-form model object; the documentation sends
// {"name": "gpt-4.1"} and the hosted service reads "model_name": both
// work. Registry.Resolve gives the configured provider with that name, or,
// for a name that belongs to a vendor (claude-* to Anthropic, gpt-4.1 to
// OpenAI) that is not the configured provider but whose key is set, that
// vendor.
//
// # Failures
//
// Each HTTP request is bounded by Config.Timeout. Network failures, 408,
// 409, 429 (but not an exhausted quota) and 5xx answers are retried up to
// Config.MaxRetries times, waiting as the provider asks (retry-after-ms,
// Retry-After in seconds or as an HTTP date) or 0.5 s doubling up to 8 s;
// a wait longer than MaxRetryWait, or past the context's deadline, ends the
// call at once. Waits end with the context. What still fails is an *Error
// with the endpoint, the status, the provider's message and, where it
// helps, what to change: when no model answers at all (errors.Is(err,
// ErrUnreachable)), the text names the URL tried and the flags and
// variables that configure a model, so a run's failure_reason can show it
// as it is. The API key never appears in errors or logs (Config's String
// hides it too); a provider message that quotes it is redacted.
package llm
