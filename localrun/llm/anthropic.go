package llm

import (
	"encoding/base64"
	"encoding/json"
	"github.com/abctl/abctl/internal/jsonenc"
	"net/http"
	"strings"
)

// AnthropicVersion is the anthropic-version header sent with every call.
const AnthropicVersion = "2023-06-01"

// anthropicCodec speaks the Anthropic Messages API (POST {base}/v1/messages).
// Structured answers use one tool whose input schema is the schema, which
// the model is made to call (tool_choice {type: tool}); the answer is the
// tool's input.
type anthropicCodec struct{ cfg Config }

type anRequest struct {
	Model       string        `json:"model"`
	MaxTokens   int           `json:"max_tokens"`
	System      string        `json:"system,omitempty"`
	Messages    []anMessage   `json:"messages"`
	Temperature float64       `json:"temperature"`
	Tools       []anTool      `json:"tools,omitempty"`
	ToolChoice  *anToolChoice `json:"tool_choice,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anBlock struct {
	Type   string    `json:"type"`
	Text   string    `json:"text,omitempty"`
	Source *anSource `json:"source,omitempty"`
}

type anSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type anResponse struct {
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

func (anthropicCodec) path() string { return "/v1/messages" }

func (anthropicCodec) auth(h http.Header, key string) {
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	h.Set("Anthropic-Version", AnthropicVersion)
}

func (c anthropicCodec) encode(req *Request, ws *wireSchema, mode SchemaMode, vision bool) ([]byte, error) {
	r := anRequest{Model: c.cfg.Model, MaxTokens: req.MaxTokens, System: systemText(req, ws, mode), Messages: make([]anMessage, 0, len(req.Messages))}
	if r.MaxTokens <= 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	for _, msg := range req.Messages {
		parts := visibleParts(msg.Parts, vision)
		blocks := make([]anBlock, 0, len(parts))
		for _, p := range parts {
			if p.Image != nil {
				blocks = append(blocks, anBlock{Type: "image", Source: &anSource{
					Type: "base64", MediaType: imageType(p.Image), Data: base64.StdEncoding.EncodeToString(p.Image)}})
			} else if p.Text != "" {
				blocks = append(blocks, anBlock{Type: "text", Text: p.Text})
			}
		}
		if len(blocks) == 0 {
			blocks = append(blocks, anBlock{Type: "text", Text: "(empty)"})
		}
		r.Messages = append(r.Messages, anMessage{Role: role(msg), Content: blocks})
	}
	if ws != nil && mode == SchemaTool {
		desc := ws.description
		if desc == "" {
			desc = "Give the answer as this tool's input."
		}
		r.Tools = []anTool{{Name: ws.name, Description: desc, InputSchema: ws.schema}}
		r.ToolChoice = &anToolChoice{Type: "tool", Name: ws.name}
	}
	return jsonenc.Marshal(r)
}

func (anthropicCodec) decode(body []byte) (answer, error) {
	var r anResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return answer{}, err
	}
	a := answer{
		model:     r.Model,
		stop:      r.StopReason,
		truncated: r.StopReason == "max_tokens",
		usage: Usage{
			InputTokens:  r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens,
			OutputTokens: r.Usage.OutputTokens,
		},
	}
	var text strings.Builder
	for _, c := range r.Content {
		switch c.Type {
		case "tool_use":
			if len(c.Input) > 0 {
				a.text = string(c.Input)
				return a, nil
			}
		case "text":
			text.WriteString(c.Text)
		}
	}
	if text.Len() == 0 && len(r.Content) == 0 && r.StopReason == "" {
		return answer{}, errNoAnswer
	}
	a.text = text.String()
	return a, nil
}
