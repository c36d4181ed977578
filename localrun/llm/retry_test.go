package llm_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

var hello = &llm.Request{Kind: llm.KindPlan, Messages: []llm.Message{llm.UserText("hello")}}

func TestRetryHonoursRetryAfter(t *testing.T) {
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name     string
		reply    llmtest.Reply
		min, max time.Duration
	}{
		{"seconds", llmtest.RateLimit("7"), 7 * time.Second, 7 * time.Second},
		{"milliseconds first", llmtest.RateLimit("9").WithHeader("Retry-After-Ms", "250"), 250 * time.Millisecond, 250 * time.Millisecond},
		{"http date", llmtest.RateLimit(date), 25 * time.Second, 30 * time.Second},
		{"on a 503 too", llmtest.Status(503, "overloaded").WithHeader("Retry-After", "2"), 2 * time.Second, 2 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Step{Reply: c.reply}, llmtest.Step{Reply: llmtest.Text("done")})
			m, sl := newModel(t, srv.OpenAIConfig())
			resp, err := m.Complete(testCtx(t), hello)
			if err != nil {
				t.Fatal(err)
			}
			waits := sl.got()
			if resp.Text != "done" || resp.Attempts != 2 || len(waits) != 1 {
				t.Fatalf("text %q after %d attempts and waits %v", resp.Text, resp.Attempts, waits)
			}
			if waits[0] < c.min || waits[0] > c.max {
				t.Errorf("waited %v, want %v..%v", waits[0], c.min, c.max)
			}
		})
	}
}

func TestRetryBacksOffWithoutRetryAfter(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Step{Reply: llmtest.Status(500, "boom")},
		llmtest.Step{Reply: llmtest.Status(502, "bad gateway")},
		llmtest.Step{Reply: llmtest.Drop()},
		llmtest.Step{Reply: llmtest.Text("ok")},
	)
	m, sl := newModel(t, srv.OpenAIConfig())
	resp, err := m.Complete(testCtx(t), hello)
	if err != nil {
		t.Fatal(err)
	}
	waits := sl.got()
	if resp.Attempts != 4 || len(waits) != 3 {
		t.Fatalf("%d attempts, waits %v", resp.Attempts, waits)
	}
	// 0.5 s doubling, less up to a quarter of jitter.
	for i, base := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second} {
		if waits[i] > base || waits[i] < base*3/4 {
			t.Errorf("wait %d = %v, want %v..%v", i, waits[i], base*3/4, base)
		}
	}
}

func TestRetryGivesUp(t *testing.T) {
	t.Run("5xx every time", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Status(502, "upstream down"), Times: 3})
		cfg := srv.OpenAIConfig()
		cfg.MaxRetries = 2
		m, sl := newModel(t, cfg)
		_, err := m.Complete(testCtx(t), hello)
		var e *llm.Error
		if !errors.As(err, &e) || e.StatusCode != 502 || e.Attempts != 3 || len(sl.got()) != 2 {
			t.Fatalf("error %v (%+v), waits %v", err, e, sl.got())
		}
		if errors.Is(err, llm.ErrUnreachable) || errors.Is(err, llm.ErrRateLimited) {
			t.Error("a 502 is neither unreachable nor rate limited")
		}
		for _, want := range []string{srv.URL() + "/v1/chat/completions", "502 Bad Gateway", "upstream down", "[3 attempts]", `"scripted"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
	})
	t.Run("no retries when told so", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Status(500, "boom")})
		cfg := srv.OpenAIConfig()
		cfg.MaxRetries = -1
		m, _ := newModel(t, cfg)
		if _, err := m.Complete(testCtx(t), hello); err == nil || len(srv.Calls()) != 1 {
			t.Fatalf("error %v after %d calls", err, len(srv.Calls()))
		}
	})
	for _, c := range []struct {
		name, want string
		reply      llmtest.Reply
	}{
		{"400 is final", "400 Bad Request", llmtest.Status(400, "messages: bad role")},
		{"exhausted quota is final", "quota", llmtest.Status(429, "You exceeded your current quota, please check your plan and billing details.")},
		{"server says no retry", "500", llmtest.Status(500, "poisoned request").WithHeader("X-Should-Retry", "false")},
		{"Retry-After too long", "asked to retry after 1h0m0s", llmtest.RateLimit("3600")},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Step{Reply: c.reply})
			m, sl := newModel(t, srv.OpenAIConfig())
			_, err := m.Complete(testCtx(t), hello)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one with %q", err, c.want)
			}
			if len(srv.Calls()) != 1 || len(sl.got()) != 0 {
				t.Errorf("%d calls and waits %v, want one call and no wait", len(srv.Calls()), sl.got())
			}
		})
	}
	t.Run("rate limited to the end", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.RateLimit("1"), Times: 2})
		cfg := srv.OpenAIConfig()
		cfg.MaxRetries = 1
		m, _ := newModel(t, cfg)
		_, err := m.Complete(testCtx(t), hello)
		if !errors.Is(err, llm.ErrRateLimited) {
			t.Fatalf("error %v, want ErrRateLimited", err)
		}
	})
	t.Run("wait past the deadline", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Reply: llmtest.RateLimit("20")})
		m, sl := newModel(t, srv.OpenAIConfig())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := m.Complete(ctx, hello)
		if !errors.Is(err, llm.ErrRateLimited) || !strings.Contains(err.Error(), "deadline") || len(sl.got()) != 0 {
			t.Fatalf("error %v, waits %v: want the 429 at once, saying the deadline comes first", err, sl.got())
		}
	})
}

func TestTimeout(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Hang(), Times: 2})
	cfg := srv.OpenAIConfig()
	cfg.Timeout = 200 * time.Millisecond
	cfg.MaxRetries = 1
	m, sl := newModel(t, cfg)
	_, err := m.Complete(testCtx(t), hello)
	if !errors.Is(err, llm.ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnreachable", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap the attempt's deadline", err)
	}
	for _, want := range []string{"no answer within 200ms", srv.URL() + "/v1/chat/completions", llm.EnvBaseURL, "[2 attempts]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if len(srv.Calls()) != 2 || len(sl.got()) != 1 {
		t.Errorf("%d calls, waits %v", len(srv.Calls()), sl.got())
	}
}

func TestCancelWhileWaitingForAnswer(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.Hang()})
	m, _ := newModel(t, srv.AnthropicConfig())
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		if srv.Wait(ctx) == nil { // the call has arrived
			cancel()
		}
	}()
	_, err := m.Complete(ctx, hello)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	var e *llm.Error
	if errors.As(err, &e) {
		t.Errorf("a canceled call is not a provider error: %v", err)
	}
	if !strings.Contains(err.Error(), "plan call") {
		t.Errorf("error %q does not name the call", err)
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.RateLimit("5")})
	ctx, cancel := context.WithCancel(testCtx(t))
	m, err := llm.New(srv.OpenAIConfig(), llm.WithSleeper(func(ctx context.Context, d time.Duration) error {
		cancel() // the run is canceled during the wait
		<-ctx.Done()
		return ctx.Err()
	}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(ctx, hello)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "429") {
		t.Fatalf("error %v, want context.Canceled that mentions the 429 it was waiting after", err)
	}
}

func TestUnreachableEndpoint(t *testing.T) {
	// A port that was just free: nothing listens there.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	cases := []struct {
		name string
		cfg  llm.Config
		want []string
	}{
		{"ollama", llm.Config{Provider: llm.ProviderOllama, BaseURL: "http://" + addr},
			[]string{"no model reachable at http://" + addr + "/v1/chat/completions", "connection refused", "ollama pull " + llm.DefaultOllamaModel}},
		{"anthropic", llm.Config{Provider: llm.ProviderAnthropic, BaseURL: "http://" + addr, APIKey: "sk-ant-unreachable"},
			[]string{"no model reachable at http://" + addr + "/v1/messages", "Check that the server runs"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.MaxRetries = 2
			m, sl := newModel(t, c.cfg)
			_, err := m.Complete(testCtx(t), hello)
			if !errors.Is(err, llm.ErrUnreachable) {
				t.Fatalf("error %v, want ErrUnreachable", err)
			}
			msg := err.Error()
			want := append(c.want, "[3 attempts]",
				llm.FlagProvider, llm.FlagBaseURL, llm.FlagModel, llm.FlagAPIKey,
				llm.EnvProvider, llm.EnvBaseURL, llm.EnvModel, llm.EnvAPIKey, llm.EnvOpenAIKey, llm.EnvAnthropicKey)
			for _, w := range want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "sk-ant-unreachable") {
				t.Error("the key is in the error")
			}
			if len(sl.got()) != 2 {
				t.Errorf("waits %v, want 2 (refused connections are retried)", sl.got())
			}
		})
	}
}

func TestWaitsAreContextAware(t *testing.T) {
	// The default sleeper: a Retry-After of 50 s ends with the context.
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.RateLimit("50")})
	m, err := llm.New(srv.OpenAIConfig())
	if err != nil {
		t.Fatal(err)
	}
	// No deadline: a deadline shorter than the wait would end the call
	// before it sleeps.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if srv.Wait(ctx) == nil {
			cancel()
		}
	}()
	_, err = m.Complete(ctx, hello)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if !slices.Equal(modes(srv.Calls()), []string{""}) {
		t.Errorf("calls %v", modes(srv.Calls()))
	}
}

func TestLogsHaveNoKey(t *testing.T) {
	const key = "sk-log-secret-42"
	srv := llmtest.New(t, llmtest.Step{Reply: llmtest.Status(503, "busy")}, llmtest.Step{Reply: llmtest.Text("ok").WithUsage(9, 1)})
	cfg := srv.OpenAIConfig()
	cfg.APIKey = key
	var logs strings.Builder
	var mu sync.Mutex
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug})
	m, err := llm.New(cfg, llm.WithLogger(slog.New(h)), llm.WithSleeper((&sleeper{}).sleep))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(testCtx(t), hello); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	for _, want := range []string{`level=WARN msg="llm retry" kind=plan`, "status=503", `level=DEBUG msg="llm call" kind=plan`, "input_tokens=9", "attempts=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, key) {
		t.Errorf("the key is in the logs:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
