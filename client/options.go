package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Option configures a Client or a single call. Every Option can be given to
// New, where it sets the client's default, and to any method, where it
// applies to that call only and wins over the client's setting:
//
//	c, err := client.New(client.WithBaseURL(u), client.WithAPIKey(key))
//	run, err := c.Runs.Get(ctx, id, client.WithRequestTimeout(5*time.Second))
//
// An Option checks its input and returns an error that names the option, so
// a bad setting fails when the client is built (or the call is made), not
// later on the wire.
type Option func(*config) error

// config is everything a call needs besides its own request. The client
// keeps one; each call copies it and applies its own options.
type config struct {
	baseURL        *url.URL
	apiKey         string
	httpClient     *http.Client
	maxRetries     int
	userAgent      string
	logger         *slog.Logger
	requestTimeout time.Duration
	header         http.Header
	idempotencyKey string
	responseInto   **http.Response
	retryBase      time.Duration
	retryMax       time.Duration
	maxRetryAfter  time.Duration

	// sleep waits for d or until ctx is done; tests replace it so that
	// backoff is checked without waiting for real.
	sleep func(ctx context.Context, d time.Duration) error
	// now is the clock used to read HTTP-date Retry-After values.
	now func() time.Time
	// jitter returns a number in [0, 1) that shortens a backoff delay.
	jitter func() float64
}

// Defaults of the retry policy.
const (
	DefaultMaxRetries    = 2
	defaultRetryBase     = 500 * time.Millisecond
	defaultRetryMax      = 8 * time.Second
	defaultMaxRetryAfter = 60 * time.Second
)

// DefaultBaseURL is the address of a local abctl daemon, the default when no
// WithBaseURL is given. The hosted service is at HostedBaseURL.
const DefaultBaseURL = "http://127.0.0.1:8780"

// HostedBaseURL is the base URL of the hosted service.
const HostedBaseURL = "https://api.skyvern.com"

func (c *config) clone() *config {
	cp := *c
	cp.header = c.header.Clone()
	return &cp
}

func (c *config) apply(opts []Option) error {
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WithBaseURL sets the service's base URL: http or https, a host, and an
// optional path prefix under which /v1 lives ("https://example.com/api"
// sends requests to https://example.com/api/v1/...).
func WithBaseURL(rawURL string) Option {
	return func(c *config) error {
		u, err := url.Parse(strings.TrimSpace(rawURL))
		if err != nil {
			return fmt.Errorf("client: WithBaseURL(%q): %w", rawURL, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("client: WithBaseURL(%q): scheme must be http or https", rawURL)
		}
		if u.Host == "" {
			return fmt.Errorf("client: WithBaseURL(%q): missing host", rawURL)
		}
		if u.User != nil {
			return fmt.Errorf("client: WithBaseURL: credentials in the URL are not supported; use WithAPIKey")
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("client: WithBaseURL(%q): a base URL has no query or fragment", rawURL)
		}
		u.Path = strings.TrimRight(u.Path, "/")
		u.RawPath = strings.TrimRight(u.RawPath, "/")
		c.baseURL = u
		return nil
	}
}

// WithAPIKey sets the organization's API key, sent as the x-api-key header.
// The key is never written to errors or logs.
func WithAPIKey(key string) Option {
	return func(c *config) error {
		if strings.ContainsAny(key, "\r\n\x00") {
			return errors.New("client: WithAPIKey: the key contains a line break or NUL byte")
		}
		if key != strings.TrimSpace(key) {
			return errors.New("client: WithAPIKey: the key has leading or trailing white space")
		}
		c.apiKey = key
		return nil
	}
}

// WithHTTPClient sets the HTTP client used to send requests. The client is
// used as given (its Transport, Jar and Timeout apply); it is not modified.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return errors.New("client: WithHTTPClient: nil *http.Client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithMaxRetries sets how many times a failed request is retried (default
// 2; 0 disables retries). See the package documentation for what is retried.
func WithMaxRetries(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("client: WithMaxRetries(%d): must not be negative", n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithRetryBackoff sets the first retry delay and the longest one (defaults
// 0.5 s and 8 s). Each retry doubles the delay, minus up to 25% of jitter.
// A Retry-After reply header overrides the computed delay.
func WithRetryBackoff(initial, max time.Duration) Option {
	return func(c *config) error {
		if initial <= 0 || max < initial {
			return fmt.Errorf("client: WithRetryBackoff(%v, %v): want 0 < initial <= max", initial, max)
		}
		c.retryBase, c.retryMax = initial, max
		return nil
	}
}

// WithMaxRetryAfter sets the longest Retry-After the client waits for
// (default 60 s). A reply asking for a longer wait is returned as an error
// whose RetryAfter field says how long the server asked for.
func WithMaxRetryAfter(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("client: WithMaxRetryAfter(%v): must not be negative", d)
		}
		c.maxRetryAfter = d
		return nil
	}
}

// WithUserAgent adds a product token to the User-Agent header, before this
// package's own ("mytool/1.2 abctl-go/0.1").
func WithUserAgent(ua string) Option {
	return func(c *config) error {
		if strings.ContainsAny(ua, "\r\n") {
			return errors.New("client: WithUserAgent: contains a line break")
		}
		c.userAgent = strings.TrimSpace(ua)
		return nil
	}
}

// WithLogger sets a logger that receives one debug record per attempt
// (method, path, status, attempt, duration) and one warning per retry. The
// API key is never logged. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("client: WithLogger: nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithRequestTimeout bounds each attempt of a call. The context given to the
// call bounds the whole call, retries and backoff included; this bounds one
// try, so a stalled attempt can be abandoned and retried.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("client: WithRequestTimeout(%v): must not be negative", d)
		}
		c.requestTimeout = d
		return nil
	}
}

// WithHeader sets a request header. Headers this package manages
// (x-api-key, Content-Type, Idempotency-Key) cannot be set this way; use the
// dedicated options.
func WithHeader(key, value string) Option {
	return func(c *config) error {
		ck := http.CanonicalHeaderKey(key)
		switch ck {
		case "X-Api-Key", "Content-Type", "Idempotency-Key", "Content-Length", "Host":
			return fmt.Errorf("client: WithHeader(%q): this header is managed by the client", key)
		}
		if key == "" || strings.ContainsAny(key+value, "\r\n") {
			return fmt.Errorf("client: WithHeader(%q): empty name or a line break", key)
		}
		if c.header == nil {
			c.header = make(http.Header)
		}
		c.header.Set(ck, value)
		return nil
	}
}

// WithIdempotencyKey sends an Idempotency-Key header: the service treats
// requests with the same key as one (for agent creation, the key determines
// the agent's id, so a replay returns the same agent). A request carrying a
// key is retried like a read, since a duplicate cannot be created. The key
// must be 1 to 255 visible ASCII characters.
func WithIdempotencyKey(key string) Option {
	return func(c *config) error {
		if err := ValidateIdempotencyKey(key); err != nil {
			return fmt.Errorf("client: WithIdempotencyKey: %w", err)
		}
		c.idempotencyKey = key
		return nil
	}
}

// ValidateIdempotencyKey reports whether key is 1 to 255 visible ASCII bytes
// (0x21 to 0x7E), the form the service accepts.
func ValidateIdempotencyKey(key string) error {
	if len(key) < 1 || len(key) > 255 {
		return fmt.Errorf("idempotency key must be 1 to 255 bytes, got %d", len(key))
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return fmt.Errorf("idempotency key byte %d (0x%02x) is not visible ASCII", i, key[i])
		}
	}
	return nil
}

// WithResponseInto stores the last HTTP response of the call in *dst, for
// callers who need its headers or status. Its body is already read and
// closed.
func WithResponseInto(dst **http.Response) Option {
	return func(c *config) error {
		if dst == nil {
			return errors.New("client: WithResponseInto: nil destination")
		}
		c.responseInto = dst
		return nil
	}
}
