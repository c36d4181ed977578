package llm

import (
	"encoding/base64"
	"encoding/json"
	"github.com/abctl/abctl/internal/jsonenc"
	"net/http"
	"strings"
)

// openAICodec speaks OpenAI chat completions (POST {base}/chat/completions),
// which OpenAI, Ollama, llama.cpp, vLLM and most gateways accept.
type openAICodec struct{ cfg Config }

type oaRequest struct {
	Model               string            `json:"model"`
	Messages            []oaMessage       `json:"messages"`
	Temperature         *float64          `json:"temperature,omitempty"`
	MaxTokens           int               `json:"max_tokens,omitempty"`
	MaxCompletionTokens int               `json:"max_completion_tokens,omitempty"`
	ResponseFormat      *oaResponseFormat `json:"response_format,omitempty"`
}

// oaMessage's Content is a string, or a list of oaPart when the message
// holds an image (plain strings suit the most servers).
type oaMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type oaPart struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *oaImageURL `json:"image_url,omitempty"`
}

type oaImageURL struct {
	URL string `json:"url"`
}

type oaResponseFormat struct {
	Type       string        `json:"type"`
	JSONSchema *oaJSONSchema `json:"json_schema,omitempty"`
}

type oaJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict"`
}

type oaResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
			Refusal string          `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func (openAICodec) path() string { return "/chat/completions" }

func (openAICodec) auth(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

func (c openAICodec) encode(req *Request, ws *wireSchema, mode SchemaMode, vision bool) ([]byte, error) {
	r := oaRequest{Model: c.cfg.Model, Messages: make([]oaMessage, 0, len(req.Messages)+1)}
	if sys := systemText(req, ws, mode); sys != "" {
		r.Messages = append(r.Messages, oaMessage{Role: "system", Content: sys})
	}
	for _, msg := range req.Messages {
		r.Messages = append(r.Messages, oaMessage{Role: role(msg), Content: oaContent(visibleParts(msg.Parts, vision))})
	}
	// Reasoning models at OpenAI take no temperature and count their
	// thinking in max_completion_tokens, which OpenAI prefers for all
	// models; other servers know max_tokens.
	if c.cfg.Provider == ProviderOpenAI {
		r.MaxCompletionTokens = req.MaxTokens
	} else {
		r.MaxTokens = req.MaxTokens
	}
	if !(c.cfg.Provider == ProviderOpenAI && fixedTemperature(c.cfg.Model)) {
		zero := 0.0
		r.Temperature = &zero
	}
	if ws != nil {
		switch mode {
		case SchemaJSONSchema:
			r.ResponseFormat = &oaResponseFormat{Type: "json_schema", JSONSchema: &oaJSONSchema{
				Name: ws.name, Description: ws.description, Schema: ws.schema, Strict: ws.strict}}
		case SchemaJSONObject:
			r.ResponseFormat = &oaResponseFormat{Type: "json_object"}
		}
	}
	return jsonenc.Marshal(r)
}

// oaContent is a plain string for text-only messages, else a part list
// with images as data URLs.
func oaContent(parts []Part) any {
	hasImage := false
	for _, p := range parts {
		hasImage = hasImage || p.Image != nil
	}
	if !hasImage {
		texts := make([]string, 0, len(parts))
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, "\n\n")
	}
	out := make([]oaPart, 0, len(parts))
	for _, p := range parts {
		if p.Image != nil {
			url := "data:" + imageType(p.Image) + ";base64," + base64.StdEncoding.EncodeToString(p.Image)
			out = append(out, oaPart{Type: "image_url", ImageURL: &oaImageURL{URL: url}})
		} else {
			out = append(out, oaPart{Type: "text", Text: p.Text})
		}
	}
	return out
}

func (openAICodec) decode(body []byte) (answer, error) {
	var r oaResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return answer{}, err
	}
	if len(r.Choices) == 0 {
		return answer{}, errNoAnswer
	}
	ch := r.Choices[0]
	a := answer{
		model:     r.Model,
		stop:      ch.FinishReason,
		truncated: ch.FinishReason == "length",
		usage:     Usage{InputTokens: r.Usage.PromptTokens, OutputTokens: r.Usage.CompletionTokens},
		text:      contentText(ch.Message.Content),
	}
	if a.text == "" && ch.Message.Refusal != "" {
		a.text, a.stop = ch.Message.Refusal, "refusal"
	}
	return a, nil
}

// contentText reads a message content that is a string or a list of text
// parts (some servers answer with the latter).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// providerError reads the error body of either protocol and of the common
// servers: {"error": {"type", "code", "message"}}, {"error": "..."},
// {"message": "..."}, {"detail": "..."}.
func providerError(body []byte) (typ, msg string) {
	var r struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &r) != nil {
		return "", ""
	}
	var inner struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(r.Error, &inner) == nil && (inner.Message != "" || inner.Type != ""):
		typ, msg = inner.Type, inner.Message
		var code string
		if json.Unmarshal(inner.Code, &code) == nil && code != "" && code != typ {
			if typ == "" {
				typ = code
			} else {
				typ += "/" + code
			}
		}
	case json.Unmarshal(r.Error, &s) == nil:
		msg = s
	case r.Message != "":
		msg = r.Message
	case json.Unmarshal(r.Detail, &s) == nil:
		msg = s
	case len(r.Detail) > 0:
		msg = string(r.Detail)
	}
	return typ, msg
}
