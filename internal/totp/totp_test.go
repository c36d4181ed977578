package totp

import (
	"encoding/base32"
	"strings"
	"testing"
	"time"
)

// TestRFC6238Vectors: the test vectors of RFC 6238, appendix B (8 digits,
// 30 s steps, the ASCII seeds of the RFC for each algorithm).
func TestRFC6238Vectors(t *testing.T) {
	seeds := map[string]string{
		"SHA1":   "12345678901234567890",
		"SHA256": "12345678901234567890123456789012",
		"SHA512": "1234567890123456789012345678901234567890123456789012345678901234",
	}
	for _, tc := range []struct {
		unix int64
		alg  string
		want string
	}{
		{59, "SHA1", "94287082"}, {59, "SHA256", "46119246"}, {59, "SHA512", "90693936"},
		{1111111109, "SHA1", "07081804"}, {1111111109, "SHA256", "68084774"}, {1111111109, "SHA512", "25091201"},
		{1111111111, "SHA1", "14050471"}, {1111111111, "SHA256", "67062674"}, {1111111111, "SHA512", "99943326"},
		{1234567890, "SHA1", "89005924"}, {1234567890, "SHA256", "91819424"}, {1234567890, "SHA512", "93441116"},
		{2000000000, "SHA1", "69279037"}, {2000000000, "SHA256", "90698825"}, {2000000000, "SHA512", "38618901"},
		{20000000000, "SHA1", "65353130"}, {20000000000, "SHA256", "77737706"}, {20000000000, "SHA512", "47863826"},
	} {
		secret := base32.StdEncoding.EncodeToString([]byte(seeds[tc.alg]))
		k, err := Parse("otpauth://totp/test?secret=" + secret + "&digits=8&algorithm=" + tc.alg)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.Code(time.Unix(tc.unix, 0)); got != tc.want {
			t.Errorf("%s at %d: %s, want %s", tc.alg, tc.unix, got, tc.want)
		}
	}
}

// TestParse: the forms authenticator apps accept, and what is refused,
// with errors that never repeat the secret.
func TestParse(t *testing.T) {
	const secret = "JBSWY3DPEHPK3PXP"
	for _, in := range []string{secret, strings.ToLower(secret), "jbsw y3dp ehpk 3pxp", "JBSW-Y3DP-EHPK-3PXP", secret + "======", " " + secret + "\n"} {
		k, err := Parse(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if k.Digits != 6 || k.Period != 30*time.Second || k.Algorithm != "SHA1" || string(k.Secret) != "Hello!\xde\xad\xbe\xef" {
			t.Errorf("%q: %+v", in, k)
		}
	}
	// The code of the well-known demo secret at a fixed time, as
	// authenticator apps show it.
	k, _ := Parse(secret)
	if got := k.Code(time.Unix(1700000000, 0)); len(got) != 6 || got != k.Code(time.Unix(1700000000-1700000000%30, 0)) {
		t.Errorf("code %q is not stable within its 30 s step", got)
	}
	if r := k.Remaining(time.Unix(1700000000, 0)); r != 10*time.Second {
		t.Errorf("remaining %v, want 10s (1700000000 is 20 s into its step)", r)
	}

	for in, want := range map[string]string{
		"":                                  "empty",
		"JBSWY3DPEHPK3PX1":                  "character 16",
		"JBSWY3DP":                          "at least 10",
		"otpauth://hotp/x?secret=" + secret: "only totp",
		"otpauth://totp/x":                  "no secret",
		"otpauth://totp/x?secret=" + secret + "&digits=5":      "digits",
		"otpauth://totp/x?secret=" + secret + "&algorithm=MD5": "algorithm",
		"otpauth://totp/x?secret=" + secret + "&period=0":      "period",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error about %q", in, err, want)
			continue
		}
		if in != "" && strings.Contains(err.Error(), secret) {
			t.Errorf("%q: the error repeats the secret: %v", in, err)
		}
	}
}
