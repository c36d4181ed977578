package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// DefaultMaxBodyBytes is the largest body Handler reads unless
// WithMaxBodyBytes says otherwise. Payloads carry the extracted output, so
// they can be large, but a receiver must not buffer an unbounded body from
// an unauthenticated sender.
const DefaultMaxBodyBytes = 10 << 20

// Option configures Handler.
type Option func(*handlerConfig)

type handlerConfig struct {
	maxBody   int64
	tolerance time.Duration
}

// WithMaxBodyBytes sets the largest body Handler accepts; larger requests
// get 413. A value of zero or less keeps DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(c *handlerConfig) {
		if n > 0 {
			c.maxBody = n
		}
	}
}

// WithTimestampTolerance makes Handler reject (401) a delivery whose
// TimestampHeader is missing, malformed, or further than d from the
// receiver's clock, to narrow the window for replaying a captured request.
// A value of zero or less turns the check off, which is the default.
//
// It is off by default because the hosted service computes the timestamp as
// int(datetime.utcnow().timestamp()): a naive UTC value read as local time,
// so the header is off by the sending host's UTC offset unless that host
// runs in UTC. A tolerance smaller than that offset rejects genuine
// deliveries. The timestamp is not signed either, so the check only stops
// replays by someone who cannot also change headers. Deliveries can be
// legitimately repeated (webhook retry), so the idempotency key (run_id)
// remains the real defense against duplicates.
func WithTimestampTolerance(d time.Duration) Option {
	return func(c *handlerConfig) { c.tolerance = d }
}

type payloadKey struct{}

// PayloadFromContext returns the verified, decoded payload Handler stored
// in the request context, and whether there was one. The next handler reads
// it instead of decoding r.Body again.
func PayloadFromContext(ctx context.Context) (*Payload, bool) {
	p, ok := ctx.Value(payloadKey{}).(*Payload)
	return p, ok && p != nil
}

// Handler returns an http.Handler that accepts webhook deliveries signed
// with key and passes them to next. It answers, with a short plain-text
// reason and without calling next:
//
//   - 405 to a method other than POST;
//   - 413 to a body larger than the limit (DefaultMaxBodyBytes unless
//     WithMaxBodyBytes is given);
//   - 401 to a missing or wrong SignatureHeader (and, with
//     WithTimestampTolerance, to a missing or stale TimestampHeader);
//   - 400 to a body that is signed correctly but is not a JSON object that
//     decodes as a Payload.
//
// The signature is checked over the raw bytes before anything parses them.
// next then gets the request with r.Body holding those same raw bytes and
// the decoded payload available through PayloadFromContext. next decides
// the reply; it should answer 2xx quickly, because the service counts a slow
// or non-2xx reply as a failed delivery.
//
// Handler panics if key is empty or next is nil, since either is a
// programming error that would otherwise accept forged deliveries or fail
// every request.
func Handler(key string, next http.Handler, opts ...Option) http.Handler {
	if key == "" {
		panic("webhook: Handler called with an empty key")
	}
	if next == nil {
		panic("webhook: Handler called with a nil next handler")
	}
	cfg := handlerConfig{maxBody: DefaultMaxBodyBytes}
	for _, o := range opts {
		o(&cfg)
	}
	return &handler{key: key, next: next, cfg: cfg}
}

type handler struct {
	key  string
	next http.Handler
	cfg  handlerConfig
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "webhook: method not allowed, use POST", http.StatusMethodNotAllowed)
		return
	}
	if r.ContentLength > h.cfg.maxBody {
		http.Error(w, "webhook: body too large", http.StatusRequestEntityTooLarge)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.maxBody))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, "webhook: body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "webhook: could not read body", http.StatusBadRequest)
		return
	}

	switch err := Verify(h.key, raw, r.Header.Get(SignatureHeader)); {
	case errors.Is(err, ErrMissingSignature):
		http.Error(w, "webhook: missing "+SignatureHeader+" header", http.StatusUnauthorized)
		return
	case err != nil:
		http.Error(w, "webhook: invalid signature", http.StatusUnauthorized)
		return
	}
	if h.cfg.tolerance > 0 {
		if msg := h.checkTimestamp(r.Header.Get(TimestampHeader)); msg != "" {
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
	}

	p := new(Payload)
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		http.Error(w, "webhook: payload is not a JSON object", http.StatusBadRequest)
		return
	}
	if err := json.Unmarshal(raw, p); err != nil {
		http.Error(w, "webhook: payload does not decode", http.StatusBadRequest)
		return
	}

	r = r.WithContext(context.WithValue(r.Context(), payloadKey{}, p))
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.ContentLength = int64(len(raw))
	h.next.ServeHTTP(w, r)
}

// checkTimestamp returns the reason to reject the TimestampHeader value v,
// or "" to accept it.
func (h *handler) checkTimestamp(v string) string {
	if v == "" {
		return "webhook: missing " + TimestampHeader + " header"
	}
	sec, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return "webhook: malformed " + TimestampHeader + " header"
	}
	skew := time.Since(time.Unix(sec, 0))
	if skew < 0 {
		// Still negative for the most negative Duration, to which Since
		// saturates for absurd timestamps; the check below rejects it.
		skew = -skew
	}
	if skew < 0 || skew > h.cfg.tolerance {
		return "webhook: " + TimestampHeader + " outside the accepted window"
	}
	return ""
}
