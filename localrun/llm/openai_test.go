package llm_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

func TestOpenAIText(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Match: `login page`, Reply: llmtest.Text("Sure.").WithUsage(120, 7)})
	cfg := srv.OpenAIConfig()
	cfg.APIKey = "sk-local-123"
	m, _ := newModel(t, cfg)

	resp, err := m.Complete(testCtx(t), &llm.Request{
		Kind:   llm.KindPlan,
		System: "You drive a browser.",
		Messages: []llm.Message{
			llm.UserText("Open the site."),
			llm.AssistantText("Opened."),
			llm.UserText("Now go to the login page."),
		},
		MaxTokens: 300,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Sure." || resp.JSON != nil {
		t.Errorf("Text %q JSON %s, want %q and no JSON", resp.Text, resp.JSON, "Sure.")
	}
	if resp.Usage != (llm.Usage{InputTokens: 120, OutputTokens: 7}) || resp.Usage.Total() != 127 {
		t.Errorf("Usage %+v, want 120 in, 7 out", resp.Usage)
	}
	if resp.Model != "scripted" || resp.Stop != "stop" || resp.Truncated || resp.Attempts != 1 || resp.Duration <= 0 {
		t.Errorf("response %+v", resp)
	}

	call := srv.Calls()[0]
	if call.Protocol != llmtest.ProtocolOpenAI || call.Kind != llm.KindPlan || call.Model != "scripted" {
		t.Errorf("call protocol %q kind %q model %q", call.Protocol, call.Kind, call.Model)
	}
	if call.System != "You drive a browser." {
		t.Errorf("system %q", call.System)
	}
	var roles []string
	for _, msg := range call.Messages {
		roles = append(roles, msg.Role+":"+msg.Text)
	}
	if got := strings.Join(roles, "|"); got != "user:Open the site.|assistant:Opened.|user:Now go to the login page." {
		t.Errorf("messages %s", got)
	}
	if call.Temperature == nil || *call.Temperature != 0 || call.MaxTokens != 300 {
		t.Errorf("temperature %v max_tokens %d, want 0 and 300", call.Temperature, call.MaxTokens)
	}
	if !call.SentKey("sk-local-123") || call.Header.Get("Authorization") != "" {
		t.Errorf("key sent %v; recorded Authorization %q (must be dropped)", call.SentKey("sk-local-123"), call.Header.Get("Authorization"))
	}
	if !bytes.Contains(call.Body, []byte(`"max_tokens":300`)) || bytes.Contains(call.Body, []byte("max_completion_tokens")) {
		t.Errorf("a server other than OpenAI gets max_tokens: %s", call.Body)
	}

	info := m.Info()
	if info.Provider != llm.ProviderOpenAICompatible || info.Endpoint != srv.URL()+"/v1/chat/completions" || info.Model != "scripted" {
		t.Errorf("Info %+v", info)
	}
}

func TestOpenAINoKeyNoAuthorization(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("ok")})
	m, _ := newModel(t, srv.OpenAIConfig())
	if _, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	call := srv.Calls()[0]
	if call.KeySent() || call.Kind != "" {
		t.Errorf("key sent %v, kind %q: want no key and no kind header", call.KeySent(), call.Kind)
	}
}

func TestOpenAIImagesByCapability(t *testing.T) {
	img := jpegBytes(t)
	cases := []struct {
		name   string
		model  string
		vision *bool
		want   int
	}{
		{"vision model by name", "qwen2.5vl:7b", nil, 1},
		{"text model by name", "llama3.1:8b", nil, 0},
		{"override on", "llama3.1:8b", boolp(true), 1},
		{"override off", "qwen2.5vl:7b", boolp(false), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("seen")})
			cfg := srv.OpenAIConfig()
			cfg.Model, cfg.Vision = c.model, c.vision
			m, _ := newModel(t, cfg)
			if m.Info().Capabilities.Vision != (c.want == 1) {
				t.Errorf("Capabilities.Vision = %v", m.Info().Capabilities.Vision)
			}
			_, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{
				llm.User(llm.Text("What is on the page?"), llm.Image(img)),
			}})
			if err != nil {
				t.Fatal(err)
			}
			call := srv.Calls()[0]
			if call.ImageCount() != c.want {
				t.Fatalf("%d images sent, want %d", call.ImageCount(), c.want)
			}
			if c.want == 1 && !bytes.Equal(call.Messages[0].Images[0], img) {
				t.Error("the image arrived changed")
			}
			if call.Messages[0].Text != "What is on the page?" {
				t.Errorf("text %q", call.Messages[0].Text)
			}
		})
	}
}

func TestImageOnlyMessageWithoutVision(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("ok")})
	cfg := srv.OpenAIConfig()
	cfg.Vision = boolp(false)
	m, _ := newModel(t, cfg)
	if _, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.User(llm.Image(jpegBytes(t)))}}); err != nil {
		t.Fatal(err)
	}
	if txt := srv.Calls()[0].Messages[0].Text; !strings.Contains(txt, "image was left out") {
		t.Errorf("an image-only message without vision became %q", txt)
	}
}

// planSchema meets OpenAI's strict rules; its properties are in a
// meaningful order (reasoning first).
const planSchema = `{"type":"object","properties":{"reasoning":{"type":"string"},"actions":{"type":"array","items":{"type":"object","properties":{"type":{"type":"string"},"id":{"type":["string","null"]}},"required":["type","id"],"additionalProperties":false}}},"required":["reasoning","actions"],"additionalProperties":false}`

func TestOpenAISchemaModes(t *testing.T) {
	answer := map[string]any{"reasoning": "click it", "actions": []any{map[string]any{"type": "click", "id": "e3"}}}
	wantJSON := `{"actions":[{"id":"e3","type":"click"}],"reasoning":"click it"}`
	loose := `{"type":"object","properties":{"title":{"type":"string"},"price":{"type":"number"}},"required":["title"]}`
	cases := []struct {
		name       string
		mode       llm.SchemaMode
		schema     string
		wantMode   string
		wantStrict bool
		inSystem   bool
	}{
		{"json_schema strict", "", planSchema, "json_schema", true, false},
		{"json_schema loose schema is not strict", "", loose, "json_schema", false, false},
		{"json_object", llm.SchemaJSONObject, planSchema, "json_object", false, true},
		{"prompt", llm.SchemaPrompt, planSchema, "", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Step{Kind: llm.KindExtract, Reply: llmtest.JSON(answer)})
			cfg := srv.OpenAIConfig()
			cfg.Schema = c.mode
			m, _ := newModel(t, cfg)
			resp, err := m.Complete(testCtx(t), &llm.Request{
				Kind:     llm.KindExtract,
				System:   "Extract.",
				Messages: []llm.Message{llm.UserText("page text")},
				Schema:   &llm.Schema{Name: "plan", JSON: json.RawMessage(c.schema)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if canon(t, resp.JSON) != wantJSON || resp.Repaired {
				t.Errorf("JSON %s (repaired %v), want %s", resp.JSON, resp.Repaired, wantJSON)
			}
			call := srv.Calls()[0]
			if call.SchemaMode != c.wantMode || call.Strict != c.wantStrict {
				t.Errorf("sent mode %q strict %v, want %q strict %v", call.SchemaMode, call.Strict, c.wantMode, c.wantStrict)
			}
			if c.wantMode == "json_schema" {
				if string(call.Schema) != c.schema || call.SchemaName != "plan" {
					t.Errorf("schema sent as %s (name %q), want it byte for byte: %s", call.Schema, call.SchemaName, c.schema)
				}
			}
			hasSchema := strings.Contains(call.System, c.schema)
			if hasSchema != c.inSystem || !strings.HasPrefix(call.System, "Extract.") {
				t.Errorf("system prompt %q: schema in it %v, want %v", call.System, hasSchema, c.inSystem)
			}
		})
	}
}

func TestSchemaWithArrayRootIsWrapped(t *testing.T) {
	schema := `{"type":"array","items":{"$ref":"#/$defs/name"},"$defs":{"name":{"type":"string"}}}`
	t.Run("json_schema", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.JSON(map[string]any{"data": []string{"Ada", "Grace"}})})
		m, _ := newModel(t, srv.OpenAIConfig())
		resp, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("names")},
			Schema: &llm.Schema{Name: "names", JSON: json.RawMessage(schema)}})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.JSON) != `["Ada","Grace"]` {
			t.Errorf("JSON %s, want the unwrapped array", resp.JSON)
		}
		want := `{"type":"object","properties":{"data":{"type":"array","items":{"$ref":"#/$defs/name"}}},"required":["data"],"additionalProperties":false,"$defs":{"name":{"type":"string"}}}`
		if got := string(srv.Calls()[0].Schema); got != want {
			t.Errorf("schema sent\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("prompt mode answered bare", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text(`["Ada"]`)})
		cfg := srv.OpenAIConfig()
		cfg.Schema = llm.SchemaPrompt
		m, _ := newModel(t, cfg)
		resp, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("names")},
			Schema: &llm.Schema{JSON: json.RawMessage(schema)}})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.JSON) != `["Ada"]` {
			t.Errorf("JSON %s", resp.JSON)
		}
	})
}

func TestSchemaErrors(t *testing.T) {
	srv := llmtest.New(t)
	m, _ := newModel(t, srv.OpenAIConfig())
	for _, s := range []string{`{"type":`, `42`, `"object"`} {
		_, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("x")},
			Schema: &llm.Schema{Name: "bad", JSON: json.RawMessage(s)}})
		if err == nil || !strings.Contains(err.Error(), `schema "bad"`) {
			t.Errorf("schema %s: error %v, want one naming the schema", s, err)
		}
	}
	if len(srv.Calls()) != 0 {
		t.Error("a bad schema reached the server")
	}
}

func TestBrokenAnswers(t *testing.T) {
	schema := &llm.Schema{Name: "plan", JSON: json.RawMessage(planSchema)}
	t.Run("fenced with trailing comma", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("Here:\n```json\n{\"reasoning\": \"x\", \"actions\": [],}\n```")})
		m, _ := newModel(t, srv.OpenAIConfig())
		resp, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("go")}, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.JSON) != `{"reasoning":"x","actions":[]}` || !resp.Repaired {
			t.Errorf("JSON %s repaired %v", resp.JSON, resp.Repaired)
		}
	})
	t.Run("cut off at the token limit", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text(`{"reasoning": "fill", "actions": [{"type": "click", "id": "e1"}, {"type": "input_text", "id": "e`).WithStop("length")})
		m, _ := newModel(t, srv.OpenAIConfig())
		resp, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("go")}, Schema: schema, MaxTokens: 20})
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated || resp.Stop != "length" {
			t.Errorf("Truncated %v Stop %q", resp.Truncated, resp.Stop)
		}
		if string(resp.JSON) != `{"reasoning":"fill","actions":[{"type":"click","id":"e1"}]}` {
			t.Errorf("JSON %s, want only the complete action", resp.JSON)
		}
	})
	t.Run("no JSON at all", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Text("I cannot do that.").WithUsage(10, 5)})
		m, _ := newModel(t, srv.OpenAIConfig())
		resp, err := m.Complete(testCtx(t), &llm.Request{Kind: llm.KindPlan, Messages: []llm.Message{llm.UserText("go")}, Schema: schema})
		if !errors.Is(err, llm.ErrNoJSON) {
			t.Fatalf("error %v, want ErrNoJSON", err)
		}
		if resp == nil || resp.Text != "I cannot do that." || resp.Usage.OutputTokens != 5 {
			t.Errorf("response with the error: %+v", resp)
		}
		if !strings.Contains(err.Error(), "plan answer") || !strings.Contains(err.Error(), `"scripted"`) {
			t.Errorf("error %q does not say which call", err)
		}
	})
	t.Run("malformed reply body", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.RawBody(200, `{"choices": [{"message": {"content": "x`)})
		m, _ := newModel(t, srv.OpenAIConfig())
		_, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("go")}})
		var e *llm.Error
		if !errors.As(err, &e) || e.StatusCode != 200 || !strings.Contains(e.Message, "unreadable reply") {
			t.Fatalf("error %v, want an *Error about an unreadable reply", err)
		}
	})
	t.Run("no choices", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.RawBody(200, `{"choices": []}`)})
		m, _ := newModel(t, srv.OpenAIConfig())
		_, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("go")}})
		if err == nil || !strings.Contains(err.Error(), "holds no answer") {
			t.Fatalf("error %v", err)
		}
	})
}

func TestSchemaModeFallsBack(t *testing.T) {
	reject := llmtest.Status(http.StatusBadRequest, "response_format json_schema is not supported by this server")
	t.Run("default mode weakens and stays weak", func(t *testing.T) {
		srv := llmtest.New(t,
			llmtest.Step{Reply: reject},
			llmtest.Step{Reply: llmtest.JSON(map[string]any{"reasoning": "r", "actions": []any{}}), Times: 2},
		)
		m, _ := newModel(t, srv.OpenAIConfig())
		req := &llm.Request{Messages: []llm.Message{llm.UserText("go")}, Schema: &llm.Schema{JSON: json.RawMessage(planSchema)}}
		for range 2 {
			if _, err := m.Complete(testCtx(t), req); err != nil {
				t.Fatal(err)
			}
		}
		calls := srv.Calls()
		if len(calls) != 3 || calls[0].SchemaMode != "json_schema" || calls[1].SchemaMode != "json_object" || calls[2].SchemaMode != "json_object" {
			t.Fatalf("modes sent: %v", modes(calls))
		}
		if got := m.Info().Capabilities.Schema; got != llm.SchemaJSONObject {
			t.Errorf("Info schema mode %q after the fallback", got)
		}
	})
	t.Run("configured mode is kept", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: reject})
		cfg := srv.OpenAIConfig()
		cfg.Schema = llm.SchemaJSONSchema
		m, _ := newModel(t, cfg)
		_, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("go")}, Schema: &llm.Schema{JSON: json.RawMessage(planSchema)}})
		var e *llm.Error
		if !errors.As(err, &e) || e.StatusCode != 400 || len(srv.Calls()) != 1 {
			t.Fatalf("error %v after %d calls, want the 400 after one", err, len(srv.Calls()))
		}
	})
}

func modes(calls []*llmtest.Request) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.SchemaMode)
	}
	return out
}

func TestOpenAIReasoningModels(t *testing.T) {
	for _, c := range []struct {
		model    string
		temp     bool
		wantMode string
	}{
		{"gpt-4.1", true, "json_schema"},
		{"o3-mini", false, "json_schema"},
		{"gpt-5-mini", false, "json_schema"},
		{"gpt-3.5-turbo", true, "json_object"},
	} {
		t.Run(c.model, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Step{Reply: llmtest.JSON(map[string]any{"reasoning": "r", "actions": []any{}})})
			m, _ := newModel(t, llm.Config{Provider: llm.ProviderOpenAI, BaseURL: srv.URL() + "/v1", APIKey: "sk-test", Model: c.model})
			_, err := m.Complete(testCtx(t), &llm.Request{Messages: []llm.Message{llm.UserText("go")}, MaxTokens: 50,
				Schema: &llm.Schema{JSON: json.RawMessage(planSchema)}})
			if err != nil {
				t.Fatal(err)
			}
			call := srv.Calls()[0]
			if (call.Temperature != nil) != c.temp {
				t.Errorf("temperature sent %v, want %v", call.Temperature != nil, c.temp)
			}
			if !bytes.Contains(call.Body, []byte(`"max_completion_tokens":50`)) {
				t.Errorf("OpenAI gets max_completion_tokens: %s", call.Body)
			}
			if call.SchemaMode != c.wantMode {
				t.Errorf("schema mode %q, want %q", call.SchemaMode, c.wantMode)
			}
		})
	}
}

// canon re-encodes JSON with sorted keys.
func canon(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
