// Package totp makes time-based one-time passwords (RFC 6238) from the
// secrets authenticator apps are given, as base32 text
// ("JBSWY3DPEHPK3PXP") or as an otpauth:// URI (the text of the QR code a
// site shows when a second factor is set up).
package totp

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Key is a parsed TOTP secret with its parameters.
type Key struct {
	Secret    []byte
	Digits    int           // 6 (the default), 7 or 8
	Period    time.Duration // 30 s by default
	Algorithm string        // "SHA1" (the default), "SHA256" or "SHA512"
}

// Parse reads a secret as authenticator apps take it: base32 (any case,
// spaces and dashes ignored, padding optional), or an otpauth://totp/ URI
// with secret and optional digits, period and algorithm. Errors say what is
// wrong without repeating the secret.
func Parse(s string) (*Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("the TOTP secret is empty")
	}
	k := &Key{Digits: 6, Period: 30 * time.Second, Algorithm: "SHA1"}
	if strings.HasPrefix(strings.ToLower(s), "otpauth://") {
		u, err := url.Parse(s)
		if err != nil {
			return nil, errors.New("the TOTP secret is an otpauth:// URI that cannot be parsed")
		}
		if !strings.EqualFold(u.Host, "totp") {
			return nil, fmt.Errorf("the otpauth:// URI is for %q codes; only totp is supported", u.Host)
		}
		q := u.Query()
		s = q.Get("secret")
		if s == "" {
			return nil, errors.New("the otpauth:// URI has no secret parameter")
		}
		if d := q.Get("digits"); d != "" {
			n, err := strconv.Atoi(d)
			if err != nil || n < 6 || n > 8 {
				return nil, fmt.Errorf("the otpauth:// URI's digits must be 6, 7 or 8, not %q", d)
			}
			k.Digits = n
		}
		if p := q.Get("period"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 3600 {
				return nil, fmt.Errorf("the otpauth:// URI's period must be 1 to 3600 seconds, not %q", p)
			}
			k.Period = time.Duration(n) * time.Second
		}
		if a := strings.ToUpper(q.Get("algorithm")); a != "" {
			if a != "SHA1" && a != "SHA256" && a != "SHA512" {
				return nil, fmt.Errorf("the otpauth:// URI's algorithm must be SHA1, SHA256 or SHA512, not %q", a)
			}
			k.Algorithm = a
		}
	}
	secret, err := decodeBase32(s)
	if err != nil {
		return nil, err
	}
	k.Secret = secret
	return k, nil
}

// Valid reports whether s is a secret Parse accepts, with the reason when
// it is not.
func Valid(s string) error {
	_, err := Parse(s)
	return err
}

func decodeBase32(s string) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '\t', '=':
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
	for i, r := range clean {
		if !(r >= 'A' && r <= 'Z' || r >= '2' && r <= '7') {
			return nil, fmt.Errorf("the TOTP secret is not base32: character %d is not a letter or a digit from 2 to 7", i+1)
		}
	}
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(clean)
	if err != nil {
		return nil, errors.New("the TOTP secret is not valid base32 (its length does not make whole bytes)")
	}
	if len(b) < 10 {
		return nil, fmt.Errorf("the TOTP secret is %d bytes long; authenticator secrets are at least 10 (16 base32 characters)", len(b))
	}
	return b, nil
}

// Code returns the code for the time t.
func (k *Key) Code(t time.Time) string {
	return hotp(k.newHash, k.Secret, uint64(t.Unix())/uint64(k.Period/time.Second), k.Digits)
}

// Remaining is how long the code for t stays valid.
func (k *Key) Remaining(t time.Time) time.Duration {
	p := int64(k.Period / time.Second)
	return time.Duration(p-t.Unix()%p) * time.Second
}

func (k *Key) newHash() hash.Hash {
	switch k.Algorithm {
	case "SHA256":
		return sha256.New()
	case "SHA512":
		return sha512.New()
	}
	return sha1.New()
}

// hotp is RFC 4226's HOTP: the HMAC of the counter, dynamically truncated.
func hotp(h func() hash.Hash, secret []byte, counter uint64, digits int) string {
	mac := hmac.New(h, secret)
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	mac.Write(msg[:])
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, v%mod)
}
