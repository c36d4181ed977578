package webhooks_test

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/webhooks"
)

// TestLogHostAndLogError: what a log says of a delivery keeps the
// receiver's host and drops the rest of its URL, where receivers put their
// secrets, even when the error quotes the URL.
func TestLogHostAndLogError(t *testing.T) {
	const secret = "s3cr3t"
	for _, tc := range []struct {
		url, host string
	}{
		{"https://hooks.example.com/in/" + secret + "?token=" + secret, "hooks.example.com"},
		{" http://user:" + secret + "@127.0.0.1:8080/hook#" + secret + " ", "127.0.0.1:8080"},
		{"ftp://hooks.example.com/" + secret, "hooks.example.com"},
		{"http://hooks.example.com/\t" + secret, ""}, // does not parse: no host either
		{"", ""},
	} {
		if got := webhooks.LogHost(tc.url); got != tc.host {
			t.Errorf("LogHost(%q) = %q, want %q", tc.url, got, tc.host)
		}
		// The sender's own sentence for a URL it refuses quotes the URL
		// (Prepare sends nothing).
		var s webhooks.Sender
		d := s.Prepare(tc.url, "key", []byte(`{}`))
		if d.Err == "" {
			d.Err = "Webhook failed with status code 500, error message: " + tc.url // a receiver echoing its URL
		}
		got := webhooks.LogError(tc.url, d.Err)
		if strings.Contains(got, secret) {
			t.Errorf("LogError(%q, %q) = %q: it keeps the secret", tc.url, d.Err, got)
		}
		if tc.host != "" && !strings.Contains(got, tc.host) {
			t.Errorf("LogError(%q, %q) = %q: the host is gone", tc.url, d.Err, got)
		}
	}
	if got := webhooks.LogError("http://h/x", "Could not reach URL: dial tcp: lookup h: no such host"); got != "Could not reach URL: dial tcp: lookup h: no such host" {
		t.Errorf("LogError changed an error that does not hold the URL: %q", got)
	}
}
