package client_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/client"
)

// The test server mounts the API under a non-empty base path, so that a
// method building an absolute path ("/v1/...") instead of joining it to the
// base URL fails loudly.
const (
	testAPIKey = "abk_test_do_not_leak_0123456789"
	basePath   = "/prefix/api"
)

// recorded is what the server saw of one request.
type recorded struct {
	Method string
	Path   string // escaped, without the base path
	Query  map[string][]string
	Header http.Header
	Body   []byte
}

// testServer is an httptest server on loopback whose routes are registered
// per test; every request is recorded.
type testServer struct {
	t      *testing.T
	mux    *http.ServeMux
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []recorded
	client *client.Client
}

func newTestServer(t *testing.T, opts ...client.Option) *testServer {
	t.Helper()
	ts := &testServer{t: t, mux: http.NewServeMux()}
	outer := http.NewServeMux()
	outer.Handle(basePath+"/", http.StripPrefix(basePath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, recorded{
			Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query(), Header: r.Header.Clone(), Body: body,
		})
		ts.mu.Unlock()
		ts.mux.ServeHTTP(w, r)
	})))
	outer.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request outside the base path: %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	})
	ts.srv = httptest.NewServer(outer)
	t.Cleanup(ts.srv.Close)
	base := []client.Option{client.WithBaseURL(ts.srv.URL + basePath), client.WithAPIKey(testAPIKey)}
	c, err := client.New(append(base, opts...)...)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	ts.client = c
	return ts
}

// reply registers pattern (a ServeMux pattern such as "GET /v1/runs/{id}")
// to answer status with body.
func (ts *testServer) reply(pattern string, status int, body string) {
	ts.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	})
}

func (ts *testServer) requests() []recorded {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]recorded(nil), ts.reqs...)
}

// only returns the single request the server received, failing otherwise.
func (ts *testServer) only() recorded {
	ts.t.Helper()
	reqs := ts.requests()
	if len(reqs) != 1 {
		ts.t.Fatalf("server received %d requests, want 1: %+v", len(reqs), reqs)
	}
	return reqs[0]
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return string(b)
}

// assertJSONEqual compares two JSON texts by meaning (key order and
// spacing aside).
func assertJSONEqual(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected text is not JSON: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, strings.Join(strings.Fields(want), " "))
	}
}
