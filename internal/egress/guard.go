package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Error is a refusal: what was asked for, the address it resolved to (when
// it got that far) and the rule that refused it.
type Error struct {
	// Target is what the run asked for: a URL, or host:port.
	Target string
	// Addr is the address Target resolved to; invalid when the refusal
	// came before any address (a scheme, a malformed URL).
	Addr netip.AddrPort
	// Rule says why, in words a person can act on.
	Rule string
}

func (e *Error) Error() string {
	if e.Addr.IsValid() && !strings.Contains(e.Target, e.Addr.Addr().String()) {
		return fmt.Sprintf("refused to reach %s (it resolves to %s): %s", e.Target, e.Addr, e.Rule)
	}
	if e.Addr.IsValid() {
		return fmt.Sprintf("refused to reach %s (%s): %s", e.Target, e.Addr, e.Rule)
	}
	return fmt.Sprintf("refused to reach %s: %s", e.Target, e.Rule)
}

// IsRefused reports whether err is, or wraps, a refusal of the policy.
func IsRefused(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Resolver looks up the addresses of a host name (net.DefaultResolver is
// one).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard is the policy as one organization's runs see it. A nil *Guard
// allows everything but the schemes (engines without a policy: tests,
// the command line's own runs).
type Guard struct {
	p      *Policy
	org    string
	report func(*Error)
}

// WithReport returns a copy of the guard that also calls report with
// every refusal (a run's step log).
func (g *Guard) WithReport(report func(*Error)) *Guard {
	if g == nil {
		return nil
	}
	c := *g
	c.report = report
	return &c
}

// Org is the organization the guard decides for.
func (g *Guard) Org() string {
	if g == nil {
		return ""
	}
	return g.org
}

func (g *Guard) refuse(e *Error) *Error {
	if g != nil && g.report != nil {
		g.report(e)
	}
	return e
}

// resolver is the policy's resolver; tests replace it.
func (g *Guard) resolver() Resolver {
	if g != nil && g.p != nil && g.p.resolver != nil {
		return g.p.resolver
	}
	return net.DefaultResolver
}

// decide applies rules 2 to 6 to one address; host is the name asked for
// ("" when an address was given). It returns the rule that refuses, or "".
func (g *Guard) decide(host string, a netip.Addr, port uint16) string {
	if g == nil || g.p == nil {
		return ""
	}
	a = canonical(a)
	if what := g.p.protectedBy(a, port); what != "" {
		return what + " is never reachable by a run"
	}
	c, name := classify(a)
	if c == classNever {
		return name + " is never reachable by a run"
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, pat := range g.p.cfg.Deny {
		if pat.matches(host, a, port) {
			return fmt.Sprintf("the operator's rule --egress-deny %s refuses it", pat)
		}
	}
	if c == classPublic {
		return ""
	}
	switch g.p.cfg.Private {
	case PrivateAllow:
		return ""
	case PrivateAuto:
		if g.p.cfg.Shared == nil || !g.p.cfg.Shared() {
			return ""
		}
	}
	for _, pat := range g.p.cfg.Allow {
		if pat.matches(host, a, port) {
			return ""
		}
	}
	for _, pat := range g.p.cfg.OrgAllow[g.org] {
		if pat.matches(host, a, port) {
			return ""
		}
	}
	why := "the daemon serves several organizations"
	if g.p.cfg.Private == PrivateDeny {
		why = "the daemon runs with --egress-private=deny"
	}
	return fmt.Sprintf("%s is refused because %s (the operator can allow it with --egress-allow)", name, why)
}

// CheckAddr decides on one address as the connection would be made; host is
// the name asked for, "" for an address.
func (g *Guard) CheckAddr(target, host string, ap netip.AddrPort) error {
	if rule := g.decide(host, ap.Addr(), ap.Port()); rule != "" {
		return g.refuse(&Error{Target: target, Addr: netip.AddrPortFrom(ap.Addr().WithZone(""), ap.Port()), Rule: rule})
	}
	return nil
}

// Schemes of the URLs a run gives.
var (
	// WebSchemes are what http_request, file URLs and webhooks take.
	WebSchemes = []string{"http", "https"}
	// BrowserSchemes are what a browser navigation takes (about:blank
	// aside, see CheckNavigation).
	BrowserSchemes = []string{"http", "https"}
)

// CheckURL checks a URL a run gives before anything connects: its scheme
// must be one of schemes (WebSchemes when none are given), and its host,
// when it is an address in any of a browser's forms or a name, must be
// allowed (a name is resolved now, with ctx). The connection is checked
// again where it is made: this early check gives the clear refusal.
func (g *Guard) CheckURL(ctx context.Context, raw string, schemes ...string) error {
	_, _, err := g.checkURL(ctx, raw, schemes)
	return err
}

// checkScheme refuses a URL whose scheme is not one of schemes
// (WebSchemes when none), or that has no host.
func (g *Guard) checkScheme(u *url.URL, raw string, schemes []string) error {
	if len(schemes) == 0 {
		schemes = WebSchemes
	}
	scheme := strings.ToLower(u.Scheme)
	ok := false
	for _, s := range schemes {
		ok = ok || scheme == s
	}
	if !ok {
		what := "a URL without a scheme"
		if scheme != "" {
			what = "the " + scheme + ": scheme"
		}
		return g.refuse(&Error{Target: Redact(raw), Rule: fmt.Sprintf("%s is not reachable by a run (only %s)", what, strings.Join(schemes, ", "))})
	}
	if u.Host == "" {
		return g.refuse(&Error{Target: Redact(raw), Rule: "the URL has no host"})
	}
	return nil
}

// checkURL is CheckURL, returning the parsed URL and the allowed
// addresses its host resolved to (none without a policy).
func (g *Guard) checkURL(ctx context.Context, raw string, schemes []string) (*url.URL, []netip.AddrPort, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, nil, g.refuse(&Error{Target: Redact(raw), Rule: "it is not a URL: " + err.Error()})
	}
	if err := g.checkScheme(u, raw, schemes); err != nil {
		return nil, nil, err
	}
	scheme := strings.ToLower(u.Scheme)
	if g == nil || g.p == nil {
		return u, nil, nil // no policy: the schemes only
	}
	port := u.Port()
	if port == "" {
		switch scheme {
		case "https", "wss":
			port = "443"
		default:
			port = "80"
		}
	}
	aps, err := g.resolve(ctx, Redact(raw), u.Hostname(), port)
	return u, aps, err
}

// PinURL checks a URL as CheckURL does and returns it with its host
// replaced by the allowed address the host resolved to, so that whoever
// connects to it reaches the address that was checked, however the name
// answers later (DNS rebinding). A URL whose scheme carries TLS (https,
// wss) keeps its name, which its certificate is checked against; the
// name is resolved again when it is dialed. Without a policy the URL is
// returned as it is once its scheme is checked.
func (g *Guard) PinURL(ctx context.Context, raw string, schemes ...string) (string, error) {
	u, aps, err := g.checkURL(ctx, raw, schemes)
	if err != nil {
		return "", err
	}
	if len(aps) == 0 {
		return raw, nil
	}
	if s := strings.ToLower(u.Scheme); s == "https" || s == "wss" {
		return raw, nil
	}
	u.Host = aps[0].String()
	return u.String(), nil
}

// CheckNavigation checks a URL a browser is sent to: about:blank, or
// what CheckURL takes with BrowserSchemes.
func (g *Guard) CheckNavigation(ctx context.Context, raw string) error {
	if strings.EqualFold(strings.TrimSpace(raw), "about:blank") {
		return nil
	}
	return g.CheckURL(ctx, raw, BrowserSchemes...)
}

// resolve turns host and port into the addresses to connect to: those
// of its addresses that are allowed, in the resolver's order. It refuses,
// naming the first refused address, when none is.
func (g *Guard) resolve(ctx context.Context, target, host, portText string) ([]netip.AddrPort, error) {
	port, err := parsePort(portText)
	if err != nil {
		return nil, g.refuse(&Error{Target: target, Rule: err.Error()})
	}
	if a, ok := ParseHostAddr(host); ok {
		ap := netip.AddrPortFrom(a, port)
		if err := g.CheckAddr(target, "", ap); err != nil {
			return nil, err
		}
		return []netip.AddrPort{ap}, nil
	}
	addrs, err := g.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	var refused *Error
	for _, a := range addrs {
		a = a.Unmap() // resolvers answer IPv4 as ::ffff:a.b.c.d too
		ap := netip.AddrPortFrom(a, port)
		if rule := g.decide(host, ap.Addr(), ap.Port()); rule != "" {
			if refused == nil {
				refused = &Error{Target: target, Addr: netip.AddrPortFrom(a.WithZone(""), port), Rule: rule}
			}
			continue
		}
		out = append(out, ap)
	}
	if len(out) == 0 {
		return nil, g.refuse(refused)
	}
	return out, nil
}

// DialContext connects as net.Dialer.DialContext does ("tcp", "tcp4",
// "tcp6"; addr host:port), but only to allowed addresses: a name is
// resolved once, every address checked, and the checked address dialed.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	target := addr
	if t, ok := ctx.Value(targetKey{}).(string); ok {
		target = t // the URL a request of HTTPClient's asked for
	}
	aps, err := g.resolve(ctx, target, host, port)
	if err != nil {
		return nil, err
	}
	d := g.dialer()
	var first error
	for _, ap := range aps {
		if network == "tcp4" && !canonical(ap.Addr()).Is4() || network == "tcp6" && !ap.Addr().Is6() {
			continue
		}
		c, err := d(ctx, "tcp", ap.String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = fmt.Errorf("dial %s: no %s address", addr, network)
	}
	return nil, first
}

func (g *Guard) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if g != nil && g.p != nil && g.p.dial != nil {
		return g.p.dial
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	return d.DialContext
}

// control checks the address the socket really connects to, a second
// guard under DialContext's.
func (g *Guard) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: unexpected address %q", address)
	}
	return g.CheckAddr(address, "", ap)
}

// Transport returns an http.Transport whose connections the guard makes:
// no proxy from the environment, every redirect's connection checked.
func (g *Guard) Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = g.DialContext
	t.MaxIdleConnsPerHost = 16
	return t
}

// targetKey carries, in a request's context, the URL its connection is
// for, so that DialContext's refusal names the URL rather than host:port.
type targetKey struct{}

// urlTransport checks each request's scheme and names its URL to the
// guard's dialer, which then resolves, decides and connects once.
type urlTransport struct {
	g       *Guard
	next    *http.Transport
	schemes []string
}

func (t urlTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.checkScheme(req.URL, req.URL.String(), t.schemes); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	ctx := context.WithValue(req.Context(), targetKey{}, Redact(req.URL.String()))
	return t.next.RoundTrip(req.WithContext(ctx))
}

// CloseIdleConnections closes the transport's idle connections.
func (t urlTransport) CloseIdleConnections() { t.next.CloseIdleConnections() }

// HTTPClient returns the client of a run's requests: over Transport, each
// request's scheme checked (schemes, WebSchemes when none) and its URL
// named in a refusal; at most 10 redirects, each checked. A host is looked
// up once per connection.
func (g *Guard) HTTPClient(timeout time.Duration, schemes ...string) *http.Client {
	if len(schemes) == 0 {
		schemes = WebSchemes
	}
	return &http.Client{
		Transport: urlTransport{g: g, next: g.Transport(), schemes: schemes},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			s := strings.ToLower(req.URL.Scheme)
			for _, ok := range schemes {
				if s == ok {
					return nil
				}
			}
			return g.refuse(&Error{Target: Redact(req.URL.String()), Rule: fmt.Sprintf("a redirect to the %s: scheme is not followed (only %s)", s, strings.Join(schemes, ", "))})
		},
	}
}

// Redact returns a URL without its password and query, fit for errors and
// logs.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if len(raw) > 80 {
			return raw[:80] + "…"
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	u.Fragment = ""
	return u.String()
}
