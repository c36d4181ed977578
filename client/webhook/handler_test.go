package webhook_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client/webhook"
)

const testKey = "abk_test_0123456789abcdef"

// recorder is a next handler that remembers what reached it.
type recorder struct {
	mu      sync.Mutex
	calls   int
	payload *webhook.Payload
	raw     []byte
	hasPay  bool
	length  int64
	readErr error
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.calls++
	rc.payload, rc.hasPay = webhook.PayloadFromContext(r.Context())
	rc.raw, rc.readErr = io.ReadAll(r.Body)
	rc.length = r.ContentLength
	w.WriteHeader(http.StatusNoContent)
}

func (rc *recorder) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.calls
}

func newServer(t *testing.T, opts ...webhook.Option) (*httptest.Server, *recorder) {
	t.Helper()
	rc := &recorder{}
	srv := httptest.NewServer(webhook.Handler(testKey, rc, opts...))
	t.Cleanup(srv.Close)
	return srv, rc
}

// send does a request and returns the status and the reply text.
func send(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

func signedRequest(t *testing.T, url, key string, body []byte) *http.Request {
	t.Helper()
	req, err := webhook.NewRequest(context.Background(), url, key, body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestHandlerAcceptsGoodSignature(t *testing.T) {
	srv, rc := newServer(t)
	body := []byte(vectorNamed(t, "full-payload").Body)
	status, text := send(t, signedRequest(t, srv.URL, testKey, body))
	if status != http.StatusNoContent {
		t.Fatalf("status %d (%s), want 204 from next", status, text)
	}
	if rc.count() != 1 {
		t.Fatalf("next called %d times, want 1", rc.count())
	}
	if !rc.hasPay || rc.payload.RunID != "tsk_v2_490440779503357994" || rc.payload.Status != "completed" || string(rc.payload.Output) != `{"title":"Hello","price":19}` {
		t.Errorf("payload in context = %v, %+v", rc.hasPay, rc.payload)
	}
	if rc.readErr != nil || !bytes.Equal(rc.raw, body) || rc.length != int64(len(body)) {
		t.Errorf("next read body %q (len %d, err %v), want the raw bytes", rc.raw, rc.length, rc.readErr)
	}
}

func TestHandlerAcceptsHeaderVariants(t *testing.T) {
	srv, rc := newServer(t)
	body := []byte(`{"run_id":"wr_1","status":"failed"}`)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	// Lowercase wire name set directly, uppercase hex with whitespace.
	req.Header["x-skyvern-signature"] = []string{" " + strings.ToUpper(webhook.Sign(testKey, body)) + " "}
	if status, text := send(t, req); status != http.StatusNoContent || rc.count() != 1 {
		t.Errorf("status %d (%s), next calls %d; want 204 and 1", status, text, rc.count())
	}
}

func TestHandlerRejects(t *testing.T) {
	body := []byte(`{"run_id":"wr_1","status":"failed"}`)
	tests := []struct {
		name   string
		opts   []webhook.Option
		req    func(url string) *http.Request
		status int
		text   string
	}{
		{
			name: "missing signature",
			req: func(url string) *http.Request {
				r, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				return r
			},
			status: http.StatusUnauthorized, text: "missing x-skyvern-signature",
		},
		{
			name: "flipped body byte",
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				bad := bytes.Clone(body)
				bad[10] ^= 1
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(bad)), int64(len(bad))
				return r
			},
			status: http.StatusUnauthorized, text: "invalid signature",
		},
		{
			name:   "wrong key",
			req:    func(url string) *http.Request { return signedRequest(t, url, "other-key", body) },
			status: http.StatusUnauthorized, text: "invalid signature",
		},
		{
			name: "garbage signature",
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				r.Header.Set(webhook.SignatureHeader, "not-a-signature")
				return r
			},
			status: http.StatusUnauthorized, text: "invalid signature",
		},
		{
			name: "re-serialized body",
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				pretty := []byte(`{"run_id": "wr_1", "status": "failed"}`)
				r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(pretty)), int64(len(pretty))
				return r
			},
			status: http.StatusUnauthorized, text: "invalid signature",
		},
		{
			name: "GET",
			req: func(url string) *http.Request {
				r, _ := http.NewRequest(http.MethodGet, url, nil)
				return r
			},
			status: http.StatusMethodNotAllowed, text: "method not allowed",
		},
		{
			name: "PUT with a good signature",
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				r.Method = http.MethodPut
				return r
			},
			status: http.StatusMethodNotAllowed, text: "method not allowed",
		},
		{
			name:   "too large with Content-Length",
			opts:   []webhook.Option{webhook.WithMaxBodyBytes(16)},
			req:    func(url string) *http.Request { return signedRequest(t, url, testKey, body) },
			status: http.StatusRequestEntityTooLarge, text: "too large",
		},
		{
			name: "too large when chunked",
			opts: []webhook.Option{webhook.WithMaxBodyBytes(16)},
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				r.Body, r.ContentLength = io.NopCloser(io.MultiReader(bytes.NewReader(body))), -1
				r.GetBody = nil
				return r
			},
			status: http.StatusRequestEntityTooLarge, text: "too large",
		},
		{
			name:   "signed array",
			req:    func(url string) *http.Request { return signedRequest(t, url, testKey, []byte(`[1,2]`)) },
			status: http.StatusBadRequest, text: "not a JSON object",
		},
		{
			name:   "signed null",
			req:    func(url string) *http.Request { return signedRequest(t, url, testKey, []byte(`null`)) },
			status: http.StatusBadRequest, text: "not a JSON object",
		},
		{
			name:   "signed broken JSON",
			req:    func(url string) *http.Request { return signedRequest(t, url, testKey, []byte(`{"run_id":`)) },
			status: http.StatusBadRequest, text: "does not decode",
		},
		{
			name: "signed object of wrong types",
			req: func(url string) *http.Request {
				return signedRequest(t, url, testKey, []byte(`{"step_count":"three"}`))
			},
			status: http.StatusBadRequest, text: "does not decode",
		},
		{
			name: "stale timestamp",
			opts: []webhook.Option{webhook.WithTimestampTolerance(5 * time.Minute)},
			req: func(url string) *http.Request {
				r, _ := webhook.NewRequest(context.Background(), url, testKey, body, time.Now().Add(-time.Hour))
				return r
			},
			status: http.StatusUnauthorized, text: "outside the accepted window",
		},
		{
			name: "timestamp from the future",
			opts: []webhook.Option{webhook.WithTimestampTolerance(5 * time.Minute)},
			req: func(url string) *http.Request {
				r, _ := webhook.NewRequest(context.Background(), url, testKey, body, time.Now().Add(time.Hour))
				return r
			},
			status: http.StatusUnauthorized, text: "outside the accepted window",
		},
		{
			name: "absurd timestamp",
			opts: []webhook.Option{webhook.WithTimestampTolerance(5 * time.Minute)},
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				r.Header.Set(webhook.TimestampHeader, "-9223372036854775808")
				return r
			},
			status: http.StatusUnauthorized, text: "outside the accepted window",
		},
		{
			name: "missing timestamp",
			opts: []webhook.Option{webhook.WithTimestampTolerance(5 * time.Minute)},
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				r.Header.Del(webhook.TimestampHeader)
				return r
			},
			status: http.StatusUnauthorized, text: "missing x-skyvern-timestamp",
		},
		{
			name: "malformed timestamp",
			opts: []webhook.Option{webhook.WithTimestampTolerance(5 * time.Minute)},
			req: func(url string) *http.Request {
				r := signedRequest(t, url, testKey, body)
				r.Header.Set(webhook.TimestampHeader, "1769872842.5")
				return r
			},
			status: http.StatusUnauthorized, text: "malformed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rc := newServer(t, tc.opts...)
			status, text := send(t, tc.req(srv.URL))
			if status != tc.status || !strings.Contains(text, tc.text) {
				t.Errorf("got %d %q, want %d containing %q", status, text, tc.status, tc.text)
			}
			if n := rc.count(); n != 0 {
				t.Errorf("next was called %d times", n)
			}
			if strings.Contains(text, testKey) {
				t.Errorf("reply %q contains the key", text)
			}
		})
	}
}

func TestHandlerTimestampTolerance(t *testing.T) {
	body := []byte(`{"run_id":"wr_1"}`)
	old := time.Now().Add(-3 * time.Hour) // what a sender in UTC+3 produces

	// Off by default: a skewed timestamp passes.
	srv, rc := newServer(t)
	req, _ := webhook.NewRequest(context.Background(), srv.URL, testKey, body, old)
	if status, text := send(t, req); status != http.StatusNoContent || rc.count() != 1 {
		t.Errorf("default: got %d %q, want 204", status, text)
	}

	// Within the tolerance passes.
	srv, rc = newServer(t, webhook.WithTimestampTolerance(4*time.Hour))
	req, _ = webhook.NewRequest(context.Background(), srv.URL, testKey, body, old)
	if status, text := send(t, req); status != http.StatusNoContent || rc.count() != 1 {
		t.Errorf("within tolerance: got %d %q, want 204", status, text)
	}
}

func TestHandlerDefaultLimit(t *testing.T) {
	srv, rc := newServer(t)
	// A signed object just over 10 MiB.
	big := []byte(`{"run_id":"tsk_1","summary":"` + strings.Repeat("a", webhook.DefaultMaxBodyBytes) + `"}`)
	// Sent chunked, so the handler has to stop reading at the limit rather
	// than refuse on the Content-Length alone (the other path is covered
	// above), and so the client is not cut off in the middle of its write.
	req := signedRequest(t, srv.URL, testKey, big)
	req.Body, req.ContentLength, req.GetBody = io.NopCloser(bytes.NewReader(big)), -1, nil
	if status, _ := send(t, req); status != http.StatusRequestEntityTooLarge || rc.count() != 0 {
		t.Errorf("body of %d bytes: status %d, next calls %d; want 413 and 0", len(big), status, rc.count())
	}
	// The limit is inclusive.
	srv, rc = newServer(t, webhook.WithMaxBodyBytes(int64(len(big))))
	if status, _ := send(t, signedRequest(t, srv.URL, testKey, big)); status != http.StatusNoContent || rc.count() != 1 {
		t.Errorf("body at the limit: status %d, next calls %d; want 204 and 1", status, rc.count())
	}
}

func TestHandlerPanicsOnMisuse(t *testing.T) {
	for name, f := range map[string]func(){
		"empty key": func() { webhook.Handler("", http.NotFoundHandler()) },
		"nil next":  func() { webhook.Handler(testKey, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Handler did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestPayloadFromContextEmpty(t *testing.T) {
	if p, ok := webhook.PayloadFromContext(context.Background()); ok || p != nil {
		t.Errorf("PayloadFromContext(empty) = %v, %v", p, ok)
	}
}

func TestNewRequest(t *testing.T) {
	body := []byte(`{"run_id":"wr_1"}`)
	now := time.Unix(1769872842, 999_000_000)
	req, err := webhook.NewRequest(context.Background(), "http://127.0.0.1:9/hook", testKey, body, now)
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodPost || req.URL.String() != "http://127.0.0.1:9/hook" || req.ContentLength != int64(len(body)) {
		t.Errorf("request %s %s (length %d)", req.Method, req.URL, req.ContentLength)
	}
	want := map[string]string{
		"Content-Type":          "application/json",
		webhook.SignatureHeader: webhook.Sign(testKey, body),
		webhook.TimestampHeader: "1769872842",
	}
	for k, v := range want {
		if got := req.Header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if len(req.Header) != 3 {
		t.Errorf("headers %v, want exactly 3", req.Header)
	}
	sent, _ := io.ReadAll(req.Body)
	if !bytes.Equal(sent, body) {
		t.Errorf("body %q, want %q", sent, body)
	}
	if req.GetBody == nil {
		t.Error("GetBody is nil; redirects and retries could not resend the body")
	}

	if _, err := webhook.NewRequest(context.Background(), "http://x/", "", body, now); err == nil {
		t.Error("NewRequest with an empty key did not fail")
	}
	if _, err := webhook.NewRequest(context.Background(), "://bad", testKey, body, now); err == nil || strings.Contains(err.Error(), testKey) {
		t.Errorf("NewRequest with a bad URL: %v", err)
	}
}

func TestSignedHeaders(t *testing.T) {
	body := []byte(`{}`)
	h := webhook.SignedHeaders(testKey, body, time.Unix(42, 0))
	if h.Get(webhook.TimestampHeader) != strconv.Itoa(42) || h.Get(webhook.SignatureHeader) != webhook.Sign(testKey, body) || h.Get("Content-Type") != "application/json" {
		t.Errorf("SignedHeaders = %v", h)
	}
}
