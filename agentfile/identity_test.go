package agentfile_test

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
)

func TestNames(t *testing.T) {
	for name, valid := range map[string]bool{
		"contact-form": true, "a": true, "7": true, "invoices.v2": true, "a_b-c.d": true, strings.Repeat("x", 100): true,
		"": false, "-x": false, "x-": false, "Contact": false, "a b": false, ".hidden": false, strings.Repeat("x", 101): false,
		"ünï": false, "x/y": false,
	} {
		if got := agentfile.ValidName(name); got != valid {
			t.Errorf("ValidName(%q) = %v", name, got)
		}
	}
	for path, want := range map[string]string{
		"agents/contact-form.yaml":    "contact-form",
		"agents/Contact Form.YML":     "contact-form",
		"/abs/dir/Invoices_2024.json": "invoices_2024",
		"x.y.yaml":                    "x.y",
		"agents/-bad.yaml":            "",
		"agents/ü.yaml":               "",
		"noext":                       "noext",
	} {
		if got := agentfile.NameFromFile(path); got != want {
			t.Errorf("NameFromFile(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestIdentity: a name maps to one idempotency key and, in an
// organization, to the id the service gives an agent created with that
// key. The ids below were made by this package's own derivation before it
// shared the daemon's (internal/agentid), and agree with the daemon's.
func TestIdentity(t *testing.T) {
	if k := agentfile.IdempotencyKey("contact-form"); k != "abctl:contact-form" {
		t.Errorf("IdempotencyKey = %q", k)
	}
	z100 := strings.Repeat("z", 100)
	for _, c := range []struct{ org, name, want string }{
		{"o_485917350850524254", "contact-form", "wpid_61404b43464512dd753e2ead89cc112a2268e51bf5e6e176a36ef40d19ff2a1d"},
		{"o_485917350850524254", "a", "wpid_4afa1ebc7a8695f42cb66ad57c1f22e5214c0c848387c39d24b1ff65ca821032"},
		{"o_485917350850524254", "7", "wpid_1dddcf0a7f527ed1f42a3a494a7103109d79ed5b36cfd7a848feda90d5ca0288"},
		{"o_485917350850524254", "invoices.v2", "wpid_b40ad8faca6e8b337c349ab4a17543258d19cd32639f451b1b454879577bd2ba"},
		{"o_485917350850524254", z100, "wpid_a82e76b5e782ff908080fc9a06b13a7f88af4e9363cb4e2e8ddc42c38d2a1816"},
		{"o_485917350850524254", "export", "wpid_f4e2e5398d9c45d43e72cae88cbb25fe927feea9ee909e08849c58e0937ec5bd"},
		{"o_1", "contact-form", "wpid_47fdabecf93848d78517c0bd383f8a0726c19fc1a7f5efa0116221d6e00f5d91"},
		{"o_1", "a", "wpid_654091f1a85084a0e5398fd1a0c3170bda5a7e346d490edcab66b9f4b2942f29"},
		{"o_1", "7", "wpid_46f0f73029a2b5621024827af4dd3cfa4f6740db7d12fb3b0f74e72706aa9e44"},
		{"o_1", "invoices.v2", "wpid_13e70c84d85dbeb42a8f23382f1dcd7f34d4edcf7976f682602a3facc2f515a1"},
		{"o_1", z100, "wpid_f48baab30fea416e90d35edf489c96780b4b069a7cec462da34076c705df38f7"},
		{"o_1", "export", "wpid_bf8000e7831d87b5ad50e4317837b39ea66df1fbca69ee1e623ae0e26530fc20"},
	} {
		if got := agentfile.AgentID(c.org, c.name); got != c.want {
			t.Errorf("AgentID(%s, %s) = %s, want %s", c.org, c.name, got, c.want)
		}
	}
	if agentfile.AgentID("o_1", "a") == agentfile.AgentID("o_2", "a") || agentfile.AgentID("o_1", "a") == agentfile.AgentID("o_1", "b") {
		t.Error("AgentID does not depend on both the organization and the name")
	}
}
