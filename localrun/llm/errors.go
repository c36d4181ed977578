package llm

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrUnreachable matches (errors.Is) an *Error for a call that got no HTTP
// answer: connection refused, unknown host, TLS failure, or no answer
// within the timeout, on every attempt.
var ErrUnreachable = errors.New("model unreachable")

// ErrRateLimited matches (errors.Is) an *Error for a call the provider kept
// answering with 429 Too Many Requests.
var ErrRateLimited = errors.New("model rate limited")

// Error is a failed call to a model, after retries. Its text says, for a
// person reading a run's failure_reason, what was called, what happened and,
// when it helps, what to change. It never holds the API key.
type Error struct {
	// Provider, Model and Endpoint (the URL posted to) say what was
	// called; Kind is the call's Request.Kind.
	Provider Provider
	Model    string
	Endpoint string
	Kind     string
	// StatusCode is the HTTP status of the last answer, 0 when none came.
	StatusCode int
	// Type is the provider's error type or code ("rate_limit_error",
	// "invalid_api_key"), when it sent one.
	Type string
	// Message is the provider's error message, or what went wrong on the
	// network ("connection refused", "no answer within 1m30s").
	Message string
	// Attempts is the number of HTTP requests made.
	Attempts int
	// Err is the network error of the last attempt, when there was no
	// answer.
	Err error

	hint string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.StatusCode == 0 {
		fmt.Fprintf(&b, "llm: no model reachable at %s (%s model %q): %s", e.Endpoint, e.Provider, e.Model, e.Message)
	} else {
		fmt.Fprintf(&b, "llm: %s model %q at %s answered %d %s", e.Provider, e.Model, e.Endpoint, e.StatusCode, http.StatusText(e.StatusCode))
		if e.Type != "" {
			fmt.Fprintf(&b, " (%s)", e.Type)
		}
		if e.Message != "" {
			b.WriteString(": ")
			b.WriteString(e.Message)
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " [%d attempts]", e.Attempts)
	}
	if e.hint != "" {
		b.WriteString(". ")
		b.WriteString(e.hint)
	}
	return b.String()
}

// Unwrap returns the network error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is matches ErrUnreachable and ErrRateLimited.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrUnreachable:
		return e.StatusCode == 0
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	}
	return false
}

// Unreachable reports whether no HTTP answer came at all.
func (e *Error) Unreachable() bool { return e.StatusCode == 0 }

// configureHint tells how to point abctl at a model.
func configureHint(p Provider, model string) string {
	start := ""
	if p == ProviderOllama {
		start = fmt.Sprintf("Start Ollama there (ollama serve; ollama pull %s), or configure another model: ", model)
	} else {
		start = "Check that the server runs and the address is right, or configure another model: "
	}
	return start + fmt.Sprintf("flags %s, %s, %s, %s of abctl daemon, or the environment variables %s, %s, %s, %s (%s or %s alone select those services)",
		FlagProvider, FlagBaseURL, FlagModel, FlagAPIKey, EnvProvider, EnvBaseURL, EnvModel, EnvAPIKey, EnvOpenAIKey, EnvAnthropicKey)
}

// statusHint says what to change for answers that will not go away by
// themselves.
func statusHint(p Provider, model string, status int, typ string) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Sprintf("Check the API key (%s, %s or %s)", FlagAPIKey, EnvAPIKey, vendorKeyVar(p))
	case status == http.StatusNotFound && p == ProviderOllama:
		return fmt.Sprintf("Pull the model first (ollama pull %s) or name another one (%s, %s)", model, FlagModel, EnvModel)
	case status == http.StatusNotFound:
		return fmt.Sprintf("Check the model name (%s, %s) and the base URL (%s, %s)", FlagModel, EnvModel, FlagBaseURL, EnvBaseURL)
	case status == http.StatusTooManyRequests && isQuotaError(typ):
		return "The account's quota is used up"
	}
	return ""
}

func isQuotaError(typ string) bool {
	return strings.Contains(typ, "quota") || strings.Contains(typ, "billing")
}

// describeNetErr says in a few words why no answer came.
func describeNetErr(err error, timeout time.Duration) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within " + timeout.String()
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "unknown host " + strconv.Quote(dnsErr.Name)
	case errors.As(err, &certErr):
		return "TLS certificate not accepted: " + certErr.Err.Error()
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	}
	msg := err.Error()
	// url.Error repeats the method and URL, which the message already has.
	if i := strings.LastIndex(msg, "\": "); i >= 0 {
		msg = msg[i+3:]
	}
	return msg
}

// permanentNetErr reports network errors a retry cannot cure.
func permanentNetErr(err error) bool {
	// An error that says it is permanent (a refusal of the egress policy,
	// which the same call would meet again).
	var perm interface{ Permanent() bool }
	if errors.As(err, &perm) && perm.Permanent() {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return true
	}
	var certErr *tls.CertificateVerificationError
	return errors.As(err, &certErr)
}
