package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
	"github.com/abctl/abctl/internal/egress"
)

// DefaultTimeout is how long a receiver has to answer, as docs/daemon.md
// documents (--webhook-timeout).
const DefaultTimeout = 10 * time.Second

// DefaultUserAgent is the User-Agent of a delivery unless Sender.UserAgent
// says otherwise. The hosted service sends python-httpx/<version>;
// receivers do not depend on it.
const DefaultUserAgent = "abctl-daemon/" + client.Version

// MaxResponseChars is how many characters of the receiver's answer a
// Delivery keeps; a longer answer is cut there and TruncationMark appended.
const MaxResponseChars = 2048

// TruncationMark ends a ResponseBody that was cut at MaxResponseChars.
const TruncationMark = "\n... (truncated)"

// readLimit bounds the bytes read from an answer: MaxResponseChars
// characters take at most 4 bytes each, and one more byte tells whether
// there was more.
const readLimit = 4*MaxResponseChars + 1

// drainLimit bounds what is read past readLimit so that the connection
// can be reused; a longer answer costs a new connection.
const drainLimit = 64 << 10

// errTimeout is the cause of an attempt's context when Sender.Timeout
// ended it, which tells it apart from the caller's context ending.
var errTimeout = errors.New("webhooks: delivery timed out")

// defaultClient is the client of a Sender without one: no proxy from the
// environment, redirects returned instead of followed, keep-alives on.
var defaultClient = newDefaultClient()

func newDefaultClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConnsPerHost = 16
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Sender delivers webhooks: one attempt per call, no retry. Its zero value
// (and a nil *Sender) is ready to use, and it is safe for concurrent use.
type Sender struct {
	// Client sends the requests. nil: a shared client that ignores the
	// proxy settings of the environment, does not follow redirects and
	// keeps connections alive. A caller's client is used as it is: its
	// redirect policy decides whether a 3xx is followed.
	Client *http.Client
	// Timeout bounds each attempt, from connecting to reading the answer.
	// Zero or less: DefaultTimeout.
	Timeout time.Duration
	// Now gives the time of the x-skyvern-timestamp header. nil: time.Now.
	Now func() time.Time
	// UserAgent is the User-Agent header. "": DefaultUserAgent.
	UserAgent string
	// Guard gives the egress guard of an organization (package
	// internal/egress; an egress.Policy's For): a delivery with an OrgID
	// (a run's webhook, its totp_verification_url) connects through it,
	// its URL and every connection checked, redirects not followed. nil,
	// or a nil guard: no policy. With Client set (tests), Client sends
	// and the guard checks each request's URL first.
	Guard func(orgID string) *egress.Guard

	clients sync.Map // organization id → *http.Client through its guard
}

// Delivery is the outcome of one attempt.
type Delivery struct {
	// URL is the target after trimming surrounding whitespace.
	URL string
	// Body is the exact signed body.
	Body []byte
	// Headers holds the headers as signed and sent, under the names the
	// hosted service reports: Content-Type, x-skyvern-signature and
	// x-skyvern-timestamp. nil when nothing could be signed (invalid URL,
	// no key).
	Headers map[string]string
	// At is the time of the x-skyvern-timestamp header, when the delivery
	// was signed.
	At time.Time
	// StatusCode is the receiver's status, or 0 when there was no answer.
	StatusCode int
	// Latency is how long the attempt took, from sending the request to
	// the end of reading the answer; 0 when no request was made.
	Latency time.Duration
	// ResponseBody holds the first MaxResponseChars characters of the
	// answer, then TruncationMark when there was more; invalid UTF-8 bytes
	// read as U+FFFD.
	ResponseBody string
	// OrgID is the organization the delivery is made for, whose egress
	// guard (Sender.Guard) decides what it may reach; the caller sets it
	// after Prepare. "" with a Guard: the guard of "" (the policy's rules
	// without an organization's own allowances).
	OrgID string
	// Err is "" when the receiver answered 2xx, and otherwise a sentence
	// saying why the delivery failed:
	//
	//	Invalid webhook URL "ftp://host/x": the scheme must be http or https.
	//	No API key to sign the webhook with.
	//	Request timed out after 10 seconds.
	//	Could not reach URL: dial tcp 127.0.0.1:9: connect: connection refused
	//	Webhook failed with status code 500, error message: <answer>
	//	Delivery interrupted before the receiver answered: context canceled
	//
	// A prepared delivery that was not sent yet also has Err "" (and
	// StatusCode 0).
	Err string
}

// OK reports whether the receiver answered with a 2xx status.
func (d Delivery) OK() bool {
	return d.Err == "" && d.StatusCode >= 200 && d.StatusCode <= 299
}

// Send POSTs body to rawURL, signed with key: one attempt, no retry. It is
// Deliver(ctx, Prepare(rawURL, key, body)).
//
// The attempt ends at Timeout, or earlier when ctx ends (the daemon
// shutting down); in the latter case Err starts with "Delivery
// interrupted", and a caller that checks ctx.Err() may choose not to count
// it against the run.
func (s *Sender) Send(ctx context.Context, rawURL, key string, body []byte) Delivery {
	return s.Deliver(ctx, s.Prepare(rawURL, key, body))
}

// Prepare validates rawURL and signs body without sending anything. The
// result holds URL, Body, Headers and At, or the reason in Err when the URL
// is invalid or key is empty (the hosted service sends nothing without a
// key). A handler that must answer before the delivery is done (the
// webhook retry) can report the prepared delivery with Replay and pass it to
// Deliver in the background: what Deliver sends is exactly what Prepare
// reported.
func (s *Sender) Prepare(rawURL, key string, body []byte) Delivery {
	d := Delivery{URL: strings.TrimSpace(rawURL), Body: body}
	if msg := checkURL(d.URL); msg != "" {
		d.Err = msg
		return d
	}
	if key == "" {
		d.Err = "No API key to sign the webhook with."
		return d
	}
	d.At = s.now()
	h := webhook.SignedHeaders(key, body, d.At)
	d.Headers = map[string]string{
		"Content-Type":          h.Get("Content-Type"),
		webhook.SignatureHeader: h.Get(webhook.SignatureHeader),
		webhook.TimestampHeader: h.Get(webhook.TimestampHeader),
	}
	return d
}

// Deliver sends a delivery made by Prepare and returns it with the
// outcome. A delivery that already has an Err is returned unchanged, and
// one that Prepare did not sign gets an Err; neither makes a request.
func (s *Sender) Deliver(ctx context.Context, d Delivery) Delivery {
	if d.Err != "" {
		return d
	}
	if msg := checkURL(d.URL); msg != "" {
		d.Err = msg
		return d
	}
	if d.Headers == nil {
		d.Err = "The webhook was not signed."
		return d
	}
	timeout := s.timeout()
	actx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()

	req, err := http.NewRequestWithContext(actx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		d.Err = invalidURL(d.URL, err.Error())
		return d
	}
	for k, v := range d.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", s.userAgent())

	start := time.Now()
	resp, err := s.clientFor(d.OrgID).Do(req)
	if err != nil {
		d.Latency = time.Since(start)
		d.Err = requestError(ctx, actx, err, timeout)
		return d
	}
	d.StatusCode = resp.StatusCode
	d.ResponseBody = readAnswer(resp.Body)
	d.Latency = time.Since(start)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		d.Err = fmt.Sprintf("Webhook failed with status code %d, error message: %s", resp.StatusCode, d.ResponseBody)
	}
	return d
}

// requestError words the failure of a request that got no answer.
func requestError(parent, actx context.Context, err error, timeout time.Duration) string {
	cause := err
	if ue, ok := errors.AsType[*url.Error](err); ok {
		cause = ue.Err
	}
	switch {
	case errors.Is(context.Cause(actx), errTimeout) && parent.Err() == nil:
		return "Request timed out after " + seconds(timeout) + "."
	case parent.Err() != nil:
		return "Delivery interrupted before the receiver answered: " + context.Cause(parent).Error()
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		// A caller's http.Client with a Timeout of its own.
		return "Request timed out: " + cause.Error()
	}
	return "Could not reach URL: " + cause.Error()
}

// seconds writes d as "10 seconds", "1 second" or "0.2 seconds".
func seconds(d time.Duration) string {
	s := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	if s == "1" {
		return "1 second"
	}
	return s + " seconds"
}

// readAnswer reads at most readLimit bytes of an answer and returns its
// first MaxResponseChars characters (each invalid UTF-8 byte counting as
// one U+FFFD), with TruncationMark when there was more. Errors while
// reading keep what was read: the status is what counts. It drains a
// bounded remainder so that the connection can be reused, and closes body.
func readAnswer(body io.ReadCloser) string {
	defer body.Close()
	buf, _ := io.ReadAll(io.LimitReader(body, readLimit))
	if len(buf) == readLimit {
		_, _ = io.CopyN(io.Discard, body, drainLimit)
	}
	var b strings.Builder
	b.Grow(len(buf))
	n := 0
	for i := 0; i < len(buf); n++ {
		if n == MaxResponseChars {
			b.WriteString(TruncationMark)
			return b.String()
		}
		r, size := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.Write(buf[i : i+size])
		}
		i += size
	}
	return b.String()
}

// checkURL returns why u cannot be a webhook target, or "".
func checkURL(u string) string {
	if u == "" {
		return "Invalid webhook URL: the URL is empty."
	}
	p, err := url.Parse(u)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return invalidURL(u, err.Error())
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return invalidURL(u, "the scheme must be http or https")
	}
	if p.Hostname() == "" {
		return invalidURL(u, "the URL has no host")
	}
	return ""
}

func invalidURL(u, why string) string {
	return fmt.Sprintf("Invalid webhook URL %q: %s.", u, why)
}

// CloseIdleConnections closes the kept-alive connections to receivers that
// no delivery is using.
func (s *Sender) CloseIdleConnections() {
	s.client().CloseIdleConnections()
	if s != nil {
		s.clients.Range(func(_, c any) bool {
			c.(*http.Client).CloseIdleConnections()
			return true
		})
	}
}

// clientFor is the client of a delivery for an organization: one through
// the organization's guard; Client when set, its requests' URLs still
// checked by the guard (CheckedTransport over Client's transport); the
// default without a guard.
func (s *Sender) clientFor(orgID string) *http.Client {
	if s == nil || s.Guard == nil {
		return s.client()
	}
	g := s.Guard(orgID)
	if g == nil {
		return s.client()
	}
	if c, ok := s.clients.Load(orgID); ok {
		return c.(*http.Client)
	}
	var c *http.Client
	if s.Client != nil {
		cc := *s.Client
		next := cc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		cc.Transport = g.CheckedTransport(next)
		c = &cc
	} else {
		c = g.HTTPClient(0)
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	got, _ := s.clients.LoadOrStore(orgID, c)
	return got.(*http.Client)
}

func (s *Sender) client() *http.Client {
	if s == nil || s.Client == nil {
		return defaultClient
	}
	return s.Client
}

func (s *Sender) timeout() time.Duration {
	if s == nil || s.Timeout <= 0 {
		return DefaultTimeout
	}
	return s.Timeout
}

func (s *Sender) now() time.Time {
	if s == nil || s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

func (s *Sender) userAgent() string {
	if s == nil || s.UserAgent == "" {
		return DefaultUserAgent
	}
	return s.UserAgent
}

// LogHost returns what a log may say of a webhook target: its host (with
// the port, when the URL has one), or "" when rawURL does not parse. A
// webhook URL often carries the receiver's secret in its path, query or
// user info (a token by which the receiver knows the sender), and the
// daemon's log is read by more people than the run's owner, so the rest of
// the URL stays out of logs.
func LogHost(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	return u.Host
}

// LogError returns a delivery's Err for a log: the sentences of Err quote
// the whole target URL when it is invalid, and that copy is replaced by
// LogHost(rawURL). The rest of Err (a network error, the receiver's answer)
// holds no secret of the sender's: the signing key never appears in it.
func LogError(rawURL, err string) string {
	u := strings.TrimSpace(rawURL)
	if u == "" || err == "" {
		return err
	}
	host := LogHost(u)
	err = strings.ReplaceAll(err, strconv.Quote(u), strconv.Quote(host))
	return strings.ReplaceAll(err, u, host)
}

// FailureReason returns the failure_reason of a run whose terminal webhook
// could not be delivered, or "" when d was delivered:
//
//	Failed to send webhook to http://127.0.0.1:9/hook: Request timed out after 10 seconds.
//
// The caller sets it on the run, which becomes failed and keeps its output.
func FailureReason(d Delivery) string {
	if d.OK() {
		return ""
	}
	why := d.Err
	if why == "" {
		why = "the webhook was not sent."
	}
	target := d.URL
	if target == "" {
		target = "an empty URL"
	}
	return "Failed to send webhook to " + target + ": " + why
}

// Replay converts d into the answer of POST /v1/runs/{run_id}/retry_webhook
// (the hosted service's RunWebhookReplayResponse). defaultURL is the URL
// configured for the run (null when ""); target_webhook_url is d.URL.
// status_code and response_body are null when there was no answer, and
// error is d.Err, or null when the receiver answered 2xx. Note that a
// non-2xx answer has both a status_code and an error.
//
// d may be a prepared delivery not sent yet (see Sender.Prepare): the
// answer then has the payload and headers that are being sent, a null
// status_code, response_body and error, and latency_ms 0.
func Replay(runID string, runType client.RunType, defaultURL string, d Delivery) *client.WebhookReplay {
	r := &client.WebhookReplay{
		RunID:            runID,
		RunType:          runType,
		TargetWebhookURL: d.URL,
		Payload:          string(d.Body),
		Headers:          make(map[string]string, len(d.Headers)),
		LatencyMS:        d.Latency.Milliseconds(),
	}
	for k, v := range d.Headers {
		r.Headers[k] = v
	}
	if defaultURL != "" {
		r.DefaultWebhookURL = &defaultURL
	}
	if d.StatusCode != 0 {
		code, body := d.StatusCode, d.ResponseBody
		r.StatusCode, r.ResponseBody = &code, &body
	}
	if d.Err != "" {
		msg := d.Err
		r.Error = &msg
	}
	return r
}
