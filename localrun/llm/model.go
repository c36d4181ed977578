package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// codec turns requests into one protocol's bodies and its replies into
// answers. The two protocols differ only there; model does the rest.
type codec interface {
	// path is the endpoint below the base URL.
	path() string
	// auth sets the authentication headers.
	auth(h http.Header, key string)
	encode(req *Request, ws *wireSchema, mode SchemaMode, vision bool) ([]byte, error)
	decode(body []byte) (answer, error)
}

// answer is a decoded reply.
type answer struct {
	text      string
	model     string
	stop      string
	truncated bool
	usage     Usage
}

// model is a Model over one codec.
type model struct {
	cfg   Config
	caps  Capabilities
	ep    *endpoint
	codec codec
	o     *options
	// mode is the schema mode in use; it weakens once when a server
	// rejects a mode that was only a default (see Complete).
	mode atomic.Value // SchemaMode
}

func newModel(cfg Config, o *options, c codec) *model {
	m := &model{cfg: cfg, caps: cfg.Capabilities(), codec: c, o: o}
	m.ep = &endpoint{
		cfg:           cfg,
		url:           cfg.BaseURL + c.path(),
		o:             o,
		auth:          func(h http.Header) { c.auth(h, cfg.APIKey) },
		providerError: providerError,
	}
	m.mode.Store(m.caps.Schema)
	return m
}

func newOpenAI(cfg Config, o *options) Model    { return newModel(cfg, o, openAICodec{cfg: cfg}) }
func newAnthropic(cfg Config, o *options) Model { return newModel(cfg, o, anthropicCodec{cfg: cfg}) }

func (m *model) Info() Info {
	caps := m.caps
	caps.Schema = m.mode.Load().(SchemaMode)
	return Info{Provider: m.cfg.Provider, Endpoint: m.ep.url, Model: m.cfg.Model, Capabilities: caps}
}

func (m *model) Complete(ctx context.Context, req *Request) (*Response, error) {
	if req == nil {
		return nil, errors.New("llm: Complete: nil request")
	}
	start := time.Now()
	ws, err := prepareSchema(req.Schema)
	if err != nil {
		return nil, err
	}
	mode := m.mode.Load().(SchemaMode)
	attempts := 0
	var data []byte
	for {
		body, err := m.codec.encode(req, ws, mode, m.caps.Vision)
		if err != nil {
			return nil, fmt.Errorf("llm: encode %s request: %w", kindOr(req.Kind), err)
		}
		var n int
		data, n, err = m.ep.post(ctx, req.Kind, body)
		attempts += n
		if err == nil {
			break
		}
		if weaker := weakerMode(mode); ws != nil && m.cfg.schemaDefaulted && weaker != mode && schemaRejected(err) {
			// An OpenAI-compatible server that does not know this
			// response_format: use a weaker one from now on.
			m.o.log.LogAttrs(ctx, slog.LevelWarn, "llm schema mode rejected, falling back",
				slog.String("model", m.cfg.Model), slog.String("from", string(mode)), slog.String("to", string(weaker)), slog.String("error", err.Error()))
			m.mode.CompareAndSwap(mode, weaker)
			mode = weaker
			continue
		}
		return nil, err
	}
	ans, err := m.codec.decode(data)
	if err != nil {
		return nil, &Error{Provider: m.cfg.Provider, Model: m.cfg.Model, Endpoint: m.ep.url, Kind: req.Kind,
			StatusCode: http.StatusOK, Message: "unreadable reply: " + err.Error() + ": " + preview(string(data), 120), Attempts: attempts}
	}
	resp := &Response{
		Text:      ans.text,
		Usage:     ans.usage,
		Model:     ans.model,
		Stop:      ans.stop,
		Truncated: ans.truncated,
		Duration:  time.Since(start),
		Attempts:  attempts,
	}
	m.o.log.LogAttrs(ctx, slog.LevelDebug, "llm call",
		slog.String("kind", req.Kind), slog.String("provider", string(m.cfg.Provider)), slog.String("model", m.cfg.Model),
		slog.Duration("duration", resp.Duration), slog.Int("attempts", attempts),
		slog.Int("input_tokens", resp.Usage.InputTokens), slog.Int("output_tokens", resp.Usage.OutputTokens), slog.String("stop", resp.Stop))
	if ws == nil {
		return resp, nil
	}
	resp.JSON, resp.Repaired, err = decodeAnswer(ws, ans.text)
	if err != nil {
		cut := ""
		if ans.truncated {
			cut = ", cut off at the token limit"
		}
		return resp, fmt.Errorf("llm: %s answer of %s model %q%s: %w", kindOr(req.Kind), m.cfg.Provider, m.cfg.Model, cut, err)
	}
	return resp, nil
}

// weakerMode is the mode to fall back to when a server rejects mode.
func weakerMode(mode SchemaMode) SchemaMode {
	switch mode {
	case SchemaJSONSchema:
		return SchemaJSONObject
	case SchemaJSONObject:
		return SchemaPrompt
	}
	return mode
}

// schemaRejected reports a 400 (or 422) answer that blames the structured
// output request, as servers without json_schema support give.
func schemaRejected(err error) bool {
	var e *Error
	if !errors.As(err, &e) || (e.StatusCode != http.StatusBadRequest && e.StatusCode != http.StatusUnprocessableEntity) {
		return false
	}
	msg := strings.ToLower(e.Message + " " + e.Type)
	for _, w := range []string{"response_format", "json_schema", "json_object", "grammar", "structured"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// visibleParts drops images for a model without vision; a message left
// empty says an image was there.
func visibleParts(parts []Part, vision bool) []Part {
	if vision {
		return parts
	}
	out := make([]Part, 0, len(parts))
	dropped := false
	for _, p := range parts {
		if p.Image != nil {
			dropped = true
			continue
		}
		out = append(out, p)
	}
	if len(out) == 0 && dropped {
		out = append(out, Part{Text: "(an image was left out: this model reads no images)"})
	}
	return out
}

// role is the wire role of a message; an unset role is the user's.
func role(m Message) string {
	if m.Role == "" {
		return string(RoleUser)
	}
	return string(m.Role)
}

// imageType is the media type of an image part.
func imageType(b []byte) string {
	switch t := http.DetectContentType(b); t {
	case "image/png", "image/gif", "image/webp", "image/jpeg":
		return t
	}
	return "image/jpeg"
}

// systemText is the system prompt plus, in the modes where the provider
// does not enforce the schema, the instruction that describes it.
func systemText(req *Request, ws *wireSchema, mode SchemaMode) string {
	if ws == nil || mode == SchemaJSONSchema || mode == SchemaTool {
		return req.System
	}
	inst := schemaInstruction(ws)
	if req.System == "" {
		return inst
	}
	return req.System + "\n\n" + inst
}
