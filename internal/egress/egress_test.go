package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// fakeResolver answers from a table; answers for a name may change from one
// lookup to the next (DNS rebinding).
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]string // host → successive answers (the last repeats)
	calls   map[string]int
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := r.calls[host]
	r.calls[host]++
	if i >= len(seq) {
		i = len(seq) - 1
	}
	var out []netip.Addr
	for _, s := range seq[i] {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

func newResolver(m map[string][][]string) *fakeResolver {
	return &fakeResolver{answers: m, calls: map[string]int{}}
}

func mustPatterns(t testing.TB, list ...string) []Pattern {
	t.Helper()
	p, err := ParsePatterns(list)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// testPolicy is a shared daemon (two organizations) protecting its API at
// 127.0.0.1:8780 and a fleet endpoint at 127.0.0.1:9222, with names that
// resolve as the table says.
func testPolicy(t testing.TB, cfg Config) *Policy {
	t.Helper()
	if cfg.Shared == nil {
		cfg.Shared = func() bool { return true }
	}
	if cfg.Resolver == nil {
		cfg.Resolver = newResolver(map[string][][]string{
			"public.example":   {{"93.184.216.34"}},
			"loop.example":     {{"127.0.0.1"}},
			"mapped.example":   {{"::ffff:127.0.0.1"}},
			"mixed.example":    {{"93.184.216.34", "10.0.0.5"}},
			"meta.example":     {{"169.254.169.254"}},
			"intranet.corp":    {{"10.1.2.3"}},
			"wiki.corp":        {{"10.1.2.4"}},
			"localhost":        {{"127.0.0.1", "::1"}},
			"daemon.example":   {{"127.0.0.1"}},
			"v6public.example": {{"2606:2800:220:1:248:1893:25c8:1946"}},
			"blocked.example":  {{"93.184.216.35"}},
		})
	}
	p := New(cfg)
	for addr, what := range map[string]string{
		"127.0.0.1:8780": "the daemon's API",
		"127.0.0.1:9222": `the DevTools of browser endpoint "b"`,
	} {
		if err := p.Protect(addr, what); err != nil {
			t.Fatal(err)
		}
	}
	p.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return nil, fmt.Errorf("test dial %s", addr)
	}
	return p
}

func TestCheckURL(t *testing.T) {
	ctx := context.Background()
	shared := testPolicy(t, Config{
		Allow:    mustPatterns(t, "127.0.0.1:8000", "*.corp:443"),
		OrgAllow: map[string][]Pattern{"o_a": mustPatterns(t, "10.0.0.0/8")},
		Deny:     mustPatterns(t, "203.0.113.0/24", "blocked.example"),
	})
	single := testPolicy(t, Config{Shared: func() bool { return false }})
	allowAll := testPolicy(t, Config{Private: PrivateAllow})
	denyAll := testPolicy(t, Config{Private: PrivateDeny, Shared: func() bool { return false }})

	for _, tc := range []struct {
		policy *Policy
		org    string
		url    string
		refuse string // a part of the rule; "" when allowed
	}{
		// Schemes.
		{shared, "o_b", "file:///var/lib/abctl/api-key", "the file: scheme"},
		{single, "o_b", "file:///etc/passwd", "the file: scheme"},
		{single, "o_b", "FILE:///etc/passwd", "the file: scheme"},
		{single, "o_b", "chrome://settings", "the chrome: scheme"},
		{single, "o_b", "devtools://devtools/bundled/inspector.html", "the devtools: scheme"},
		{single, "o_b", "view-source:http://127.0.0.1:8000/", "the view-source: scheme"},
		{single, "o_b", "javascript:alert(1)", "the javascript: scheme"},
		{single, "o_b", "//127.0.0.1:8000/", "without a scheme"},
		{single, "o_b", "http:///nohost", "no host"},
		// The daemon's own ports and the fleet's DevTools, in every form.
		{single, "o_b", "http://127.0.0.1:8780/admin/organizations", "the daemon's API is never reachable"},
		{single, "o_b", "http://localhost:8780/metrics", "the daemon's API"},
		{single, "o_b", "http://127.1:8780/", "the daemon's API"},
		{single, "o_b", "http://2130706433:8780/", "the daemon's API"},
		{single, "o_b", "http://0x7f000001:8780/", "the daemon's API"},
		{single, "o_b", "http://0177.0.0.1:8780/", "the daemon's API"},
		{single, "o_b", "http://[::ffff:127.0.0.1]:8780/", "the daemon's API"},
		{single, "o_b", "http://[::ffff:7f00:1]:8780/", "the daemon's API"},
		{single, "o_b", "http://[::1]:8780/", "the daemon's API"},
		{single, "o_b", "http://127.0.0.2:8780/", "the daemon's API"},
		{single, "o_b", "http://daemon.example:8780/", "the daemon's API"},
		{single, "o_b", "http://mapped.example:9222/json/list", "DevTools"},
		{single, "o_b", "ws://127.0.0.1:9222/devtools/browser/x", "the ws: scheme"},
		{allowAll, "o_b", "http://127.0.0.1:9222/json/list", "DevTools"},
		// Unspecified addresses reach this machine.
		{single, "o_b", "http://0.0.0.0:8000/", "unspecified"},
		{single, "o_b", "http://0:8000/", "unspecified"},
		{single, "o_b", "http://[::]:8000/", "unspecified"},
		// Metadata and link-local, however written.
		{allowAll, "o_b", "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{allowAll, "o_b", "http://2852039166/latest/meta-data/", "cloud metadata"},
		{allowAll, "o_b", "http://0xa9fea9fe/", "cloud metadata"},
		{allowAll, "o_b", "http://[::ffff:169.254.169.254]/", "cloud metadata"},
		{allowAll, "o_b", "http://[64:ff9b::a9fe:a9fe]/", "cloud metadata"},
		{allowAll, "o_b", "http://[fd00:ec2::254]/", "cloud metadata"},
		{allowAll, "o_b", "http://meta.example/", "cloud metadata"},
		{allowAll, "o_b", "http://169.254.1.1/", "link-local"},
		{allowAll, "o_b", "http://[fe80::1%25eth0]/", "link-local"},
		{allowAll, "o_b", "http://224.0.0.1/", "multicast"},
		{allowAll, "o_b", "http://255.255.255.255/", "reserved"},
		// Loopback and private networks on a shared daemon.
		{shared, "o_b", "http://127.0.0.1:8001/", "loopback address is refused because the daemon serves several"},
		{shared, "o_b", "http://loop.example/", "loopback"},
		{shared, "o_b", "http://[::1]:8001/", "loopback"},
		{shared, "o_b", "http://[::ffff:10.0.0.1]/", "private network"},
		{shared, "o_b", "http://[2002:a00:1::]/", "private network"},
		{shared, "o_b", "http://192.168.1.1/", "private network"},
		{shared, "o_b", "http://172.31.255.255/", "private network"},
		{shared, "o_b", "http://100.64.0.1/", "carrier-grade NAT"},
		{shared, "o_b", "http://[fd12::1]/", "unique local"},
		{shared, "o_b", "http://mixed.example/", ""}, // only its public address is dialed
		{shared, "o_b", "http://intranet.corp/", "private network"},
		{shared, "o_b", "https://intranet.corp/", ""}, // *.corp:443
		{shared, "o_b", "http://10.9.9.9/", "private network"},
		{shared, "o_a", "http://10.9.9.9/", ""}, // the organization's own allow
		{shared, "o_a", "http://intranet.corp/", ""},
		{shared, "o_b", "http://127.0.0.1:8000/shop", ""}, // allowed by address and port
		{shared, "o_b", "http://localhost:8000/shop", ""},
		{shared, "o_b", "http://127.0.0.1:8000@127.0.0.1:8001/", "loopback"},
		// Public addresses, and the operator's denials.
		{shared, "o_b", "https://public.example/", ""},
		{shared, "o_b", "https://v6public.example/", ""},
		{shared, "o_b", "http://93.184.216.34/", ""},
		{shared, "o_b", "http://203.0.113.7/", "--egress-deny 203.0.113.0/24"},
		{shared, "o_b", "http://blocked.example/", "--egress-deny blocked.example"},
		// One organization: loopback and private are its own.
		{single, "o_b", "http://127.0.0.1:8000/", ""},
		{single, "o_b", "http://localhost:8001/", ""},
		{single, "o_b", "http://10.1.2.3/", ""},
		{single, "o_b", "http://[::1]:8001/", ""},
		{denyAll, "o_b", "http://127.0.0.1:8000/", "--egress-private=deny"},
		{allowAll, "o_b", "http://127.0.0.1:8000/", ""},
	} {
		t.Run(tc.org+" "+tc.url, func(t *testing.T) {
			err := tc.policy.For(tc.org).CheckURL(ctx, tc.url)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused, want allowed: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("allowed, want refused with %q", tc.refuse)
			}
			if !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("refusal %q does not say %q", err, tc.refuse)
			}
		})
	}
}

func TestRefusalNamesURLAddressAndRule(t *testing.T) {
	p := testPolicy(t, Config{})
	err := p.For("o_b").CheckURL(context.Background(), "http://user:pw@loop.example:8001/x?token=s3cret")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *Error", err)
	}
	msg := err.Error()
	for _, want := range []string{"http://user@loop.example:8001/x", "127.0.0.1:8001", "loopback address", "--egress-allow"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q does not name %q", msg, want)
		}
	}
	// An IPv4 answer in its IPv6-mapped form is named as IPv4.
	if err := p.For("o_b").CheckURL(context.Background(), "http://mapped.example:9222/"); err == nil || !strings.Contains(err.Error(), "resolves to 127.0.0.1:9222") {
		t.Errorf("mapped answer: %v", err)
	}
	for _, secret := range []string{"pw", "s3cret"} {
		if strings.Contains(msg, secret) {
			t.Errorf("%q shows %q", msg, secret)
		}
	}
}

// A name is resolved once: the address checked is the address dialed,
// whatever the name answers later.
func TestDialUsesTheCheckedAddress(t *testing.T) {
	r := newResolver(map[string][][]string{
		"rebind.example":  {{"93.184.216.34"}, {"127.0.0.1"}},
		"rebind2.example": {{"127.0.0.1"}, {"93.184.216.34"}},
	})
	p := testPolicy(t, Config{Resolver: r})
	var dialed []string
	p.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return nil, errors.New("test dial")
	}
	g := p.For("o_b")
	g.DialContext(context.Background(), "tcp", "rebind.example:80")
	if len(dialed) != 1 || dialed[0] != "93.184.216.34:80" {
		t.Fatalf("dialed %v, want only the checked 93.184.216.34:80", dialed)
	}
	if r.calls["rebind.example"] != 1 {
		t.Fatalf("resolved %d times, want once", r.calls["rebind.example"])
	}
	// Of a name with a public and a private address, only the public
	// one is dialed on a shared daemon.
	dialed = nil
	r.answers["mixed.example"] = [][]string{{"10.0.0.5", "93.184.216.34", "::1"}}
	g.DialContext(context.Background(), "tcp", "mixed.example:443")
	if len(dialed) != 1 || dialed[0] != "93.184.216.34:443" {
		t.Fatalf("dialed %v, want only 93.184.216.34:443", dialed)
	}
	if r.calls["rebind.example"] != 1 {
		t.Fatalf("resolved %d times, want once", r.calls["rebind.example"])
	}
	dialed = nil
	_, err := g.DialContext(context.Background(), "tcp", "rebind2.example:80")
	if !IsRefused(err) || len(dialed) != 0 {
		t.Fatalf("got %v and dialed %v, want a refusal and no dial", err, dialed)
	}
}

// The socket-level check refuses what DialContext would, for a connection
// made by address.
func TestControlChecksTheSocketAddress(t *testing.T) {
	g := testPolicy(t, Config{}).For("o_b")
	for addr, refused := range map[string]bool{
		"127.0.0.1:80":       true,
		"[::1]:80":           true,
		"169.254.169.254:80": true,
		"93.184.216.34:443":  false,
	} {
		err := g.control("tcp", addr, nil)
		if (err != nil) != refused {
			t.Errorf("control(%s) = %v, want refused %v", addr, err, refused)
		}
	}
}

func TestParseHostAddr(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":        "127.0.0.1",
		"2130706433":       "127.0.0.1",
		"0x7f000001":       "127.0.0.1",
		"0x7F.1":           "127.0.0.1",
		"0177.0.0.1":       "127.0.0.1",
		"127.1":            "127.0.0.1",
		"127.0.1":          "127.0.0.1",
		"0":                "0.0.0.0",
		"[::1]":            "::1",
		"::ffff:127.0.0.1": "::ffff:127.0.0.1",
		"127.0.0.1.":       "127.0.0.1",
		"example.com":      "",
		"256.0.0.1":        "",
		"1.2.3.4.5":        "",
		"0x100000000":      "",
		"1.16777216":       "",
		"08.0.0.1":         "",
		"":                 "",
	} {
		a, ok := ParseHostAddr(in)
		got := ""
		if ok {
			got = a.String()
		}
		if got != want {
			t.Errorf("ParseHostAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParsePattern(t *testing.T) {
	for _, tc := range []struct{ in, err string }{
		{"10.0.0.0/8", ""},
		{"10.0.0.0/8:443", ""},
		{"[fd00::/8]:80", ""},
		{"fd00::/8", ""},
		{"::1", ""},
		{"[::1]:8000", ""},
		{"127.0.0.1:8000", ""},
		{"intranet.example", ""},
		{"*.corp.example:8080", ""},
		{"", "empty pattern"},
		{"10.0.0.0/33", "not a CIDR network"},
		{"a*b.example", "neither an address"},
		{"host:0", "not a port"},
		{"host:99999", "not a port"},
		{"[::1", "no closing ]"},
		{":80", "no host"},
		{"bad host", "neither"},
	} {
		_, err := ParsePattern(tc.in)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParsePattern(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}

func TestWildcardListenerProtectsThePortEverywhere(t *testing.T) {
	p := New(Config{Private: PrivateAllow})
	if err := p.Protect("[::]:8780", "the daemon's API"); err != nil {
		t.Fatal(err)
	}
	g := p.For("o")
	for _, u := range []string{"http://127.0.0.1:8780/", "http://127.9.9.9:8780/", "http://[::1]:8780/"} {
		if err := g.CheckURL(context.Background(), u); err == nil {
			t.Errorf("%s allowed, want refused", u)
		}
	}
	if err := g.CheckURL(context.Background(), "http://127.0.0.1:8781/"); err != nil {
		t.Errorf("another port refused: %v", err)
	}
	if got := p.Protected(); len(got) != 1 || !strings.Contains(got[0], "this machine:8780") {
		t.Errorf("Protected() = %v", got)
	}
}

func TestNilGuardChecksSchemesOnly(t *testing.T) {
	var g *Guard
	if err := g.CheckURL(context.Background(), "http://127.0.0.1:1/"); err != nil {
		t.Errorf("nil guard refused loopback: %v", err)
	}
	if err := g.CheckURL(context.Background(), "file:///etc/passwd"); err == nil {
		t.Error("nil guard allowed file:")
	}
}

func TestReport(t *testing.T) {
	var got []*Error
	g := testPolicy(t, Config{}).For("o_b").WithReport(func(e *Error) { got = append(got, e) })
	g.CheckURL(context.Background(), "http://127.0.0.1:8780/")
	g.CheckURL(context.Background(), "https://public.example/")
	if len(got) != 1 || got[0].Addr.String() != "127.0.0.1:8780" {
		t.Fatalf("reported %v, want one refusal of 127.0.0.1:8780", got)
	}
}

// FuzzCheckURL: whatever the URL, a guard whose every name resolves to
// loopback on a shared daemon never allows a URL whose connection would
// not go to a public address, and never panics.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1/", "http://2130706433/", "http://[::ffff:127.0.0.1]/", "http://0x7f.1/",
		"http://example.com/", "file:///etc/passwd", "http://[64:ff9b::7f00:1]/", "http://1.2.3.4:8780/", "http://[2002:7f00:1::]/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r := &anyNameResolver{addr: netip.MustParseAddr("127.0.0.1")}
		p := New(Config{Shared: func() bool { return true }, Resolver: r})
		err := p.For("o").CheckURL(context.Background(), raw)
		if err != nil {
			return
		}
		if r.looked {
			t.Fatalf("%q allowed although its name resolved to loopback", raw)
		}
		// Allowed without a lookup: the host was an address; it must be
		// public in every reading of it.
		host := hostOf(raw)
		a, ok := ParseHostAddr(host)
		if !ok {
			t.Fatalf("%q allowed with host %q that is no address and was not resolved", raw, host)
		}
		if c, _ := classify(canonical(a)); c != classPublic {
			t.Fatalf("%q allowed, host %s is not public", raw, a)
		}
	})
}

type anyNameResolver struct {
	addr   netip.Addr
	looked bool
}

func (r *anyNameResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.looked = true
	return []netip.Addr{r.addr}, nil
}

func hostOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// PinURL names the checked address, so that a name answering otherwise
// later changes nothing; TLS schemes keep their name.
func TestPinURL(t *testing.T) {
	r := newResolver(map[string][][]string{
		"rebind.example":  {{"93.184.216.34"}, {"127.0.0.1"}},
		"rebind2.example": {{"93.184.216.34"}, {"127.0.0.1"}},
		"tls.example":     {{"93.184.216.35"}},
	})
	g := testPolicy(t, Config{Resolver: r}).For("o_b")
	ctx := context.Background()
	for in, want := range map[string]string{
		"http://rebind.example:9222/json/version": "http://93.184.216.34:9222/json/version",
		"ws://rebind2.example/devtools/browser/x": "ws://93.184.216.34:80/devtools/browser/x",
		"wss://tls.example/devtools?token=t":      "wss://tls.example/devtools?token=t",
	} {
		got, err := g.PinURL(ctx, in, "http", "https", "ws", "wss")
		if err != nil || got != want {
			t.Errorf("PinURL(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := g.PinURL(ctx, "http://127.0.0.1:9222/", "http", "ws"); err == nil || !strings.Contains(err.Error(), "DevTools") {
		t.Errorf("a protected address pinned: %v", err)
	}
	var none *Guard
	if got, err := none.PinURL(ctx, "http://name.example:9222/", "http"); err != nil || got != "http://name.example:9222/" {
		t.Errorf("no policy: %q, %v", got, err)
	}
}
