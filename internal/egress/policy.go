package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// PrivateMode says when loopback and private networks are reachable.
type PrivateMode int

const (
	// PrivateAuto: reachable while the daemon serves one organization
	// (Config.Shared reports false), refused once it serves several.
	PrivateAuto PrivateMode = iota
	// PrivateAllow: always reachable (one operator, trusted runs).
	PrivateAllow
	// PrivateDeny: never reachable but through an allow pattern.
	PrivateDeny
)

// ParsePrivateMode reads "auto", "allow" or "deny".
func ParsePrivateMode(s string) (PrivateMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return PrivateAuto, nil
	case "allow":
		return PrivateAllow, nil
	case "deny":
		return PrivateDeny, nil
	}
	return 0, fmt.Errorf("%q is not a private network mode: want auto, allow or deny", s)
}

func (m PrivateMode) String() string {
	switch m {
	case PrivateAllow:
		return "allow"
	case PrivateDeny:
		return "deny"
	}
	return "auto"
}

// Config is the operator's part of the policy.
type Config struct {
	// Private says when loopback and private networks are reachable.
	Private PrivateMode
	// Shared reports whether the daemon serves more than one organization
	// (PrivateAuto asks it at each decision); nil means it does not.
	Shared func() bool
	// Allow are patterns that make loopback and private destinations
	// reachable for every organization; OrgAllow those of one
	// organization, by its id. They never open what rules 1 to 4 refuse.
	Allow    []Pattern
	OrgAllow map[string][]Pattern
	// Deny are patterns refused for every organization, public addresses
	// included.
	Deny []Pattern
	// Resolver looks up host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// Pattern names destinations: an address (10.1.2.3, ::1), a network in
// CIDR notation (10.0.0.0/8), a host name (intranet.example) or every
// name under a domain (*.corp.example), each optionally with a port
// (10.0.0.0/8:443, [fd00::/8]:80, intranet.example:8080). A host pattern
// matches the name a run asked for, whatever address it resolves to: it
// trusts that name's DNS.
type Pattern struct {
	text   string
	prefix netip.Prefix // valid for an address or a network
	host   string       // lower case; "*.x" for a domain
	port   uint16       // 0: any port
}

// String returns the pattern as it was given.
func (p Pattern) String() string { return p.text }

// ParsePattern reads one pattern (see Pattern).
func ParsePattern(s string) (Pattern, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return Pattern{}, errors.New("empty pattern: want an address, a CIDR network, a host or *.domain, each with an optional :port")
	}
	p := Pattern{text: text}
	rest := text
	// A port: host:port, [v6]:port, [v6/len]:port. A bare IPv6 address has
	// several colons and no brackets, and no port.
	if strings.HasPrefix(rest, "[") {
		end := strings.Index(rest, "]")
		if end < 0 {
			return Pattern{}, fmt.Errorf("pattern %q: no closing ]", text)
		}
		after := rest[end+1:]
		rest = rest[1:end]
		if after != "" {
			if !strings.HasPrefix(after, ":") {
				return Pattern{}, fmt.Errorf("pattern %q: want [address]:port", text)
			}
			port, err := parsePort(after[1:])
			if err != nil {
				return Pattern{}, fmt.Errorf("pattern %q: %v", text, err)
			}
			p.port = port
		}
	} else if strings.Count(rest, ":") == 1 {
		i := strings.LastIndex(rest, ":")
		port, err := parsePort(rest[i+1:])
		if err != nil {
			return Pattern{}, fmt.Errorf("pattern %q: %v", text, err)
		}
		p.port, rest = port, rest[:i]
	}
	if rest == "" {
		return Pattern{}, fmt.Errorf("pattern %q: no host, address or network before the port", text)
	}
	if strings.Contains(rest, "/") {
		pfx, err := netip.ParsePrefix(rest)
		if err != nil {
			return Pattern{}, fmt.Errorf("pattern %q: %q is not a CIDR network (want 10.0.0.0/8 or fd00::/8)", text, rest)
		}
		p.prefix = pfx.Masked()
		return p, nil
	}
	if a, err := netip.ParseAddr(rest); err == nil {
		a = canonical(a)
		p.prefix = netip.PrefixFrom(a, a.BitLen())
		return p, nil
	}
	host := strings.ToLower(strings.TrimSuffix(rest, "."))
	name := strings.TrimPrefix(host, "*.")
	if strings.Contains(name, "*") || !validHostName(name) {
		return Pattern{}, fmt.Errorf("pattern %q: %q is neither an address, a CIDR network, a host name nor *.domain", text, rest)
	}
	p.host = host
	return p, nil
}

// ParsePatterns reads a list of patterns; the error names the bad one.
func ParsePatterns(list []string) ([]Pattern, error) {
	out := make([]Pattern, 0, len(list))
	for _, s := range list {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%q is not a port (1 to 65535)", s)
	}
	return uint16(n), nil
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// matches reports whether the pattern names host (as asked, lower case,
// "" when the run gave an address) at addr:port.
func (p Pattern) matches(host string, addr netip.Addr, port uint16) bool {
	if p.port != 0 && p.port != port {
		return false
	}
	if p.prefix.IsValid() {
		return p.prefix.Contains(addr)
	}
	if host == "" {
		return false
	}
	if d, ok := strings.CutPrefix(p.host, "*."); ok {
		return strings.HasSuffix(host, "."+d)
	}
	return host == p.host
}

// Policy is the daemon's egress policy: the operator's Config and the
// addresses the daemon protects. It is safe for concurrent use.
type Policy struct {
	cfg      Config
	resolver Resolver
	// dial connects to a checked address; nil means a net.Dialer (tests
	// record the addresses instead).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu        sync.RWMutex
	protected map[netip.AddrPort]string // another machine's address and port → what listens there
	ports     map[uint16]string         // a port of this machine, on every address that reaches it
	local     map[netip.Addr]bool       // this machine's own addresses
}

// New returns a policy.
func New(cfg Config) *Policy {
	return &Policy{cfg: cfg, resolver: cfg.Resolver, protected: map[netip.AddrPort]string{}, ports: map[uint16]string{}, local: localAddrs()}
}

// Config returns the operator's part of the policy.
func (p *Policy) Config() Config { return p.cfg }

// Protect refuses addr (host:port, as a listener reports it or as a
// browser endpoint is given) to every run, naming it what (say "the
// daemon's API" or `the DevTools of browser endpoint "b"`). An address
// of this machine (loopback, a wildcard such as 0.0.0.0:8780, [::]:8780
// or :8780, or one of its interfaces') protects the port on every address
// that reaches this machine; a host name is resolved now and each of its
// addresses protected.
func (p *Policy) Protect(addr, what string) error {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("protect %s: %w", what, err)
	}
	port, err := parsePort(portText)
	if err != nil {
		return fmt.Errorf("protect %s: %w", what, err)
	}
	var addrs []netip.Addr
	if host == "" {
		addrs = []netip.Addr{netip.IPv4Unspecified()}
	} else if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ips, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
		if err != nil {
			return fmt.Errorf("protect %s: resolve %s: %w", what, host, err)
		}
		addrs = ips
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range addrs {
		a = canonical(a)
		if p.isLocal(a) {
			// 127.0.0.1, ::1 and this machine's own addresses name
			// the same machine: the port is protected on all of them.
			p.ports[port] = what
			continue
		}
		p.protected[netip.AddrPortFrom(a, port)] = what
	}
	return nil
}

// isLocal reports whether a connection to a reaches this machine.
func (p *Policy) isLocal(a netip.Addr) bool {
	return a.IsLoopback() || a.IsUnspecified() || p.local[a]
}

// Unprotect undoes Protect for addr (a run's proxy that closed).
func (p *Policy) Unprotect(addr string) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return
	}
	a := canonical(ap.Addr())
	p.mu.Lock()
	if p.isLocal(a) {
		delete(p.ports, ap.Port())
	} else {
		delete(p.protected, netip.AddrPortFrom(a, ap.Port()))
	}
	p.mu.Unlock()
}

// Protected lists what the policy protects, for status pages: "addr
// (what)", sorted.
func (p *Policy) Protected() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []string
	for ap, what := range p.protected {
		out = append(out, ap.String()+" ("+what+")")
	}
	for port, what := range p.ports {
		out = append(out, "this machine:"+strconv.Itoa(int(port))+" ("+what+")")
	}
	sort.Strings(out)
	return out
}

func (p *Policy) protectedBy(a netip.Addr, port uint16) string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if what, ok := p.ports[port]; ok && p.isLocal(a) {
		return what
	}
	return p.protected[netip.AddrPortFrom(a, port)]
}

// For returns the guard of one organization's runs.
func (p *Policy) For(orgID string) *Guard { return &Guard{p: p, org: orgID} }

func localAddrs() map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out[canonical(ip)] = true
			}
		}
	}
	return out
}
