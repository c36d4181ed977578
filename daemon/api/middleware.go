package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/jsonenc"
)

// middleware wraps a handler; chain applies them so that the first listed
// runs first.
type middleware func(http.Handler) http.Handler

func chain(h http.Handler, mws ...middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

type ctxKey int

// ctxRequest holds the *requestState of a request.
const ctxRequest ctxKey = 0

// requestState is what the middleware learns about a request: its id, then
// the organization of its API key. It is one value in the request's context,
// filled in as the request goes through, rather than one context (and one
// copy of the *http.Request) per fact.
type requestState struct {
	id  string
	org store.Organization
}

func stateOf(ctx context.Context) *requestState {
	st, _ := ctx.Value(ctxRequest).(*requestState)
	return st
}

func requestID(ctx context.Context) string {
	if st := stateOf(ctx); st != nil {
		return st.id
	}
	return ""
}

// organization returns the organization the request's API key belongs to.
// Handlers behind withAuth always have one.
func organization(ctx context.Context) store.Organization {
	if st := stateOf(ctx); st != nil {
		return st.org
	}
	return store.Organization{}
}

// withRequestID gives every request an id, echoed in X-Request-Id so that a
// user can quote it and an operator can find the log line.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := &requestState{id: requestIDs.next()}
		w.Header()["X-Request-Id"] = []string{st.id}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxRequest, st)))
	})
}

// The values of the headers every answer carries, shared: net/http only
// reads header values, and an Add to one of them copies it (len == cap).
var (
	headerFrameDeny    = []string{"DENY"}
	headerNoFramers    = []string{"frame-ancestors 'none'"}
	headerJSONResponse = []string{"application/json"}
)

// withSecurityHeaders sets the headers the hosted service sends on every
// reply.
func withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["X-Frame-Options"] = headerFrameDeny
		h["Content-Security-Policy"] = headerNoFramers
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status written, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// withAccessLog writes one record per request: id, method, path, status,
// duration. Never a header, so never a key.
func withAccessLog(logger *slog.Logger) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
				slog.String("request_id", requestID(r.Context())),
				slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", rec.status), slog.Duration("duration", time.Since(start)))
		})
	}
}

// withRecover turns a panic into a 500 with a generic detail and logs it
// with its stack, so that no input can take the daemon down.
func withRecover(logger *slog.Logger) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					logger.ErrorContext(r.Context(), "panic", "request_id", requestID(r.Context()),
						"method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
					writeJSON(w, http.StatusInternalServerError, map[string]string{"detail": "Internal server error"})
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// withAuth resolves x-api-key to an organization. A missing or unknown key
// is 403 {"detail":"Invalid credentials"}, never 401, as the hosted service
// answers.
func withAuth(st store.Store, logger *slog.Logger) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("X-Api-Key")
			if key == "" {
				writeError(w, r, logger, errorf(KindForbidden, "Invalid credentials"))
				return
			}
			org, err := st.Authenticate(r.Context(), key)
			if err != nil {
				if !errors.Is(err, store.ErrNotFound) {
					writeError(w, r, logger, err)
					return
				}
				writeError(w, r, logger, errorf(KindForbidden, "Invalid credentials"))
				return
			}
			if st := stateOf(r.Context()); st != nil {
				st.org = org
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxRequest, &requestState{org: org})))
		})
	}
}

// maxBodyBytes caps request bodies; agent definitions are the largest.
const maxBodyBytes = 8 << 20

// withBodyLimit caps the body of every request but uploads (which have a
// limit of their own, uploads.go) at maxBodyBytes. A body that says it is
// larger is answered 413 before it is read; one that turns out larger is
// answered 413 by the handler that reads it (readBody).
func withBodyLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.URL.Path != uploadPath {
			if r.ContentLength > maxBodyBytes {
				// The body is not read: the connection cannot carry
				// another request.
				w.Header().Set("Connection", "close")
				writeError(w, r, nil, bodyTooLarge(maxBodyBytes)) // not internal: logs nothing
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// bodyTooLarge is the error of a request body over limit bytes: 413, with
// the limit.
func bodyTooLarge(limit int64) *Error {
	return errorf(KindTooLarge, "The request body is larger than this daemon's limit of %d bytes (%d MiB).", limit, limit>>20)
}

// marshalJSON encodes compactly without HTML escaping.
func marshalJSON(v any) ([]byte, error) {
	// The runs' stored views are made with the same function, so that
	// stored and built answers agree (the store encodes agents' rows the
	// same way).
	return jsonenc.Marshal(v)
}

// requestIDs makes request ids: a random prefix per process and a counter,
// unique without reading the system's random source on every request.
var requestIDs = newRequestIDSource()

type requestIDSource struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDSource() *requestIDSource {
	var b [4]byte
	rand.Read(b[:])
	return &requestIDSource{prefix: "req_" + hex.EncodeToString(b[:])}
}

func (s *requestIDSource) next() string {
	return s.prefix + strconv.FormatUint(s.n.Add(1), 36)
}
