package artifacts

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultLifetime is how long an artifact URL stays valid unless the
// caller chooses otherwise.
const DefaultLifetime = 24 * time.Hour

// MinSecretLen is the minimum size of the secret a Signer is made from.
const MinSecretLen = 32

// keyLabel derives the URL-signing key from the daemon's secret, so that
// the secret may key other things too without signatures of one kind being
// valid as another.
const keyLabel = "abctl artifact URLs v1"

// canonicalTag starts the signed string; a new URL format gets a new tag.
const canonicalTag = "abctl-artifact-url-v1"

// ErrShortSecret is returned by NewSigner for a secret under MinSecretLen
// bytes.
var ErrShortSecret = errors.New("artifacts: the URL-signing secret must be at least 32 bytes")

// Signer makes and checks artifact URLs. It is safe for concurrent use.
type Signer struct {
	key []byte
	now func() time.Time
}

// NewSigner returns a Signer keyed by HMAC-SHA256(secret, "abctl artifact
// URLs v1"). The secret (the daemon keeps one in its data directory) must
// be at least MinSecretLen bytes; it is not retained.
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretLen {
		return nil, ErrShortSecret
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(keyLabel))
	return &Signer{key: m.Sum(nil), now: time.Now}, nil
}

// WithClock returns a copy of the Signer whose handler checks expiry
// against now instead of time.Now (for tests).
func (s *Signer) WithClock(now func() time.Time) *Signer {
	c := *s
	if now == nil {
		now = time.Now
	}
	c.now = now
	return &c
}

// URL returns the signed URL of a run's file, valid until expires:
//
//	<base>/artifacts/<run id>/<name>?org=<org id>&expires=<unix>&signature=<hex>
//
// base is the scheme and host the client reached the daemon on, such as
// http://127.0.0.1:8780 (a trailing slash is ignored). The file is shown
// inline when its type allows it (see the package comment). Ids and names
// are expected to be valid (ValidID, executor.ValidFileName); a URL made from invalid
// ones is refused by the handler.
func (s *Signer) URL(base string, orgID, runID, name string, expires time.Time) string {
	return s.url(base, orgID, runID, name, expires, false)
}

// DownloadURL is URL for a file the browser should save rather than show
// (Content-Disposition: attachment), such as a file the run downloaded. It
// adds download=1, which the signature covers.
func (s *Signer) DownloadURL(base string, orgID, runID, name string, expires time.Time) string {
	return s.url(base, orgID, runID, name, expires, true)
}

func (s *Signer) url(base, orgID, runID, name string, expires time.Time, download bool) string {
	exp := expires.Unix()
	var b strings.Builder
	b.Grow(len(base) + len(runID) + 3*len(name) + len(orgID) + 140)
	b.WriteString(strings.TrimRight(base, "/"))
	b.WriteString("/artifacts/")
	b.WriteString(url.PathEscape(runID))
	b.WriteByte('/')
	b.WriteString(url.PathEscape(name))
	b.WriteString("?org=")
	b.WriteString(url.QueryEscape(orgID))
	b.WriteString("&expires=")
	b.WriteString(strconv.FormatInt(exp, 10))
	if download {
		b.WriteString("&download=1")
	}
	b.WriteString("&signature=")
	b.WriteString(s.sign(orgID, runID, name, exp, download))
	return b.String()
}

// sign returns the lowercase hex HMAC of the canonical string: the tag and
// each field on a line of its own, every field preceded by its length in
// bytes, so no two different tuples give the same string whatever the
// fields contain.
func (s *Signer) sign(orgID, runID, name string, expires int64, download bool) string {
	m := hmac.New(sha256.New, s.key)
	disp := "inline"
	if download {
		disp = "attachment"
	}
	m.Write([]byte(canonicalTag))
	m.Write([]byte{'\n'})
	field(m, orgID)
	field(m, runID)
	field(m, name)
	field(m, strconv.FormatInt(expires, 10))
	field(m, disp)
	return hex.EncodeToString(m.Sum(nil))
}

func field(h hash.Hash, v string) {
	var n [20]byte
	h.Write(strconv.AppendInt(n[:0], int64(len(v)), 10))
	h.Write([]byte{':'})
	h.Write([]byte(v))
	h.Write([]byte{'\n'})
}

// verify checks a signature in constant time.
func (s *Signer) verify(orgID, runID, name string, expires int64, download bool, sig string) bool {
	want := s.sign(orgID, runID, name, expires, download)
	return hmac.Equal([]byte(sig), []byte(want))
}
