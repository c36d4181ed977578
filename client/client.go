package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/abctl/abctl/internal/jsonenc"
	"github.com/abctl/abctl/internal/retry"
)

// Version is this package's version, sent in the User-Agent header.
const Version = "0.1.0"

// Client is a client of the v1 API. Its services group the operations by
// resource. A Client is safe for concurrent use; build it once with New and
// share it.
type Client struct {
	cfg    *config
	common service

	Agents  *AgentsService  // agents (workflows): definitions, versions, folders, tags
	Runs    *RunsService    // task and agent runs: start, get, wait, cancel, webhooks, artifacts, tags
	Folders *FoldersService // folders that group agents
	Tags    *TagsService    // the tag registry: keys, values and their colours
	Actions *ActionsService // single browser actions (run_action)
	// Credentials: passwords, cards and secrets, and one-time codes.
	Credentials *CredentialsService
	// BrowserProfiles: saved browser states that runs start from.
	BrowserProfiles *BrowserProfilesService
	// BrowserSessions: browsers kept open between runs.
	BrowserSessions *BrowserSessionsService
	// Schedules: agents' runs started at cron times.
	Schedules *SchedulesService
	// CustomLLMs: the organization's own model endpoints.
	CustomLLMs *CustomLLMsService
	// Files: uploaded files, and the content of artifacts.
	Files *FilesService
	// Scripts: recorded runs of agents that replay without a model.
	Scripts *ScriptsService
}

type service struct{ client *Client }

// New returns a Client. Without options it talks to a local daemon at
// DefaultBaseURL with no API key; WithBaseURL and WithAPIKey point it
// elsewhere. Options are checked here: the error lists every bad one.
//
// The package reads no environment variables: the caller decides where
// configuration comes from.
func New(opts ...Option) (*Client, error) {
	base, _ := url.Parse(DefaultBaseURL)
	cfg := &config{
		baseURL:       base,
		httpClient:    &http.Client{},
		maxRetries:    DefaultMaxRetries,
		logger:        slog.New(slog.DiscardHandler),
		retryBase:     defaultRetryBase,
		retryMax:      defaultRetryMax,
		maxRetryAfter: defaultMaxRetryAfter,
		sleep:         retry.Sleep,
		now:           time.Now,
		jitter:        rand.Float64,
	}
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	return newClient(cfg), nil
}

func newClient(cfg *config) *Client {
	c := &Client{cfg: cfg}
	c.common.client = c
	c.Agents = (*AgentsService)(&c.common)
	c.Runs = (*RunsService)(&c.common)
	c.Folders = (*FoldersService)(&c.common)
	c.Tags = (*TagsService)(&c.common)
	c.Actions = (*ActionsService)(&c.common)
	c.Credentials = (*CredentialsService)(&c.common)
	c.BrowserProfiles = (*BrowserProfilesService)(&c.common)
	c.BrowserSessions = (*BrowserSessionsService)(&c.common)
	c.Schedules = (*SchedulesService)(&c.common)
	c.CustomLLMs = (*CustomLLMsService)(&c.common)
	c.Files = (*FilesService)(&c.common)
	c.Scripts = (*ScriptsService)(&c.common)
	return c
}

// Clone returns a new Client with c's settings and opts applied on top, for
// example to talk to another organization with the same HTTP client.
func (c *Client) Clone(opts ...Option) (*Client, error) {
	cfg := c.cfg.clone()
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	return newClient(cfg), nil
}

// BaseURL returns the base URL the client sends requests to.
func (c *Client) BaseURL() string { return c.cfg.baseURL.String() }

// request describes one API operation.
type request struct {
	method string
	path   string // escaped, starting with /v1/
	query  url.Values
	header map[string]string
	// body is encoded as JSON unless rawBody is set.
	body        any
	rawBody     []byte
	contentType string
	// idempotent marks operations that may be repeated without changing the
	// result (reads, cancels, deletes, tag writes). The others (anything
	// that creates a run, an agent version, a folder...) are retried only
	// when the request provably never left, or carries an Idempotency-Key.
	idempotent bool
}

// callConfig is the client's configuration for one call: its own when the
// call gives no options, else a copy with them applied.
func (c *Client) callConfig(opts []Option) (*config, error) {
	if len(opts) == 0 {
		return c.cfg, nil
	}
	cfg := c.cfg.clone()
	if err := cfg.apply(opts); err != nil {
		return nil, err
	}
	return cfg, nil
}

// do sends req and decodes a 2xx reply into out (when out is not nil). It
// reports whether the reply body was empty or JSON null, which a few
// operations answer instead of an object.
func (c *Client) do(ctx context.Context, req request, out any, opts []Option) (empty bool, err error) {
	cfg, err := c.callConfig(opts)
	if err != nil {
		return false, err
	}
	body, err := encodeBody(req)
	if err != nil {
		return false, err
	}
	target := cfg.baseURL.String() + req.path
	if len(req.query) > 0 {
		target += "?" + req.query.Encode()
	}
	retryable := req.idempotent || cfg.idempotencyKey != ""

	for attempt := 0; ; attempt++ {
		resp, respBody, sent, err := c.attempt(ctx, cfg, req, target, body, attempt)
		if cfg.responseInto != nil && resp != nil {
			*cfg.responseInto = resp
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return false, ctxErr
			}
			if attempt < cfg.maxRetries && (!sent || (retryable && isTransient(err))) {
				delay := cfg.backoff(attempt)
				cfg.logger.WarnContext(ctx, "abctl client: retrying after a transport error",
					"method", req.method, "path", req.path, "attempt", attempt+1, "delay", delay, "error", err.Error())
				if err := cfg.sleep(ctx, delay); err != nil {
					return false, err
				}
				continue
			}
			return false, err
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			apiErr := newError(resp, respBody, cfg.now())
			if attempt < cfg.maxRetries && retryable && retryableStatus(resp.StatusCode) {
				delay := cfg.backoff(attempt)
				if apiErr.RetryAfter > 0 {
					if apiErr.RetryAfter > cfg.maxRetryAfter {
						return false, apiErr
					}
					delay = apiErr.RetryAfter
				}
				cfg.logger.WarnContext(ctx, "abctl client: retrying",
					"method", req.method, "path", req.path, "status", resp.StatusCode, "attempt", attempt+1, "delay", delay)
				if err := cfg.sleep(ctx, delay); err != nil {
					return false, err
				}
				continue
			}
			return false, apiErr
		}
		trimmed := bytes.TrimSpace(respBody)
		if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
			return true, nil
		}
		if out == nil {
			return false, nil
		}
		if err := json.Unmarshal(trimmed, out); err != nil {
			return false, fmt.Errorf("client: decode reply of %s %s: %w", req.method, redactURL(target), err)
		}
		return false, nil
	}
}

// attempt sends the request once. sent reports whether any of the request
// may have reached the server: false only when the connection was refused
// or the request headers were never written, the cases in which a retry
// cannot create a duplicate.
func (c *Client) attempt(ctx context.Context, cfg *config, req request, target string, body []byte, attempt int) (resp *http.Response, respBody []byte, sent bool, err error) {
	if cfg.requestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.requestTimeout)
		defer cancel()
	}
	// The transport writes the request on its own goroutine.
	var wrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
	})
	var bodyReader io.Reader
	if body != nil {
		bodyReader = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, target, bodyReader)
	if err != nil {
		return nil, nil, false, fmt.Errorf("client: build request %s %s: %w", req.method, req.path, err)
	}
	cfg.setHeaders(hreq, req, body != nil)
	if attempt > 0 {
		hreq.Header.Set("X-Retry-Count", strconv.Itoa(attempt))
	}

	start := time.Now()
	resp, err = cfg.httpClient.Do(hreq)
	if err != nil {
		sent = wrote.Load() && !isConnRefused(err)
		cfg.logger.DebugContext(ctx, "abctl client: request failed",
			"method", req.method, "path", req.path, "attempt", attempt, "duration", time.Since(start), "error", err.Error())
		return nil, nil, sent, err
	}
	defer resp.Body.Close()
	limit := int64(1 << 62)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		limit = maxErrorBody
	}
	respBody, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	cfg.logger.DebugContext(ctx, "abctl client: request",
		"method", req.method, "path", req.path, "status", resp.StatusCode, "attempt", attempt, "duration", time.Since(start))
	if err != nil {
		return resp, nil, true, fmt.Errorf("client: read reply of %s %s: %w", req.method, req.path, err)
	}
	return resp, respBody, true, nil
}

func (cfg *config) setHeaders(hreq *http.Request, req request, hasBody bool) {
	h := hreq.Header
	for k, v := range cfg.header {
		h[k] = v
	}
	for k, v := range req.header {
		h.Set(k, v)
	}
	ua := "abctl-go/" + Version
	if cfg.userAgent != "" {
		ua = cfg.userAgent + " " + ua
	}
	h.Set("User-Agent", ua)
	h.Set("Accept", "application/json")
	if cfg.apiKey != "" {
		h.Set("X-Api-Key", cfg.apiKey)
	}
	if cfg.idempotencyKey != "" {
		h.Set("Idempotency-Key", cfg.idempotencyKey)
	}
	if hasBody {
		ct := req.contentType
		if ct == "" {
			ct = "application/json"
		}
		h.Set("Content-Type", ct)
	}
}

func encodeBody(req request) ([]byte, error) {
	if req.rawBody != nil {
		return req.rawBody, nil
	}
	if req.body == nil {
		return nil, nil
	}
	body, err := jsonenc.Marshal(req.body)
	if err != nil {
		return nil, fmt.Errorf("client: encode body of %s %s: %w", req.method, req.path, err)
	}
	return body, nil
}

// retryableStatus lists the replies that say "try again": too many
// requests, and the gateway and availability errors a proxy in front of the
// service answers while it restarts.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// isTransient reports whether a transport error may go away on its own:
// anything but a TLS certificate that failed verification, which would fail
// the same way again.
func isTransient(err error) bool {
	var certErr *tls.CertificateVerificationError
	return !errors.As(err, &certErr)
}

// isConnRefused reports whether the connection was refused, which proves
// that nothing was sent.
func isConnRefused(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// backoff returns the delay before retry number attempt+1: retryBase
// doubled per attempt, capped at retryMax, shortened by up to 25% of
// jitter so that many clients do not retry in step.
func (cfg *config) backoff(attempt int) time.Duration {
	return retry.Backoff(attempt, cfg.retryBase, cfg.retryMax, cfg.jitter())
}

// retryAfter is the delay a reply asks for, as Error.RetryAfter holds it:
// Retry-After-Ms when it asks for more than zero, else Retry-After in
// seconds or as an HTTP date; zero when neither asks for a wait.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := retry.AfterMs(h); ok && d > 0 {
		return d
	}
	d, _ := retry.AfterHeader(h, now)
	return d
}

// pathf builds an escaped path from a format whose %s verbs are path
// segments: each argument is escaped as one segment, so an id containing
// "/" or "?" cannot change the route.
func pathf(format string, segments ...string) string {
	args := make([]any, len(segments))
	for i, s := range segments {
		args[i] = url.PathEscape(s)
	}
	return fmt.Sprintf(format, args...)
}

// requireID returns an error naming the argument when id is empty, which
// would otherwise send a request to a different route.
func requireID(name, id string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("client: %s must not be empty", name)
	}
	return nil
}

// setInt, setString and setBool add a query parameter when its value is
// not the zero value, which means "not set" in the options structs.
func setInt(q url.Values, key string, v int) {
	if v != 0 {
		q.Set(key, strconv.Itoa(v))
	}
}

func setString(q url.Values, key, v string) {
	if v != "" {
		q.Set(key, v)
	}
}

func setBool(q url.Values, key string, v bool) {
	if v {
		q.Set(key, "true")
	}
}

// addEach adds each of values to q under key, in order: a list the
// service reads as a repeated query parameter.
func addEach[S ~string](q url.Values, key string, values []S) {
	for _, v := range values {
		q.Add(key, string(v))
	}
}
