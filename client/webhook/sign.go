package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Header names of a webhook delivery, as the hosted service spells them.
// HTTP header names are case-insensitive; Go canonicalizes them to
// X-Skyvern-Signature and X-Skyvern-Timestamp.
const (
	// SignatureHeader carries the lowercase hex HMAC-SHA256 of the body.
	SignatureHeader = "x-skyvern-signature"
	// TimestampHeader carries the sending time in Unix seconds. It is not
	// covered by the signature, so it proves nothing on its own; see
	// WithTimestampTolerance for why the hosted service's value is skewed.
	TimestampHeader = "x-skyvern-timestamp"
)

// Errors of Verify, usable with errors.Is. Errors returned by this package
// never contain the key.
var (
	// ErrMissingSignature means the signature header was absent or blank:
	// the request was not sent by the service, or a proxy dropped the
	// header.
	ErrMissingSignature = errors.New("webhook: missing signature")
	// ErrInvalidSignature means a signature was present but does not match
	// the body: the body was changed (or re-serialized) on the way, the key
	// is not the one that signed it, or the header is malformed.
	ErrInvalidSignature = errors.New("webhook: invalid signature")
	// ErrEmptyKey means the key is empty. An empty HMAC key is a valid key
	// that everybody knows, so verifying with it would accept forgeries,
	// and signing with it protects nothing.
	ErrEmptyKey = errors.New("webhook: empty key")
)

// Sign returns the signature of body under key: the lowercase hex
// HMAC-SHA256 of the exact bytes, keyed with the UTF-8 bytes of key. It is
// the value of the SignatureHeader. body must be the bytes sent on the wire,
// usually the output of Body or Normalize.
func Sign(key string, body []byte) string {
	return hex.EncodeToString(mac(key, body))
}

func mac(key string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(key))
	m.Write(body)
	return m.Sum(nil)
}

// Verify checks signature, the value of the SignatureHeader, against the raw
// body as received. It accepts upper- or lowercase hex and ignores
// surrounding whitespace, because proxies and hand-written test tools vary
// in both. The comparison runs in constant time over the decoded bytes, so
// timing does not reveal how much of a forged signature is right.
//
// It returns nil on a match, ErrMissingSignature for an empty signature,
// ErrEmptyKey for an empty key, and an error wrapping ErrInvalidSignature
// otherwise.
func Verify(key string, body []byte, signature string) error {
	signature = strings.TrimSpace(signature)
	if signature == "" {
		return ErrMissingSignature
	}
	if key == "" {
		return ErrEmptyKey
	}
	got, err := hex.DecodeString(signature)
	if err != nil {
		return fmt.Errorf("%w: not hexadecimal", ErrInvalidSignature)
	}
	if len(got) != sha256.Size {
		return fmt.Errorf("%w: want %d hex digits, got %d", ErrInvalidSignature, 2*sha256.Size, len(signature))
	}
	if !hmac.Equal(got, mac(key, body)) {
		return ErrInvalidSignature
	}
	return nil
}

// SignedHeaders returns the three headers of a delivery of body: the
// Content-Type, the signature of body under key and now as Unix seconds.
// The timestamp is the true Unix time of now, not the hosted service's
// skewed value.
func SignedHeaders(key string, body []byte, now time.Time) http.Header {
	h := make(http.Header, 3)
	h.Set("Content-Type", "application/json")
	h.Set(SignatureHeader, Sign(key, body))
	h.Set(TimestampHeader, strconv.FormatInt(now.Unix(), 10))
	return h
}

// NewRequest returns a signed webhook delivery: a POST of body to url with
// the headers of SignedHeaders. body is sent and signed exactly as given and
// must not be modified afterwards; build it with Body or Normalize so that
// receivers written for the hosted service see the bytes they expect. It is
// what a server sends on run completion, and what a receiver's tests send to
// the receiver.
func NewRequest(ctx context.Context, url, key string, body []byte, now time.Time) (*http.Request, error) {
	if key == "" {
		return nil, ErrEmptyKey
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("webhook: new request: %w", err)
	}
	for k, v := range SignedHeaders(key, body, now) {
		req.Header[k] = v
	}
	return req, nil
}

// encodeBuffers recycles the scratch buffers of Body; the result is always
// a fresh slice, so pooling them is invisible to callers.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Body returns the webhook body for v: v marshaled by encoding/json (with
// HTML escaping off) and then passed through Normalize, so the bytes are
// those the hosted service would sign for the same value. Keys of a struct
// come in field declaration order, which is how callers control the key
// order; keys of a Go map come sorted, because encoding/json sorts them,
// so use a struct (or json.RawMessage) where the order matters.
func Body(v any) ([]byte, error) {
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			encodeBuffers.Put(buf)
		}
	}()
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("webhook: encode body: %w", err)
	}
	return Normalize(buf.Bytes())
}
