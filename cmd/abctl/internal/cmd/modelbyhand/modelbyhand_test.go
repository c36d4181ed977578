package modelbyhand

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/handmodel"
)

func TestServesAndPrintsTheSettings(t *testing.T) {
	f, streams := cmdtest.NewFactory(t, nil)
	pr, pw := io.Pipe()
	f.IO.Out = pw
	dir := filepath.Join(t.TempDir(), "hand")
	cmd := NewCmdModelByHand(f, nil)
	cmd.SetArgs([]string{"--dir", dir, "--listen", "127.0.0.1:0", "--model", "player", "--vision", "--answer-timeout", "10m"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx); pw.Close() }()

	lines := bufio.NewScanner(pr)
	var out []string
	for len(out) < 6 && lines.Scan() {
		out = append(out, lines.Text())
	}
	if len(out) < 6 {
		cancel()
		t.Fatalf("printed %q, then ended: %v", out, <-done)
	}
	base := out[0]
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") || strings.HasSuffix(base, ":0/v1") {
		t.Fatalf("base URL %q", base)
	}
	want := []string{
		"ABCTL_LLM_PROVIDER=openai-compatible", "ABCTL_LLM_BASE_URL=" + base, "ABCTL_LLM_MODEL=player",
		"ABCTL_LLM_VISION=true", "ABCTL_LLM_TIMEOUT=11m0s",
	}
	if got := out[1:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("settings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The printed settings are what the engine reads; a call through them
	// gets the answer written in the directory.
	env := map[string]string{}
	for _, l := range out[1:] {
		k, v, _ := strings.Cut(l, "=")
		env[k] = v
	}
	cfg, err := llm.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) {
			if p, _ := handmodel.Pending(dir); len(p) == 1 {
				if err := handmodel.WriteAnswer(dir, p[0], "pong"); err != nil {
					t.Errorf("answering: %v", err)
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Errorf("no request waited in %s within a minute", dir)
	}()
	resp, err := m.Complete(ctx, &llm.Request{Kind: llm.KindPrompt, Messages: []llm.Message{llm.UserText("ping")}})
	if err != nil || resp.Text != "pong" {
		t.Errorf("call through the printed settings: %v %v", resp, err)
	}
	r, err := http.Get(base + "/models")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/models: %s", r.Status)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("after interruption: %v", err)
	}
	if logs := streams.ErrOut.String(); !strings.Contains(logs, "request waiting") || !strings.Contains(logs, "seq=1") || !strings.Contains(logs, "kind=prompt") {
		t.Errorf("stderr does not log the request:\n%s", logs)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", ""}, "--dir is empty"},
		{[]string{"--listen", "8080"}, "want host:port"},
		{[]string{"--listen", "127.0.0.1:99999"}, "from 0 to 65535"},
		{[]string{"--model", "two words"}, "without spaces"},
		{[]string{"--answer-timeout", "0s"}, "positive duration"},
		{[]string{"extra"}, "takes no arguments"},
	} {
		f, _ := cmdtest.NewFactory(t, nil)
		ran := false
		err := cmdtest.Exec(NewCmdModelByHand(f, func(context.Context, *ModelByHandOptions) error { ran = true; return nil }), tc.args...)
		if ran || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: ran %v, error %v, want a usage error with %q", tc.args, ran, err, tc.want)
		}
	}
	f, _ := cmdtest.NewFactory(t, nil)
	var got *ModelByHandOptions
	if err := cmdtest.Exec(NewCmdModelByHand(f, func(_ context.Context, o *ModelByHandOptions) error { got = o; return nil })); err != nil {
		t.Fatal(err)
	}
	if got.Dir != DefaultDir || got.Listen != "127.0.0.1:0" || got.Model != "by-hand" || got.Vision || got.AnswerTimeout != 30*time.Minute {
		t.Errorf("defaults %+v", got)
	}
}
