package artifacts

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/executor"
)

// FuzzHandlerPath sends arbitrary paths to the handler, each with a query
// signed for exactly what the handler will decode from it (so that the
// signature is not what stops a traversal), and once bare. No path may give
// a 5xx or serve anything but a regular file of the run directory.
func FuzzHandlerPath(f *testing.F) {
	e := newEnv(f)
	e.plantOutside(f)
	inside := map[string][]byte{}
	for _, n := range []string{"shot.png", "a b.txt", "%2e%2e", "ü.pdf"} {
		inside[n] = e.write(f, testOrg, testRun, n, []byte("inside:"+n))
	}
	runDir, _ := e.store.RunDir(testOrg, testRun)
	for name, target := range map[string]string{
		"link.png": e.outside, "rel.png": "../../../secret.txt", "org.png": "../secret.txt", "in.png": "shot.png",
	} {
		if err := os.Symlink(target, filepath.Join(runDir, name)); err != nil {
			f.Logf("no symlinks: %v", err)
		}
	}
	if err := os.Symlink(filepath.Dir(e.outside), filepath.Join(filepath.Dir(runDir), "wr_out")); err != nil {
		f.Logf("no symlinks: %v", err)
	}

	for _, p := range traversalPaths(e) {
		f.Add(p)
	}
	for _, p := range []string{
		testRun + "/shot.png", testRun + "/a%20b.txt", testRun + "/%252e%252e", testRun + "/%C3%BC.pdf",
		testRun + "/link.png", testRun + "/rel.png", testRun + "/in.png", "wr_out/secret.txt",
		testRun + "/shot.png?org=o_1", testRun + "/shot.png#x", testRun + "/sh%zzot.png",
	} {
		f.Add(p)
	}
	h := e.store.Handler(e.signer)
	exp := e.clock.in(time.Hour)

	f.Fuzz(func(t *testing.T, p string) {
		run, name := decodeLikeHandler(p)
		q := e.signedQuery(testOrg, run, name, exp)
		for _, target := range []string{"/artifacts/" + p + "?" + q, "/artifacts/" + p, "/" + p} {
			u, err := url.ParseRequestURI(target)
			if err != nil || strings.ContainsAny(target, " \r\n") {
				continue // the HTTP server would refuse the request line (400)
			}
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				req := &http.Request{Method: method, URL: u, RequestURI: target, Header: http.Header{},
					Host: "127.0.0.1", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				body := rec.Body.Bytes()
				if rec.Code >= 500 {
					t.Fatalf("%s %q: status %d %s", method, target, rec.Code, body)
				}
				if bytes.Contains(body, []byte(outsideMarker)) {
					t.Fatalf("%s %q: served a file outside the run directory", method, target)
				}
				if rec.Code/100 == 2 || rec.Code == http.StatusNotModified {
					want, ok := inside[name]
					if !ok || !executor.ValidFileName(name) || run != testRun {
						t.Fatalf("%s %q: status %d for run %q name %q", method, target, rec.Code, run, name)
					}
					if method == http.MethodGet && !bytes.Equal(body, want) {
						t.Fatalf("%q: body %q", target, body)
					}
				}
			}
		}
	})
}

// BenchmarkServe serves a 100 KiB screenshot through the handler (signature
// check, Lstat, open, ServeContent) and, as the ceiling, with
// http.ServeFile of the same file.
func BenchmarkServe(b *testing.B) {
	e := newEnv(b)
	content := make([]byte, 100<<10)
	for i := range content {
		content[i] = byte(i)
	}
	e.record(b, testOrg, testRun, "shot.png", client.ArtifactScreenshot, content)
	runDir, _ := e.store.RunDir(testOrg, testRun)
	path := filepath.Join(runDir, "shot.png")
	u, _ := url.Parse(e.signer.URL("http://127.0.0.1", testOrg, testRun, "shot.png", e.clock.in(time.Hour)))
	req := &http.Request{Method: http.MethodGet, URL: u, Header: http.Header{}, Host: "127.0.0.1"}
	h := e.store.Handler(e.signer)

	run := func(b *testing.B, serve func(w http.ResponseWriter)) {
		b.SetBytes(int64(len(content)))
		b.ReportAllocs()
		w := &discard{h: http.Header{}}
		for b.Loop() {
			clear(w.h)
			w.n, w.code = 0, 0
			serve(w)
			if w.code != 200 || w.n != len(content) {
				b.Fatalf("status %d, %d bytes", w.code, w.n)
			}
		}
	}
	b.Run("artifacts", func(b *testing.B) {
		run(b, func(w http.ResponseWriter) { h.ServeHTTP(w, req) })
	})
	b.Run("ServeFile", func(b *testing.B) {
		run(b, func(w http.ResponseWriter) { http.ServeFile(w, req, path) })
	})
}

// discard is a ResponseWriter that counts the body and drops it.
type discard struct {
	h    http.Header
	code int
	n    int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
func (d *discard) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = 200
	}
	d.n += len(p)
	return len(p), nil
}
