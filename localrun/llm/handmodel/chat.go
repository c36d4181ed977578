package handmodel

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// kindHeader is llm.KindHeader, spelled out so that this package does not
// depend on the client it serves.
const kindHeader = "X-Abctl-Call-Kind"

// Usage is the estimated token count of one call (see the package comment).
type Usage struct {
	PromptTokens     int  `json:"prompt_tokens"`
	CompletionTokens int  `json:"completion_tokens"`
	TotalTokens      int  `json:"total_tokens"`
	Estimated        bool `json:"estimated"`
}

// Answered is the record NNNN.answered.json holds.
type Answered struct {
	Seq        int    `json:"seq"`
	Kind       string `json:"kind"`
	AnswerFile string `json:"answer_file"`
	WaitedMS   int64  `json:"waited_ms"`
	Usage      Usage  `json:"usage"`
}

// message is one message of a request as the prompt shows it.
type message struct {
	role string
	text string // text parts joined by blank lines, images as [image: name]
}

// chatRequest is what the server reads from a request body.
type chatRequest struct {
	n        int
	kind     string
	model    string
	messages []message
	images   int
	chars    int // characters of the message texts, image marks left out
	format   string
	schema   struct {
		name, description string
		strict            bool
		json              json.RawMessage
	}
	maxTokens int
	record    []byte // the body for NNNN.request.json
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "chat completions are created with POST; "+r.Method+" is not served")
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_body", err.Error())
		return
	}
	n := s.next()
	req, err := s.decode(n, body)
	if err != nil {
		s.log.Warn("request refused", "seq", n, "error", err)
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	req.kind = r.Header.Get(kindHeader)
	if err := s.record(req); err != nil {
		s.log.Error("request not recorded", "seq", n, "error", err)
		writeError(w, http.StatusInternalServerError, "record_failed", err.Error())
		return
	}
	s.log.Info("request waiting", "seq", n, "kind", req.kind, "prompt_chars", req.chars, "images", req.images,
		"prompt", filepath.Join(s.dir, PromptFile(n)), "answer", filepath.Join(s.dir, AnswerFile(n)))
	s.wait(w, r, req)
}

// decode reads a request body, writes its images and prepares its record.
func (s *Server) decode(n int, body []byte) (*chatRequest, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("the body is not a JSON object: %v", err)
	}
	req := &chatRequest{n: n}
	if raw, ok := top["stream"]; ok {
		var stream bool
		if err := json.Unmarshal(raw, &stream); err != nil {
			return nil, fmt.Errorf("stream: want true or false, got %s", raw)
		}
		if stream {
			return nil, errors.New(`"stream": true is not supported: a model played by hand answers in one piece; send "stream": false or leave it out`)
		}
	}
	if raw, ok := top["model"]; ok {
		if err := json.Unmarshal(raw, &req.model); err != nil {
			return nil, fmt.Errorf("model: want a string, got %s", raw)
		}
	}
	for _, key := range []string{"max_tokens", "max_completion_tokens"} {
		if raw, ok := top[key]; ok && string(raw) != "null" {
			var v int
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("%s: want a whole number, got %s", key, raw)
			}
			req.maxTokens = max(req.maxTokens, v)
		}
	}
	if raw, ok := top["response_format"]; ok && string(raw) != "null" {
		var rf struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Strict      bool            `json:"strict"`
				Schema      json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(raw, &rf); err != nil {
			return nil, fmt.Errorf("response_format: %v", err)
		}
		req.format = rf.Type
		if js := rf.JSONSchema; js != nil {
			req.schema.name, req.schema.description, req.schema.strict, req.schema.json = js.Name, js.Description, js.Strict, js.Schema
		}
		if rf.Type == "json_schema" && len(req.schema.json) == 0 {
			return nil, errors.New(`response_format: type "json_schema" without json_schema.schema`)
		}
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(top["messages"], &msgs); err != nil || len(msgs) == 0 {
		return nil, errors.New("messages: want a non-empty list of {role, content} objects")
	}
	for i, m := range msgs {
		msg, err := s.decodeMessage(req, m)
		if err != nil {
			return nil, fmt.Errorf("messages[%d]: %v", i, err)
		}
		req.messages = append(req.messages, msg)
	}
	records, err := json.Marshal(msgs)
	if err != nil {
		return nil, err
	}
	top["messages"] = records
	flat, err := json.Marshal(top)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, flat, "", "  "); err != nil {
		return nil, err
	}
	pretty.WriteByte('\n')
	req.record = pretty.Bytes()
	return req, nil
}

// decodeMessage reads one message, writing its data-URL images to files
// and replacing them, in m, by the files' names.
func (s *Server) decodeMessage(req *chatRequest, m map[string]json.RawMessage) (message, error) {
	var msg message
	if err := json.Unmarshal(m["role"], &msg.role); err != nil || msg.role == "" {
		return msg, errors.New("role: want a string such as system, user or assistant")
	}
	raw := m["content"]
	if len(raw) == 0 || string(raw) == "null" {
		return msg, nil
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		msg.text = text
		req.chars += utf8.RuneCountInString(text)
		return msg, nil
	}
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return msg, errors.New("content: want a string or a list of parts")
	}
	var texts []string
	for k, p := range parts {
		var typ string
		_ = json.Unmarshal(p["type"], &typ)
		switch typ {
		case "text":
			var t string
			if err := json.Unmarshal(p["text"], &t); err != nil {
				return msg, fmt.Errorf("content[%d]: a text part without a text string", k)
			}
			texts = append(texts, t)
			req.chars += utf8.RuneCountInString(t)
		case "image_url":
			name, err := s.saveImage(req, p)
			if err != nil {
				return msg, fmt.Errorf("content[%d]: %v", k, err)
			}
			texts = append(texts, "[image: "+name+"]")
		default:
			return msg, fmt.Errorf("content[%d]: part type %q: want text or image_url", k, typ)
		}
	}
	msg.text = strings.Join(texts, "\n\n")
	data, err := json.Marshal(parts)
	if err != nil {
		return msg, err
	}
	m["content"] = data
	return msg, nil
}

// imageExt maps the image types of data URLs to file extensions.
var imageExt = map[string]string{
	"image/jpeg": "jpg", "image/jpg": "jpg", "image/png": "png", "image/gif": "gif", "image/webp": "webp",
}

// saveImage writes the image of an image_url part to NNNN.image-K.EXT and
// puts the file's name in the part instead of the data URL. An image given
// by an http(s) URL is left as it is; its URL is the name shown.
func (s *Server) saveImage(req *chatRequest, p map[string]json.RawMessage) (string, error) {
	var url string
	var obj map[string]json.RawMessage
	if json.Unmarshal(p["image_url"], &url) != nil {
		if err := json.Unmarshal(p["image_url"], &obj); err != nil || json.Unmarshal(obj["url"], &url) != nil {
			return "", errors.New("an image_url part without a url")
		}
	}
	req.images++
	rest, ok := strings.CutPrefix(url, "data:")
	if !ok {
		return url, nil
	}
	meta, payload, ok := strings.Cut(rest, ",")
	mime, isBase64 := strings.CutSuffix(meta, ";base64")
	ext := imageExt[strings.ToLower(mime)]
	if !ok || !isBase64 || ext == "" {
		return "", fmt.Errorf("image data URL of type %q: want base64 JPEG, PNG, GIF or WebP", meta)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", fmt.Errorf("image data URL: bad base64: %v", err)
	}
	name := ImageFile(req.n, req.images, ext)
	if err := writeFile(s.dir, name, data); err != nil {
		return "", err
	}
	enc, _ := json.Marshal(name)
	if obj != nil {
		obj["url"] = enc
		enc, _ = json.Marshal(obj)
	}
	p["image_url"] = enc
	return name, nil
}

// record writes NNNN.request.json, NNNN.prompt.txt and NNNN.waiting.
func (s *Server) record(req *chatRequest) error {
	if err := writeFile(s.dir, RequestFile(req.n), req.record); err != nil {
		return err
	}
	if err := writeFile(s.dir, PromptFile(req.n), []byte(req.prompt())); err != nil {
		return err
	}
	return writeFile(s.dir, WaitingFile(req.n), nil)
}

// prompt is NNNN.prompt.txt.
func (req *chatRequest) prompt() string {
	var b strings.Builder
	kind := req.kind
	if kind == "" {
		kind = "(none given)"
	}
	fmt.Fprintf(&b, "request: %s\nkind: %s\nmodel: %s\n", seq(req.n), kind, req.model)
	if req.maxTokens > 0 {
		fmt.Fprintf(&b, "max_tokens: %d\n", req.maxTokens)
	}
	switch req.format {
	case "json_schema":
		strict := ""
		if req.schema.strict {
			strict = ", strict"
		}
		fmt.Fprintf(&b, "answer: one JSON object following the schema %q below%s\n", req.schema.name, strict)
	case "json_object":
		b.WriteString("answer: one JSON object (JSON mode; the system prompt describes it)\n")
	case "":
		b.WriteString("answer: free text (no response_format was sent; the prompt may still ask for JSON)\n")
	default:
		fmt.Fprintf(&b, "answer: response_format %q\n", req.format)
	}
	fmt.Fprintf(&b, "answer file: %s (write a temporary file and rename it)\n", AnswerFile(req.n))
	if req.format == "json_schema" {
		if req.schema.description != "" {
			fmt.Fprintf(&b, "schema description: %s\n", req.schema.description)
		}
		var pretty bytes.Buffer
		if json.Indent(&pretty, req.schema.json, "", "  ") != nil {
			pretty.Reset()
			pretty.Write(req.schema.json)
		}
		b.WriteString("schema:\n")
		b.Write(pretty.Bytes())
		b.WriteString("\n")
	}
	for _, m := range req.messages {
		fmt.Fprintf(&b, "\n=== %s ===\n%s\n", m.role, m.text)
	}
	return b.String()
}

// wait waits for the answer file of req and answers w.
func (s *Server) wait(w http.ResponseWriter, r *http.Request, req *chatRequest) {
	start := time.Now()
	answerPath := filepath.Join(s.dir, AnswerFile(req.n))
	unmark := func() {
		if err := os.Remove(filepath.Join(s.dir, WaitingFile(req.n))); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("could not remove the waiting marker", "seq", req.n, "error", err)
		}
	}
	ticker := time.NewTicker(s.poll)
	defer ticker.Stop()
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	lastSize := int64(-1)
	var answer []byte
	for answer == nil {
		select {
		case <-r.Context().Done():
			unmark()
			s.log.Info("request cancelled by its client; no answer is needed any more", "seq", req.n, "waited", time.Since(start).Round(time.Millisecond))
			return
		case <-s.stopping:
			unmark()
			s.log.Info("request left unanswered: the server is shutting down", "seq", req.n)
			writeError(w, http.StatusServiceUnavailable, "shutting_down",
				fmt.Sprintf("the model played by hand is shutting down; request %s was not answered", seq(req.n)))
			return
		case <-timer.C:
			unmark()
			s.log.Warn("request timed out", "seq", req.n, "missing", answerPath)
			w.Header().Set("X-Should-Retry", "false")
			writeError(w, http.StatusGatewayTimeout, "answer_timeout",
				fmt.Sprintf("no answer: %s was not written within %s", answerPath, s.timeout))
			return
		case <-ticker.C:
			fi, err := os.Stat(answerPath)
			if err != nil {
				lastSize = -1
				continue
			}
			if size := fi.Size(); size == 0 || size != lastSize {
				lastSize = size
				continue
			}
			data, err := os.ReadFile(answerPath)
			if err != nil {
				s.log.Warn("could not read the answer; trying again", "seq", req.n, "error", err)
				lastSize = -1
				continue
			}
			answer = data
		}
	}
	unmark()
	text := string(answer)
	usage := Usage{PromptTokens: tokens(req.chars) + ImageTokens*req.images, CompletionTokens: tokens(utf8.RuneCountInString(text)), Estimated: true}
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	waited := time.Since(start)
	rec, _ := json.MarshalIndent(Answered{Seq: req.n, Kind: req.kind, AnswerFile: AnswerFile(req.n), WaitedMS: waited.Milliseconds(), Usage: usage}, "", "  ")
	if err := writeFile(s.dir, AnsweredFile(req.n), append(rec, '\n')); err != nil {
		s.log.Warn("could not write the answer's record", "seq", req.n, "error", err)
	}
	s.log.Info("request answered", "seq", req.n, "kind", req.kind, "answer_chars", utf8.RuneCountInString(text), "waited", waited.Round(time.Millisecond))
	writeJSON(w, http.StatusOK, map[string]any{
		"id":      "chatcmpl-by-hand-" + seq(req.n),
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   s.model,
		"choices": []map[string]any{{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": text},
			"finish_reason": "stop",
		}},
		"usage": usage,
	})
}

// tokens is the estimate for n characters: n/4 rounded up.
func tokens(chars int) int { return (chars + 3) / 4 }
