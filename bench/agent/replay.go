package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/abctl/abctl/localrun/llm"
)

// SiteToken stands for the test site's origin in recorded answers (a
// goto_url the model wrote): each run serves the site on a new port.
const SiteToken = "{{site}}"

// Call is one recorded model call: what the model answered, and the
// element lines (without their ids) of the page it was shown, for each id
// the answer names, so that a replay finds the same elements on a new
// observation whatever their ids are then.
type Call struct {
	// Kind is the call's kind (plan, extract, ...); "" when unknown (a
	// hand-played request that did not say), matching any.
	Kind   string `json:"kind"`
	Answer string `json:"answer"`
	// Elements maps each id the answer names to its element's line.
	Elements map[string]string `json:"elements,omitempty"`
	// Occurrence says, for an id whose line appeared more than once on
	// the page, which of them it was (0 the first).
	Occurrence map[string]int `json:"occurrence,omitempty"`
}

// elementLine is an element of a page observation in a prompt:
// "[ID] kind "name" details".
var elementLine = regexp.MustCompile(`^\[([^\]\s]+)\] (.+)$`)

// pageElement is one element line of a prompt.
type pageElement struct{ id, line string }

// promptElements returns the element lines of a prompt, in order.
func promptElements(prompt string) []pageElement {
	var out []pageElement
	for line := range strings.Lines(prompt) {
		line = strings.TrimLeft(strings.TrimRight(line, "\r\n"), " \t")
		if m := elementLine.FindStringSubmatch(line); m != nil {
			out = append(out, pageElement{m[1], m[2]})
		}
	}
	return out
}

// answerIDs returns the string values of a JSON answer that are ids of
// the page (forgiving fences and trailing commas, as the engine is).
func answerIDs(answer string, ids map[string]bool) []string {
	raw, err := llm.ParseJSON(answer)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if ids[x] && !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	sort.Strings(out)
	return out
}

// recordCall makes the recorded form of an answer to a prompt.
func recordCall(kind, prompt, answer string) Call {
	els := promptElements(prompt)
	ids := map[string]bool{}
	for _, e := range els {
		ids[e.id] = true
	}
	c := Call{Kind: kind, Answer: answer}
	for _, id := range answerIDs(answer, ids) {
		if c.Elements == nil {
			c.Elements = map[string]string{}
		}
		var line string
		nth, count := 0, 0
		for _, e := range els {
			if e.id == id {
				line = e.line
			}
		}
		for _, e := range els {
			if e.line == line {
				if e.id == id {
					nth = count
				}
				count++
			}
		}
		c.Elements[id] = line
		if count > 1 {
			if c.Occurrence == nil {
				c.Occurrence = map[string]int{}
			}
			c.Occurrence[id] = nth
		}
	}
	return c
}

// kindAndName are an element line's first word and first quoted text.
func kindAndName(line string) (kind, name string) {
	kind, rest, _ := strings.Cut(line, " ")
	if i := strings.IndexByte(rest, '"'); i >= 0 {
		if q, err := strconv.QuotedPrefix(rest[i:]); err == nil {
			name, _ = strconv.Unquote(q)
		}
	}
	return kind, name
}

// replayAnswer is a recorded answer with its ids replaced by those of the
// same elements in the new prompt: the same line (its occurrence when it
// repeats), else the one line of the same kind and name.
func replayAnswer(c Call, prompt string) (string, error) {
	if len(c.Elements) == 0 {
		return c.Answer, nil
	}
	els := promptElements(prompt)
	var pairs []string
	ids := make([]string, 0, len(c.Elements))
	for id := range c.Elements {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, old := range ids {
		line := c.Elements[old]
		var same []string
		for _, e := range els {
			if e.line == line {
				same = append(same, e.id)
			}
		}
		var id string
		switch nth, ok := c.Occurrence[old]; {
		case len(same) == 1:
			id = same[0]
		case len(same) > 1 && ok && nth < len(same):
			id = same[nth]
		case len(same) > 1:
			return "", fmt.Errorf("the element %q is on the page %d times: cannot tell which one the answer meant", line, len(same))
		default:
			kind, name := kindAndName(line)
			var like []string
			for _, e := range els {
				if k, n := kindAndName(e.line); k == kind && n == name {
					like = append(like, e.id)
				}
			}
			switch len(like) {
			case 1:
				id = like[0]
			case 0:
				return "", fmt.Errorf("the element %q is not on the page (no element of the same kind and name)", line)
			default:
				return "", fmt.Errorf("the element %q is not on the page, and %d elements have its kind and name", line, len(like))
			}
		}
		pairs = append(pairs, strconv.Quote(old), strconv.Quote(id))
	}
	// Ids are replaced where they stand as JSON strings, all at once.
	return strings.NewReplacer(pairs...).Replace(c.Answer), nil
}

// Recording is the calls of one task: DIR/TASK.json.
type Recording []Call

func recordingPath(dir, task string) string { return filepath.Join(dir, task+".json") }

// ReadRecording reads a task's recording; ok is false when there is none.
func ReadRecording(dir, task string) (rec Recording, ok bool, err error) {
	b, err := os.ReadFile(recordingPath(dir, task))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, false, fmt.Errorf("%s: %w", recordingPath(dir, task), err)
	}
	return rec, true, nil
}

// Write writes the recording of a task to DIR/TASK.json.
func (r Recording) Write(dir, task string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(recordingPath(dir, task), append(b, '\n'), 0o644)
}

// openAIRequest is the part of a chat completion request a recording
// reads.
type openAIRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		JSONSchema *struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// prompt is the text of the request's messages, system prompt included.
func (r *openAIRequest) prompt() string {
	var b strings.Builder
	for _, m := range r.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			b.WriteString(s + "\n")
			continue
		}
		var parts []struct {
			Type, Text string
		}
		json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text + "\n")
			}
		}
	}
	return b.String()
}

// schemaKinds are the call kinds of the schemas the engine names.
var schemaKinds = map[string]string{
	"browser_actions": llm.KindPlan, "verdict": llm.KindVerify, "element": llm.KindLocate,
	"extracted_data": llm.KindExtract, "error_codes": llm.KindClassify, "validation": llm.KindVerify,
}

// kind is the request's call kind as far as its body tells: from the
// schema's name, else from the system prompt's opening words; "" when
// neither says.
func (r *openAIRequest) kind() string {
	if r.ResponseFormat != nil && r.ResponseFormat.JSONSchema != nil {
		if k, ok := schemaKinds[r.ResponseFormat.JSONSchema.Name]; ok {
			return k
		}
	}
	p := r.prompt()
	switch {
	case strings.HasPrefix(p, "You operate a web browser"):
		return llm.KindPlan
	case strings.HasPrefix(p, "You extract information"):
		return llm.KindExtract
	case strings.HasPrefix(p, "You check a web page"):
		return llm.KindVerify
	}
	return ""
}

// openAIAnswer is a chat completion answer with one message.
func openAIAnswer(model, content string) map[string]any {
	return map[string]any{
		"id": "replay", "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
	}
}

// Replayer is an OpenAI-compatible server that answers from recordings:
// the k-th call of a kind in a task gets the k-th recorded answer of that
// kind (or of no kind), its ids mapped to the new page. It reports no
// usage: the report estimates tokens from the prompts' size.
type Replayer struct {
	dir string
	srv *http.Server
	url string

	mu    sync.Mutex
	task  string
	calls Recording
	used  []bool
	n     int
	err   error
}

// NewReplayer serves the recordings of dir on a loopback port.
func NewReplayer(dir string) (*Replayer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Replayer{dir: dir, url: "http://" + l.Addr().String() + "/v1"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go r.srv.Serve(l)
	return r, nil
}

// Config is the model configuration that reaches the replayer.
func (r *Replayer) Config() llm.Config {
	no := false
	return llm.Config{Provider: llm.ProviderOpenAICompatible, BaseURL: r.url, Model: "replay", Vision: &no, MaxRetries: -1}
}

// Close stops the server.
func (r *Replayer) Close() error { return r.srv.Close() }

// Has says whether the task has a recording.
func (r *Replayer) Has(task string) (bool, error) {
	_, ok, err := ReadRecording(r.dir, task)
	return ok, err
}

// Begin loads the task's recording.
func (r *Replayer) Begin(task, site string) {
	rec, _, err := ReadRecording(r.dir, task)
	for i := range rec {
		rec[i].Answer = strings.ReplaceAll(rec[i].Answer, SiteToken, site)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.task, r.calls, r.used, r.n, r.err = task, rec, make([]bool, len(rec)), 0, err
}

// End returns the first error of the task's calls.
func (r *Replayer) End(task string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	r.task, r.calls, r.used, r.err = "", nil, nil, nil
	return err
}

func (r *Replayer) serve(w http.ResponseWriter, hr *http.Request) {
	if hr.Method != http.MethodPost || !strings.HasSuffix(hr.URL.Path, "/chat/completions") {
		http.Error(w, "the replay serves POST /v1/chat/completions only", http.StatusNotFound)
		return
	}
	var req openAIRequest
	if err := json.NewDecoder(io.LimitReader(hr.Body, 64<<20)).Decode(&req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	kind := hr.Header.Get(llm.KindHeader)
	if kind == "" {
		kind = req.kind()
	}
	answer, err := r.next(kind, req.prompt())
	if err != nil {
		writeOpenAIError(w, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(openAIAnswer("replay", answer))
}

// next is the answer to the task's next call of kind.
func (r *Replayer) next(kind, prompt string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	fail := func(format string, args ...any) (string, error) {
		err := fmt.Errorf("replay of task %q, call %d (%s): %s", r.task, r.n, orNone(kind), fmt.Sprintf(format, args...))
		if r.err == nil {
			r.err = err
		}
		return "", err
	}
	if r.task == "" {
		return fail("no task is running")
	}
	for i, c := range r.calls {
		if r.used[i] || (c.Kind != "" && kind != "" && c.Kind != kind) {
			continue
		}
		r.used[i] = true
		a, err := replayAnswer(c, prompt)
		if err != nil {
			return fail("%v", err)
		}
		return a, nil
	}
	return fail("the recording has no answer left for this call (%d recorded)", len(r.calls))
}

// writeOpenAIError answers 400 (which clients do not retry) with an
// OpenAI-style error.
func writeOpenAIError(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}

// Recorder is an OpenAI-compatible reverse proxy in front of the
// configured model that keeps, per task, each answer with the element
// lines its ids refer to, and writes DIR/TASK.json when the task ends.
type Recorder struct {
	dir      string
	upstream string // the model's base URL, without a trailing slash
	client   *http.Client
	srv      *http.Server
	url      string

	mu    sync.Mutex
	task  string
	site  string // the task's site origin, recorded as SiteToken
	calls Recording
}

// NewRecorder starts the proxy in front of the model of cfg (an OpenAI
// or OpenAI-compatible provider; completed with WithDefaults).
func NewRecorder(dir string, cfg llm.Config) (*Recorder, error) {
	if cfg.Provider == llm.ProviderAnthropic {
		return nil, errors.New("-record works with OpenAI-compatible providers (openai, ollama, openai-compatible), not anthropic")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Recorder{dir: dir, upstream: strings.TrimSuffix(cfg.BaseURL, "/"), client: &http.Client{}, url: "http://" + l.Addr().String() + "/v1"}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve)}
	go r.srv.Serve(l)
	return r, nil
}

// Config is cfg sent through the proxy.
func (r *Recorder) Config(cfg llm.Config) llm.Config {
	cfg.BaseURL = r.url
	return cfg
}

// Close stops the proxy.
func (r *Recorder) Close() error { return r.srv.Close() }

// Begin starts the task's recording.
func (r *Recorder) Begin(task, site string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.task, r.site, r.calls = task, site, nil
}

// End writes the task's recording.
func (r *Recorder) End(task string) error {
	r.mu.Lock()
	calls := r.calls
	r.task, r.calls = "", nil
	r.mu.Unlock()
	if calls == nil {
		calls = Recording{}
	}
	return calls.Write(r.dir, task)
}

func (r *Recorder) serve(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	up, err := http.NewRequestWithContext(hr.Context(), hr.Method, r.upstream+strings.TrimPrefix(hr.URL.Path, "/v1"), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	up.URL.RawQuery = hr.URL.RawQuery
	for k, v := range hr.Header {
		up.Header[k] = v
	}
	// The proxy reads the answer: let the transport ask for, and undo, any
	// compression.
	up.Header.Del("Accept-Encoding")
	resp, err := r.client.Do(up)
	if err != nil {
		http.Error(w, "the model: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, "the model: "+err.Error(), http.StatusBadGateway)
		return
	}
	if resp.StatusCode == http.StatusOK && strings.HasSuffix(hr.URL.Path, "/chat/completions") {
		r.keep(hr.Header.Get(llm.KindHeader), body, answer)
	}
	for k, v := range resp.Header {
		if k != "Content-Length" && k != "Content-Encoding" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}

// keep records an answered call.
func (r *Recorder) keep(kind string, reqBody, respBody []byte) {
	var req openAIRequest
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(reqBody, &req) != nil || json.Unmarshal(respBody, &resp) != nil || len(resp.Choices) == 0 {
		return
	}
	if kind == "" {
		kind = req.kind()
	}
	c := recordCall(kind, req.prompt(), resp.Choices[0].Message.Content)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.site != "" {
		c.Answer = strings.ReplaceAll(c.Answer, r.site, SiteToken)
	}
	if r.task != "" {
		r.calls = append(r.calls, c)
	}
}

// handFile is a request file of a hand-played directory: NNNN.request.json.
var handFile = regexp.MustCompile(`^(\d+)\.request\.json$`)

// ConvertHand turns a directory the model-by-hand server wrote for one
// task (NNNN.request.json, the OpenAI request body, and NNNN.answer.txt,
// the answer the player wrote) into a recording, in the order of NNNN. A
// request without an answer ends it (the run stopped there).
func ConvertHand(handDir string) (Recording, error) {
	entries, err := os.ReadDir(handDir)
	if err != nil {
		return nil, err
	}
	type pair struct {
		n    int
		name string
	}
	var reqs []pair
	for _, e := range entries {
		if m := handFile.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			reqs = append(reqs, pair{n, m[1]})
		}
	}
	if len(reqs) == 0 {
		return nil, fmt.Errorf("%s has no NNNN.request.json file", handDir)
	}
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].n < reqs[j].n })
	rec := Recording{}
	for _, p := range reqs {
		body, err := os.ReadFile(filepath.Join(handDir, p.name+".request.json"))
		if err != nil {
			return nil, err
		}
		answer, err := os.ReadFile(filepath.Join(handDir, p.name+".answer.txt"))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
		var req openAIRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("%s.request.json is not an OpenAI request: %w", p.name, err)
		}
		rec = append(rec, recordCall(req.kind(), req.prompt(), strings.TrimSpace(string(answer))))
	}
	return rec, nil
}
