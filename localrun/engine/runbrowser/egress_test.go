package runbrowser

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/abctl/abctl/internal/egress"
)

func TestCheckNavigation(t *testing.T) {
	ctx := context.Background()
	shared := egress.New(egress.Config{Shared: func() bool { return true }}).For("o_1")
	for _, c := range []struct {
		url         string
		nilRefused  string // "" when a nil guard lets it go
		shareRefuse string // "" when the shared guard lets it go
	}{
		{"about:blank", "", ""},
		{"https://example.com/", "", ""},
		{"example.com/x", "", ""},
		{"file:///etc/hostname", "the file: scheme", "the file: scheme"},
		{" FILE:///etc/hostname", "the file: scheme", "the file: scheme"},
		{"data:text/html,<h1>x</h1>", "the data: scheme", "the data: scheme"},
		{"javascript:alert(1)", "the javascript: scheme", "the javascript: scheme"},
		{"chrome://version", "the chrome: scheme", "the chrome: scheme"},
		{"devtools://devtools/bundled/inspector.html", "the devtools: scheme", "the devtools: scheme"},
		{"view-source:https://example.com/", "the view-source: scheme", "the view-source: scheme"},
		{"about:version", "the about: scheme", "the about: scheme"},
		{"http://127.0.0.1:8780/admin", "", "a loopback address is refused"},
		{"127.0.0.1:8780/admin", "", "a loopback address is refused"},
		{"http://[::ffff:127.0.0.1]:8780/", "", "a loopback address is refused"},
		{"http://169.254.169.254/latest/meta-data/", "", "never reachable"},
		{"http://name.invalid/", "", ""}, // does not resolve: the browser says so
	} {
		check := func(g *egress.Guard, want string) {
			err := CheckNavigation(ctx, g, c.url)
			switch {
			case want == "" && err != nil:
				t.Errorf("%q (guard %v): %v", c.url, g != nil, err)
			case want != "" && (err == nil || !egress.IsRefused(err) || !strings.Contains(err.Error(), want)):
				t.Errorf("%q (guard %v): %v, want a refusal with %q", c.url, g != nil, err, want)
			}
		}
		check(nil, c.nilRefused)
		check(shared, c.shareRefuse)
	}
}

func TestRefusalsSince(t *testing.T) {
	var r Refusals
	r.Add(&egress.Error{Target: "127.0.0.1:9", Rule: "old"})
	m := r.mark()
	if e := r.since(m, "http://127.0.0.1:9/", true); e != nil {
		t.Errorf("a refusal before the mark: %v", e)
	}
	r.Add(&egress.Error{Target: "127.0.0.1:8780", Addr: netip.MustParseAddrPort("127.0.0.1:8780"), Rule: "the daemon's API"})
	r.Add(&egress.Error{Target: "example.com:443", Rule: "other"})
	if e := r.since(m, "http://127.0.0.1:8780/admin", false); e == nil || e.Rule != "the daemon's API" {
		t.Errorf("by host and port: %v", e)
	}
	if e := r.since(m, "https://elsewhere.example/", false); e != nil {
		t.Errorf("no match without any: %v", e)
	}
	if e := r.since(m, "https://elsewhere.example/", true); e == nil || e.Rule != "other" {
		t.Errorf("the last with any: %v", e)
	}
	e := refusedNavigation(&egress.Error{Target: "127.0.0.1:8780", Addr: netip.MustParseAddrPort("127.0.0.1:8780"), Rule: "r"}, "http://127.0.0.1:8780/admin?token=x")
	if got := e.Error(); got != "refused to reach http://127.0.0.1:8780/admin?… (127.0.0.1:8780): r" {
		t.Errorf("%q", got)
	}
	e = refusedNavigation(&egress.Error{Target: "127.0.0.1:8780", Addr: netip.MustParseAddrPort("127.0.0.1:8780"), Rule: "r"}, "https://site.example/go")
	if got := e.Error(); got != "refused to reach https://site.example/go, which led to 127.0.0.1:8780 (127.0.0.1:8780): r" {
		t.Errorf("%q", got)
	}
	var none *Refusals
	none.Add(&egress.Error{})
	if none.since(none.mark(), "http://x/", true) != nil {
		t.Error("a nil Refusals recorded")
	}
}
