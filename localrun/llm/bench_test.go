package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// benchRequest is a planning call of a realistic size: a system prompt, an
// observation of 120 elements (~7 KB), a schema.
func benchRequest() *llm.Request {
	var obs strings.Builder
	obs.WriteString("Page: Checkout\nURL: http://127.0.0.1/checkout\nInteractive elements:\n")
	for i := range 120 {
		fmt.Fprintf(&obs, "[e%d] input \"Field number %d\" placeholder=\"value %d\" required\n", i+1, i+1, i+1)
	}
	return &llm.Request{
		Kind:      llm.KindPlan,
		System:    strings.Repeat("You operate a web browser to reach the user's goal. ", 30),
		Messages:  []llm.Message{llm.UserText("Goal: fill in the form.\n\n" + obs.String())},
		Schema:    &llm.Schema{Name: "plan", JSON: json.RawMessage(planSchema)},
		MaxTokens: 1024,
	}
}

// BenchmarkCompleteOverhead measures one Complete against llmtest answering
// at once, beside the ceiling: a bare http.Post of the same body to the same
// server, reading the answer, in the same run, alternately. The difference
// is what the client adds per call: encoding, headers, decoding, the
// forgiving parse.
func BenchmarkCompleteOverhead(b *testing.B) {
	answer := llmtest.JSON(map[string]any{"reasoning": "fill the first field", "actions": []any{
		map[string]any{"type": "input_text", "id": "e1"}, map[string]any{"type": "click", "id": "e2"}}}).WithUsage(2000, 40)
	for _, proto := range []string{llmtest.ProtocolOpenAI, llmtest.ProtocolAnthropic} {
		b.Run(proto, func(b *testing.B) {
			srv := llmtest.New(b, llmtest.Step{Reply: answer, Times: -1})
			srv.KeepCalls(1)
			cfg, path, hdr := srv.OpenAIConfig(), "/v1/chat/completions", http.Header{}
			if proto == llmtest.ProtocolAnthropic {
				cfg, path = srv.AnthropicConfig(), "/v1/messages"
				hdr.Set("X-Api-Key", cfg.APIKey)
				hdr.Set("Anthropic-Version", llm.AnthropicVersion)
			}
			m, err := llm.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			req := benchRequest()
			ctx := context.Background()
			if _, err := m.Complete(ctx, req); err != nil {
				b.Fatal(err)
			}
			body := srv.Calls()[0].Body // exactly what the client sent
			url := srv.URL() + path
			bare := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
			post := func() error {
				hr, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				hr.Header = hdr.Clone()
				hr.Header.Set("Content-Type", "application/json")
				resp, err := bare.Do(hr)
				if err != nil {
					return err
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					return fmt.Errorf("status %d", resp.StatusCode)
				}
				return err
			}
			var tc, tb []float64
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				if _, err := m.Complete(ctx, req); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := post(); err != nil {
					b.Fatal(err)
				}
				tc = append(tc, float64(t1.Sub(t0).Nanoseconds())/1e3)
				tb = append(tb, float64(time.Since(t1).Nanoseconds())/1e3)
			}
			mc, mb := median(tc), median(tb)
			b.ReportMetric(mc, "client-µs")
			b.ReportMetric(mb, "bare-µs")
			b.ReportMetric(mc-mb, "overhead-µs")
			if mb > 0 {
				b.ReportMetric(mc/mb, "client/bare")
			}
			b.ReportMetric(float64(len(body)), "body-bytes")
		})
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
