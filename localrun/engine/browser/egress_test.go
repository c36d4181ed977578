package browser

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestEgressProxyOfContext: a browser context given a proxy sends its page's
// requests, loopback ones too, through it; one without goes direct.
func TestEgressProxyOfContext(t *testing.T) {
	p := needBrowser(t)
	var direct atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		direct.Add(1)
		fmt.Fprint(w, "<!doctype html><title>site</title>")
	}))
	defer site.Close()
	var proxied atomic.Int32
	var seen atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		if r.URL.Path == "/page" {
			seen.Store(r.URL.String())
		}
		fmt.Fprint(w, "<!doctype html><title>from the proxy</title>")
	}))
	defer proxy.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := p.Acquire(ctx, ContextOptions{RunID: "proxied", Proxy: proxy.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if !s.Proxied() || s.Browser() != "local Chromium" {
		t.Fatalf("Proxied %v, Browser %q", s.Proxied(), s.Browser())
	}
	if err := chromedp.Do(s.Tab(), chromedp.Navigate(site.URL+"/page")); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(s.Tab(), chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title != "from the proxy" || proxied.Load() == 0 || direct.Load() != 0 {
		t.Fatalf("title %q, proxy %d requests, site %d", title, proxied.Load(), direct.Load())
	}
	if u, _ := seen.Load().(string); u != site.URL+"/page" {
		t.Errorf("the proxy was asked for %q", u)
	}

	plain, err := p.Acquire(ctx, ContextOptions{RunID: "direct"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(context.Background())
	if plain.Proxied() {
		t.Error("a session without a proxy is proxied")
	}
	if err := chromedp.Do(plain.Tab(), chromedp.Navigate(site.URL+"/page")); err != nil {
		t.Fatal(err)
	}
	if title, err = chromedp.Run(plain.Tab(), chromedp.Title()); err != nil {
		t.Fatal(err)
	}
	if title != "site" || direct.Load() == 0 {
		t.Errorf("title %q, site %d requests", title, direct.Load())
	}
}

func TestOnThisMachine(t *testing.T) {
	for addr, want := range map[string]bool{
		"http://127.0.0.1:9222":                  true,
		"ws://127.0.0.2:9222/devtools/browser/x": true,
		"http://localhost:9222":                  true,
		"http://[::1]:9222":                      true,
		"http://[::ffff:127.0.0.1]:9222":         true,
		"http://10.0.0.5:9222":                   false,
		"wss://browser.example:443/x":            false,
		"http://0.0.0.0:9222":                    false,
	} {
		if got := onThisMachine(addr); got != want {
			t.Errorf("onThisMachine(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestLocalChromiumFlags: the local Chromium sends no WebRTC UDP around a
// proxy, and is driven over a pipe: it listens on no DevTools port that a
// page could reach (so Options.DevTools is told nothing).
func TestLocalChromiumFlags(t *testing.T) {
	needBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var told []string
	p, err := NewPool(ctx, Options{Logger: testLogger(), DevTools: func(addr, _ string) { told = append(told, addr) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	inst, err := p.acquireBrowser(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.releaseBrowser(inst)
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", inst.pid()))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	args := strings.Split(string(raw), "\x00")
	for _, want := range []string{"--force-webrtc-ip-handling-policy=disable_non_proxied_udp", "--webrtc-ip-handling-policy=disable_non_proxied_udp", "--remote-debugging-pipe"} {
		found := false
		for _, a := range args {
			found = found || a == want
		}
		if !found {
			t.Errorf("the command line lacks %s: %q", want, args)
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--remote-debugging-port") {
			t.Errorf("the local Chromium listens on a DevTools port: %s", a)
		}
	}
	if len(told) != 0 || localDevTools(inst.pid()) != "" {
		t.Errorf("DevTools told %q", told)
	}
}

// TestLocalDevToolsPort reads the port of a Chromium started with one.
func TestLocalDevToolsPort(t *testing.T) {
	needBrowser(t)
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/DevToolsActivePort", []byte("40123\n/devtools/browser/x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A process whose command line names a port and the directory: this
	// test's own arguments cannot, so check the parsing through a child.
	cmd := execSleep(t, "--remote-debugging-port=0", "--user-data-dir="+dir)
	if got := localDevTools(cmd); got != "127.0.0.1:40123" {
		t.Errorf("localDevTools = %q", got)
	}
	cmd = execSleep(t, "--remote-debugging-port=9333")
	if got := localDevTools(cmd); got != "127.0.0.1:9333" {
		t.Errorf("localDevTools = %q", got)
	}
	cmd = execSleep(t, "--remote-debugging-pipe")
	if got := localDevTools(cmd); got != "" {
		t.Errorf("localDevTools = %q", got)
	}
}

// execSleep starts a process with args on its command line, killed at the
// end of the test, and returns its pid.
func execSleep(t *testing.T, args ...string) int {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", "sleep 30", "sh"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// TestFleetTellsTheWebSocketAddress: an endpoint whose /json/version names
// its browser's websocket at another address (a hosted service in front of
// its browsers) has that address told to Options.DevTools, with the
// endpoint's name, before the pool connects to it.
func TestFleetTellsTheWebSocketAddress(t *testing.T) {
	m := startFleetMember(t)
	resp, err := http.Get(m.URL() + "/json/version")
	if err != nil {
		t.Fatal(err)
	}
	version, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(version) // the browser's websocket address, not the front's
	}))
	defer front.Close()
	var mu sync.Mutex
	told := map[string]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fp, err := NewPool(ctx, Options{ChromiumPath: "/nonexistent", Logger: testLogger(),
		Endpoints: []Endpoint{{URL: front.URL, Name: "front", Capacity: 1}},
		DevTools: func(addr, what string) {
			mu.Lock()
			told[addr] = what
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	s, err := fp.Acquire(ctx, ContextOptions{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	want := strings.TrimPrefix(m.URL(), "http://")
	mu.Lock()
	defer mu.Unlock()
	if told[want] != `the DevTools of browser endpoint "front"` {
		t.Fatalf("told %v, want %s as the DevTools of endpoint front", told, want)
	}
}
