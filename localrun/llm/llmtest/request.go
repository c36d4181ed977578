package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/abctl/abctl/localrun/llm"
)

// The protocols, as Request.Protocol names them.
const (
	ProtocolOpenAI    = "openai"
	ProtocolAnthropic = "anthropic"
)

// Request is a call as the server decoded it.
type Request struct {
	// N numbers the calls from 1, in order of arrival.
	N int
	// Step is the index (from 0) of the step that answered, -1 when none
	// did.
	Step int
	// Protocol is ProtocolOpenAI or ProtocolAnthropic.
	Protocol string
	// Kind is the X-Abctl-Call-Kind header.
	Kind string
	// Model is the model name asked for.
	Model string
	// System is the system prompt (OpenAI: the system messages, joined).
	System string
	// Messages are the user and assistant turns.
	Messages []Message
	// SchemaMode is how structured output was asked for: "json_schema",
	// "json_object" (OpenAI response_format), "tool" (Anthropic forced
	// tool), or "" for none.
	SchemaMode string
	// SchemaName is the json_schema name or the forced tool's name.
	SchemaName string
	// Schema is the JSON Schema sent (response_format json_schema, or the
	// forced tool's input_schema).
	Schema json.RawMessage
	// Strict is the json_schema strict flag.
	Strict bool
	// MaxTokens is max_tokens (or max_completion_tokens), 0 when absent.
	MaxTokens int
	// Temperature is the temperature sent, nil when absent.
	Temperature *float64
	// Header holds the request headers without Authorization and
	// X-Api-Key.
	Header http.Header
	// Body is the raw request body.
	Body []byte

	toolForced bool
	keySent    bool
	key        [32]byte
}

// Message is one turn of a request.
type Message struct {
	Role string
	// Text is the message's text parts, joined by blank lines.
	Text string
	// Images holds the decoded bytes of its images.
	Images [][]byte
}

// Prompt is the text a step's Match sees: the system prompt, then every
// message's text, one per paragraph.
func (r *Request) Prompt() string {
	var b strings.Builder
	b.WriteString(r.System)
	for _, m := range r.Messages {
		b.WriteString("\n\n")
		b.WriteString(m.Text)
	}
	return b.String()
}

// LastUserText is the text of the last user message.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Text
		}
	}
	return ""
}

// ImageCount is the number of images in all messages.
func (r *Request) ImageCount() int {
	n := 0
	for _, m := range r.Messages {
		n += len(m.Images)
	}
	return n
}

// SentKey reports whether the request carried key (as a bearer token or
// an x-api-key header). Keys are not kept, only a hash.
func (r *Request) SentKey(key string) bool { return r.keySent && r.key == keyHash(key) }

// KeySent reports whether the request carried any key.
func (r *Request) KeySent() bool { return r.keySent }

// ElementID is the id of the element named name in the latest page
// observation of the request (see the package-level ElementID).
func (r *Request) ElementID(name string) (string, error) {
	return ElementID(r.observationText(), name)
}

// FindElement is FindElement on the latest page observation of the
// request.
func (r *Request) FindElement(match func(Element) bool) (Element, error) {
	return FindElement(r.observationText(), match)
}

// observationText is the last message that lists page elements, else the
// whole prompt.
func (r *Request) observationText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if len(Elements(r.Messages[i].Text)) > 0 {
			return r.Messages[i].Text
		}
	}
	return r.Prompt()
}

// decodeRequest reads a call; the status is for the error answer.
func decodeRequest(proto string, hr *http.Request) (*Request, int, error) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("reading the request body: %v", err)
	}
	r := &Request{Protocol: proto, Kind: hr.Header.Get(llm.KindHeader), Body: body, Header: hr.Header.Clone()}
	if k, ok := strings.CutPrefix(hr.Header.Get("Authorization"), "Bearer "); ok && k != "" {
		r.keySent, r.key = true, keyHash(k)
	}
	if k := hr.Header.Get("X-Api-Key"); k != "" {
		r.keySent, r.key = true, keyHash(k)
	}
	r.Header.Del("Authorization")
	r.Header.Del("X-Api-Key")
	if ct := hr.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return nil, http.StatusBadRequest, fmt.Errorf("%s request with Content-Type %q, want application/json", proto, ct)
	}
	if proto == ProtocolAnthropic {
		err = r.decodeAnthropic(body, hr.Header)
	} else {
		err = r.decodeOpenAI(body)
	}
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("%s request: %v", proto, err)
	}
	return r, 0, nil
}

func (r *Request) decodeOpenAI(body []byte) error {
	var w struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
		Temperature         *float64 `json:"temperature"`
		ResponseFormat      *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := strictDecode(body, &w); err != nil {
		return err
	}
	if w.Model == "" {
		return errors.New("no model")
	}
	if len(w.Messages) == 0 {
		return errors.New("no messages")
	}
	r.Model, r.Temperature = w.Model, w.Temperature
	r.MaxTokens = max(w.MaxTokens, w.MaxCompletionTokens)
	var system []string
	for i, m := range w.Messages {
		text, images, err := openAIContent(m.Content)
		if err != nil {
			return fmt.Errorf("messages[%d]: %v", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user", "assistant":
			r.Messages = append(r.Messages, Message{Role: m.Role, Text: text, Images: images})
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
	}
	r.System = strings.Join(system, "\n\n")
	if f := w.ResponseFormat; f != nil {
		switch f.Type {
		case "json_schema":
			if f.JSONSchema == nil || f.JSONSchema.Name == "" || len(f.JSONSchema.Schema) == 0 {
				return errors.New("response_format json_schema without a name and a schema")
			}
			r.SchemaMode, r.SchemaName, r.Schema, r.Strict = "json_schema", f.JSONSchema.Name, f.JSONSchema.Schema, f.JSONSchema.Strict
		case "json_object", "text":
			r.SchemaMode = f.Type
			if f.Type == "text" {
				r.SchemaMode = ""
			}
		default:
			return fmt.Errorf("unknown response_format type %q", f.Type)
		}
	}
	return nil
}

// openAIContent reads a content that is a string or a list of text and
// image_url parts.
func openAIContent(raw json.RawMessage) (string, [][]byte, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, fmt.Errorf("content is neither a string nor a list of parts: %v", err)
	}
	var texts []string
	var images [][]byte
	for i, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "image_url":
			if p.ImageURL == nil {
				return "", nil, fmt.Errorf("part %d: image_url without a url", i)
			}
			img, err := dataURL(p.ImageURL.URL)
			if err != nil {
				return "", nil, fmt.Errorf("part %d: %v", i, err)
			}
			images = append(images, img)
		default:
			return "", nil, fmt.Errorf("part %d: unknown type %q", i, p.Type)
		}
	}
	return strings.Join(texts, "\n\n"), images, nil
}

func dataURL(u string) ([]byte, error) {
	meta, data, ok := strings.Cut(u, ",")
	if !ok || !strings.HasPrefix(meta, "data:image/") || !strings.HasSuffix(meta, ";base64") {
		return nil, fmt.Errorf("image url %q is not a base64 image data URL", clip(u, 40))
	}
	return base64.StdEncoding.DecodeString(data)
}

func (r *Request) decodeAnthropic(body []byte, h http.Header) error {
	if h.Get("Anthropic-Version") == "" {
		return errors.New("no anthropic-version header")
	}
	var w struct {
		Model       string          `json:"model"`
		MaxTokens   int             `json:"max_tokens"`
		System      json.RawMessage `json:"system"`
		Temperature *float64        `json:"temperature"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		ToolChoice *struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tool_choice"`
	}
	if err := strictDecode(body, &w); err != nil {
		return err
	}
	switch {
	case w.Model == "":
		return errors.New("model: Field required")
	case w.MaxTokens <= 0:
		return errors.New("max_tokens: Field required (a positive number)")
	case len(w.Messages) == 0:
		return errors.New("messages: at least one message is required")
	}
	r.Model, r.MaxTokens, r.Temperature = w.Model, w.MaxTokens, w.Temperature
	if len(w.System) > 0 {
		text, _, err := anthropicContent(w.System)
		if err != nil {
			return fmt.Errorf("system: %v", err)
		}
		r.System = text
	}
	for i, m := range w.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("messages[%d]: role %q (the system prompt goes in the top-level system field)", i, m.Role)
		}
		text, images, err := anthropicContent(m.Content)
		if err != nil {
			return fmt.Errorf("messages[%d]: %v", i, err)
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Text: text, Images: images})
	}
	if w.ToolChoice != nil && w.ToolChoice.Type == "tool" {
		for _, t := range w.Tools {
			if t.Name == w.ToolChoice.Name {
				r.SchemaMode, r.SchemaName, r.Schema, r.toolForced = "tool", t.Name, t.InputSchema, true
			}
		}
		if !r.toolForced {
			return fmt.Errorf("tool_choice names tool %q, which is not in tools", w.ToolChoice.Name)
		}
	}
	return nil
}

// anthropicContent reads a content that is a string or a list of text and
// base64 image blocks.
func anthropicContent(raw json.RawMessage) (string, [][]byte, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var blocks []struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		Source *struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", nil, fmt.Errorf("content is neither a string nor a list of blocks: %v", err)
	}
	var texts []string
	var images [][]byte
	for i, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text == "" {
				return "", nil, fmt.Errorf("block %d: text blocks must be non-empty", i)
			}
			texts = append(texts, b.Text)
		case "image":
			if b.Source == nil || b.Source.Type != "base64" || !strings.HasPrefix(b.Source.MediaType, "image/") {
				return "", nil, fmt.Errorf("block %d: image without a base64 source and an image media_type", i)
			}
			img, err := base64.StdEncoding.DecodeString(b.Source.Data)
			if err != nil {
				return "", nil, fmt.Errorf("block %d: %v", i, err)
			}
			images = append(images, img)
		default:
			return "", nil, fmt.Errorf("block %d: unexpected type %q", i, b.Type)
		}
	}
	return strings.Join(texts, "\n\n"), images, nil
}

// strictDecode decodes one JSON object, refusing trailing data.
func strictDecode(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("body is not valid JSON: %v", err)
	}
	if dec.More() {
		return errors.New("body has data after the JSON object")
	}
	return nil
}
