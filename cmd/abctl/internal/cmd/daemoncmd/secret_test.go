package daemoncmd

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/store"
)

// TestSecretFromEnv: ABCTL_DAEMON_SECRET gives the daemon its secret; a
// value of the wrong length or not hexadecimal is refused, without
// repeating it.
func TestSecretFromEnv(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if b, err := secretFromEnv(getenv); b != nil || err != nil {
		t.Errorf("unset: %x %v", b, err)
	}
	env[EnvSecret] = strings.Repeat("ab", store.SecretSize)
	if b, err := secretFromEnv(getenv); len(b) != store.SecretSize || err != nil || b[0] != 0xab {
		t.Errorf("64 hex digits: %x %v", b, err)
	}
	for _, bad := range []string{"abcd", strings.Repeat("zz", store.SecretSize)} {
		env[EnvSecret] = bad
		_, err := secretFromEnv(getenv)
		if err == nil || !strings.Contains(err.Error(), EnvSecret) || strings.Contains(err.Error(), bad) {
			t.Errorf("%d characters: %v", len(bad), err)
		}
	}
}
