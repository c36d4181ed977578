package daemoncmd

import (
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/internal/egress"
)

// egressFlags are the values of the flags that say what runs may reach
// (docs/security.md); Validate parses them into Config.Egress.
type egressFlags struct {
	Private   string
	Allow     []string
	Deny      []string
	ProxyHost string
}

func (o *DaemonOptions) registerEgressFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&o.Egress.Private, "egress-private", "auto",
		"when runs reach loopback and private networks: auto (while the daemon serves one organization), allow, or deny (only what --egress-allow names)")
	fs.StringArrayVar(&o.Egress.Allow, "egress-allow", nil,
		"a loopback or private destination runs may reach on a shared daemon: an address, a CIDR network, a host or *.domain, each with an optional :port; ORG_ID=PATTERN for one organization's runs (repeatable)")
	fs.StringArrayVar(&o.Egress.Deny, "egress-deny", nil,
		"a destination no run may reach, public ones included (the same patterns as --egress-allow; repeatable)")
	fs.StringVar(&o.Egress.ProxyHost, "egress-proxy-host", "",
		"address of this machine on which each run's egress proxy listens for its browser (default 127.0.0.1; give one the fleet's browsers reach when they run elsewhere)")
}

// checkEgress parses the egress flags into the daemon's configuration.
func (o *DaemonOptions) checkEgress() error {
	mode, err := egress.ParsePrivateMode(o.Egress.Private)
	if err != nil {
		return fmt.Errorf("--egress-private: %w", err)
	}
	cfg := egress.Config{Private: mode}
	for _, v := range o.Egress.Allow {
		org, text, ok := strings.Cut(v, "=")
		if !ok {
			org, text = "", v
		} else if org = strings.TrimSpace(org); !strings.HasPrefix(org, "o_") {
			return fmt.Errorf("--egress-allow %q: %q is not an organization id (o_...); give ORG_ID=PATTERN or PATTERN", v, org)
		}
		p, err := egress.ParsePattern(text)
		if err != nil {
			return fmt.Errorf("--egress-allow %q: %w", v, err)
		}
		if org == "" {
			cfg.Allow = append(cfg.Allow, p)
			continue
		}
		if cfg.OrgAllow == nil {
			cfg.OrgAllow = map[string][]egress.Pattern{}
		}
		cfg.OrgAllow[org] = append(cfg.OrgAllow[org], p)
	}
	for _, v := range o.Egress.Deny {
		p, err := egress.ParsePattern(v)
		if err != nil {
			return fmt.Errorf("--egress-deny %q: %w", v, err)
		}
		cfg.Deny = append(cfg.Deny, p)
	}
	if h := o.Egress.ProxyHost; h != "" {
		if _, ok := egress.ParseHostAddr(h); !ok {
			if _, _, err := net.SplitHostPort(h); err == nil {
				return fmt.Errorf("--egress-proxy-host %q: give an address without a port (each run's proxy takes a free port)", h)
			}
		}
		o.Config.EgressProxyHost = h
	}
	o.Config.Egress = cfg
	return nil
}
