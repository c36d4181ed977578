package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors for errors.Is. An *Error matches the one its status code
// maps to, so callers can branch without reading status codes:
//
//	if errors.Is(err, client.ErrNotFound) { ... }
var (
	ErrBadRequest   = errors.New("bad request")       // 400
	ErrUnauthorized = errors.New("unauthorized")      // 401 (the v1 API answers 403 instead)
	ErrForbidden    = errors.New("forbidden")         // 403: a missing or invalid API key, or a gated feature
	ErrNotFound     = errors.New("not found")         // 404
	ErrConflict     = errors.New("conflict")          // 409
	ErrValidation   = errors.New("validation failed") // 422
	ErrRateLimited  = errors.New("rate limited")      // 429
	ErrServer       = errors.New("server error")      // 5xx
)

// statusSentinels is the one table from status codes to sentinel errors.
var statusSentinels = map[int]error{
	http.StatusBadRequest:          ErrBadRequest,
	http.StatusUnauthorized:        ErrUnauthorized,
	http.StatusForbidden:           ErrForbidden,
	http.StatusNotFound:            ErrNotFound,
	http.StatusConflict:            ErrConflict,
	http.StatusUnprocessableEntity: ErrValidation,
	http.StatusTooManyRequests:     ErrRateLimited,
}

// Error is the one error type for a reply with a non-2xx status. Transport
// failures and context errors are returned as they are, not wrapped in Error.
//
// The service answers errors as {"detail": ...} where detail is a string, or
// (for request validation) a list of {type, loc, msg, input}. Detail holds
// the string, or the list's messages joined; Validation holds the list.
// Some replies have no detail at all (an empty 404, or a 500 answering
// {"error": "..."}): Detail then holds whatever text the body had.
//
// Error never holds the API key: it is only ever sent in a header, and
// headers are not kept.
type Error struct {
	StatusCode int
	Method     string
	URL        string // the request URL without user information
	RequestID  string // the X-Request-Id reply header, when present
	Detail     string
	Validation []ValidationError
	// RawDetail is the "detail" member as the server sent it.
	RawDetail json.RawMessage
	// Body is the reply body, at most 64 KiB of it.
	Body []byte
	// RetryAfter is the delay the server asked for (429 and 503), or zero.
	RetryAfter time.Duration
}

// ValidationError is one entry of a 422 reply's detail list.
type ValidationError struct {
	Type string `json:"type"`
	// Loc is where the error is: its first element is "body", "query",
	// "path" or "header", the rest are field names (strings) and list
	// indexes (ints).
	Loc   []any           `json:"loc"`
	Msg   string          `json:"msg"`
	Input json.RawMessage `json:"input,omitempty"`
	Ctx   json.RawMessage `json:"ctx,omitempty"`
}

// UnmarshalJSON decodes Loc's list indexes as int rather than float64.
func (v *ValidationError) UnmarshalJSON(b []byte) error {
	type plain ValidationError
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	for i, e := range p.Loc {
		if f, ok := e.(float64); ok && f == float64(int(f)) {
			p.Loc[i] = int(f)
		}
	}
	*v = ValidationError(p)
	return nil
}

// Path returns Loc joined with dots, as "body.workflow_definition.blocks.0.label".
func (v ValidationError) Path() string {
	parts := make([]string, len(v.Loc))
	for i, e := range v.Loc {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, ".")
}

// String returns "path: msg".
func (v ValidationError) String() string {
	if len(v.Loc) == 0 {
		return v.Msg
	}
	return v.Path() + ": " + v.Msg
}

// Error returns "METHOD URL: STATUS TEXT: detail".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Method != "" {
		b.WriteString(e.Method)
		b.WriteByte(' ')
		b.WriteString(e.URL)
		b.WriteString(": ")
	}
	b.WriteString(strconv.Itoa(e.StatusCode))
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteByte(' ')
		b.WriteString(t)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.RequestID != "" {
		b.WriteString(" (request id ")
		b.WriteString(e.RequestID)
		b.WriteByte(')')
	}
	return b.String()
}

// Is matches the sentinel error of e's status code (ErrNotFound for 404 and
// so on; ErrServer for any 5xx).
func (e *Error) Is(target error) bool {
	if target == ErrServer {
		return e.StatusCode >= 500
	}
	s, ok := statusSentinels[e.StatusCode]
	return ok && s == target
}

// maxErrorBody caps how much of an error reply is read and kept.
const maxErrorBody = 64 << 10

// newError builds an *Error from a non-2xx reply whose body has been read.
func newError(resp *http.Response, body []byte, now time.Time) *Error {
	e := &Error{
		StatusCode: resp.StatusCode,
		RequestID:  resp.Header.Get("X-Request-Id"),
		Body:       body,
		RetryAfter: retryAfter(resp.Header, now),
	}
	if req := resp.Request; req != nil {
		e.Method = req.Method
		e.URL = redactURL(req.URL.String())
	}
	e.parseDetail(body)
	return e
}

func (e *Error) parseDetail(body []byte) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return
	}
	var envelope struct {
		Detail json.RawMessage `json:"detail"`
		Error  json.RawMessage `json:"error"`
	}
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &envelope) != nil {
		e.Detail = truncateText(string(trimmed), 512)
		return
	}
	switch d := bytes.TrimSpace(envelope.Detail); {
	case len(d) == 0 || bytes.Equal(d, []byte("null")):
		var s string
		if json.Unmarshal(envelope.Error, &s) == nil {
			e.Detail = s
		}
	case d[0] == '"':
		e.RawDetail = d
		_ = json.Unmarshal(d, &e.Detail)
	case d[0] == '[':
		e.RawDetail = d
		if json.Unmarshal(d, &e.Validation) == nil {
			msgs := make([]string, len(e.Validation))
			for i, v := range e.Validation {
				msgs[i] = v.String()
			}
			e.Detail = strings.Join(msgs, "; ")
		} else {
			e.Detail = string(d)
		}
	default:
		e.RawDetail = d
		e.Detail = string(d)
	}
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// redactURL drops user information, the one place a credential could hide
// in a URL (the API key itself only ever travels in a header).
func redactURL(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if at := strings.IndexByte(rest, '@'); at >= 0 {
			if slash := strings.IndexByte(rest, '/'); slash < 0 || at < slash {
				return s[:i+3] + "REDACTED@" + rest[at+1:]
			}
		}
	}
	return s
}
