package daemoncmd

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/internal/egress"
)

// daemonEgress runs `abctl daemon` (without serving) with args and returns
// the options it would serve with, or its error.
func daemonEgress(t *testing.T, args ...string) (*DaemonOptions, error) {
	t.Helper()
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DaemonOptions
	err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil }), append([]string{"--data-dir", t.TempDir()}, args...)...)
	if err != nil && !cmdtest.IsUsage(err) {
		t.Errorf("%v is not a usage error", err)
	}
	return got, err
}

func TestEgressFlags(t *testing.T) {
	o, err := daemonEgress(t)
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.Egress.Private != egress.PrivateAuto || len(o.Config.Egress.Allow)+len(o.Config.Egress.Deny) != 0 || o.Config.EgressProxyHost != "" {
		t.Fatalf("defaults: %+v, proxy host %q", o.Config.Egress, o.Config.EgressProxyHost)
	}
	o, err = daemonEgress(t, "--egress-private", "deny", "--egress-allow", "127.0.0.1:8000",
		"--egress-allow", "o_123=10.0.0.0/8", "--egress-allow", "o_123=*.corp.example:443",
		"--egress-deny", "203.0.113.0/24", "--egress-proxy-host", "10.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	e := o.Config.Egress
	if e.Private != egress.PrivateDeny || len(e.Allow) != 1 || e.Allow[0].String() != "127.0.0.1:8000" ||
		len(e.OrgAllow["o_123"]) != 2 || e.OrgAllow["o_123"][1].String() != "*.corp.example:443" ||
		len(e.Deny) != 1 || o.Config.EgressProxyHost != "10.0.0.2" {
		t.Fatalf("parsed %+v, proxy host %q", e, o.Config.EgressProxyHost)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--egress-private", "sometimes"}, `--egress-private: "sometimes" is not a private network mode: want auto, allow or deny`},
		{[]string{"--egress-allow", "10.0.0.0/33"}, `--egress-allow "10.0.0.0/33": pattern "10.0.0.0/33": "10.0.0.0/33" is not a CIDR network`},
		{[]string{"--egress-allow", "acme=10.0.0.0/8"}, `--egress-allow "acme=10.0.0.0/8": "acme" is not an organization id`},
		{[]string{"--egress-deny", "host:0"}, `--egress-deny "host:0": pattern "host:0": "0" is not a port`},
		{[]string{"--egress-proxy-host", "10.0.0.2:3128"}, `--egress-proxy-host "10.0.0.2:3128": give an address without a port`},
	} {
		_, err := daemonEgress(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, want %q", tc.args, err, tc.want)
		}
	}
}
