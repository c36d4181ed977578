package artifacts

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

const (
	testOrg = "o_1"
	testRun = "wr_490440779503358000"
	// outsideMarker is the content of the file planted beside the root,
	// which must never be served.
	outsideMarker = "TOP-SECRET-OUTSIDE-THE-ARTIFACT-ROOT"
)

var testSecret = bytes.Repeat([]byte("k"), 32)

// clock is a settable clock, safe for concurrent use.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.set(t)
	return c
}
func (c *clock) set(t time.Time)              { c.ns.Store(t.UnixNano()) }
func (c *clock) add(d time.Duration)          { c.ns.Add(int64(d)) }
func (c *clock) now() time.Time               { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) in(d time.Duration) time.Time { return c.now().Add(d) }

// env is a store under a temporary directory with a file planted beside its
// root, a signer with a test clock and a loopback server.
type env struct {
	dir     string // the temporary directory holding root and outside file
	outside string // path of the planted file beside the root
	store   *Store
	signer  *Signer
	clock   *clock
	srv     *httptest.Server
	base    string
}

// newEnv makes an env whose Store is made with opts (WithBucket, say).
func newEnv(t testing.TB, opts ...Option) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{dir: dir, outside: filepath.Join(dir, "secret.txt")}
	if err := os.WriteFile(e.outside, []byte(outsideMarker), 0o600); err != nil {
		t.Fatal(err)
	}
	e.clock = newClock(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	st, err := NewStore(filepath.Join(dir, "artifacts"), append([]Option{WithClock(e.clock.now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e.store = st
	sg, err := NewSigner(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	e.signer = sg.WithClock(e.clock.now)
	e.srv = httptest.NewServer(st.Handler(e.signer))
	t.Cleanup(e.srv.Close)
	e.base = e.srv.URL
	return e
}

// write puts a file into a run's directory and returns its content.
func (e *env) write(t testing.TB, org, run, name string, content []byte) []byte {
	t.Helper()
	d, err := e.store.RunDir(org, run)
	if err != nil {
		t.Fatal(err)
	}
	if content == nil {
		content = make([]byte, 1000)
		rand.Read(content)
	}
	if err := os.WriteFile(filepath.Join(d, name), content, 0o600); err != nil {
		t.Fatal(err)
	}
	return content
}

func (e *env) record(t testing.TB, org, run, name string, typ client.ArtifactType, content []byte) (store.RunFile, []byte) {
	t.Helper()
	content = e.write(t, org, run, name, content)
	f, err := e.store.Record(org, run, name, typ)
	if err != nil {
		t.Fatal(err)
	}
	return f, content
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends method and target (an absolute URL or a raw request-URI) over a
// raw TCP connection to the test server, so that the request line reaches
// the handler exactly as written, without any client-side cleaning.
func (e *env) do(t testing.TB, method, target string, hdr ...string) response {
	t.Helper()
	if u, err := url.Parse(target); err == nil && u.Scheme != "" {
		target = u.RequestURI()
	}
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, e.srv.Listener.Addr())
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	b.WriteString("\r\n")
	if _, err := conn.Write(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	req := &http.Request{Method: method}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		t.Fatalf("%s %q: %v", method, target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, body}
}

func (e *env) get(t testing.TB, target string, hdr ...string) response {
	t.Helper()
	return e.do(t, http.MethodGet, target, hdr...)
}

// signedQuery returns the query part of a signed URL for the given parts.
func (e *env) signedQuery(org, run, name string, exp time.Time) string {
	u := e.signer.URL("http://127.0.0.1", org, run, name, exp)
	_, q, _ := strings.Cut(u, "?")
	return q
}

// wantDetail checks a JSON error response.
func wantDetail(t testing.TB, r response, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if !bytes.HasPrefix(r.body, []byte(`{"detail":"`)) {
		t.Errorf("body %s, want a detail", r.body)
	}
	if bytes.Contains(r.body, []byte(outsideMarker)) {
		t.Fatalf("outside file served")
	}
}

// mkdirIn makes a directory named name in a run's directory.
func (e *env) mkdirIn(org, run, name string) error {
	d, err := e.store.RunDir(org, run)
	if err != nil {
		return err
	}
	return os.Mkdir(filepath.Join(d, name), 0o700)
}
