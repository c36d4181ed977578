// Package retry holds what the SDK and the model client share to retry an
// HTTP request: the delay a reply asks for (Retry-After-Ms, Retry-After),
// exponential backoff with jitter, and a wait that ends with its context.
// Which requests are retried, how often and how long a wait may be are each
// caller's own rules.
package retry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff returns the delay before retry number attempt+1 (attempt counts
// from 0): base doubled per attempt, capped at limit, then shortened by up
// to a quarter, in proportion to jitter (a number in [0, 1), usually
// random) so that many clients do not retry in step.
func Backoff(attempt int, base, limit time.Duration, jitter float64) time.Duration {
	d := base
	for i := 0; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d - time.Duration(float64(d)*0.25*jitter)
}

// After returns the delay a reply's headers ask for: AfterMs, else
// AfterHeader. ok is false when neither header holds a value they read.
func After(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if d, ok := AfterMs(h); ok {
		return d, true
	}
	return AfterHeader(h, now)
}

// AfterMs reads the Retry-After-Ms header: a number of milliseconds, not
// negative, possibly fractional. ok is false when it is missing or is not
// such a number.
func AfterMs(h http.Header) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After-Ms"))
	if v == "" {
		return 0, false
	}
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil || !(ms >= 0) {
		return 0, false
	}
	return time.Duration(ms * float64(time.Millisecond)), true
}

// AfterHeader reads the Retry-After header: a number of seconds, not
// negative, possibly fractional, or an HTTP date, which gives the time from
// now until then (zero for a date that has passed). ok is false when it is
// missing or is neither.
func AfterHeader(h http.Header, now time.Time) (d time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Sleep waits for d, or returns ctx's error if ctx ends first. A d of zero
// or less does not wait, but still returns the error of an ended ctx.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
