package llmtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// spyTB is the test's own testing.TB that keeps the errors the server
// reports instead of failing, to test that it reports them.
type spyTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (s *spyTB) Errorf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors = append(s.errors, fmt.Sprintf(format, args...))
}

func (s *spyTB) reported() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.errors, "\n")
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func model(t *testing.T, srv *llmtest.Server, anthropic bool) llm.Model {
	t.Helper()
	cfg := srv.OpenAIConfig()
	if anthropic {
		cfg = srv.AnthropicConfig()
	}
	cfg.MaxRetries = -1
	m, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ask(ctx context.Context, m llm.Model, kind, text string) (*llm.Response, error) {
	return m.Complete(ctx, &llm.Request{Kind: kind, Messages: []llm.Message{llm.UserText(text)}})
}

func TestScriptOrderPerKind(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Step{Kind: "plan", Reply: llmtest.Text("plan 1")},
		llmtest.Step{Kind: "plan", Reply: llmtest.Text("plan 2")},
		llmtest.Step{Kind: "verify", Reply: llmtest.Text("verified")},
		llmtest.Step{Reply: llmtest.Text("anything"), Times: 2},
	)
	m := model(t, srv, false)
	ctx := ctxFor(t)
	// verify comes before the plans it follows in the script: kinds are
	// separate queues.
	var got []string
	for _, kind := range []string{"verify", "plan", "plan", "extract", "plan"} {
		resp, err := ask(ctx, m, kind, "x")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		got = append(got, resp.Text)
	}
	if want := "verified|plan 1|plan 2|anything|anything"; strings.Join(got, "|") != want {
		t.Errorf("answers %s, want %s", strings.Join(got, "|"), want)
	}
	if !srv.Done() || len(srv.Pending()) != 0 {
		t.Errorf("pending %v", srv.Pending())
	}
	steps := []int{}
	for _, c := range srv.Calls() {
		steps = append(steps, c.Step)
	}
	if fmt.Sprint(steps) != "[2 0 1 3 3]" {
		t.Errorf("steps used %v", steps)
	}
}

func TestRepeatingStepNeverPending(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Kind: "plan", Reply: llmtest.Text("again"), Times: -1})
	m := model(t, srv, true)
	for range 3 {
		if resp, err := ask(ctxFor(t), m, "plan", "x"); err != nil || resp.Text != "again" {
			t.Fatalf("%v %v", resp, err)
		}
	}
	if !srv.Done() {
		t.Errorf("pending %v", srv.Pending())
	}
}

func TestUnexpectedCalls(t *testing.T) {
	t.Run("prompt does not match", func(t *testing.T) {
		spy := &spyTB{TB: t}
		srv := llmtest.New(spy, llmtest.Step{Kind: "plan", Match: `Sign in`, Reply: llmtest.Text("x")})
		srv.AllowUnused()
		_, err := ask(ctxFor(t), model(t, srv, false), "plan", "the checkout page")
		var e *llm.Error
		if !errors.As(err, &e) || e.StatusCode != 400 {
			t.Fatalf("error %v, want a 400", err)
		}
		rep := spy.reported()
		for _, want := range []string{"call 1", `kind "plan"`, "step 1", "/Sign in/", "the checkout page"} {
			if !strings.Contains(rep, want) {
				t.Errorf("report %q lacks %q", rep, want)
			}
		}
	})
	t.Run("no step left", func(t *testing.T) {
		spy := &spyTB{TB: t}
		srv := llmtest.New(spy, llmtest.Step{Kind: "plan", Reply: llmtest.Text("x")})
		_, err := ask(ctxFor(t), model(t, srv, true), "extract", "data")
		if err == nil || !strings.Contains(spy.reported(), `no step left for call 1 (kind "extract")`) {
			t.Fatalf("error %v, report %q", err, spy.reported())
		}
		srv.AllowUnused()
	})
	t.Run("unused steps fail the test at its end", func(t *testing.T) {
		spy := &spyTB{TB: t}
		t.Run("inner", func(t *testing.T) {
			spy.TB = t
			llmtest.New(spy, llmtest.Step{Kind: "verify", Reply: llmtest.Text("x")})
		})
		if !strings.Contains(spy.reported(), "not used up: step 1 (kind verify)") {
			t.Errorf("report %q", spy.reported())
		}
	})
	t.Run("reply function error", func(t *testing.T) {
		spy := &spyTB{TB: t}
		srv := llmtest.New(spy, llmtest.Step{Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
			id, err := r.ElementID("Sign in")
			return llmtest.Text(id), err
		})})
		_, err := ask(ctxFor(t), model(t, srv, false), "plan", "no elements here")
		if err == nil || !strings.Contains(spy.reported(), "reply function failed: no element lines") {
			t.Fatalf("error %v, report %q", err, spy.reported())
		}
	})
	t.Run("malformed request", func(t *testing.T) {
		spy := &spyTB{TB: t}
		srv := llmtest.New(spy)
		for _, c := range []struct{ path, body, want string }{
			{"/v1/chat/completions", `{"model": "m", "messages": [{"role": "user", "content": 3}]}`, "neither a string nor a list"},
			{"/v1/chat/completions", `{"model": "m", "messages": []}`, "no messages"},
			{"/v1/messages", `{"model": "m", "max_tokens": 0, "messages": [{"role": "user", "content": "x"}]}`, "no anthropic-version"},
		} {
			resp, err := http.Post(srv.URL()+c.path, "application/json", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 400 || !strings.Contains(spy.reported(), c.want) {
				t.Errorf("%s %s: status %d, report %q", c.path, c.body, resp.StatusCode, spy.reported())
			}
		}
		if len(srv.Calls()) != 0 {
			t.Errorf("malformed requests recorded as calls")
		}
	})
}

func TestHangIsReleasedByClose(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Hang()})
	m := model(t, srv, false)
	done := make(chan error, 1)
	go func() {
		_, err := ask(context.Background(), m, "plan", "x")
		done <- err
	}()
	if err := srv.WaitCalls(ctxFor(t), 1); err != nil {
		t.Fatal(err)
	}
	srv.Close() // what the test's cleanup does; must not wait for the client
	if err := <-done; err == nil {
		t.Fatal("a closed server answered")
	}
}

func TestWaitReportsPending(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Kind: "plan", Match: "a", Reply: llmtest.Text("x")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := srv.Wait(ctx)
	if err == nil || !strings.Contains(err.Error(), "step 1 (kind plan, prompt matching /a/)") {
		t.Fatalf("Wait: %v", err)
	}
	if err := srv.WaitCalls(ctx, 1); err == nil || !strings.Contains(err.Error(), "0 calls arrived, waiting for 1") {
		t.Fatalf("WaitCalls: %v", err)
	}
	if _, err := ask(ctxFor(t), model(t, srv, false), "plan", "a"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
}

func TestRepliesOnTheWire(t *testing.T) {
	// The bodies as a client other than package llm sees them.
	srv := llmtest.New(t,
		llmtest.Step{Reply: llmtest.JSON(map[string]int{"n": 1}).WithUsage(11, 2).WithModel("served-model")},
		llmtest.Step{Reply: llmtest.RateLimit("3")},
		llmtest.Step{Reply: llmtest.Status(529, "overloaded")},
	)
	post := func(path, body string, h ...string) (*http.Response, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL()+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %s", err, b)
		}
		return resp, v
	}
	_, v := post("/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	choice := v["choices"].([]any)[0].(map[string]any)
	if choice["message"].(map[string]any)["content"] != `{"n":1}` || choice["finish_reason"] != "stop" || v["model"] != "served-model" {
		t.Errorf("completion %v", v)
	}
	if u := v["usage"].(map[string]any); u["prompt_tokens"] != 11.0 || u["completion_tokens"] != 2.0 || u["total_tokens"] != 13.0 {
		t.Errorf("usage %v", u)
	}
	resp, v := post("/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || v["error"].(map[string]any)["type"] != "rate_limit_error" {
		t.Errorf("429: %d %v %v", resp.StatusCode, resp.Header, v)
	}
	resp, v = post("/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, "Anthropic-Version", "2023-06-01")
	if resp.StatusCode != 529 || v["type"] != "error" || v["error"].(map[string]any)["type"] != "overloaded_error" {
		t.Errorf("529: %d %v", resp.StatusCode, v)
	}
}

func TestRecordedRequest(t *testing.T) {
	img := []byte("\xff\xd8\xff\xe0 not really a jpeg")
	srv := llmtest.New(t, llmtest.Step{Kind: "extract", Match: `(?s)^Extract.*Total: 42`, Reply: llmtest.JSON(map[string]int{"total": 42})})
	cfg := srv.AnthropicConfig()
	m, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(ctxFor(t), &llm.Request{
		Kind: "extract", System: "Extract the total.", MaxTokens: 99,
		Messages: []llm.Message{llm.User(llm.Text("Total: 42"), llm.Image(img))},
		Schema:   &llm.Schema{Name: "total", JSON: json.RawMessage(`{"type":"object","properties":{"total":{"type":"number"}}}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Calls()[0]
	if c.N != 1 || c.Step != 0 || c.MaxTokens != 99 || c.SchemaName != "total" || c.ImageCount() != 1 || !bytes.Equal(c.Messages[0].Images[0], img) {
		t.Errorf("recorded %+v", c)
	}
	if c.LastUserText() != "Total: 42" || !strings.HasPrefix(c.Prompt(), "Extract the total.\n\nTotal: 42") {
		t.Errorf("texts %q / %q", c.LastUserText(), c.Prompt())
	}
	if c.SentKey("other") || !c.SentKey("test-key") || c.Header.Get("User-Agent") == "" {
		t.Errorf("key check or headers wrong: %v", c.Header)
	}
}
