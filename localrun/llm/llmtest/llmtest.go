// Package llmtest is a scripted language-model server for tests: a real HTTP
// server on loopback (httptest) that speaks OpenAI chat completions
// (POST /v1/chat/completions) and the Anthropic Messages API
// (POST /v1/messages), without streaming, so that the real clients of
// package llm, the agent loop and the daemon can be tested without any
// external service.
//
// # Scripts
//
// A script is a list of Steps. Each says which calls it answers (a call
// kind, a regular expression on the prompt) and with what Reply: a text, a
// JSON value, a function of the decoded request, an HTTP error, a reply
// that never comes, a broken body. Calls take steps in order, per kind: a
// call of kind K takes the first step not yet used up whose Kind is K or
// empty, so that calls of different kinds may interleave (a verification
// running beside the next plan) while each kind keeps its order. A call
// that its step does not accept, or that finds no step, fails the test
// with a message that shows both, and gets a 400 answer (which clients do
// not retry).
//
// The call kind travels in the X-Abctl-Call-Kind header (llm.KindHeader),
// which package llm sends with every request and real providers ignore.
//
// When the test ends, steps left unused fail it (unless AllowUnused was
// called); Wait blocks until the script is used up, and Done says whether
// it is.
//
// # Requests
//
// Every call is recorded, decoded (Request): the protocol, kind, model,
// system prompt, messages with their texts and images, the schema and how
// it was asked for, the token limit, the headers without the secrets. A
// step's Reply may be computed from it: ElementID finds, in the page
// observation of the prompt, the id of the element whose text or label is
// given ("the button Sign in"), so scripts survive changes of the id
// scheme.
//
// # Replies
//
// Answers carry usage numbers: those set with WithUsage, else an estimate
// (4 characters a token). With Anthropic, a JSON reply to a request that
// forces a tool is sent as that tool's input (wrapped as {"data": ...} when
// it is not an object), as the real API does; with OpenAI it is the message
// content.
package llmtest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/localrun/llm"
)

// Step is one expectation of a script.
type Step struct {
	// Kind is the call kind this step answers; "" answers any kind.
	Kind string
	// Match is a regular expression the prompt (system prompt and message
	// texts, see Request.Prompt) must match; "" matches any.
	Match string
	// Reply is the answer.
	Reply Reply
	// Times is how many calls the step answers (0 means 1); a negative
	// number answers every call from then on, and such a step never
	// counts as unused.
	Times int
}

type step struct {
	Step
	index int
	re    *regexp.Regexp
	used  int
}

func (st *step) left() bool { return st.Times < 0 || st.used < max(st.Times, 1) }

func (st *step) String() string {
	var parts []string
	if st.Kind != "" {
		parts = append(parts, "kind "+st.Kind)
	}
	if st.Match != "" {
		parts = append(parts, "prompt matching /"+st.Match+"/")
	}
	if len(parts) == 0 {
		parts = append(parts, "any call")
	}
	return fmt.Sprintf("step %d (%s)", st.index+1, strings.Join(parts, ", "))
}

// Server is a running scripted model server.
type Server struct {
	t   testing.TB
	srv *httptest.Server

	mu          sync.Mutex
	steps       []*step
	calls       []*Request
	received    int           // calls received, kept or not
	keep        int           // calls kept (0: all)
	changed     chan struct{} // closed and replaced on every call and Add
	allowUnused bool

	quit     chan struct{}
	quitOnce sync.Once
}

// New starts a server with the steps; it stops when the test ends.
func New(t testing.TB, steps ...Step) *Server {
	t.Helper()
	s := &Server{t: t, changed: make(chan struct{}), quit: make(chan struct{})}
	s.Add(steps...)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		pending := s.pendingLocked()
		allow := s.allowUnused
		s.mu.Unlock()
		if len(pending) > 0 && !allow && !t.Failed() {
			t.Errorf("llmtest: the script was not used up: %s", strings.Join(pending, "; "))
		}
	})
	return s
}

// Add appends steps to the script.
func (s *Server) Add(steps ...Step) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range steps {
		x := &step{Step: st, index: len(s.steps)}
		if st.Match != "" {
			re, err := regexp.Compile(st.Match)
			if err != nil {
				s.t.Fatalf("llmtest: step %d: bad Match: %v", x.index+1, err)
			}
			x.re = re
		}
		s.steps = append(s.steps, x)
	}
	s.notifyLocked()
}

// AllowUnused keeps steps left unused at the end of the test from failing
// it (for tests that stop a run midway on purpose).
func (s *Server) AllowUnused() {
	s.mu.Lock()
	s.allowUnused = true
	s.mu.Unlock()
}

// KeepCalls makes the server keep only the last n calls for Calls (n > 0),
// so that a benchmark's memory does not grow with its iterations.
func (s *Server) KeepCalls(n int) {
	s.mu.Lock()
	s.keep = n
	s.mu.Unlock()
}

// URL is the server's root, http://127.0.0.1:port: the base URL for the
// Anthropic protocol; OpenAI-compatible clients use URL()+"/v1".
func (s *Server) URL() string { return s.srv.URL }

// OpenAIConfig is an llm.Config for this server as an OpenAI-compatible
// provider, model "scripted".
func (s *Server) OpenAIConfig() llm.Config {
	return llm.Config{Provider: llm.ProviderOpenAICompatible, BaseURL: s.srv.URL + "/v1", Model: "scripted"}
}

// AnthropicConfig is an llm.Config for this server as the Anthropic
// provider, model "claude-scripted", key "test-key".
func (s *Server) AnthropicConfig() llm.Config {
	return llm.Config{Provider: llm.ProviderAnthropic, BaseURL: s.srv.URL, Model: "claude-scripted", APIKey: "test-key"}
}

// Calls returns the calls received so far, in order of arrival (the last
// ones only, after KeepCalls).
func (s *Server) Calls() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.calls...)
}

// Done reports whether every step has answered all its calls.
func (s *Server) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pendingLocked()) == 0
}

// Pending describes the steps not used up.
func (s *Server) Pending() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pendingLocked()
}

func (s *Server) pendingLocked() []string {
	var out []string
	for _, st := range s.steps {
		if st.Times >= 0 && st.left() {
			out = append(out, st.String())
		}
	}
	return out
}

// Wait blocks until the script is used up, or ctx ends (then the error
// names the steps still waiting). A step counts as used when its call
// arrives, so Wait also says that a Hang reply is being waited on.
func (s *Server) Wait(ctx context.Context) error {
	return s.waitFor(ctx, func() bool { return len(s.pendingLocked()) == 0 }, func() string {
		return "llmtest: script not used up: " + strings.Join(s.pendingLocked(), "; ")
	})
}

// WaitCalls blocks until at least n calls have arrived, or ctx ends.
func (s *Server) WaitCalls(ctx context.Context, n int) error {
	return s.waitFor(ctx, func() bool { return s.received >= n }, func() string {
		return fmt.Sprintf("llmtest: %d calls arrived, waiting for %d", s.received, n)
	})
}

func (s *Server) waitFor(ctx context.Context, ok func() bool, why func() string) error {
	for {
		s.mu.Lock()
		if ok() {
			s.mu.Unlock()
			return nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			s.mu.Lock()
			msg := why()
			s.mu.Unlock()
			return fmt.Errorf("%s: %w", msg, ctx.Err())
		}
	}
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Close stops the server, releasing Hang replies first. The test's
// cleanup calls it; calling it earlier simulates a server that went away.
func (s *Server) Close() {
	s.quitOnce.Do(func() { close(s.quit) })
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// serve decodes a call, finds its step and answers.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	var proto string
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		proto = ProtocolOpenAI
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		proto = ProtocolAnthropic
	default:
		s.t.Errorf("llmtest: unexpected %s %s (the server answers POST /v1/chat/completions and POST /v1/messages)", r.Method, r.URL.Path)
		http.Error(w, "llmtest: no such endpoint", http.StatusNotFound)
		return
	}
	req, status, err := decodeRequest(proto, r)
	if err != nil {
		// A malformed request is the client's bug: fail the test, and
		// answer as the provider would.
		s.t.Errorf("llmtest: %v", err)
		writeError(w, proto, status, "invalid_request_error", err.Error())
		return
	}

	s.mu.Lock()
	s.received++
	req.N = s.received
	req.Step = -1
	s.calls = append(s.calls, req)
	if s.keep > 0 && len(s.calls) > s.keep {
		s.calls = append(s.calls[:0], s.calls[len(s.calls)-s.keep:]...)
	}
	st := s.stepFor(req.Kind)
	var problem string
	switch {
	case st == nil:
		problem = fmt.Sprintf("no step left for call %d (kind %q)", req.N, req.Kind)
	case st.re != nil && !st.re.MatchString(req.Prompt()):
		problem = fmt.Sprintf("call %d (kind %q) does not match %s", req.N, req.Kind, st)
	default:
		st.used++
		req.Step = st.index
	}
	s.notifyLocked()
	s.mu.Unlock()

	if problem != "" {
		s.t.Errorf("llmtest: %s; its prompt begins: %q", problem, clip(req.Prompt(), 400))
		writeError(w, proto, http.StatusBadRequest, "invalid_request_error", "llmtest: "+problem)
		return
	}
	s.answer(w, r, req, st.Reply)
}

// stepFor is the first step with calls left whose kind fits.
func (s *Server) stepFor(kind string) *step {
	for _, st := range s.steps {
		if st.left() && (st.Kind == "" || st.Kind == kind) {
			return st
		}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// keyHash is how a sent key is remembered without keeping it.
func keyHash(key string) [32]byte { return sha256.Sum256([]byte("llmtest:" + key)) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in the protocol's error shape.
func writeError(w http.ResponseWriter, proto string, status int, typ, msg string) {
	if proto == ProtocolAnthropic {
		writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		return
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}
