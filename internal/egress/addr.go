package egress

import (
	"net/netip"
	"strconv"
	"strings"
)

// class is what kind of destination an address is.
type class int

const (
	classPublic  class = iota
	classPrivate       // loopback and private networks: rule 5
	classNever         // never reachable: rule 3
)

// A range and what it is, in words for refusals.
type addrRange struct {
	prefix netip.Prefix
	class  class
	name   string
}

var ranges = func() []addrRange {
	r := func(cidr string, c class, name string) addrRange {
		return addrRange{netip.MustParsePrefix(cidr), c, name}
	}
	return []addrRange{
		// Cloud metadata services first: they sit inside wider ranges.
		r("169.254.169.254/32", classNever, "a cloud metadata address"),
		r("169.254.170.2/32", classNever, "a cloud metadata address"),
		r("100.100.100.200/32", classNever, "a cloud metadata address"),
		r("168.63.129.16/32", classNever, "a cloud metadata address"),
		r("192.0.0.192/32", classNever, "a cloud metadata address"),
		r("fd00:ec2::254/128", classNever, "a cloud metadata address"),
		r("0.0.0.0/8", classNever, "an unspecified address (0.0.0.0/8), which reaches this machine"),
		r("::/128", classNever, "the unspecified address (::), which reaches this machine"),
		r("169.254.0.0/16", classNever, "a link-local address (169.254.0.0/16)"),
		r("fe80::/10", classNever, "a link-local address (fe80::/10)"),
		r("224.0.0.0/4", classNever, "a multicast address"),
		r("ff00::/8", classNever, "a multicast address"),
		r("240.0.0.0/4", classNever, "a reserved address (240.0.0.0/4, broadcast included)"),
		r("127.0.0.0/8", classPrivate, "a loopback address"),
		r("::1/128", classPrivate, "a loopback address"),
		r("10.0.0.0/8", classPrivate, "a private network address (10.0.0.0/8)"),
		r("172.16.0.0/12", classPrivate, "a private network address (172.16.0.0/12)"),
		r("192.168.0.0/16", classPrivate, "a private network address (192.168.0.0/16)"),
		r("100.64.0.0/10", classPrivate, "a carrier-grade NAT address (100.64.0.0/10)"),
		r("198.18.0.0/15", classPrivate, "a network-testing address (198.18.0.0/15)"),
		r("192.0.0.0/24", classPrivate, "an IETF protocol address (192.0.0.0/24)"),
		r("fc00::/7", classPrivate, "a unique local address (fc00::/7)"),
		r("fec0::/10", classPrivate, "a site-local address (fec0::/10)"),
	}
}()

// classify returns the class of a canonical address and its range's name.
func classify(a netip.Addr) (class, string) {
	for _, r := range ranges {
		if r.prefix.Contains(a) {
			return r.class, r.name
		}
	}
	return classPublic, "a public address"
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	compat = netip.MustParsePrefix("::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// canonical returns the address a connection to a really reaches, for
// deciding: without a zone, IPv4 for IPv4-mapped (::ffff:a.b.c.d),
// IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4
// (2002:AABB:CCDD::) forms.
func canonical(a netip.Addr) netip.Addr {
	a = a.WithZone("").Unmap()
	if !a.Is6() {
		return a
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case compat.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}

// ParseHostAddr reads host as a browser does when it is an address: the
// dotted, decimal, octal and hexadecimal IPv4 forms of the URL standard
// (127.0.0.1, 2130706433, 0x7f.1, 0177.0.0.1, 127.1) and IPv6 with or
// without brackets. ok is false for a host name.
func ParseHostAddr(host string) (netip.Addr, bool) {
	h := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	return parseURLIPv4(h)
}

// parseURLIPv4 is the URL standard's IPv4 parser: one to four parts, each
// decimal, octal (a leading 0) or hexadecimal (0x), the last filling the
// bytes left.
func parseURLIPv4(h string) (netip.Addr, bool) {
	if h == "" {
		return netip.Addr{}, false
	}
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		base := 10
		switch {
		case len(p) > 1 && (strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X")):
			base, p = 16, p[2:]
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		n, err := strconv.ParseUint(p, base, 64)
		if err != nil || n > 0xffffffff {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - uint(i)))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-uint(len(nums)))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
