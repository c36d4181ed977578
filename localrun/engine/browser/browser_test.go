package browser

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// testPool is one warm browser shared by the tests of the package; nil when
// no Chromium is installed (the browser tests then skip).
var (
	testPool     *Pool
	testChromium string
	noChromium   error
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	testChromium, noChromium = FindChromium("")
	if noChromium == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		p, err := NewPool(ctx, Options{Logger: testLogger()})
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the test browser:", err)
			return 1
		}
		testPool = p
		defer p.Close()
	}
	return m.Run()
}

// testLogger shows warnings only (set ABCTL_TEST_DEBUG=1 for everything).
func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("ABCTL_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// needBrowser skips a test when no Chromium binary exists on this machine.
func needBrowser(tb testing.TB) *Pool {
	tb.Helper()
	if testPool == nil {
		tb.Skipf("no Chromium binary found, browser test skipped: %v", noChromium)
	}
	return testPool
}

// fileBody is the deterministic content of /file downloads.
func fileBody(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// newSite serves the test pages on 127.0.0.1.
func newSite(tb testing.TB) *httptest.Server {
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux.HandleFunc("/title", func(w http.ResponseWriter, r *http.Request) {
		page(w, r.URL.Query().Get("t"), "<p>hello</p>")
	})
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		page(w, "form", formBody)
	})
	mux.HandleFunc("/alert-on-load", func(w http.ResponseWriter, r *http.Request) {
		page(w, "alerted", `<script>alert('welcome'); document.title = 'after alert';</script>`)
	})
	mux.HandleFunc("/tabs", func(w http.ResponseWriter, r *http.Request) {
		page(w, "opener", `<a id="blank" href="/title?t=popup" target="_blank">new tab</a>
<button id="open" onclick="window.open('/title?t=opened', 'w2')">open</button>
<button id="alerting" onclick="window.open('/alert-on-load')">open alerting</button>`)
	})
	mux.HandleFunc("/downloads", func(w http.ResponseWriter, r *http.Request) {
		page(w, "downloads", `<a id="csv" href="/file?name=report.csv&size=1234">report</a>
<a id="big" href="/file?name=big.bin&size=300000">big</a>
<a id="evil" href="/file?name=..%2F..%2Fetc%2Fpasswd&size=10">evil</a>
<a id="blankdl" href="/file?name=popup.txt&size=99" target="_blank">popup download</a>`)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.Atoi(r.URL.Query().Get("size"))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", r.URL.Query().Get("name")))
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(fileBody(size))
	})
	// /stalled sends half of a file and then waits for the client to go:
	// a download that stays in progress.
	mux.HandleFunc("/stalled", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="stalled.bin"`)
		w.Header().Set("Content-Length", "200000")
		w.Write(fileBody(100000))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/beforeunload", func(w http.ResponseWriter, r *http.Request) {
		page(w, "leaving", `<input id="in"><script>addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = 'sure?'; });</script>`)
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv
}

func acquire(tb testing.TB, p *Pool, o ContextOptions) *Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := p.Acquire(ctx, o)
	if err != nil {
		tb.Fatalf("Acquire: %v", err)
	}
	tb.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// run runs actions on a tab with a timeout, so a hung page fails the test.
func run(tb testing.TB, tab context.Context, actions ...chromedp.Action[chromedp.Void]) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.Fatalf("chromedp: %v", err)
	}
}

func eval[T any](tb testing.TB, tab context.Context, expr string) T {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls cond for up to 15 s.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for i := 0; i < 750; i++ {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatalf("timed out waiting for %s", what)
}

func browserContexts(tb testing.TB, p *Pool) []cdp.BrowserContextID {
	tb.Helper()
	inst, err := p.acquireBrowser(context.Background(), "")
	if err != nil {
		tb.Fatal(err)
	}
	defer p.releaseBrowser(inst)
	res, err := cdp.Call(context.Background(), inst.b, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		tb.Fatal(err)
	}
	return res.BrowserContextIDs
}

func TestFindChromium(t *testing.T) {
	hint := func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, ErrNoChromium) {
			t.Fatalf("error %v does not wrap ErrNoChromium", err)
		}
		for _, want := range []string{"apt-get install chromium", EnvChromium, "--chromium"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	}
	t.Run("bad path", func(t *testing.T) {
		_, err := FindChromium(filepath.Join(t.TempDir(), "no-such-chromium"))
		hint(t, err)
	})
	t.Run("bad env", func(t *testing.T) {
		t.Setenv(EnvChromium, "/nonexistent/chromium")
		_, err := FindChromium("")
		hint(t, err)
		if !strings.Contains(err.Error(), EnvChromium+`="/nonexistent/chromium"`) {
			t.Errorf("error %q does not name the variable and its value", err)
		}
	})
	t.Run("empty PATH", func(t *testing.T) {
		t.Setenv(EnvChromium, "")
		t.Setenv("PATH", t.TempDir())
		_, err := FindChromium("")
		hint(t, err)
		if !strings.Contains(err.Error(), "chromium, chromium-browser, google-chrome, google-chrome-stable") {
			t.Errorf("error %q does not list the names tried", err)
		}
		if _, err := NewPool(context.Background(), Options{}); !errors.Is(err, ErrNoChromium) {
			t.Errorf("NewPool without Chromium: %v", err)
		}
	})
	t.Run("found on PATH and by env", func(t *testing.T) {
		dir := t.TempDir()
		fake := filepath.Join(dir, "chromium-browser")
		if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv(EnvChromium, "")
		t.Setenv("PATH", dir)
		if got, err := FindChromium(""); err != nil || got != fake {
			t.Fatalf("FindChromium = %q, %v; want %q", got, err, fake)
		}
		t.Setenv(EnvChromium, fake)
		t.Setenv("PATH", t.TempDir())
		if got, err := FindChromium(""); err != nil || got != fake {
			t.Fatalf("FindChromium with %s = %q, %v", EnvChromium, got, err)
		}
	})
}

func TestSanitizeFileName(t *testing.T) {
	for in, want := range map[string]string{
		"report.csv":                      "report.csv",
		"../../etc/passwd":                "passwd",
		`C:\dir\x.txt`:                    "x.txt",
		"..":                              "download",
		"":                                "download",
		".hidden":                         "hidden",
		"a\x00b\nc.txt":                   "a_b_c.txt",
		`what?<>.txt`:                     "what___.txt",
		"  spaced name.pdf ":              "spaced name.pdf",
		strings.Repeat("é", 150) + ".pdf": strings.Repeat("é", 98) + ".pdf",
	} {
		if got := sanitizeFileName(in); got != want {
			t.Errorf("sanitizeFileName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := fileExt("a.tar.gz"); got != ".tar.gz" {
		t.Errorf("fileExt = %q", got)
	}
}

func TestAcquireNavigate(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	s := acquire(t, p, ContextOptions{RunID: "nav"})
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/title?t=Hello"))
	if title := eval[string](t, s.Tab(), "document.title"); title != "Hello" {
		t.Fatalf("title = %q", title)
	}
	if dims := eval[string](t, s.Tab(), "innerWidth+'x'+innerHeight+'@'+devicePixelRatio"); dims != "1280x720@1" {
		t.Errorf("viewport = %s, want 1280x720@1", dims)
	}
	tabs, err := s.Tabs(context.Background())
	if err != nil || len(tabs) != 1 || !tabs[0].Active || tabs[0].Title != "Hello" {
		t.Fatalf("Tabs = %+v, %v", tabs, err)
	}
	if s.Err() != nil {
		t.Fatalf("Err = %v on a live session", s.Err())
	}
}

func TestContextsIsolated(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	a := acquire(t, p, ContextOptions{RunID: "a"})
	b := acquire(t, p, ContextOptions{RunID: "b"})
	run(t, a.Tab(), chromedp.Navigate(site.URL+"/title?t=a"))
	run(t, b.Tab(), chromedp.Navigate(site.URL+"/title?t=b"))
	eval[string](t, a.Tab(), "document.cookie = 'secret=1; path=/'; localStorage.setItem('k', 'v'); document.cookie")
	run(t, b.Tab(), chromedp.Reload())
	if c := eval[string](t, b.Tab(), "document.cookie"); c != "" {
		t.Errorf("session b sees cookie %q of session a", c)
	}
	if v := eval[bool](t, b.Tab(), "localStorage.getItem('k') === null"); !v {
		t.Errorf("session b sees the localStorage of session a")
	}
	if c := eval[string](t, a.Tab(), "document.cookie"); c != "secret=1" {
		t.Errorf("session a cookie = %q", c)
	}
}

func TestCloseDisposes(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	s := acquire(t, p, ContextOptions{RunID: "close"})
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/title?t=x"))
	id := cdp.BrowserContextID(s.ContextID())
	has := func() bool {
		for _, c := range browserContexts(t, p) {
			if c == id {
				return true
			}
		}
		return false
	}
	if !has() {
		t.Fatalf("context %s not listed while the session is open", id)
	}
	start := time.Now()
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("Close took %v", time.Since(start))
	if has() {
		t.Fatalf("context %s still listed after Close", id)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if !errors.Is(s.Err(), ErrContextClosed) {
		t.Fatalf("Err = %v", s.Err())
	}
	if _, err := chromedp.Run(s.Tab(), chromedp.Title()); err == nil {
		t.Fatal("the tab still works after Close")
	}
}

func TestTabs(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	s := acquire(t, p, ContextOptions{RunID: "tabs"})
	first := s.Tab()
	run(t, first, chromedp.Navigate(site.URL+"/tabs"))

	activeTitle := func(want string) context.Context {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var tab context.Context
		for i := 0; i < 300; i++ { // the new tab can also still be about:blank
			var err error
			if tab, err = s.ActiveTab(ctx); err != nil {
				t.Fatalf("ActiveTab: %v", err)
			}
			if tab != first || want == "opener" {
				ectx, ecancel := context.WithTimeout(tab, 5*time.Second)
				title, err := chromedp.Run(ectx, chromedp.Evaluate[string]("document.readyState === 'complete' ? document.title : ''"))
				ecancel()
				if err == nil && title == want {
					return tab
				}
				if i%50 == 0 {
					t.Logf("active tab: title %q err %v", title, err)
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("active tab never showed %q", want)
		return nil
	}

	// target=_blank
	run(t, first, chromedp.Click(chromedp.CSS("#blank")))
	popup := activeTitle("popup")
	if s.Tab() != popup {
		t.Fatal("Tab() is not the new tab")
	}
	// window.open
	eval[bool](t, first, "document.getElementById('open').click(), true")
	opened := activeTitle("opened")

	tabs, err := s.Tabs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, ti := range tabs {
		mark := ""
		if ti.Active {
			mark = "*"
		}
		titles = append(titles, fmt.Sprintf("%d:%s%s", ti.Index, ti.Title, mark))
	}
	if got := strings.Join(titles, " "); got != "0:opener 1:popup 2:opened*" {
		t.Fatalf("tabs = %s", got)
	}

	// SwitchTab back to the first tab: it is active and renders.
	if err := s.SwitchTab(context.Background(), tabs[0].ID); err != nil {
		t.Fatal(err)
	}
	if s.Tab() != first {
		t.Fatal("SwitchTab did not make the first tab active")
	}
	if v := eval[string](t, first, "document.visibilityState"); v != "visible" {
		t.Errorf("switched-to tab is %s", v)
	}
	if err := s.SwitchTab(context.Background(), "nope"); err == nil {
		t.Error("SwitchTab to an unknown tab worked")
	}

	// CloseTab the active one: the previous active tab (opened) comes back.
	if err := s.CloseTab(context.Background(), tabs[0].ID); err != nil {
		t.Fatal(err)
	}
	if s.Tab() != opened {
		t.Fatal("closing the active tab did not return to the previously active one")
	}
	if err := s.CloseTab(context.Background(), tabs[2].ID); err != nil {
		t.Fatal(err)
	}
	if s.Tab() != popup {
		t.Fatal("closing the active tab did not return to the popup")
	}
	if err := s.CloseTab(context.Background(), tabs[1].ID); err == nil {
		t.Fatal("closed the last tab")
	}
	tabs, _ = s.Tabs(context.Background())
	if len(tabs) != 1 || tabs[0].Title != "popup" || !tabs[0].Active {
		t.Fatalf("tabs after closes = %+v", tabs)
	}
	// NewTab opens a tab in the same browser context (same cookies).
	eval[string](t, popup, "document.cookie = 'tabs=1; path=/'")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	nt, err := s.NewTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Tab() != nt {
		t.Fatal("NewTab is not active")
	}
	run(t, nt, chromedp.Navigate(site.URL+"/title?t=new"))
	if c := eval[string](t, nt, "document.cookie"); c != "tabs=1" {
		t.Fatalf("new tab cookie = %q (not in the session's browser context)", c)
	}
	if err := s.CloseTab(ctx, string(chromedp.FromContext(nt).Target.TargetID)); err != nil {
		t.Fatal(err)
	}

	// The page closes its own window (the last one): a blank tab replaces it.
	eval[bool](t, popup, "setTimeout(() => window.close(), 10), true")
	waitFor(t, "a replacement tab", func() bool {
		tabs, err := s.Tabs(context.Background())
		return err == nil && len(tabs) == 1 && tabs[0].ID != string(chromedp.FromContext(popup).Target.TargetID)
	})
	if _, err := s.ActiveTab(context.Background()); err != nil {
		t.Fatal(err)
	}
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/title?t=again"))
}

func TestDialogs(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	s := acquire(t, p, ContextOptions{RunID: "dialogs", DialogPrompt: "Ada"})
	tab := s.Tab()
	run(t, tab, chromedp.Navigate(site.URL+"/title?t=d"))

	// Each call blocks in the page until the session answers the dialog.
	if v := eval[bool](t, tab, "alert('hello'), true"); !v {
		t.Fatal("alert")
	}
	if v := eval[bool](t, tab, "confirm('sure?')"); !v {
		t.Fatal("confirm was not accepted")
	}
	if v := eval[string](t, tab, "prompt('name?', 'x')"); v != "Ada" {
		t.Fatalf("prompt = %q", v)
	}
	if title := eval[string](t, tab, "document.title"); title != "d" {
		t.Fatalf("page after dialogs: %q", title)
	}
	got := s.Dialogs()
	want := []Dialog{
		{Type: "alert", Message: "hello", Accepted: true},
		{Type: "confirm", Message: "sure?", Accepted: true},
		{Type: "prompt", Message: "name?", Answer: "Ada", Accepted: true},
	}
	if len(got) != len(want) {
		t.Fatalf("Dialogs = %+v", got)
	}
	for i := range want {
		g := got[i]
		if g.Type != want[i].Type || g.Message != want[i].Message || g.Answer != want[i].Answer || g.Accepted != want[i].Accepted || g.At.IsZero() || !strings.HasPrefix(g.URL, site.URL) {
			t.Errorf("dialog %d = %+v, want %+v", i, g, want[i])
		}
	}
	if d := s.Dialogs(); len(d) != 0 {
		t.Fatalf("Dialogs not drained: %+v", d)
	}

	// A popup that alerts while it loads (before the session is attached to
	// it) is answered too, and becomes the active tab.
	run(t, tab, chromedp.Navigate(site.URL+"/tabs"))
	eval[bool](t, tab, "document.getElementById('alerting').click(), true")
	waitFor(t, "the alerting popup", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		popup, err := s.ActiveTab(ctx)
		if err != nil || popup == tab {
			return false
		}
		ectx, ecancel := context.WithTimeout(popup, 5*time.Second)
		defer ecancel()
		title, err := chromedp.Run(ectx, chromedp.Evaluate[string]("document.title"))
		return err == nil && title == "after alert"
	})
	if d := s.Dialogs(); len(d) != 1 || d[0].Type != "alert" || d[0].Message != "welcome" || !d[0].Accepted {
		t.Fatalf("popup dialogs = %+v", d)
	}

	// Without DialogPrompt, prompts are dismissed.
	s2 := acquire(t, p, ContextOptions{RunID: "dialogs2"})
	run(t, s2.Tab(), chromedp.Navigate(site.URL+"/title?t=d2"))
	if v := eval[bool](t, s2.Tab(), "prompt('name?') === null"); !v {
		t.Fatal("prompt was not dismissed")
	}
	if d := s2.Dialogs(); len(d) != 1 || d[0].Accepted || d[0].Type != "prompt" {
		t.Fatalf("Dialogs = %+v", d)
	}
	// An armed answer is given to the next prompt only.
	s2.AnswerNextPrompt("Grace")
	if v := eval[string](t, s2.Tab(), "String(prompt('name?')) + '/' + String(prompt('again?'))"); v != "Grace/null" {
		t.Fatalf("prompts after AnswerNextPrompt = %q", v)
	}
	if d := s2.Dialogs(); len(d) != 2 || !d[0].Accepted || d[0].Answer != "Grace" || d[1].Accepted {
		t.Fatalf("Dialogs = %+v", d)
	}

	// beforeunload: leaving a page that asks is accepted.
	run(t, s2.Tab(), chromedp.Navigate(site.URL+"/beforeunload"),
		chromedp.Click(chromedp.CSS("#in")), // a user gesture arms beforeunload
		chromedp.Navigate(site.URL+"/title?t=left"))
	if title := eval[string](t, s2.Tab(), "document.title"); title != "left" {
		t.Fatalf("title after leaving = %q", title)
	}
	if d := s2.Dialogs(); len(d) != 1 || d[0].Type != "beforeunload" || !d[0].Accepted {
		t.Fatalf("beforeunload dialogs = %+v", d)
	}
}

// TestDialogsWithoutGuard: when the guard session cannot attach, the chromedp
// session of the tab answers the dialogs.
func TestDialogsWithoutGuard(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	noDialogGuard.Store(true)
	defer noDialogGuard.Store(false)
	s := acquire(t, p, ContextOptions{RunID: "noguard", DialogPrompt: "Ada"})
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/title?t=d"))
	if v := eval[string](t, s.Tab(), "alert('a'), String(confirm('c')) + prompt('p')"); v != "trueAda" {
		t.Fatalf("dialogs answered %q", v)
	}
	var types []string
	for _, d := range s.Dialogs() {
		types = append(types, d.Type)
	}
	if strings.Join(types, ",") != "alert,confirm,prompt" {
		t.Fatalf("dialogs = %v", types)
	}
}

func TestDownloads(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	dir := t.TempDir()
	s := acquire(t, p, ContextOptions{RunID: "dl", DownloadDir: dir, MaxDownloadBytes: 100_000, MaxDownloads: 4})
	tab := s.Tab()
	run(t, tab, chromedp.Navigate(site.URL+"/downloads"))
	// state says where the downloads stand, for a failure's message.
	state := func() string {
		return fmt.Sprintf("saved %+v, failed %+v, pending %d", s.Downloads().Completed(), s.Downloads().Failed(), s.Downloads().Pending())
	}
	settled := func(n int) {
		t.Helper()
		for i := 0; len(s.Downloads().Completed())+len(s.Downloads().Failed()) < n; i++ {
			if i == 750 {
				t.Fatalf("timed out waiting for %d downloads: %s", n, state())
			}
			time.Sleep(20 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := s.Downloads().Wait(ctx); err != nil {
			t.Fatalf("after %d downloads: %v: %s", n, err, state())
		}
	}
	click := func(id string) { eval[bool](t, tab, "document.getElementById('"+id+"').click(), true") }

	click("csv")
	settled(1)
	dls := s.Downloads().Completed()
	if len(dls) != 1 {
		t.Fatalf("Downloads = %+v, failed %+v", dls, s.Downloads().Failed())
	}
	sum := sha256.Sum256(fileBody(1234))
	d := dls[0]
	if d.Name != "report.csv" || d.Path != filepath.Join(dir, "report.csv") || d.Size != 1234 || d.SHA256 != hex.EncodeToString(sum[:]) || !strings.HasSuffix(d.URL, "/file?name=report.csv&size=1234") {
		t.Fatalf("download = %+v", d)
	}
	if data, err := os.ReadFile(d.Path); err != nil || len(data) != 1234 {
		t.Fatalf("file: %d bytes, %v", len(data), err)
	}

	// Same name again → "report (1).csv"; a path in the name is dropped.
	click("csv")
	settled(2)
	click("evil")
	settled(3)
	dls = s.Downloads().Completed()
	// (Chromium already replaces the separators of the suggested name.)
	if len(dls) != 3 || dls[1].Name != "report (1).csv" || strings.ContainsAny(dls[2].Name, `/\`) || !strings.HasSuffix(dls[2].Name, "passwd") || dls[2].Path != filepath.Join(dir, dls[2].Name) {
		t.Fatalf("Downloads = %+v", dls)
	}

	// Over the per-file cap: refused with a reason, no file left.
	click("big")
	settled(4)
	failed := s.Downloads().Failed()
	if len(failed) != 1 || failed[0].Name != "big.bin" || !strings.Contains(failed[0].Reason, "per-file limit") {
		t.Fatalf("FailedDownloads = %+v", failed)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.bin")); err == nil {
		t.Fatal("the oversize file was kept")
	}

	// target=_blank download: the transient tab is not kept, the file is.
	click("blankdl")
	settled(5)
	dls = s.Downloads().Completed()
	if len(dls) != 4 || dls[3].Name != "popup.txt" || dls[3].Size != 99 {
		t.Fatalf("Downloads = %+v, failed %+v", dls, s.Downloads().Failed())
	}
	waitFor(t, "the download tab to go", func() bool { return s.Tab() == tab })
	// Count cap (4 accepted): the fifth is refused.
	click("csv")
	settled(6)
	failed = s.Downloads().Failed()
	if len(failed) != 2 || !strings.Contains(failed[1].Reason, "download limit reached (4 files)") {
		t.Fatalf("FailedDownloads = %+v", failed)
	}
	if n := len(s.Downloads().Completed()); n != 4 {
		t.Fatalf("%d downloads after the count cap", n)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// Only the saved files: a local browser stages in the pool's directory.
	if got := strings.Join(names, ","); got != dls[2].Name+",popup.txt,report (1).csv,report.csv" {
		t.Errorf("download dir = %s", got)
	}
	staging := s.dl.staging
	if filepath.Dir(staging) == dir {
		t.Errorf("a local browser stages downloads in DownloadDir (%s)", staging)
	}
	s.Close(context.Background())
	select {
	case <-s.cleaned:
	case <-time.After(time.Minute): // a hang guard, not a timing expectation
		t.Fatal("the session's cleanup did not end")
	}
	// Removed; the browser may have made it again for a download it had
	// just canceled (and removes that file itself), never with our files.
	if left, err := os.ReadDir(staging); err == nil && len(left) > 0 {
		t.Errorf("the staging directory holds %v after Close", left)
	}

	// Without DownloadDir the browser refuses downloads.
	s2 := acquire(t, p, ContextOptions{RunID: "nodl"})
	run(t, s2.Tab(), chromedp.Navigate(site.URL+"/downloads"))
	eval[bool](t, s2.Tab(), "document.getElementById('csv').click(), true")
	time.Sleep(300 * time.Millisecond)
	if len(s2.Downloads().Completed()) != 0 || s2.Downloads().Pending() != 0 {
		t.Fatal("a session without DownloadDir downloaded")
	}
}

func TestTotalDownloadCap(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	s := acquire(t, p, ContextOptions{RunID: "total", DownloadDir: t.TempDir(), MaxTotalDownloadBytes: 2000})
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/downloads"))
	for i := 1; i <= 2; i++ {
		eval[bool](t, s.Tab(), "document.getElementById('csv').click(), true")
		waitFor(t, "download", func() bool { return len(s.Downloads().Completed())+len(s.Downloads().Failed()) >= i })
	}
	if d, f := s.Downloads().Completed(), s.Downloads().Failed(); len(d) != 1 || len(f) != 1 || !strings.Contains(f[0].Reason, "total limit") {
		t.Fatalf("Downloads = %+v, failed = %+v", d, f)
	}
}

func TestBrowserCrashRestart(t *testing.T) {
	needBrowser(t)
	site := newSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := NewPool(ctx, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := acquire(t, p, ContextOptions{RunID: "crash"})
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/title?t=before"))
	proc := chromedp.FromContext(s.Tab()).Browser.Process()
	if proc == nil {
		t.Fatal("no browser process")
	}
	if err := proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// An action on the tab fails as soon as the connection is gone, before
	// the session has its reason: Ended waits for the reason.
	var actErr error
	waitFor(t, "an action to fail", func() bool {
		_, actErr = chromedp.Run(s.Tab(), chromedp.Evaluate[bool]("true"))
		return actErr != nil
	})
	if err := s.Ended(ctx); err == nil || !strings.Contains(err.Error(), "the browser process exited unexpectedly") {
		t.Fatalf("Ended after the action failed with %v: %v", actErr, err)
	}
	select {
	case <-s.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("session not done after the browser was killed")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "the browser process exited unexpectedly") || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("Err = %v", err)
	}
	if _, err := s.ActiveTab(ctx); err == nil {
		t.Fatal("ActiveTab on a dead session worked")
	}
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close after the crash: %v", err)
	}

	s2, err := p.Acquire(ctx, ContextOptions{RunID: "after"})
	if err != nil {
		t.Fatalf("Acquire after the crash: %v", err)
	}
	defer s2.Close(ctx)
	run(t, s2.Tab(), chromedp.Navigate(site.URL+"/title?t=after"))
	if proc2 := chromedp.FromContext(s2.Tab()).Browser.Process(); proc2 == nil || proc2.Pid == proc.Pid {
		t.Fatal("no new browser process")
	}
}

// startRemoteChromium starts a Chromium that the tests treat as remote, and
// returns its DevTools websocket URL and its process.
func startRemoteChromium(t *testing.T) (string, *os.Process) {
	t.Helper()
	profile, err := os.MkdirTemp("", "abctl-remote-chromium")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testChromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-quic", "--disable-popup-blocking", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir="+profile, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // to kill its helpers too
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`DevTools listening on (ws://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case ws := <-found:
		return ws, cmd.Process
	case <-time.After(30 * time.Second):
		t.Fatal("remote chromium printed no DevTools URL")
	}
	return "", nil
}

func TestRemoteBrowser(t *testing.T) {
	needBrowser(t)
	site := newSite(t)
	wsURL, proc := startRemoteChromium(t)
	httpURL := "http://" + strings.Split(strings.TrimPrefix(wsURL, "ws://"), "/")[0]
	pages := func() int {
		resp, err := http.Get(httpURL + "/json/list")
		if err != nil {
			t.Fatalf("remote browser not reachable: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Count(string(b), `"type": "page"`)
	}
	before := pages()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A daemon-wide remote browser: no local Chromium is started.
	p, err := NewPool(ctx, Options{RemoteURL: httpURL, ChromiumPath: "/nonexistent", Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	s := acquire(t, p, ContextOptions{RunID: "remote-http"})
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/title?t=remote"))
	if title := eval[string](t, s.Tab(), "document.title"); title != "remote" {
		t.Fatalf("title = %q", title)
	}
	if chromedp.FromContext(s.Tab()).Browser.Process() != nil {
		t.Fatal("the remote session runs on a local process")
	}
	if pages() != before+1 {
		t.Fatalf("remote pages = %d, want %d", pages(), before+1)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// A per-run ws:// address overrides the pool's.
	s2 := acquire(t, p, ContextOptions{RunID: "remote-ws", BrowserAddress: wsURL})
	run(t, s2.Tab(), chromedp.Navigate(site.URL+"/title?t=ws"))
	if err := s2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The shared local pool can also reach it per run.
	s3 := acquire(t, needBrowser(t), ContextOptions{RunID: "remote-local-pool", BrowserAddress: httpURL})
	run(t, s3.Tab(), chromedp.Navigate(site.URL+"/title?t=x"))
	s3.Close(ctx)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	if err := proc.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the remote browser process is gone: %v", err)
	}
	waitFor(t, "the remote pages to close", func() bool { return pages() == before })

	if _, err := p.Acquire(ctx, ContextOptions{}); !errors.Is(err, ErrPoolClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
	if _, err := needBrowser(t).Acquire(ctx, ContextOptions{BrowserAddress: "127.0.0.1:1"}); err == nil {
		t.Fatal("a malformed address was accepted")
	}

	// The remote browser goes away: its sessions end with the reason.
	s4 := acquire(t, needBrowser(t), ContextOptions{RunID: "remote-dies", BrowserAddress: httpURL})
	syscall.Kill(-proc.Pid, syscall.SIGKILL)
	select {
	case <-s4.Done():
	case <-time.After(15 * time.Second):
		t.Fatal("session not done after the remote browser died")
	}
	if err := s4.Err(); err == nil || !strings.Contains(err.Error(), "lost the connection to the remote browser at "+httpURL) {
		t.Fatalf("Err = %v", err)
	}
	if _, err := needBrowser(t).Acquire(ctx, ContextOptions{BrowserAddress: httpURL}); err == nil {
		t.Fatal("Acquire on a dead remote browser worked")
	} else {
		t.Logf("Acquire on a dead remote browser: %v", err)
	}
}

// processTree returns pid and all its descendants.
func processTree(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm can hold spaces.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], child)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// pssKiB sums Pss of smaps_rollup over the processes.
func pssKiB(pids []int) int {
	total := 0
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "Pss:" {
				n, _ := strconv.Atoi(f[1])
				total += n
			}
		}
	}
	return total
}

// TestMemoryPerContext logs the PSS of the browser process tree with 1 and 5
// sessions on a small page. It is a measurement, not an assertion.
func TestMemoryPerContext(t *testing.T) {
	needBrowser(t)
	if testing.Short() {
		t.Skip("measurement")
	}
	site := newSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := NewPool(ctx, Options{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	inst, err := p.acquireBrowser(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	pid := inst.pid()
	p.releaseBrowser(inst)
	measure := func() (int, int) {
		time.Sleep(1500 * time.Millisecond) // let the renderers settle
		pids := processTree(pid)
		return pssKiB(pids), len(pids)
	}
	base, baseN := measure()
	open := func(n int) {
		for i := 0; i < n; i++ {
			s := acquire(t, p, ContextOptions{RunID: "mem"})
			run(t, s.Tab(), chromedp.Navigate(site.URL+"/tabs"))
		}
	}
	open(1)
	one, oneN := measure()
	open(4)
	five, fiveN := measure()
	mib := func(kib int) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
	t.Logf("browser only: PSS %s (%d processes)", mib(base), baseN)
	t.Logf("1 session:    PSS %s (%d processes)", mib(one), oneN)
	t.Logf("5 sessions:   PSS %s (%d processes)", mib(five), fiveN)
	t.Logf("per extra session (5-1)/4: PSS %s; first session: %s", mib((five-one)/4), mib(one-base))
}

// Closing a session while a download is in progress leaves DownloadDir to the
// caller at once: nothing is in it and nothing writes in it afterwards, so
// that the caller can remove it (as t.TempDir's clean-up does).
func TestCloseDuringDownloadLeavesDownloadDir(t *testing.T) {
	p := needBrowser(t)
	site := newSite(t)
	dir := t.TempDir()
	s := acquire(t, p, ContextOptions{RunID: "close-dl", DownloadDir: dir})
	run(t, s.Tab(), chromedp.Navigate(site.URL+"/title?t=start"))
	eval[bool](t, s.Tab(), "location.href = '/stalled', true")
	waitFor(t, "the download to start", func() bool { return s.Downloads().Pending() == 1 })
	staging := s.dl.staging
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("DownloadDir after Close holds %v", names)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatalf("removing DownloadDir after Close: %v", err)
	}
	waitFor(t, "the staging directory to go", func() bool {
		_, err := os.Stat(staging)
		return os.IsNotExist(err)
	})
	if f := s.Downloads().Failed(); len(f) != 0 || len(s.Downloads().Completed()) != 0 {
		t.Errorf("after Close: downloads %+v, failed %+v", s.Downloads().Completed(), f)
	}
}
