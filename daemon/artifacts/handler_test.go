package artifacts

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

func TestRoundTrip(t *testing.T) {
	e := newEnv(t)
	content := make([]byte, 100<<10)
	for i := range content {
		content[i] = byte(i * 7)
	}
	f, _ := e.record(t, testOrg, testRun, "step_1.png", client.ArtifactScreenshotAction, content)

	sum := sha256.Sum256(content)
	if !strings.HasPrefix(f.ID, "a_") || f.Type != client.ArtifactScreenshotAction || f.Name != "step_1.png" ||
		f.Size != int64(len(content)) || f.SHA256 != hex.EncodeToString(sum[:]) || !f.CreatedAt.Equal(e.clock.now()) {
		t.Fatalf("record %+v", f)
	}

	u := e.signer.URL(e.base, testOrg, testRun, f.Name, e.clock.in(DefaultLifetime))
	wantPrefix := e.base + "/artifacts/" + testRun + "/step_1.png?org=o_1&expires=" +
		strconv.FormatInt(e.clock.in(DefaultLifetime).Unix(), 10) + "&signature="
	if !strings.HasPrefix(u, wantPrefix) || len(u) != len(wantPrefix)+64 {
		t.Fatalf("URL %s", u)
	}

	// A real client, as a browser would open it.
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("http.Get status %d", resp.StatusCode)
	}

	r := e.get(t, u)
	if r.status != 200 || !bytes.Equal(r.body, content) {
		t.Fatalf("status %d, %d bytes", r.status, len(r.body))
	}
	for k, want := range map[string]string{
		"Content-Type":           "image/png",
		"X-Content-Type-Options": "nosniff",
		"Content-Disposition":    `inline; filename="step_1.png"; filename*=UTF-8''step_1.png`,
		"Cache-Control":          "private, max-age=86400",
		"Accept-Ranges":          "bytes",
		"Content-Length":         strconv.Itoa(len(content)),
		"Referrer-Policy":        "no-referrer",
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if !strings.Contains(r.header.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("CSP %q", r.header.Get("Content-Security-Policy"))
	}
	lm := r.header.Get("Last-Modified")
	if lm == "" {
		t.Fatal("no Last-Modified")
	}

	// Conditional request.
	if r := e.get(t, u, "If-Modified-Since", lm); r.status != http.StatusNotModified {
		t.Errorf("If-Modified-Since: status %d", r.status)
	}

	// The signature also accepts the URL a minute before it expires, and
	// the cache lifetime shrinks with it.
	e.clock.add(DefaultLifetime - time.Minute)
	r = e.get(t, u)
	if r.status != 200 || r.header.Get("Cache-Control") != "private, max-age=60" {
		t.Fatalf("late: status %d, Cache-Control %q", r.status, r.header.Get("Cache-Control"))
	}
}

func TestHEAD(t *testing.T) {
	e := newEnv(t)
	f, content := e.record(t, testOrg, testRun, "rec.webm", client.ArtifactRecording, nil)
	u := e.signer.URL(e.base, testOrg, testRun, f.Name, e.clock.in(time.Hour))
	r := e.do(t, http.MethodHead, u)
	if r.status != 200 || len(r.body) != 0 {
		t.Fatalf("status %d, body %d bytes", r.status, len(r.body))
	}
	if r.header.Get("Content-Length") != strconv.Itoa(len(content)) || r.header.Get("Content-Type") != "video/webm" {
		t.Fatalf("headers %v", r.header)
	}
	if r.header.Get("Cache-Control") != "private, max-age=3600" {
		t.Errorf("Cache-Control %q", r.header.Get("Cache-Control"))
	}
	// Errors to HEAD have no body either.
	r = e.do(t, http.MethodHead, u[:len(u)-1]+"0")
	if r.status != 403 || len(r.body) != 0 {
		t.Fatalf("bad HEAD: status %d, body %q", r.status, r.body)
	}
}

func TestRange(t *testing.T) {
	e := newEnv(t)
	f, content := e.record(t, testOrg, testRun, "rec.mp4", client.ArtifactRecording, nil)
	u := e.signer.URL(e.base, testOrg, testRun, f.Name, e.clock.in(time.Hour))

	r := e.get(t, u, "Range", "bytes=10-19")
	if r.status != http.StatusPartialContent || !bytes.Equal(r.body, content[10:20]) {
		t.Fatalf("status %d, body %x", r.status, r.body)
	}
	if got := r.header.Get("Content-Range"); got != "bytes 10-19/1000" {
		t.Errorf("Content-Range %q", got)
	}
	r = e.get(t, u, "Range", "bytes=-5")
	if r.status != http.StatusPartialContent || !bytes.Equal(r.body, content[995:]) {
		t.Fatalf("suffix range: status %d", r.status)
	}
	r = e.get(t, u, "Range", "bytes=5000-")
	if r.status != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("unsatisfiable: status %d", r.status)
	}
}

func TestDisposition(t *testing.T) {
	e := newEnv(t)
	exp := e.clock.in(time.Hour)
	for _, tc := range []struct {
		name, ct string
		download bool
		want     string
	}{
		{"Rechnung März.pdf", "application/pdf", true,
			`attachment; filename="Rechnung M__rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`},
		{"Rechnung März.pdf", "application/pdf", false, // pdf is never inline
			`attachment; filename="Rechnung M__rz.pdf"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`},
		{"photo.PNG", "image/png", true, `attachment; filename="photo.PNG"; filename*=UTF-8''photo.PNG`},
		{"photo.PNG", "image/png", false, `inline; filename="photo.PNG"; filename*=UTF-8''photo.PNG`},
		{"a.jpeg", "image/jpeg", false, `inline; filename="a.jpeg"; filename*=UTF-8''a.jpeg`},
		{"b.jpg", "image/jpeg", false, `inline; filename="b.jpg"; filename*=UTF-8''b.jpg`},
		{"log.txt", "text/plain; charset=utf-8", false, `inline; filename="log.txt"; filename*=UTF-8''log.txt`},
		{"out.json", "application/json", false, `inline; filename="out.json"; filename*=UTF-8''out.json`},
		{"data.csv", "text/csv; charset=utf-8", false, `attachment; filename="data.csv"; filename*=UTF-8''data.csv`},
		{"all.zip", "application/zip", false, `attachment; filename="all.zip"; filename*=UTF-8''all.zip`},
		{"page.html", "application/octet-stream", false, `attachment; filename="page.html"; filename*=UTF-8''page.html`},
		{"x.svg", "application/octet-stream", false, `attachment; filename="x.svg"; filename*=UTF-8''x.svg`},
		{`report "#1"? 100%.txt`, "text/plain; charset=utf-8", true,
			`attachment; filename="report _#1_? 100_.txt"; filename*=UTF-8''report%20%22#1%22%3F%20100%25.txt`},
	} {
		e.write(t, testOrg, testRun, tc.name, []byte("x"))
		var u string
		if tc.download {
			u = e.signer.DownloadURL(e.base, testOrg, testRun, tc.name, exp)
		} else {
			u = e.signer.URL(e.base, testOrg, testRun, tc.name, exp)
		}
		r := e.get(t, u)
		if r.status != 200 || string(r.body) != "x" {
			t.Fatalf("%s: status %d %s", tc.name, r.status, r.body)
		}
		if got := r.header.Get("Content-Type"); got != tc.ct {
			t.Errorf("%s: Content-Type %q, want %q", tc.name, got, tc.ct)
		}
		if got := r.header.Get("Content-Disposition"); got != tc.want {
			t.Errorf("%s: Content-Disposition\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestDownloadFlagIsSigned(t *testing.T) {
	e := newEnv(t)
	e.write(t, testOrg, testRun, "photo.png", nil)
	exp := e.clock.in(time.Hour)
	dl := e.signer.DownloadURL(e.base, testOrg, testRun, "photo.png", exp)
	in := e.signer.URL(e.base, testOrg, testRun, "photo.png", exp)
	if !strings.Contains(dl, "&download=1&") {
		t.Fatalf("download URL %s", dl)
	}
	// Stripping the flag, adding it, or changing its value breaks the URL.
	wantDetail(t, e.get(t, strings.Replace(dl, "&download=1", "", 1)), 403)
	wantDetail(t, e.get(t, strings.Replace(in, "&signature=", "&download=1&signature=", 1)), 403)
	wantDetail(t, e.get(t, strings.Replace(dl, "download=1", "download=true", 1)), 403)
	wantDetail(t, e.get(t, strings.Replace(dl, "download=1", "download=1&download=1", 1)), 403)
}

func TestBadSignatures(t *testing.T) {
	e := newEnv(t)
	e.write(t, testOrg, testRun, "shot.png", nil)
	e.write(t, testOrg, "wr_2", "shot.png", nil)
	e.write(t, "o_2", testRun, "shot.png", nil)
	e.write(t, testOrg, testRun, "other.png", nil)
	exp := e.clock.in(time.Hour)
	good := e.signer.URL(e.base, testOrg, testRun, "shot.png", exp)
	if r := e.get(t, good); r.status != 200 {
		t.Fatalf("good URL: %d", r.status)
	}
	path, query, _ := strings.Cut(good, "?")
	q, _ := url.ParseQuery(query)
	sig := q.Get("signature")
	flip := func(i int) string {
		b := []byte(sig)
		if b[i] == '0' {
			b[i] = '1'
		} else {
			b[i] = '0'
		}
		return string(b)
	}
	with := func(k, v string) string {
		q2 := url.Values{}
		for kk, vv := range q {
			q2[kk] = append([]string(nil), vv...)
		}
		if v == "" {
			q2.Del(k)
		} else {
			q2.Set(k, v)
		}
		return path + "?" + q2.Encode()
	}
	other, _ := NewSigner(bytes.Repeat([]byte("z"), 32))
	sigOf := func(u string) string {
		_, qs, _ := strings.Cut(u, "?")
		v, _ := url.ParseQuery(qs)
		return v.Get("signature")
	}

	bad := map[string]string{
		"first char flipped":   with("signature", flip(0)),
		"last char flipped":    with("signature", flip(63)),
		"middle char flipped":  with("signature", flip(31)),
		"upper case":           with("signature", strings.ToUpper(sig)),
		"truncated":            with("signature", sig[:63]),
		"extended":             with("signature", sig+"0"),
		"other secret":         with("signature", sigOf(other.URL(e.base, testOrg, testRun, "shot.png", exp))),
		"other run":            with("signature", sigOf(e.signer.URL(e.base, testOrg, "wr_2", "shot.png", exp))),
		"other org":            with("signature", sigOf(e.signer.URL(e.base, "o_2", testRun, "shot.png", exp))),
		"other name":           with("signature", sigOf(e.signer.URL(e.base, testOrg, testRun, "other.png", exp))),
		"org changed":          with("org", "o_2"),
		"expires extended":     with("expires", strconv.FormatInt(exp.Unix()+1, 10)),
		"expires not a number": with("expires", "soon"),
		"org invalid":          with("org", "../o_1"),
		"run moved":            strings.Replace(good, "/"+testRun+"/", "/wr_2/", 1),
		"name moved":           strings.Replace(good, "/shot.png?", "/other.png?", 1),
		"duplicate signature":  good + "&signature=" + sig,
		"duplicate org":        good + "&org=o_1",
		"bad query escape":     good + "&x=%zz",
	}
	for name, u := range bad {
		t.Run(name, func(t *testing.T) {
			r := e.get(t, u)
			wantDetail(t, r, 403)
			if !strings.Contains(string(r.body), "signature") {
				t.Errorf("detail %s", r.body)
			}
		})
	}
	missing := map[string]string{
		"no query":     path,
		"no signature": with("signature", ""),
		"no org":       with("org", ""),
		"no expires":   with("expires", ""),
		"empty sig":    path + "?org=o_1&expires=" + q.Get("expires") + "&signature=",
	}
	for name, u := range missing {
		t.Run(name, func(t *testing.T) {
			r := e.get(t, u)
			wantDetail(t, r, 403)
			if !strings.Contains(string(r.body), "Missing artifact URL signature") {
				t.Errorf("detail %s", r.body)
			}
		})
	}
	// Unrelated extra parameters do not matter.
	if r := e.get(t, good+"&cachebust=1"); r.status != 200 {
		t.Errorf("extra parameter: %d", r.status)
	}
}

func TestExpired(t *testing.T) {
	e := newEnv(t)
	e.write(t, testOrg, testRun, "shot.png", nil)
	exp := e.clock.in(10 * time.Second)
	u := e.signer.URL(e.base, testOrg, testRun, "shot.png", exp)
	if r := e.get(t, u); r.status != 200 || r.header.Get("Cache-Control") != "private, max-age=10" {
		t.Fatalf("fresh: %d %q", r.status, r.header.Get("Cache-Control"))
	}
	e.clock.add(9 * time.Second)
	if r := e.get(t, u); r.status != 200 || r.header.Get("Cache-Control") != "private, max-age=1" {
		t.Fatalf("nearly expired: %d %q", r.status, r.header.Get("Cache-Control"))
	}
	e.clock.add(time.Second) // now == expires
	r := e.get(t, u)
	wantDetail(t, r, http.StatusGone)
	if !strings.Contains(string(r.body), "expired") || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("expired: %s, %q", r.body, r.header.Get("Cache-Control"))
	}
	// An expired URL with a bad signature is a bad signature, not expired.
	wantDetail(t, e.get(t, u[:len(u)-1]+map[bool]string{true: "1", false: "0"}[u[len(u)-1] == '0']), 403)
	// A URL signed in the past is expired from the start.
	wantDetail(t, e.get(t, e.signer.URL(e.base, testOrg, testRun, "shot.png", e.clock.in(-time.Hour))), http.StatusGone)
}

func TestMethods(t *testing.T) {
	e := newEnv(t)
	e.write(t, testOrg, testRun, "shot.png", nil)
	u := e.signer.URL(e.base, testOrg, testRun, "shot.png", e.clock.in(time.Hour))
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		r := e.do(t, m, u, "Content-Length", "0")
		wantDetail(t, r, http.StatusMethodNotAllowed)
		if r.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: Allow %q", m, r.header.Get("Allow"))
		}
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t)
	e.write(t, testOrg, testRun, "shot.png", nil)
	exp := e.clock.in(time.Hour)
	for _, u := range []string{
		e.signer.URL(e.base, testOrg, testRun, "missing.png", exp), // no such file
		e.signer.URL(e.base, testOrg, "wr_404", "shot.png", exp),   // no such run
		e.signer.URL(e.base, "o_404", testRun, "shot.png", exp),    // no such org
		e.base + "/artifacts/" + testRun + "?" + e.signedQuery(testOrg, testRun, "", exp),
		e.base + "/artifacts/",
		e.base + "/other/" + testRun + "/shot.png?" + e.signedQuery(testOrg, testRun, "shot.png", exp),
	} {
		wantDetail(t, e.get(t, u), 404)
	}
	// A directory in the run directory is not a file.
	if err := e.mkdirIn(testOrg, testRun, "sub.png"); err != nil {
		t.Fatal(err)
	}
	wantDetail(t, e.get(t, e.signer.URL(e.base, testOrg, testRun, "sub.png", exp)), 404)
}

// TestKnownAnswer pins the signing scheme: the key is HMAC-SHA256(secret,
// label) and the message the length-prefixed canonical string.
func TestKnownAnswer(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	s, err := NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Unix(1750000000, 0)
	k := hmac.New(sha256.New, secret)
	k.Write([]byte("abctl artifact URLs v1"))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte("abctl-artifact-url-v1\n3:o_1\n8:wr_12345\n8:shot.png\n10:1750000000\n6:inline\n"))
	want := hex.EncodeToString(m.Sum(nil))
	got := s.URL("http://127.0.0.1:8780/", "o_1", "wr_12345", "shot.png", exp)
	if got != "http://127.0.0.1:8780/artifacts/wr_12345/shot.png?org=o_1&expires=1750000000&signature="+want {
		t.Fatalf("URL %s", got)
	}
	// The raw secret is not the key.
	raw := hmac.New(sha256.New, secret)
	raw.Write([]byte("abctl-artifact-url-v1\n3:o_1\n8:wr_12345\n8:shot.png\n10:1750000000\n6:inline\n"))
	if hex.EncodeToString(raw.Sum(nil)) == want {
		t.Fatal("signature made with the raw secret")
	}
	// Path parts are escaped.
	got = s.URL("http://127.0.0.1:8780", "o_1", "wr_12345", "a b/ä?#.png", exp)
	if !strings.HasPrefix(got, "http://127.0.0.1:8780/artifacts/wr_12345/a%20b%2F%C3%A4%3F%23.png?org=o_1&") {
		t.Fatalf("escaped URL %s", got)
	}
}

func TestNewSigner(t *testing.T) {
	for _, n := range []int{0, 16, 31} {
		if _, err := NewSigner(make([]byte, n)); !errors.Is(err, ErrShortSecret) {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	if _, err := NewSigner(make([]byte, 64)); err != nil {
		t.Error(err)
	}
}

func TestEscapedNameRoundTrip(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"a b.png", "ümlaut ☃.txt", "100%.txt", "q?x#y.json", "+plus&amp;=.csv", "%2e%2e.txt"} {
		f, content := e.record(t, testOrg, testRun, name, client.ArtifactDownload, nil)
		r := e.get(t, SignedURL(e.base, e.signer, testOrg, testRun, f, e.clock.in(time.Hour)))
		if r.status != 200 || !bytes.Equal(r.body, content) {
			t.Errorf("%q: status %d", name, r.status)
		}
	}
}
