package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/abctl/abctl/localrun/llm"
)

// Reply is how a step answers. Build one with Text, JSON, Func, Status,
// RateLimit, Hang, Drop or RawBody, and adjust it with the With methods.
type Reply struct {
	kind    replyKind
	text    string
	json    json.RawMessage
	status  int
	errType string
	body    string
	header  http.Header
	usage   *llm.Usage
	stop    string
	model   string
	fn      func(*Request) (Reply, error)
}

type replyKind int

const (
	replyText replyKind = iota
	replyJSON
	replyFunc
	replyStatus
	replyHang
	replyDrop
	replyRaw
)

// Text answers with a text (which may be broken JSON, to test the
// forgiving parser).
func Text(s string) Reply { return Reply{kind: replyText, text: s} }

// JSON answers with v as JSON: a json.RawMessage or []byte is sent as it
// is, anything else is marshalled. It panics when v cannot be marshalled
// (a bug in the test).
func JSON(v any) Reply {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case []byte:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("llmtest.JSON: %v", err))
		}
		raw = b
	}
	if !json.Valid(raw) {
		panic(fmt.Sprintf("llmtest.JSON: not valid JSON: %.80s (use Text for broken JSON)", raw))
	}
	return Reply{kind: replyJSON, json: raw}
}

// Func computes the reply from the request. An error fails the test with
// its message and answers 400 (which clients do not retry).
func Func(f func(*Request) (Reply, error)) Reply { return Reply{kind: replyFunc, fn: f} }

// Status answers with an HTTP error in the protocol's error shape, such as
// Status(500, "upstream crashed").
func Status(code int, message string) Reply {
	return Reply{kind: replyStatus, status: code, text: message, errType: errorType(code)}
}

// RateLimit answers 429 with a Retry-After header ("2", or an HTTP date);
// "" sends none.
func RateLimit(retryAfter string) Reply {
	r := Status(http.StatusTooManyRequests, "rate limit reached, slow down")
	if retryAfter != "" {
		r = r.WithHeader("Retry-After", retryAfter)
	}
	return r
}

// Hang never answers: the handler waits until the client gives up (its
// timeout or canceled context closes the request) or the server closes.
func Hang() Reply { return Reply{kind: replyHang} }

// Drop closes the connection without answering, as a crashing server
// would; the client sees a network error.
func Drop() Reply { return Reply{kind: replyDrop} }

// RawBody answers with status and body exactly as given (a truncated or
// malformed body), Content-Type application/json.
func RawBody(status int, body string) Reply { return Reply{kind: replyRaw, status: status, body: body} }

// WithUsage sets the token counts reported.
func (r Reply) WithUsage(input, output int) Reply {
	r.usage = &llm.Usage{InputTokens: input, OutputTokens: output}
	return r
}

// WithStop sets the stop reason (OpenAI finish_reason, Anthropic
// stop_reason), such as "length" or "max_tokens" for a cut-off answer.
func (r Reply) WithStop(reason string) Reply {
	r.stop = reason
	return r
}

// WithModel sets the model name the reply reports (default: the one asked
// for).
func (r Reply) WithModel(name string) Reply {
	r.model = name
	return r
}

// WithHeader adds a response header.
func (r Reply) WithHeader(key, value string) Reply {
	h := r.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	r.header = h
	return r
}

func errorType(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return "rate_limit_error"
	case code == http.StatusUnauthorized:
		return "authentication_error"
	case code == http.StatusNotFound:
		return "not_found_error"
	case code == 529:
		return "overloaded_error"
	case code >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// answer writes the reply for req.
func (s *Server) answer(w http.ResponseWriter, hr *http.Request, req *Request, rep Reply) {
	for rep.kind == replyFunc {
		next, err := rep.fn(req)
		if err != nil {
			s.t.Errorf("llmtest: call %d (kind %q): the reply function failed: %v", req.N, req.Kind, err)
			writeError(w, req.Protocol, http.StatusBadRequest, "invalid_request_error", "llmtest: "+err.Error())
			return
		}
		rep = next
	}
	for k, vs := range rep.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	switch rep.kind {
	case replyHang:
		select {
		case <-hr.Context().Done():
		case <-s.quit:
			// The server is closing: end the exchange as a dropped
			// connection, not as an empty answer.
			panic(http.ErrAbortHandler)
		}
		return
	case replyDrop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // HTTP/2: abort the stream
	case replyRaw:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		_, _ = w.Write([]byte(rep.body))
		return
	case replyStatus:
		writeError(w, req.Protocol, rep.status, rep.errType, rep.text)
		return
	}
	text := rep.text
	if rep.kind == replyJSON {
		text = string(rep.json)
	}
	usage := llm.Usage{InputTokens: (len(req.Prompt())+3)/4 + 85*req.ImageCount(), OutputTokens: (len(text) + 3) / 4}
	if rep.usage != nil {
		usage = *rep.usage
	}
	model := req.Model
	if rep.model != "" {
		model = rep.model
	}
	if req.Protocol == ProtocolAnthropic {
		writeJSON(w, http.StatusOK, anthropicReply(req, rep, text, model, usage))
		return
	}
	stop := rep.stop
	if stop == "" {
		stop = "stop"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      fmt.Sprintf("chatcmpl-llmtest-%d", req.N),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": text},
			"finish_reason": stop,
		}},
		"usage": map[string]any{
			"prompt_tokens":     usage.InputTokens,
			"completion_tokens": usage.OutputTokens,
			"total_tokens":      usage.Total(),
		},
	})
}

// anthropicReply builds a Messages API answer: a JSON reply to a request
// that forces a tool becomes that tool's input.
func anthropicReply(req *Request, rep Reply, text, model string, usage llm.Usage) map[string]any {
	var content []any
	stop := rep.stop
	if rep.kind == replyJSON && req.toolForced {
		input := rep.json
		var obj map[string]json.RawMessage
		if json.Unmarshal(input, &obj) != nil {
			input, _ = json.Marshal(map[string]json.RawMessage{"data": rep.json})
		}
		content = []any{map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_llmtest_%d", req.N), "name": req.SchemaName, "input": input}}
		if stop == "" {
			stop = "tool_use"
		}
	} else {
		content = []any{map[string]any{"type": "text", "text": text}}
		if stop == "" {
			stop = "end_turn"
		}
	}
	return map[string]any{
		"id":            fmt.Sprintf("msg_llmtest_%d", req.N),
		"type":          "message",
		"role":          "assistant",
		"model":         model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         map[string]any{"input_tokens": usage.InputTokens, "output_tokens": usage.OutputTokens},
	}
}
