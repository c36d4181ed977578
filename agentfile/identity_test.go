package agentfile_test

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/daemon/ids"
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
// organization, to the id the service (here the daemon's own derivation)
// gives an agent created with that key.
func TestIdentity(t *testing.T) {
	if k := agentfile.IdempotencyKey("contact-form"); k != "abctl:contact-form" {
		t.Errorf("IdempotencyKey = %q", k)
	}
	for _, org := range []string{"o_485917350850524254", "o_1"} {
		for _, name := range []string{"contact-form", "a", strings.Repeat("z", 100)} {
			want := ids.IdempotentAgentID(org, agentfile.IdempotencyKey(name))
			if got := agentfile.AgentID(org, name); got != want {
				t.Errorf("AgentID(%s, %s) = %s, want %s", org, name, got, want)
			}
		}
	}
	if agentfile.AgentID("o_1", "a") == agentfile.AgentID("o_2", "a") || agentfile.AgentID("o_1", "a") == agentfile.AgentID("o_1", "b") {
		t.Error("AgentID does not depend on both the organization and the name")
	}
}
