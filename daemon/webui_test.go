package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/chromiumtest"
)

// hostileTitle is a run title holding markup that would run script if the
// page put it in as markup.
const hostileTitle = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2">`

// uiBrowser returns a tab of a real Chromium, in a browser context of its
// own (no cookies shared with another call).
func uiBrowser(t *testing.T) context.Context {
	t.Helper()
	br := chromiumtest.Start(t)
	actx, cancel := remote.NewAllocator(t.Context(), br.URL())
	t.Cleanup(cancel)
	tab, cancelTab := chromedp.NewContext(actx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelTab)
	// The first run on a context opens its tab for as long as that
	// context lives: do it here, without the bound uiRun sets on each
	// action, which would close the tab after the first one.
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return tab
}

// uiRun runs actions on tab with a bound on the whole.
func uiRun[T any](t *testing.T, tab context.Context, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("in the browser: %v", err)
	}
	return v
}

// TestWebUISignInRunsAndSignOut signs in with a key through the form, finds
// the organization's runs (and not another organization's), with a title
// holding markup shown as text, signs out, and signs in again with a
// one-time link, which works once.
func TestWebUISignInRunsAndSignOut(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	mine := e.task("steps=1", func(r *client.TaskRunRequest) { r.Title = hostileTitle })
	waitRun(t, e.a, mine.RunID)
	theirs, err := e.b.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: "script: steps=1", Title: "theirs"})
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, e.b, theirs.RunID)

	tab := uiBrowser(t)
	uiRun(t, tab, chromedp.Navigate(e.url+"/"))
	if loc := uiRun(t, tab, chromedp.Location()); !strings.Contains(loc, "/ui/sign-in?next=") {
		t.Fatalf("signed out, / led to %s, want the sign-in page", loc)
	}
	// A wrong key: refused, on the page.
	uiRun(t, tab, chromedp.SendKeys("#api_key", "sk-not-a-key"))
	uiRun(t, tab, chromedp.Submit("#sign-in"))
	if msg := uiRun(t, tab, chromedp.Text(".problem")); !strings.Contains(msg, "not accepted") {
		t.Fatalf("a wrong key: the page says %q", msg)
	}
	uiRun(t, tab, chromedp.SendKeys("#api_key", e.keyA))
	uiRun(t, tab, chromedp.Submit("#sign-in"))
	uiRun(t, tab, chromedp.WaitVisible("table.runs"))
	body := uiRun(t, tab, chromedp.Text("table.runs"))
	if !strings.Contains(body, mine.RunID) || strings.Contains(body, theirs.RunID) {
		t.Fatalf("organization A's runs page shows:\n%s\nwant %s and not B's %s", body, mine.RunID, theirs.RunID)
	}
	if !strings.Contains(body, "<script>window.pwned=1</script>") {
		t.Errorf("the title is not shown as text: %q", body)
	}
	if pwned := uiRun(t, tab, chromedp.Evaluate[any]("window.pwned === undefined ? null : window.pwned")); pwned != nil {
		t.Errorf("the title's markup ran: window.pwned = %v", pwned)
	}
	if n := uiRun(t, tab, chromedp.Evaluate[int]("document.querySelectorAll('table.runs img, table.runs script').length")); n != 0 {
		t.Errorf("the title's markup became %d elements", n)
	}

	uiRun(t, tab, chromedp.Click(".sign-out button"))
	uiRun(t, tab, chromedp.WaitVisible("#sign-in"))
	uiRun(t, tab, chromedp.Navigate(e.url+"/ui/runs"))
	if loc := uiRun(t, tab, chromedp.Location()); !strings.Contains(loc, "/ui/sign-in") {
		t.Fatalf("after signing out, /ui/runs led to %s", loc)
	}

	// A one-time link, as abctl open asks for one.
	link := signInLink(t, e.url, e.keyA)
	if strings.Contains(strings.SplitN(link, "#", 2)[0], "token") {
		t.Fatalf("the link %s carries its token outside the fragment", link)
	}
	// From another page, as abctl open opens it in a new tab: the tab is
	// at the sign-in page the link names, with no fragment, and going
	// to the same page with a fragment would not load it again.
	uiRun(t, tab, chromedp.Navigate("about:blank"))
	uiRun(t, tab, chromedp.Navigate(link))
	uiRun(t, tab, chromedp.WaitVisible("table.runs"))
	if loc := uiRun(t, tab, chromedp.Location()); strings.Contains(loc, "token") {
		t.Errorf("the token stayed in the address bar: %s", loc)
	}
	uiRun(t, tab, chromedp.Click(".sign-out button"))
	uiRun(t, tab, chromedp.WaitVisible("#sign-in"))
	uiRun(t, tab, chromedp.Navigate(link))
	uiRun(t, tab, chromedp.WaitVisible(".problem"))
	if msg := uiRun(t, tab, chromedp.Text(".problem")); !strings.Contains(msg, "used already or has expired") {
		t.Fatalf("a link used twice: the page says %q", msg)
	}
}

// signInLink asks the daemon for a one-time sign-in link, as abctl open does.
func signInLink(t *testing.T, base, key string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/ui/sign-in-links", nil)
	req.Header.Set("X-Api-Key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		URL string `json:"url"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated || out.URL == "" {
		t.Fatalf("POST /ui/sign-in-links: %d %v %+v", res.StatusCode, err, out)
	}
	return out.URL
}

// TestWebUIRefusesOtherSites: a signed-in browser's changes come only from
// the daemon's own pages; the session's cookie is HttpOnly and
// SameSite=Strict; every page has a policy against inline script.
func TestWebUIRefusesOtherSites(t *testing.T) {
	e := newRunsEnv(t, runsEnvConfig{Workers: 1})
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(path string, form url.Values, header map[string]string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}

	// Signing in from another site is refused too (a forced sign-in).
	if res := post("/ui/sign-in", url.Values{"api_key": {e.keyA}}, map[string]string{"Origin": "http://evil.example"}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a sign-in posted by another site: %d, want 403", res.StatusCode)
	}
	res := post("/ui/sign-in", url.Values{"api_key": {e.keyA}}, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d", res.StatusCode)
	}
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "abctl_session" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/ui/" {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/ui/", cookie)
	}
	if strings.Contains(cookie.Value, e.keyA) {
		t.Fatal("the cookie holds the API key")
	}

	page, err := hc.Get(e.url + "/ui/runs")
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	csp := page.Header.Get("Content-Security-Policy")
	if page.StatusCode != http.StatusOK || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("GET /ui/runs: %d, Content-Security-Policy %q", page.StatusCode, csp)
	}
	if strings.Contains(string(html), "<script>") {
		t.Error("a page holds an inline script")
	}
	csrf := between(string(html), `name="csrf" value="`, `"`)
	if csrf == "" {
		t.Fatal("no CSRF token in the page's sign-out form")
	}

	for _, tc := range []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"another site's Origin", url.Values{"csrf": {csrf}}, map[string]string{"Origin": "http://evil.example"}},
		{"a cross-site fetch", url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"no CSRF token", url.Values{}, nil},
		{"a wrong CSRF token", url.Values{"csrf": {"x" + csrf}}, nil},
	} {
		if res := post("/ui/sign-out", tc.form, tc.header); res.StatusCode != http.StatusForbidden {
			t.Errorf("sign-out with %s: %d, want 403", tc.name, res.StatusCode)
		}
	}
	// Still signed in after the refused requests; then signed out for real.
	if res, err := hc.Get(e.url + "/ui/runs"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("after the refused sign-outs: %v %v", res.StatusCode, err)
	}
	if res := post("/ui/sign-out", url.Values{"csrf": {csrf}}, map[string]string{"Origin": e.url}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out from the page: %d", res.StatusCode)
	}
	if res, err := hc.Get(e.url + "/ui/runs"); err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("after signing out, GET /ui/runs: %v %v, want a redirect to sign in", res.StatusCode, err)
	}
	// A sign-in link needs a key.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, e.url+"/ui/sign-in-links", nil)
	req.Header.Set("X-Api-Key", "sk-wrong")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("a sign-in link for a wrong key: %v %v, want 403", res.StatusCode, err)
	}
}

// between returns the text of s between the first before and the after
// that follows it, "" when absent.
func between(s, before, after string) string {
	_, rest, ok := strings.Cut(s, before)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, after)
	return v
}
