package storage

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

func TestParseHostKey(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	pub, _ := ssh.NewPublicKey(priv.Public())
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	other, _ := ssh.NewPublicKey(otherPriv.Public())
	authorized := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
	blob := strings.Fields(authorized)[1]
	for _, given := range []string{
		authorized,
		authorized + " admin@example.com",
		knownhosts.Line([]string{"[sftp.example.com]:2222"}, pub),
		blob,
		ssh.FingerprintSHA256(pub),
		ssh.FingerprintLegacyMD5(pub),
		"MD5:" + ssh.FingerprintLegacyMD5(pub),
	} {
		h, err := parseHostKey(given)
		if err != nil {
			t.Errorf("%q: %v", given, err)
			continue
		}
		if !h.matches(pub) || h.matches(other) {
			t.Errorf("%q: matches the key %v, another key %v", given, h.matches(pub), h.matches(other))
		}
	}
	for _, bad := range []string{"", "ssh-ed25519", "SHA1:abc", "aGVsbG8="} {
		if _, err := parseHostKey(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestJoinKey(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"abctl/", "id", "a b.csv"}, "abctl/id/a b.csv"},
		{[]string{"", "/reports//", "x.csv"}, "reports/x.csv"},
		{[]string{" \\win\\path\\ ", "f"}, "win/path/f"},
		{nil, ""},
	} {
		if got := JoinKey(tc.parts...); got != tc.want {
			t.Errorf("JoinKey(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}

func TestS3ConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"AWS_ENDPOINT_URL":      "http://other:9000",
		"AWS_ENDPOINT_URL_S3":   "http://minio:9000",
		"AWS_DEFAULT_REGION":    "eu-west-3",
		"AWS_ACCESS_KEY_ID":     "AKIA",
		"AWS_SECRET_ACCESS_KEY": "secret",
	}
	got := S3ConfigFromEnv(func(k string) string { return env[k] })
	want := S3Config{Endpoint: "http://minio:9000", Region: "eu-west-3", AccessKeyID: "AKIA", SecretAccessKey: "secret"}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
