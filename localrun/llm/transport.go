package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/abctl/abctl/internal/retry"
)

// maxReplyBytes caps the body read from a provider.
const maxReplyBytes = 32 << 20

// Backoff between attempts when the provider does not say how long to
// wait: retryBase doubled per attempt up to retryCap, less up to a quarter
// of jitter.
const (
	retryBase = 500 * time.Millisecond
	retryCap  = 8 * time.Second
)

// endpoint posts JSON to one provider URL with retries; both protocols use
// it.
type endpoint struct {
	cfg  Config
	url  string
	o    *options
	auth func(http.Header)
	// providerError reads the provider's error body into a type and a
	// message.
	providerError func(body []byte) (typ, msg string)
}

// attempt is what one HTTP request gave.
type attempt struct {
	status int
	header http.Header
	body   []byte
	err    error // no answer
}

// post sends body and returns the body of the first 2xx answer and the
// number of attempts. It retries, with waits, on network failures, 408,
// 409, 429 and 5xx answers; see errors.go for what fails.
func (e *endpoint) post(ctx context.Context, kind string, body []byte) ([]byte, int, error) {
	maxRetries := max(e.cfg.MaxRetries, 0)
	for n := 1; ; n++ {
		a := e.once(ctx, kind, body)
		if ctx.Err() != nil {
			return nil, n, fmt.Errorf("llm: %s call to %s model %q: %w", kindOr(kind), e.cfg.Provider, e.cfg.Model, context.Cause(ctx))
		}
		if a.err == nil && a.status >= 200 && a.status < 300 {
			return a.body, n, nil
		}
		failure := e.failure(kind, a, n)
		if !retryable(a) || n > maxRetries {
			return nil, n, failure
		}
		wait, asked := retry.After(a.header, time.Now())
		if !asked {
			wait = retry.Backoff(n-1, retryBase, retryCap, rand.Float64())
		}
		if wait > MaxRetryWait {
			failure.Message += fmt.Sprintf(" (asked to retry after %s, longer than the %s abctl waits)", wait.Round(time.Second), MaxRetryWait)
			return nil, n, failure
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			failure.Message += fmt.Sprintf(" (the next attempt would come after the call's deadline, in %s)", wait.Round(time.Millisecond))
			return nil, n, failure
		}
		e.o.log.LogAttrs(ctx, slog.LevelWarn, "llm retry",
			slog.String("kind", kind), slog.String("provider", string(e.cfg.Provider)), slog.String("model", e.cfg.Model),
			slog.Int("attempt", n), slog.Int("status", a.status), slog.String("reason", failure.Message), slog.Duration("wait", wait))
		if err := e.o.sleep(ctx, wait); err != nil {
			return nil, n, fmt.Errorf("llm: %s call to %s model %q: %w (while waiting to retry after: %v)", kindOr(kind), e.cfg.Provider, e.cfg.Model, err, failure)
		}
	}
}

func kindOr(kind string) string {
	if kind == "" {
		return "model"
	}
	return kind
}

// once makes one HTTP request, bounded by the configured timeout.
func (e *endpoint) once(ctx context.Context, kind string, body []byte) attempt {
	actx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return attempt{err: err}
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "abctl-llm/1")
	if kind != "" {
		h.Set(KindHeader, kind)
	}
	e.auth(h)
	resp, err := e.o.http.Do(req)
	if err != nil {
		return attempt{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes+1))
	if err != nil {
		return attempt{err: fmt.Errorf("reading the answer: %w", err)}
	}
	if len(data) > maxReplyBytes {
		return attempt{status: resp.StatusCode, header: resp.Header, err: fmt.Errorf("answer larger than %d MiB", maxReplyBytes>>20)}
	}
	return attempt{status: resp.StatusCode, header: resp.Header, body: data}
}

// failure builds the Error for a failed attempt.
func (e *endpoint) failure(kind string, a attempt, attempts int) *Error {
	f := &Error{Provider: e.cfg.Provider, Model: e.cfg.Model, Endpoint: e.url, Kind: kind, Attempts: attempts}
	if a.err != nil && a.status == 0 {
		f.Err = a.err
		f.Message = describeNetErr(a.err, e.cfg.Timeout)
		f.hint = configureHint(e.cfg.Provider, e.cfg.Model)
		return f
	}
	f.StatusCode = a.status
	if a.err != nil {
		f.Message = a.err.Error()
		return f
	}
	f.Type, f.Message = e.providerError(a.body)
	if f.Message == "" {
		f.Message = preview(string(a.body), 200)
	}
	f.Message = e.redact(preview(f.Message, 500))
	f.hint = statusHint(e.cfg.Provider, e.cfg.Model, a.status, f.Type)
	return f
}

// redact removes the API key from text that came from elsewhere.
func (e *endpoint) redact(s string) string {
	if k := e.cfg.APIKey; len(k) >= 4 {
		s = strings.ReplaceAll(s, k, "[api key]")
	}
	return s
}

// retryable reports whether an attempt's failure may go away.
func retryable(a attempt) bool {
	switch strings.ToLower(a.header.Get("X-Should-Retry")) {
	case "true":
		return true
	case "false":
		return false
	}
	if a.status == 0 {
		return !permanentNetErr(a.err)
	}
	switch {
	case a.status == http.StatusTooManyRequests:
		return !isQuotaError(strings.ToLower(string(a.body)))
	case a.status == http.StatusRequestTimeout, a.status == http.StatusConflict, a.status >= 500:
		return true
	}
	return false
}

// errNoAnswer is returned when a 2xx body holds no answer.
var errNoAnswer = errors.New("the provider's reply holds no answer")
