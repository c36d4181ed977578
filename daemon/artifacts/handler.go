package artifacts

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/localrun/executor"
)

// Path is the prefix the handler serves; the daemon mounts Store.Handler
// on it, outside the API-key check.
const Path = "/artifacts/"

// Error details of the handler.
const (
	detailNotFound   = "Artifact not found"
	detailNoSig      = "Missing artifact URL signature: the URL needs org, expires and signature parameters"
	detailBadSig     = "Invalid artifact URL signature"
	detailExpired    = "Artifact URL expired; fetch the run again for a fresh URL"
	detailBadMethod  = "Method Not Allowed"
	headerNoSniff    = "nosniff"
	headerCSP        = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox"
	headerNoReferrer = "no-referrer"
)

// contentTypes maps lowercase extensions to the types served; anything
// else is application/octet-stream.
var contentTypes = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".webm": "video/webm",
	".mp4":  "video/mp4",
	".json": "application/json",
	".txt":  "text/plain; charset=utf-8",
	".pdf":  "application/pdf",
	".zip":  "application/zip",
	".csv":  "text/csv; charset=utf-8",
}

// inlineTypes are the types a browser may show in place: passive content.
var inlineTypes = map[string]bool{
	"image/png":                 true,
	"image/jpeg":                true,
	"video/webm":                true,
	"video/mp4":                 true,
	"application/json":          true,
	"text/plain; charset=utf-8": true,
}

// ContentType returns the Content-Type the handler sends for name.
func ContentType(name string) string {
	if ct, ok := contentTypes[strings.ToLower(filepath.Ext(name))]; ok {
		return ct
	}
	return "application/octet-stream"
}

// Handler serves GET and HEAD /artifacts/{run_id}/{name} for URLs made by
// signer. It needs no API key: the signature is the credential. See the
// package comment for the checks and statuses.
func (s *Store) Handler(signer *Signer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serve(signer, w, r)
	})
}

func (s *Store) serve(signer *Signer, w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, r, http.StatusMethodNotAllowed, detailBadMethod)
		return
	}
	ref, status, detail := signer.check(r.URL)
	if status != 0 {
		writeError(w, r, status, detail)
		return
	}
	orgID, runID, name, download, exp := ref.orgID, ref.runID, ref.name, ref.download, ref.expires
	now := signer.now()
	s.ServeFile(w, r, orgID, runID, name, download, "private, max-age="+strconv.FormatInt(maxAge(now, exp), 10))
}

// signedRef is what a signed URL names.
type signedRef struct {
	orgID, runID, name string
	download           bool
	expires            int64
}

// check reads a URL of the handler: the file it names when its signature
// is valid and it has not expired, else the status and detail to answer
// (404 for a path that names no file, 403 for a missing or invalid
// signature, 410 for an expired URL).
func (s *Signer) check(u *url.URL) (signedRef, int, string) {
	// The escaped path, so that an encoded slash (%2F) stays inside its
	// segment and is refused with the name instead of splitting it.
	rest, ok := strings.CutPrefix(u.EscapedPath(), Path)
	if !ok {
		return signedRef{}, http.StatusNotFound, detailNotFound
	}
	rawRun, rawName, ok := strings.Cut(rest, "/")
	if !ok {
		return signedRef{}, http.StatusNotFound, detailNotFound
	}
	runID, err1 := url.PathUnescape(rawRun)
	name, err2 := url.PathUnescape(rawName)
	if err1 != nil || err2 != nil || !ValidID(runID) || !executor.ValidFileName(name) {
		return signedRef{}, http.StatusNotFound, detailNotFound
	}

	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return signedRef{}, http.StatusForbidden, detailNoSig
	}
	orgID, okOrg := single(q, "org")
	expStr, okExp := single(q, "expires")
	sig, okSig := single(q, "signature")
	if !okOrg || !okExp || !okSig {
		return signedRef{}, http.StatusForbidden, detailNoSig
	}
	download := false
	if vs, present := q["download"]; present {
		if len(vs) != 1 || vs[0] != "1" {
			return signedRef{}, http.StatusForbidden, detailBadSig
		}
		download = true
	}
	exp, err := strconv.ParseInt(expStr, 10, 64)
	if err != nil || !ValidID(orgID) || !s.verify(orgID, runID, name, exp, download, sig) {
		return signedRef{}, http.StatusForbidden, detailBadSig
	}
	if s.now().Unix() >= exp {
		return signedRef{}, http.StatusGone, detailExpired
	}
	return signedRef{orgID: orgID, runID: runID, name: name, download: download, expires: exp}, 0, ""
}

// maxAge is the number of whole seconds the URL has left, at most the
// default lifetime.
func maxAge(now time.Time, exp int64) int64 {
	left := exp - now.Unix()
	if limit := int64(DefaultLifetime / time.Second); left > limit {
		left = limit
	}
	if left < 0 {
		left = 0
	}
	return left
}

// single returns the only value of key, false when it is absent, empty or
// repeated.
func single(q url.Values, key string) (string, bool) {
	vs := q[key]
	if len(vs) != 1 || vs[0] == "" {
		return "", false
	}
	return vs[0], true
}

// disposition builds Content-Disposition with an ASCII fallback file name
// and the exact one in RFC 8187 form.
func disposition(name string, attachment bool) string {
	var b strings.Builder
	if attachment {
		b.WriteString("attachment")
	} else {
		b.WriteString("inline")
	}
	b.WriteString(`; filename="`)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '%' {
			c = '_'
		}
		b.WriteByte(c)
	}
	b.WriteString(`"; filename*=UTF-8''`)
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isAttrChar(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// isAttrChar reports whether c may appear unencoded in an RFC 8187 value.
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}

// writeError writes {"detail": detail} with status. Error responses are
// never cached.
func writeError(w http.ResponseWriter, r *http.Request, status int, detail string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", headerNoSniff)
	h.Set("Cache-Control", "no-store")
	b, _ := json.Marshal(map[string]string{"detail": detail})
	body := string(b) + "\n"
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte(body))
	}
}
