package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
	"github.com/abctl/abctl/daemon/webhooks"
)

// received is one request as a receiver saw it.
type received struct {
	method  string
	header  http.Header
	raw     []byte
	payload *webhook.Payload
}

// officialReceiver is a receiver built on client/webhook.Handler, the
// official wrapper: it verifies the raw bytes before anything reaches
// next, which records them.
func officialReceiver(t *testing.T, key string) (*httptest.Server, func() []received) {
	t.Helper()
	var mu sync.Mutex
	var got []received
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("receiver read: %v", err)
		}
		p, _ := webhook.PayloadFromContext(r.Context())
		mu.Lock()
		got = append(got, received{r.Method, r.Header.Clone(), raw, p})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	srv := httptest.NewServer(webhook.Handler(key, next))
	t.Cleanup(srv.Close)
	return srv, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return append([]received(nil), got...)
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestSendToOfficialReceiver(t *testing.T) {
	srv, got := officialReceiver(t, testKey)
	run := taskRun("tsk_v2_490440779503357994", client.RunTypeTaskV2)
	body, err := webhooks.Payload(run, webhooks.Info{OrganizationID: "o_1"})
	if err != nil {
		t.Fatal(err)
	}
	var s webhooks.Sender
	before := time.Now()
	d := s.Send(context.Background(), srv.URL+"/hooks/runs", testKey, body)
	if !d.OK() || d.Err != "" || d.StatusCode != http.StatusNoContent {
		t.Fatalf("delivery = %+v", d)
	}
	if webhooks.FailureReason(d) != "" {
		t.Errorf("FailureReason of a delivered webhook = %q", webhooks.FailureReason(d))
	}
	if d.URL != srv.URL+"/hooks/runs" || !bytes.Equal(d.Body, body) || d.Latency <= 0 || d.ResponseBody != "" {
		t.Errorf("delivery fields: %+v", d)
	}

	reqs := got()
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || !bytes.Equal(r.raw, body) {
		t.Errorf("receiver got %s %q", r.method, r.raw)
	}
	sig := r.header.Get(webhook.SignatureHeader)
	if err := webhook.Verify(testKey, r.raw, sig); err != nil {
		t.Errorf("Verify on the received bytes: %v", err)
	}
	if !hex64.MatchString(sig) || sig != d.Headers[webhook.SignatureHeader] {
		t.Errorf("signature %q (delivery says %q)", sig, d.Headers[webhook.SignatureHeader])
	}
	if ct := r.header.Values("Content-Type"); len(ct) != 1 || ct[0] != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	ts := r.header.Get(webhook.TimestampHeader)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec < before.Unix()-2 || sec > time.Now().Unix()+2 {
		t.Errorf("timestamp %q not within a few seconds of now", ts)
	}
	if ts != d.Headers[webhook.TimestampHeader] || d.At.Unix() != sec {
		t.Errorf("timestamp %q, delivery says %q at %v", ts, d.Headers[webhook.TimestampHeader], d.At)
	}
	wantHeaders := map[string]string{
		"Content-Type":        "application/json",
		"x-skyvern-signature": sig,
		"x-skyvern-timestamp": ts,
	}
	if len(d.Headers) != 3 {
		t.Errorf("delivery headers = %v", d.Headers)
	}
	for k, v := range wantHeaders {
		if d.Headers[k] != v {
			t.Errorf("delivery header %s = %q, want %q", k, d.Headers[k], v)
		}
	}
	if ua := r.header.Get("User-Agent"); ua != webhooks.DefaultUserAgent || !strings.HasPrefix(ua, "abctl-daemon/") {
		t.Errorf("User-Agent = %q", ua)
	}
	if r.payload == nil || r.payload.RunID != run.RunID || r.payload.TaskID != run.RunID ||
		r.payload.Status != client.RunStatusCompleted || string(r.payload.Output) != outputOut {
		t.Errorf("decoded payload = %+v", r.payload)
	}
}

func TestSendWrongKeyIsRejected(t *testing.T) {
	srv, got := officialReceiver(t, testKey)
	d := (&webhooks.Sender{}).Send(context.Background(), srv.URL, "another-key", []byte(`{"run_id":"tsk_1"}`))
	if d.OK() || d.StatusCode != http.StatusUnauthorized || !strings.Contains(d.Err, "status code 401") ||
		!strings.Contains(d.Err, "invalid signature") {
		t.Errorf("delivery = %+v", d)
	}
	if len(got()) != 0 {
		t.Error("a forged delivery reached the receiver")
	}
}

func TestSendFixedClockAndUserAgent(t *testing.T) {
	var ua, ts string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua, ts = r.Header.Get("User-Agent"), r.Header.Get(webhook.TimestampHeader)
	}))
	defer srv.Close()
	now := time.Unix(1769872842, 500e6)
	s := &webhooks.Sender{Now: func() time.Time { return now }, UserAgent: "test-agent/1"}
	d := s.Send(context.Background(), srv.URL, testKey, []byte(`{}`))
	if !d.OK() || d.StatusCode != 200 {
		t.Fatalf("delivery = %+v", d)
	}
	if ts != "1769872842" || ua != "test-agent/1" || !d.At.Equal(now) {
		t.Errorf("timestamp %q, User-Agent %q, At %v", ts, ua, d.At)
	}
}

func TestSendNon2xx(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "boom: database is down")
	}))
	defer srv.Close()
	d := (&webhooks.Sender{}).Send(context.Background(), srv.URL+"/h", testKey, []byte(`{}`))
	want := "Webhook failed with status code 500, error message: boom: database is down"
	if d.OK() || d.StatusCode != 500 || d.Err != want || d.ResponseBody != "boom: database is down" {
		t.Fatalf("delivery = %+v", d)
	}
	reason := webhooks.FailureReason(d)
	if reason != "Failed to send webhook to "+srv.URL+"/h: "+want {
		t.Errorf("FailureReason = %q", reason)
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
		}
	}))
	defer srv.Close()
	d := (&webhooks.Sender{}).Send(context.Background(), srv.URL+"/old", testKey, []byte(`{}`))
	if d.OK() || d.StatusCode != http.StatusFound || !strings.HasPrefix(d.Err, "Webhook failed with status code 302") {
		t.Errorf("delivery = %+v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/old"] != 1 || hits["/new"] != 0 {
		t.Errorf("hits = %v, want the redirect not followed", hits)
	}
}

func TestSendTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // never answers while the test runs
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close

	s := &webhooks.Sender{Timeout: 200 * time.Millisecond}
	d := s.Send(context.Background(), srv.URL, testKey, []byte(`{}`))
	if d.OK() || d.StatusCode != 0 || d.Err != "Request timed out after 0.2 seconds." {
		t.Fatalf("delivery = %+v", d)
	}
	if d.Latency < 200*time.Millisecond || d.Latency > 5*time.Second {
		t.Errorf("latency %v, want about 200ms", d.Latency)
	}
	if r := webhooks.FailureReason(d); !strings.Contains(r, "Failed to send webhook") || !strings.Contains(r, "timed out") {
		t.Errorf("FailureReason = %q", r)
	}
}

func TestSendInterrupted(t *testing.T) {
	// A caller's context that ends first (the daemon shutting down) is an
	// interruption, not a timeout of the receiver.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	d := (&webhooks.Sender{}).Send(ctx, srv.URL, testKey, []byte(`{}`))
	if d.OK() || d.Err != "Delivery interrupted before the receiver answered: context canceled" {
		t.Errorf("delivery = %+v", d)
	}
}

func TestSendUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d := (&webhooks.Sender{Timeout: 5 * time.Second}).Send(context.Background(), "http://"+addr+"/hook", testKey, []byte(`{}`))
	if d.OK() || d.StatusCode != 0 || !strings.HasPrefix(d.Err, "Could not reach URL: ") || !strings.Contains(d.Err, addr) {
		t.Errorf("delivery = %+v", d)
	}
	if d.ResponseBody != "" || d.Headers == nil {
		t.Errorf("delivery = %+v", d)
	}
}

func TestSendInvalidURLs(t *testing.T) {
	hits := 0
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct{ in, url, err string }{
		{"", "", "Invalid webhook URL: the URL is empty."},
		{" \t\n", "", "Invalid webhook URL: the URL is empty."},
		{"ftp://" + host + "/x", "ftp://" + host + "/x", `Invalid webhook URL "ftp://` + host + `/x": the scheme must be http or https.`},
		{"http://", "http://", `Invalid webhook URL "http://": the URL has no host.`},
		{"https://:443/x", "https://:443/x", `Invalid webhook URL "https://:443/x": the URL has no host.`},
		{host + "/x", host + "/x", `Invalid webhook URL "` + host + `/x": `},
		{"http://[::1/x", "http://[::1/x", `Invalid webhook URL "http://[::1/x": missing ']' in host.`},
	} {
		d := (&webhooks.Sender{}).Send(context.Background(), tc.in, testKey, []byte(`{}`))
		if d.OK() || d.URL != tc.url || !strings.HasPrefix(d.Err, tc.err) || d.Headers != nil || d.StatusCode != 0 {
			t.Errorf("Send(%q) = %+v, want Err %q", tc.in, d, tc.err)
		}
		if r := webhooks.FailureReason(d); !strings.HasPrefix(r, "Failed to send webhook to ") || !strings.Contains(r, "Invalid webhook URL") {
			t.Errorf("FailureReason = %q", r)
		}
	}
	mu.Lock()
	if hits != 0 {
		t.Errorf("%d requests for invalid URLs", hits)
	}
	mu.Unlock()

	// Surrounding whitespace is trimmed, and the trimmed URL delivered.
	d := (&webhooks.Sender{}).Send(context.Background(), " "+srv.URL+"/x \n", testKey, []byte(`{}`))
	if !d.OK() || d.URL != srv.URL+"/x" {
		t.Errorf("trimmed URL: %+v", d)
	}
	// HTTPS is accepted (this server's certificate is trusted by its client).
	tls := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer tls.Close()
	d = (&webhooks.Sender{Client: tls.Client()}).Send(context.Background(), tls.URL, testKey, []byte(`{}`))
	if !d.OK() {
		t.Errorf("https: %+v", d)
	}
}

func TestSendEmptyKey(t *testing.T) {
	d := (&webhooks.Sender{}).Send(context.Background(), "http://127.0.0.1:9/", "", []byte(`{}`))
	if d.OK() || d.Err != "No API key to sign the webhook with." || d.Headers != nil {
		t.Errorf("delivery = %+v", d)
	}
}

func TestResponseBodyTruncation(t *testing.T) {
	var answer []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write(answer)
	}))
	defer srv.Close()
	s := &webhooks.Sender{}
	for _, tc := range []struct {
		name   string
		answer string
		want   string
	}{
		{"exactly 2048", strings.Repeat("é", 2048), strings.Repeat("é", 2048)},
		{"2049 multibyte", strings.Repeat("é", 2049), strings.Repeat("é", 2048) + "\n... (truncated)"},
		{"long 4-byte", strings.Repeat("😀", 5000), strings.Repeat("😀", 2048) + "\n... (truncated)"},
		{"huge ascii", strings.Repeat("x", 1<<20), strings.Repeat("x", 2048) + "\n... (truncated)"},
		{"invalid bytes", "ok\xff\xfe", "ok\uFFFD\uFFFD"},
		{"many invalid", strings.Repeat("\xff", 3000), strings.Repeat("\uFFFD", 2048) + "\n... (truncated)"},
	} {
		answer = []byte(tc.answer)
		d := s.Send(context.Background(), srv.URL, testKey, []byte(`{}`))
		if d.StatusCode != 400 || d.ResponseBody != tc.want {
			t.Errorf("%s: status %d, body %d chars %.40q..., want %d chars", tc.name, d.StatusCode,
				len([]rune(d.ResponseBody)), d.ResponseBody, len([]rune(tc.want)))
		}
		if d.Err != "Webhook failed with status code 400, error message: "+tc.want {
			t.Errorf("%s: Err = %.80q", tc.name, d.Err)
		}
	}
}

func TestPrepareThenDeliver(t *testing.T) {
	srv, got := officialReceiver(t, testKey)
	s := &webhooks.Sender{}
	body := []byte(`{"run_id":"tsk_1","status":"completed"}`)
	p := s.Prepare(" "+srv.URL+" ", testKey, body)
	if p.Err != "" || p.StatusCode != 0 || p.OK() || p.URL != srv.URL || len(p.Headers) != 3 {
		t.Fatalf("prepared = %+v", p)
	}
	pending := webhooks.Replay("tsk_1", client.RunTypeTaskV1, "", p)
	if pending.StatusCode != nil || pending.Error != nil || pending.ResponseBody != nil || pending.Payload != string(body) {
		t.Errorf("pending replay = %+v", pending)
	}
	d := s.Deliver(context.Background(), p)
	if !d.OK() {
		t.Fatalf("delivered = %+v", d)
	}
	r := got()
	if len(r) != 1 {
		t.Fatalf("%d requests", len(r))
	}
	for k, v := range p.Headers {
		if r[0].header.Get(k) != v {
			t.Errorf("header %s = %q, prepared %q", k, r[0].header.Get(k), v)
		}
	}
	// A failed preparation is not sent.
	bad := s.Prepare("ftp://x", testKey, body)
	if again := s.Deliver(context.Background(), bad); again.Err != bad.Err || len(got()) != 1 {
		t.Errorf("invalid prepared delivery was sent: %+v", again)
	}
}

func TestReplay(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, "nope", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "thanks")
	}))
	defer srv.Close()
	run := workflowRun()
	body, err := webhooks.RetryPayload(run, webhooks.Info{})
	if err != nil {
		t.Fatal(err)
	}
	s := &webhooks.Sender{}

	d := s.Send(context.Background(), srv.URL+"/ok", testKey, body)
	r := webhooks.Replay(run.RunID, run.RunType, "http://127.0.0.1:9/agent-hook", d)
	if r.RunID != run.RunID || r.RunType != client.RunTypeWorkflowRun ||
		r.DefaultWebhookURL == nil || *r.DefaultWebhookURL != "http://127.0.0.1:9/agent-hook" ||
		r.TargetWebhookURL != srv.URL+"/ok" || r.Payload != string(body) ||
		r.StatusCode == nil || *r.StatusCode != 200 || r.ResponseBody == nil || *r.ResponseBody != "thanks" ||
		r.Error != nil || r.LatencyMS != d.Latency.Milliseconds() {
		t.Errorf("replay = %+v", r)
	}
	if err := webhook.Verify(testKey, []byte(r.Payload), r.Headers[webhook.SignatureHeader]); err != nil {
		t.Errorf("replay payload does not verify with its headers: %v", err)
	}
	// The JSON answer has every key of RunWebhookReplayResponse.
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	_, m := decode(t, raw)
	for _, k := range []string{"run_id", "run_type", "default_webhook_url", "target_webhook_url", "payload",
		"headers", "status_code", "latency_ms", "response_body", "error"} {
		if _, ok := m[k]; !ok {
			t.Errorf("replay JSON lacks %s: %s", k, raw)
		}
	}

	d = s.Send(context.Background(), srv.URL+"/fail", testKey, body)
	r = webhooks.Replay(run.RunID, run.RunType, "", d)
	if r.DefaultWebhookURL != nil || r.StatusCode == nil || *r.StatusCode != 503 ||
		r.Error == nil || !strings.HasPrefix(*r.Error, "Webhook failed with status code 503") ||
		r.ResponseBody == nil || *r.ResponseBody != "nope\n" {
		t.Errorf("failed replay = %+v", r)
	}

	d = s.Send(context.Background(), "gopher://x", testKey, body)
	r = webhooks.Replay(run.RunID, run.RunType, "", d)
	if r.StatusCode != nil || r.ResponseBody != nil || r.Error == nil || len(r.Headers) != 0 || r.LatencyMS != 0 {
		t.Errorf("invalid-URL replay = %+v", r)
	}
}

func TestSenderConcurrent(t *testing.T) {
	srv, got := officialReceiver(t, testKey)
	var s webhooks.Sender
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := []byte(`{"run_id":"tsk_` + strconv.Itoa(i) + `"}`)
			if d := s.Send(context.Background(), srv.URL, testKey, body); !d.OK() {
				t.Errorf("delivery %d: %+v", i, d)
			}
		}()
	}
	wg.Wait()
	if n := len(got()); n != 16 {
		t.Errorf("%d deliveries received, want 16", n)
	}
}

func TestDeliverUnprepared(t *testing.T) {
	s := &webhooks.Sender{}
	if d := s.Deliver(context.Background(), webhooks.Delivery{}); d.OK() || !strings.HasPrefix(d.Err, "Invalid webhook URL") {
		t.Errorf("zero delivery: %+v", d)
	}
	if d := s.Deliver(context.Background(), webhooks.Delivery{URL: "http://127.0.0.1:9/"}); d.OK() || d.Err != "The webhook was not signed." {
		t.Errorf("unsigned delivery: %+v", d)
	}
}
