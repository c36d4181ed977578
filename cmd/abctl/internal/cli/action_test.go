package cli

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// formSite is a page with a form, served on loopback, that records what
// was submitted.
type formSite struct {
	url string

	mu        sync.Mutex
	submitted []url.Values
}

const formPage = `<!doctype html><title>Contact</title>
<form method="post" action="/submit">
  <input id="name" name="name">
  <input id="email" name="email">
  <select id="topic" name="topic"><option value="">-</option><option value="sales">Sales</option><option value="help">Help</option></select>
  <button id="send" type="submit">Send</button>
</form>`

func newFormSite(t *testing.T) *formSite {
	t.Helper()
	s := &formSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /form.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, formPage)
	})
	mux.HandleFunc("POST /submit", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.submitted = append(s.submitted, r.PostForm)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Thanks</title><p id="thanks">Thanks</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *formSite) forms() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.submitted...)
}

// newBrowserCLIEnv is newCLIEnv with the local browser engine for single
// actions; it skips the test when Chromium is missing.
func newBrowserCLIEnv(t *testing.T) *cliEnv {
	t.Helper()
	path, err := browser.FindChromium("")
	if err != nil {
		t.Skipf("skipped: Chromium is missing (apt-get install chromium): %v", err)
	}
	eng, err := engine.New(t.Context(), engine.Config{Chromium: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	exec := &scripted.Executor{}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: exec, Actions: eng})
	home := t.TempDir()
	e := &cliEnv{
		t: t, baseURL: "http://" + addr, exec: exec, dir: t.TempDir(),
		vars: map[string]string{
			"HOME":             home,
			"ABCTL_CONFIG_DIR": filepath.Join(home, "config"),
			"ABCTL_BASE_URL":   "http://" + addr,
			"ABCTL_API_KEY":    testKey,
			"ABCTL_EMBED":      "false",
		},
	}
	if e.client, err = client.New(client.WithBaseURL(e.baseURL), client.WithAPIKey(testKey)); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestActionContinuesOnTheRunsPage: the form `abctl action --help`
// documents: a first action opens --url in a new run (-o id prints it), and
// the next ones name the run with --run and no --url, acting on the page as
// the earlier ones left it (the fields keep their text, the form is sent
// with all of it), each with the action type of its subcommand.
func TestActionContinuesOnTheRunsPage(t *testing.T) {
	e := newBrowserCLIEnv(t)
	site := newFormSite(t)

	r := e.run("", "action", "input-text", "--url", site.url+"/form.html", "--selector", "#name", "--value", "Ada", "-o", "id").expect(t, 0)
	run := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(run, "wr_") {
		t.Fatalf("-o id printed %q", r.stdout)
	}
	r = e.run("", "action", "input-text", "--run", run, "--selector", "#email", "--value", "ada@example.com").expect(t, 0)
	contains(t, "input-text's output", r.stdout, `"workflow_run_id": "`+run+`"`, `"result": "ada@example.com"`)
	r = e.run("", "action", "select-option", "--run", "run/"+run, "--selector", "#topic", "--value", "Help").expect(t, 0)
	contains(t, "select-option's output", r.stdout, `"result": "Help"`)
	e.run("", "action", "click", "--run", run, "--selector", "#send", "-o", "id").expect(t, 0)

	forms := site.forms()
	if len(forms) != 1 {
		t.Fatalf("the site received %d forms, want 1: %v", len(forms), forms)
	}
	if f := forms[0]; f.Get("name") != "Ada" || f.Get("email") != "ada@example.com" || f.Get("topic") != "help" {
		t.Errorf("the site received %v, want name=Ada, email=ada@example.com, topic=help", f)
	}

	// A new run still needs a page to open: said before anything is sent.
	r = e.run("", "action", "click", "--selector", "#send").expect(t, ExitUsage)
	contains(t, "stderr", r.stderr, "--url")
}
