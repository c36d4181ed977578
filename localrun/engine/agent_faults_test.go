package engine_test

// What a run does when the model misbehaves: an answer without JSON, an
// element id it made up, a 429 before the answer, no answer at all (the
// call's timeout, and a cancel while waiting), and no server at all.

import (
	"bufio"
	"context"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/llmtest"
)

// searchTask is a short task on the shop: search for socks, complete.
func searchTask(site *testsite.Site) *client.TaskRunRequest {
	return &client.TaskRunRequest{Prompt: "Search the shop for socks.", URL: site.URL(testsite.PageShopSearch)}
}

func searchScript() []llmtest.Step {
	return []llmtest.Step{
		plan("Search.", typeInto("Search the shop", "socks"), clickOn("Search")),
		decide(`results for "socks"`, "complete", "Searched for socks.", nil),
	}
}

func TestModelFaults(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)

	t.Run("an answer without JSON is asked again", func(t *testing.T) {
		srv := llmtest.New(t, append([]llmtest.Step{{Kind: llm.KindPlan, Reply: llmtest.Text("I think I should type socks in the box.")}},
			searchScript()...)...)
		e := modelEngine(t, srv, engine.Config{})
		j := taskJob(t, searchTask(site))
		res := e.Execute(t.Context(), j, &progress{})
		if res.Status != client.RunStatusCompleted {
			t.Fatalf("status %s: %s", res.Status, res.FailureReason)
		}
		steps := readSteps(t, j.Dir).Steps
		if len(steps) != 3 || steps[0].Decision != "unusable answer" {
			t.Errorf("steps %+v", steps)
		}
		if p := callsOf(srv, llm.KindPlan); !strings.Contains(p[1].LastUserText(), "Your previous answer could not be used") {
			t.Errorf("the retry does not say why:\n%s", p[1].LastUserText())
		}
	})

	t.Run("answers without JSON three times fail the run", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Times: 3, Reply: llmtest.Text("no idea")})
		e := modelEngine(t, srv, engine.Config{})
		res := e.Execute(t.Context(), taskJob(t, searchTask(site)), &progress{})
		if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "could not be used 3 times in a row") {
			t.Errorf("%s: %s", res.Status, res.FailureReason)
		}
	})

	t.Run("a made-up element id fails that action only", func(t *testing.T) {
		made := llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.JSON(map[string]any{"thought": "Click it.",
			"actions": []any{map[string]string{"type": "click", "id": "e9999"}}})}
		srv := llmtest.New(t, made)
		retry := plan("Use the listed ids.", typeInto("Search the shop", "socks"), clickOn("Search"))
		retry.Match = `there is no element \[e9999\] on this page`
		srv.Add(retry, searchScript()[1])
		e := modelEngine(t, srv, engine.Config{})
		j := taskJob(t, searchTask(site))
		res := e.Execute(t.Context(), j, &progress{})
		if res.Status != client.RunStatusCompleted {
			t.Fatalf("status %s: %s", res.Status, res.FailureReason)
		}
		first := readSteps(t, j.Dir).Steps[0]
		if len(first.Actions) != 1 || first.Actions[0].OK || !strings.Contains(first.Actions[0].Result, "no element [e9999]") {
			t.Errorf("first step %+v", first)
		}
	})

	t.Run("a 429 is retried and the run goes on", func(t *testing.T) {
		srv := llmtest.New(t, append([]llmtest.Step{{Kind: llm.KindPlan, Reply: llmtest.RateLimit("1")}}, searchScript()...)...)
		e := modelEngine(t, srv, engine.Config{})
		j := taskJob(t, searchTask(site))
		res := e.Execute(t.Context(), j, &progress{})
		if res.Status != client.RunStatusCompleted {
			t.Fatalf("status %s: %s", res.Status, res.FailureReason)
		}
		if n := len(callsOf(srv, llm.KindPlan)); n != 3 {
			t.Errorf("%d plan requests, want 3 (a 429, its retry, the completion)", n)
		}
		if steps := readSteps(t, j.Dir).Steps; len(steps) != 2 || steps[0].Decision != "continue" {
			t.Errorf("steps %+v", steps)
		}
	})

	t.Run("a model that never answers times out", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.Hang()})
		cfg := srv.OpenAIConfig()
		cfg.Timeout, cfg.MaxRetries = 500*time.Millisecond, -1
		reg, err := llm.NewRegistry(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := modelEngine(t, srv, engine.Config{Models: reg})
		res := e.Execute(t.Context(), taskJob(t, searchTask(site)), &progress{})
		if res.Status != client.RunStatusFailed {
			t.Fatalf("status %s: %s", res.Status, res.FailureReason)
		}
		for _, want := range []string{"The language model could not be used", "no answer within 500ms", srv.URL() + "/v1/chat/completions"} {
			if !strings.Contains(res.FailureReason, want) {
				t.Errorf("reason %q lacks %q", res.FailureReason, want)
			}
		}
	})

	t.Run("a cancel while the model is thinking stops the run", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.Hang()})
		e := modelEngine(t, srv, engine.Config{})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan time.Time, 1)
		go func() {
			wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
			defer wcancel()
			if srv.WaitCalls(wctx, 1) == nil {
				done <- time.Now()
				cancel()
			}
		}()
		res := e.Execute(ctx, taskJob(t, searchTask(site)), &progress{})
		var at time.Time
		select {
		case at = <-done:
		default:
			t.Fatalf("the model was never called: %s %s", res.Status, res.FailureReason)
		}
		if d := time.Since(at); d > 2*time.Minute { // catches a hang only, however busy the machine
			t.Errorf("Execute returned %s after the cancel", d)
		}
		if res.Status != client.RunStatusFailed || res.FailureReason != "The run was stopped before it finished." {
			t.Errorf("%s %q", res.Status, res.FailureReason)
		}
		if len(res.Screenshots) == 0 {
			t.Error("the screenshot of the page was lost")
		}
	})

	t.Run("no model reachable fails the run, saying how to configure one", func(t *testing.T) {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		reg, err := llm.NewRegistry(llm.Config{Provider: llm.ProviderOllama, BaseURL: "http://" + addr + "/v1", MaxRetries: 1}, nil, llm.WithSleeper(noSleep))
		if err != nil {
			t.Fatal(err)
		}
		e := newEngine(t, engine.Config{Models: reg})
		res := e.Execute(t.Context(), taskJob(t, searchTask(site)), &progress{})
		if res.Status != client.RunStatusFailed {
			t.Fatalf("status %s", res.Status)
		}
		for _, want := range []string{"no model reachable at http://" + addr, "connection refused", llm.FlagProvider, llm.EnvModel} {
			if !strings.Contains(res.FailureReason, want) {
				t.Errorf("reason %q lacks %q", res.FailureReason, want)
			}
		}
	})
}

// TestNoModelConfigured: without a model, task runs and AI blocks fail
// before a browser opens, saying how to configure one.
func TestNoModelConfigured(t *testing.T) {
	e := newEngine(t, engine.Config{Chromium: "/nonexistent/chromium"})
	res := e.Execute(t.Context(), taskJob(t, &client.TaskRunRequest{Prompt: "find the price"}), &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, "no language model configured") ||
		!strings.Contains(res.FailureReason, llm.FlagProvider) {
		t.Errorf("task run: %s %q", res.Status, res.FailureReason)
	}
	def := client.WorkflowDefinition{Blocks: client.Blocks{&client.NavigationBlock{BlockBase: base("go"), NavigationGoal: "sign in"}}}
	res = e.Execute(t.Context(), job(t, def, nil), &progress{})
	if res.Status != client.RunStatusFailed || !strings.Contains(res.FailureReason, `block "go" (navigation) needs a language model`) {
		t.Errorf("agent run: %s %q", res.Status, res.FailureReason)
	}
}

// startOwnChromium starts a Chromium the engine reaches over CDP (as a
// remote browser), so that the test can kill it; it returns the DevTools
// address and a function that kills it.
func startOwnChromium(t *testing.T) (string, func()) {
	t.Helper()
	chromium, err := browser.FindChromium("")
	if err != nil {
		t.Skipf("skipped: Chromium is missing: %v", err)
	}
	profile := t.TempDir()
	cmd := exec.Command(chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir="+profile, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	kill := sync.OnceFunc(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	t.Cleanup(kill)
	addr := make(chan string, 1)
	go func() {
		listening := regexp.MustCompile(`DevTools listening on ws://([^/\s]+)/`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- "http://" + m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case a := <-addr:
		return a, kill
	case <-time.After(2 * time.Minute): // catches a hang only
		t.Fatal("the browser printed no DevTools address")
	}
	return "", nil
}

// TestBrowserGoneFailsTheRun: the browser dies while the model decides;
// the run fails at once, saying that its browser went away.
func TestBrowserGoneFailsTheRun(t *testing.T) {
	site := testsite.Start(t)
	addr, kill := startOwnChromium(t)
	srv := llmtest.New(t, llmtest.Step{Kind: llm.KindPlan, Reply: llmtest.Func(func(r *llmtest.Request) (llmtest.Reply, error) {
		kill()
		return planReply("Search.", typeInto("Search the shop", "socks")), nil
	})})
	srv.AllowUnused()
	e := modelEngine(t, srv, engine.Config{BrowserAddress: addr})
	res := e.Execute(t.Context(), taskJob(t, searchTask(site)), &progress{})
	t.Logf("failure_reason: %s", res.FailureReason)
	if res.Status != client.RunStatusFailed || !strings.HasPrefix(res.FailureReason, "The run's browser went away: ") {
		t.Errorf("%s %q", res.Status, res.FailureReason)
	}
}
