// Package egresstest makes the egress policies of tests: a daemon serving
// several organizations, with the operator's allow patterns, and one
// serving a single organization.
package egresstest

import (
	"testing"

	"github.com/abctl/abctl/internal/egress"
)

// Shared is the policy of a daemon serving several organizations: loopback
// and private networks are refused but for allow (--egress-allow
// patterns). protect names addresses to protect as what ("host:port",
// "what", ...), such as a test server playing the daemon's API.
func Shared(tb testing.TB, allow []string, protect ...string) *egress.Policy {
	tb.Helper()
	pats, err := egress.ParsePatterns(allow)
	if err != nil {
		tb.Fatal(err)
	}
	p := egress.New(egress.Config{Shared: func() bool { return true }, Allow: pats})
	if len(protect)%2 != 0 {
		tb.Fatal("egresstest.Shared: protect takes pairs of address and what")
	}
	for i := 0; i < len(protect); i += 2 {
		if err := p.Protect(protect[i], protect[i+1]); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// Single is the policy of a daemon serving one organization: loopback and
// private networks are reachable.
func Single() *egress.Policy {
	return egress.New(egress.Config{Shared: func() bool { return false }})
}
