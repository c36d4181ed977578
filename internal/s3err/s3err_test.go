package s3err

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	got := Redact("key AKIA1234 and secret s3cr3tvalue, short ab", "AKIA1234", "s3cr3tvalue", "ab", "")
	if strings.Contains(got, "AKIA1234") || strings.Contains(got, "s3cr3tvalue") {
		t.Errorf("a secret left in %q", got)
	}
	if !strings.Contains(got, "short ab") {
		t.Errorf("a secret under four bytes was replaced (it would replace ordinary words): %q", got)
	}
}

func TestNetCause(t *testing.T) {
	cause := errors.New("connection refused")
	err := &url.Error{Op: "Get", URL: "https://bucket.example/key?X-Amz-Signature=secret", Err: &net.OpError{Op: "dial", Err: cause}}
	if got := NetCause(err); got != cause {
		t.Errorf("NetCause = %v, want the cause alone", got)
	}
	if other := errors.New("plain"); NetCause(other) != other {
		t.Error("NetCause changed an error without a request or an operation")
	}
}

func TestRefusedKey(t *testing.T) {
	for _, code := range []string{"InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken"} {
		if !RefusedKey(code) {
			t.Errorf("RefusedKey(%q) = false", code)
		}
	}
	for _, code := range []string{"", "NoSuchBucket", "SlowDown"} {
		if RefusedKey(code) {
			t.Errorf("RefusedKey(%q) = true", code)
		}
	}
}
