package artifacts

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/abctl/abctl/client"
)

const (
	testBucket    = "abctl-runs"
	testPrefix    = "team/files"
	testKeyID     = "AKIATESTARTIFACTS"
	testSecretKey = "s3-secret-key-0123456789-never-shown"
)

// fakeS3 is an S3-compatible service on loopback (gofakes3, in memory)
// that refuses access keys it does not know, as AWS does (gofakes3 itself
// checks no signature), and counts the requests it receives.
type fakeS3 struct {
	url      string
	srv      *httptest.Server
	backend  *s3mem.Backend
	requests atomic.Int64
}

var credentialRE = regexp.MustCompile(`Credential=([^/]+)/`)

func startS3(t testing.TB, buckets ...string) *fakeS3 {
	t.Helper()
	f := &fakeS3{backend: s3mem.New()}
	for _, b := range buckets {
		if err := f.backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	h := gofakes3.New(f.backend).Server()
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if m := credentialRE.FindStringSubmatch(r.Header.Get("Authorization")); m == nil || m[1] != testKeyID {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			if r.Method != http.MethodHead {
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>`+
					`<Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>`)
			}
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL
	return f
}

func (f *fakeS3) config() BucketConfig {
	return BucketConfig{Endpoint: f.url, Region: "us-east-1", AccessKeyID: testKeyID, SecretAccessKey: testSecretKey,
		Bucket: testBucket, Prefix: testPrefix}
}

// object returns the bytes of key, false when there is none.
func (f *fakeS3) object(t testing.TB, key string) ([]byte, bool) {
	t.Helper()
	obj, err := f.backend.GetObject(testBucket, key, nil)
	if err != nil {
		var e gofakes3.Error
		if errors.As(err, &e) && e.ErrorCode() == gofakes3.ErrNoSuchKey {
			return nil, false
		}
		t.Fatalf("%s: %v", key, err)
	}
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

func openTestBucket(t testing.TB, cfg BucketConfig) *Bucket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := OpenBucket(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// twoDaemons are the artifact stores of two daemons: each its own
// directory, one bucket and one secret.
func twoDaemons(t *testing.T) (a, b *env, s3 *fakeS3) {
	s3 = startS3(t, testBucket)
	a = newEnv(t, WithBucket(openTestBucket(t, s3.config())))
	b = newEnv(t, WithBucket(openTestBucket(t, s3.config())))
	return a, b, s3
}

// sameHeaders are the headers a file is served with that must not depend
// on which daemon serves it.
var sameHeaders = []string{"Content-Type", "Content-Length", "Content-Disposition", "Cache-Control",
	"X-Content-Type-Options", "Content-Security-Policy", "Referrer-Policy", "Last-Modified", "Accept-Ranges"}

func TestBucketServesAnotherDaemonsFile(t *testing.T) {
	a, b, s3 := twoDaemons(t)
	content := make([]byte, 300_000)
	rand.Read(content)
	f, _ := a.record(t, testOrg, testRun, "rec.mp4", client.ArtifactRecording, content)

	// The file is in the bucket once recorded, under the prefix.
	key := testPrefix + "/" + testOrg + "/" + testRun + "/rec.mp4"
	if got, ok := s3.object(t, key); !ok || !bytes.Equal(got, content) {
		t.Fatalf("object %s: present %v, %d bytes", key, ok, len(got))
	}
	// B has no copy on its disk.
	if _, err := os.Stat(filepath.Join(b.store.Dir(), testOrg, testRun, "rec.mp4")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("B's disk: %v", err)
	}

	// A URL A signed works on B: same secret.
	u := a.signer.URL(a.base, testOrg, testRun, f.Name, a.clock.in(time.Hour))
	fromA, fromB := a.get(t, u), b.get(t, u)
	if fromB.status != http.StatusOK || !bytes.Equal(fromB.body, content) {
		t.Fatalf("B: status %d, %d bytes; body %.200s", fromB.status, len(fromB.body), fromB.body)
	}
	for _, h := range sameHeaders {
		if fromA.header.Get(h) != fromB.header.Get(h) {
			t.Errorf("%s: A %q, B %q", h, fromA.header.Get(h), fromB.header.Get(h))
		}
	}
	if fromB.header.Get("Content-Type") != "video/mp4" || fromB.header.Get("Last-Modified") == "" {
		t.Errorf("B's headers: %v", fromB.header)
	}

	// Ranges.
	for _, tc := range []struct {
		rng, want string
		from, to  int
	}{
		{"bytes=10-19", "bytes 10-19/300000", 10, 20},
		{"bytes=-5", "bytes 299995-299999/300000", 299995, 300000},
		{"bytes=200000-", "bytes 200000-299999/300000", 200000, 300000},
	} {
		r := b.get(t, u, "Range", tc.rng)
		if r.status != http.StatusPartialContent || !bytes.Equal(r.body, content[tc.from:tc.to]) {
			t.Fatalf("%s: status %d, %d bytes", tc.rng, r.status, len(r.body))
		}
		if got := r.header.Get("Content-Range"); got != tc.want {
			t.Errorf("%s: Content-Range %q, want %q", tc.rng, got, tc.want)
		}
	}
	if r := b.get(t, u, "Range", "bytes=400000-"); r.status != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("unsatisfiable range: status %d", r.status)
	}
	// Conditional requests with the Last-Modified A answered.
	if r := b.get(t, u, "If-Modified-Since", fromA.header.Get("Last-Modified")); r.status != http.StatusNotModified {
		t.Errorf("If-Modified-Since: status %d", r.status)
	}
	// HEAD: the headers, no body.
	if r := b.do(t, http.MethodHead, u); r.status != http.StatusOK || len(r.body) != 0 || r.header.Get("Content-Length") != "300000" {
		t.Errorf("HEAD: status %d, %d bytes, length %q", r.status, len(r.body), r.header.Get("Content-Length"))
	}
	// A download URL: an attachment on B as on A.
	d := a.signer.DownloadURL(a.base, testOrg, testRun, f.Name, a.clock.in(time.Hour))
	if r := b.get(t, d); r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment;") {
		t.Errorf("download: status %d, disposition %q", r.status, r.header.Get("Content-Disposition"))
	}

	// A run on B given the URL reads the file (LocalFiles) from the bucket.
	pu, _ := url.Parse(u)
	rc, name, ok, err := LocalFiles{Store: b.store, Signer: b.signer}.OpenURL(pu)
	if err != nil || !ok || name != "rec.mp4" {
		t.Fatalf("OpenURL: %q %v %v", name, ok, err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("OpenURL read %d bytes, %v", len(got), err)
	}
}

func TestBucketFileInNeither(t *testing.T) {
	a, b, _ := twoDaemons(t)
	a.record(t, testOrg, testRun, "shot.png", client.ArtifactScreenshot, nil)
	for _, name := range []string{"other.png", "missing.txt"} {
		u := a.signer.URL(a.base, testOrg, testRun, name, a.clock.in(time.Hour))
		wantDetail(t, b.get(t, u), http.StatusNotFound)
		wantDetail(t, a.get(t, u), http.StatusNotFound)
		pu, _ := url.Parse(u)
		if _, _, ok, err := (LocalFiles{Store: b.store, Signer: b.signer}).OpenURL(pu); !ok || err == nil {
			t.Errorf("OpenURL %s: ok %v, err %v", name, ok, err)
		}
	}
	// Another run's id, another org's: nothing.
	u := a.signer.URL(a.base, "o_2", testRun, "shot.png", a.clock.in(time.Hour))
	wantDetail(t, b.get(t, u), http.StatusNotFound)
}

// TestBucketChecksBeforeTheBucket: ids, names, signatures and expiry are
// checked before anything reaches the bucket.
func TestBucketChecksBeforeTheBucket(t *testing.T) {
	a, b, s3 := twoDaemons(t)
	a.record(t, testOrg, testRun, "shot.png", client.ArtifactScreenshot, nil)
	good := a.signer.URL(a.base, testOrg, testRun, "shot.png", a.clock.in(time.Hour))
	before := s3.requests.Load()
	for _, target := range []string{
		"/artifacts/" + testRun + "/..%2Fshot.png?" + b.signedQuery(testOrg, testRun, "../shot.png", b.clock.in(time.Hour)),
		"/artifacts/" + testRun + "/.hidden?" + b.signedQuery(testOrg, testRun, ".hidden", b.clock.in(time.Hour)),
		"/artifacts/" + testRun + "%2F..%2Fx/shot.png?" + b.signedQuery(testOrg, testRun, "shot.png", b.clock.in(time.Hour)),
		"/artifacts/bad-id/shot.png?" + b.signedQuery(testOrg, "bad-id", "shot.png", b.clock.in(time.Hour)),
		strings.Replace(good, "signature=", "signature=00", 1),
		strings.Replace(good, "org="+testOrg, "org=o_2", 1),
		b.signer.URL(b.base, testOrg, testRun, "shot.png", b.clock.in(-time.Hour)),
	} {
		if r := b.get(t, target); r.status == http.StatusOK {
			t.Errorf("%s: served", target)
		}
	}
	if n := s3.requests.Load() - before; n != 0 {
		t.Errorf("%d requests reached the bucket for refused URLs", n)
	}
	if r := b.get(t, good); r.status != http.StatusOK {
		t.Fatalf("the good URL: status %d", r.status)
	}
}

// TestBucketLocalRefusalIsFinal: a file refused on the disk (a symbolic
// link in place of the recorded file) is not looked for in the bucket.
func TestBucketLocalRefusalIsFinal(t *testing.T) {
	a, _, _ := twoDaemons(t)
	a.record(t, testOrg, testRun, "shot.png", client.ArtifactScreenshot, nil)
	p := filepath.Join(a.store.Dir(), testOrg, testRun, "shot.png")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a.outside, p); err != nil {
		t.Fatal(err)
	}
	u := a.signer.URL(a.base, testOrg, testRun, "shot.png", a.clock.in(time.Hour))
	wantDetail(t, a.get(t, u), http.StatusNotFound)
}

func TestBucketSave(t *testing.T) {
	a, b, s3 := twoDaemons(t)
	rec, err := a.store.Save(testOrg, "up_1", "invoices.csv", strings.NewReader("a,b\n1,2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := s3.object(t, testPrefix+"/"+testOrg+"/up_1/invoices.csv"); !ok || string(got) != "a,b\n1,2\n" || rec.Size != 8 {
		t.Fatalf("object: present %v, %q; size %d", ok, got, rec.Size)
	}
	r := httptest.NewRecorder()
	b.store.ServeFile(r, httptest.NewRequest(http.MethodGet, "/v1/artifacts/x/content", nil), testOrg, "up_1", "invoices.csv", true, "private, max-age=60")
	if r.Code != http.StatusOK || r.Body.String() != "a,b\n1,2\n" || r.Header().Get("Content-Type") != "text/csv; charset=utf-8" ||
		r.Header().Get("Cache-Control") != "private, max-age=60" || !strings.HasPrefix(r.Header().Get("Content-Disposition"), "attachment;") {
		t.Fatalf("B: %d %q %v", r.Code, r.Body.String(), r.Header())
	}
}

func TestBucketRemoveRun(t *testing.T) {
	a, b, s3 := twoDaemons(t)
	a.record(t, testOrg, testRun, "shot.png", client.ArtifactScreenshot, nil)
	a.record(t, testOrg, testRun, "rec.webm", client.ArtifactRecording, nil)
	other := testRun + "1" // a run whose id starts like the other's
	a.record(t, testOrg, other, "keep.png", client.ArtifactScreenshot, nil)

	// B, which has no copy, removes the run's objects.
	if err := b.store.RemoveRun(testOrg, testRun); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shot.png", "rec.webm"} {
		if _, ok := s3.object(t, testPrefix+"/"+testOrg+"/"+testRun+"/"+name); ok {
			t.Errorf("%s is still in the bucket", name)
		}
	}
	if _, ok := s3.object(t, testPrefix+"/"+testOrg+"/"+other+"/keep.png"); !ok {
		t.Error("another run's object was removed")
	}
	// A removes its own directory; a run without files is not an error.
	if err := a.store.RemoveRun(testOrg, testRun); err != nil {
		t.Fatal(err)
	}
	if err := a.store.RemoveRun(testOrg, "wr_none"); err != nil {
		t.Fatal(err)
	}
	u := a.signer.URL(a.base, testOrg, testRun, "shot.png", a.clock.in(time.Hour))
	wantDetail(t, b.get(t, u), http.StatusNotFound)
	wantDetail(t, a.get(t, u), http.StatusNotFound)
}

// TestBucketFailures: a bucket that refuses the keys, does not exist or
// cannot be reached fails OpenBucket, and a file that cannot be copied is
// not recorded; no message holds the secret key.
func TestBucketFailures(t *testing.T) {
	s3 := startS3(t, testBucket)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	noSecret := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if strings.Contains(err.Error(), testSecretKey) || strings.Contains(err.Error(), "session-token-secret") {
			t.Fatalf("%s: the error holds a secret: %v", what, err)
		}
		t.Logf("%s: %v", what, err)
	}

	cfg := s3.config()
	cfg.AccessKeyID = "AKIAUNKNOWN"
	_, err := OpenBucket(ctx, cfg)
	noSecret("unknown key", err)
	if !strings.Contains(err.Error(), "refused the access key") || !strings.Contains(err.Error(), "s3://"+testBucket+"/"+testPrefix) {
		t.Errorf("unknown key: %v", err)
	}

	cfg = s3.config()
	cfg.Bucket = "no-such-bucket"
	_, err = OpenBucket(ctx, cfg)
	noSecret("missing bucket", err)
	if !strings.Contains(err.Error(), `"no-such-bucket" does not exist`) {
		t.Errorf("missing bucket: %v", err)
	}

	cfg = s3.config()
	cfg.SecretAccessKey = ""
	_, err = OpenBucket(ctx, cfg)
	noSecret("no key", err)

	cfg = s3.config()
	cfg.Endpoint = "ftp://" + testSecretKey + "@127.0.0.1/"
	_, err = OpenBucket(ctx, cfg)
	noSecret("bad endpoint", err)

	// A daemon whose bucket goes away records nothing.
	cfg = s3.config()
	cfg.SessionToken = "session-token-secret"
	e := newEnv(t, WithBucket(openTestBucket(t, cfg)))
	s3.srv.Close()
	e.write(t, testOrg, testRun, "shot.png", nil)
	_, err = e.store.Record(testOrg, testRun, "shot.png", client.ArtifactScreenshot)
	noSecret("unreachable bucket", err)
	if !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("unreachable: %v", err)
	}
	_, err = e.store.Save(testOrg, "up_2", "a.txt", strings.NewReader("x"))
	noSecret("unreachable bucket (save)", err)
	if _, serr := os.Stat(filepath.Join(e.store.Dir(), testOrg, "up_2", "a.txt")); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("a file that was not copied stays on the disk: %v", serr)
	}
}

func TestParseBucketURL(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix string }{
		{"s3://runs", "runs", ""},
		{"s3://runs/", "runs", ""},
		{"s3://runs/abctl/files/", "runs", "abctl/files"},
		{"S3://my.bucket-1/p", "my.bucket-1", "p"},
	} {
		b, p, err := ParseBucketURL(tc.in)
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%q: %q %q %v", tc.in, b, p, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"s3://", "names no bucket"},
		{"s3:///prefix", "names no bucket"},
		{"s3://Bad_Bucket", "not a valid bucket name"},
		{"s3://ab", "not a valid bucket name"},
		{"s3://AKIA:" + testSecretKey + "@runs/p", "carries no keys"},
		{"s3://runs/a/../b", "plain path elements"},
		{"s3://runs/a//b", "plain path elements"},
		{"s3://runs/a?x=1", "plain path elements"},
		{"gs://runs", "s3://bucket"},
	} {
		_, _, err := ParseBucketURL(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), testSecretKey) {
			t.Errorf("%q: the error holds the secret: %v", tc.in, err)
		}
	}
	for in, want := range map[string]bool{"s3://b": true, "gs://b": true, "file:///x": true, "/mnt/shared": false,
		"./a://b": false, "relative/dir": false, "": false, "C:\\x": false} {
		if HasScheme(in) != want {
			t.Errorf("HasScheme(%q) = %v", in, !want)
		}
	}
}
