package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor/scripted"
	"github.com/abctl/abctl/mcpserver"
)

const testKey = "abk_mcpserver_test_key"

// chromium is the browser the run_action tests drive.
const chromium = "/usr/bin/chromium"

// env is a real daemon (daemon.Run on loopback, a bbolt store in a
// temporary directory, the scripted executor for runs) and a Go client of
// it, through which the tests check what the tools did.
type env struct {
	addr  string
	c     *client.Client
	exec  *scripted.Executor
	hooks *hookReceiver
	site  *testSite // nil unless started with a browser
}

// startEnv starts the daemon; withBrowser also gives it the local browser
// engine for run_action (skipping the test when Chromium is missing).
func startEnv(t testing.TB, withBrowser bool) *env {
	t.Helper()
	e := &env{exec: &scripted.Executor{}, hooks: newHookReceiver(t)}
	cfg := daemon.Config{APIKey: testKey, Executor: e.exec, Workers: 2}
	if withBrowser {
		if _, err := exec.LookPath(chromium); err != nil {
			t.Skipf("skipped: Chromium is missing (%s); apt-get install chromium", chromium)
		}
		eng, err := engine.New(t.Context(), engine.Config{Chromium: chromium, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.Close() })
		cfg.Actions = eng
		e.site = newTestSite(t)
	}
	addr, _ := daemontest.Start(t, t.TempDir(), cfg)
	t.Cleanup(e.exec.ReleaseAll) // let blocked runs end before the daemon stops
	e.addr = addr
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	e.c = c
	return e
}

// stdioSession serves the tools over in-process pipes with ServeStdio and
// a client of the daemon over loopback HTTP, as `abctl mcp` does, and
// connects the SDK's client to them.
func (e *env) stdioSession(t testing.TB) *mcp.ClientSession {
	t.Helper()
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeStdio(ctx, e.c, serverIn, serverOut, mcpserver.Options{Poll: fastPoll})
		serverOut.Close()
	}()
	s := connect(t, &mcp.IOTransport{Reader: clientIn, Writer: clientOut})
	t.Cleanup(func() {
		s.Close()
		clientOut.Close() // the server reads EOF and returns
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio returned %v after its input ended, want nil", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return within 10 s of its input ending")
		}
		cancel()
	})
	return s
}

// httpSession connects the SDK's client to the daemon's /mcp with key.
func (e *env) httpSession(t testing.TB, key string) *mcp.ClientSession {
	t.Helper()
	return connect(t, &mcp.StreamableClientTransport{
		Endpoint:   "http://" + e.addr + "/mcp",
		HTTPClient: &http.Client{Transport: apiKeyTransport{key: key}},
		MaxRetries: -1,
	})
}

// fastPoll makes the waiting tools of the stdio face poll often; the
// daemon's own face uses the client's defaults.
var fastPoll = &client.WaitOptions{Interval: 20 * time.Millisecond, MaxInterval: 100 * time.Millisecond}

func connect(t testing.TB, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "1"}, nil)
	s, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// apiKeyTransport adds x-api-key, as an assistant's MCP configuration does.
type apiKeyTransport struct{ key string }

func (a apiKeyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if a.key != "" {
		r.Header.Set("X-Api-Key", a.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool that must succeed and decodes its structured content.
func call[Out any](t *testing.T, s *mcp.ClientSession, name string, args map[string]any) Out {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, text(res))
	}
	var out Out
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, b, err)
	}
	// Clients that read only text get the same JSON.
	if got := text(res); !json.Valid([]byte(got)) {
		t.Errorf("%s: text content is not the JSON of the result: %q", name, got)
	}
	return out
}

// callError calls a tool that must fail with a tool error (not a broken
// session) and returns the error's text.
func callError(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := s.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v, want a tool error", name, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v) succeeded with %s, want a tool error", name, args, text(res))
	}
	return text(res)
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// hookReceiver is a webhook receiver on loopback that keeps every delivery.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []delivery
}

type delivery struct {
	body      []byte
	signature string
}

func newHookReceiver(t testing.TB) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, delivery{body: b, signature: r.Header.Get("X-Skyvern-Signature")})
		h.mu.Unlock()
		w.Write([]byte("thanks"))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) url() string { return h.srv.URL + "/hook" }

func (h *hookReceiver) deliveries() []delivery {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]delivery(nil), h.got...)
}

// eventually polls cond every 20 ms for up to 15 s: for effects that land
// after the call that caused them (a webhook sent in the background).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen within 15 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// testSite is a web page on loopback with a link whose visits it counts.
type testSite struct {
	srv    *httptest.Server
	mu     sync.Mutex
	visits int
}

func newTestSite(t testing.TB) *testSite {
	s := &testSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Start</title><a id="go" href="/next">Next</a>`)
	})
	mux.HandleFunc("GET /next", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.visits++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Next</title><p id="done">Done</p>`)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *testSite) nextVisits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.visits
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// faces runs f once per face of the tools: over stdio (ServeStdio with a
// client of the daemon), and over the daemon's /mcp (streamable HTTP).
func faces(t *testing.T, withBrowser bool, f func(t *testing.T, e *env, s *mcp.ClientSession)) {
	t.Run("stdio", func(t *testing.T) {
		e := startEnv(t, withBrowser)
		f(t, e, e.stdioSession(t))
	})
	t.Run("streamable_http", func(t *testing.T) {
		e := startEnv(t, withBrowser)
		f(t, e, e.httpSession(t, testKey))
	})
}
