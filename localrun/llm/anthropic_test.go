package llm_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

func TestAnthropicText(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Kind: llm.KindSummarize, Match: `(?s)Summarise.*three steps`, Reply: llmtest.Text("Signed in.").WithUsage(50, 3)})
	m, _ := newModel(t, srv.AnthropicConfig())
	resp, err := m.Complete(testCtx(t), &llm.Request{
		Kind:     llm.KindSummarize,
		System:   "Summarise what the agent did.",
		Messages: []llm.Message{llm.UserText("It took three steps.")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Signed in." || resp.Stop != "end_turn" || resp.Model != "claude-scripted" {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage != (llm.Usage{InputTokens: 50, OutputTokens: 3}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	call := srv.Calls()[0]
	if call.Protocol != llmtest.ProtocolAnthropic || call.Kind != llm.KindSummarize {
		t.Errorf("protocol %q kind %q", call.Protocol, call.Kind)
	}
	if !call.SentKey("test-key") || call.Header.Get("X-Api-Key") != "" {
		t.Error("the key went another way than x-api-key, or was recorded")
	}
	if v := call.Header.Get("Anthropic-Version"); v != llm.AnthropicVersion {
		t.Errorf("anthropic-version %q", v)
	}
	if call.System != "Summarise what the agent did." || len(call.Messages) != 1 || call.Messages[0].Role != "user" {
		t.Errorf("system %q, messages %+v: the system prompt goes at the top level", call.System, call.Messages)
	}
	if call.MaxTokens != llm.DefaultMaxTokens || call.Temperature == nil || *call.Temperature != 0 {
		t.Errorf("max_tokens %d temperature %v", call.MaxTokens, call.Temperature)
	}
	if info := m.Info(); info.Endpoint != srv.URL()+"/v1/messages" || info.Capabilities.Schema != llm.SchemaTool || !info.Capabilities.Vision {
		t.Errorf("Info %+v", info)
	}
}

func TestAnthropicForcedTool(t *testing.T) {
	t.Run("object schema", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.JSON(map[string]any{"reasoning": "go", "actions": []any{}})})
		m, _ := newModel(t, srv.AnthropicConfig())
		resp, err := m.Complete(testCtx(t), &llm.Request{Kind: llm.KindPlan, System: "Plan.", Messages: []llm.Message{llm.UserText("page")},
			Schema: &llm.Schema{Name: "plan", Description: "The next actions.", JSON: json.RawMessage(planSchema)}})
		if err != nil {
			t.Fatal(err)
		}
		if canon(t, resp.JSON) != `{"actions":[],"reasoning":"go"}` || resp.Stop != "tool_use" {
			t.Errorf("JSON %s stop %q", resp.JSON, resp.Stop)
		}
		call := srv.Calls()[0]
		if call.SchemaMode != "tool" || call.SchemaName != "plan" || string(call.Schema) != planSchema {
			t.Errorf("tool %q %q schema %s", call.SchemaMode, call.SchemaName, call.Schema)
		}
		if call.System != "Plan." {
			t.Errorf("system %q: with a forced tool the schema need not be in the prompt", call.System)
		}
	})
	t.Run("array schema travels wrapped", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.JSON([]string{"a", "b"})})
		m, _ := newModel(t, srv.AnthropicConfig())
		resp, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("list")},
			Schema: &llm.Schema{Name: "list", JSON: json.RawMessage(`{"type":"array","items":{"type":"string"}}`)}})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.JSON) != `["a","b"]` {
			t.Errorf("JSON %s", resp.JSON)
		}
		if !strings.HasPrefix(string(srv.Calls()[0].Schema), `{"type":"object","properties":{"data":`) {
			t.Errorf("input_schema %s", srv.Calls()[0].Schema)
		}
	})
	t.Run("text instead of the tool", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("```json\n{\"reasoning\": \"r\", \"actions\": []}\n```")})
		m, _ := newModel(t, srv.AnthropicConfig())
		resp, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("page")}, Schema: &llm.Schema{JSON: json.RawMessage(planSchema)}})
		if err != nil {
			t.Fatal(err)
		}
		if canon(t, resp.JSON) != `{"actions":[],"reasoning":"r"}` || !resp.Repaired {
			t.Errorf("JSON %s repaired %v", resp.JSON, resp.Repaired)
		}
	})
	t.Run("prompt mode", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text(`{"reasoning": "r", "actions": []}`)})
		cfg := srv.AnthropicConfig()
		cfg.Schema = llm.SchemaPrompt
		m, _ := newModel(t, cfg)
		if _, err := m.Complete(testCtx(t), &llm.Request{System: "Plan.", Messages: []llm.Message{llm.UserText("page")}, Schema: &llm.Schema{JSON: json.RawMessage(planSchema)}}); err != nil {
			t.Fatal(err)
		}
		call := srv.Calls()[0]
		if call.SchemaMode != "" || !strings.Contains(call.System, planSchema) {
			t.Errorf("mode %q, system %q", call.SchemaMode, call.System)
		}
	})
}

func TestAnthropicImages(t *testing.T) {
	img := jpegBytes(t)
	for _, vision := range []bool{true, false} {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("a form")})
		cfg := srv.AnthropicConfig()
		if !vision {
			cfg.Vision = boolp(false)
		}
		m, _ := newModel(t, cfg)
		if _, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.User(llm.Text("What is it?"), llm.Image(img))}}); err != nil {
			t.Fatal(err)
		}
		call := srv.Calls()[0]
		want := 0
		if vision {
			want = 1
		}
		if call.ImageCount() != want || call.Messages[0].Text != "What is it?" {
			t.Errorf("vision %v: %d images and text %q", vision, call.ImageCount(), call.Messages[0].Text)
		}
	}
}

func TestAnthropicErrorHasNoKey(t *testing.T) {
	const key = "sk-ant-secret-0123456789"
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Status(http.StatusUnauthorized, "invalid x-api-key "+key)})
	cfg := srv.AnthropicConfig()
	cfg.APIKey = key
	m, _ := newModel(t, cfg)
	_, err := m.Complete(testCtx(t), &llm.Request{Kind: llm.KindPlan, Messages: []llm.Message{llm.UserText("hi")}})
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want *llm.Error", err)
	}
	if e.StatusCode != 401 || e.Type != "authentication_error" || e.Kind != llm.KindPlan || e.Endpoint != srv.URL()+"/v1/messages" {
		t.Errorf("error fields %+v", e)
	}
	msg := err.Error()
	if strings.Contains(msg, key) || !strings.Contains(msg, "[api key]") {
		t.Errorf("error %q shows the key, or does not show that it was removed", msg)
	}
	for _, want := range []string{"401 Unauthorized", "authentication_error", "Check the API key", llm.EnvAnthropicKey} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if len(srv.Calls()) != 1 {
		t.Errorf("%d calls: a 401 is not retried", len(srv.Calls()))
	}
}
