// Package api is the HTTP face of `abctl daemon`: the v1 API of the
// browser-automation agent service, served from an embedded bbolt store
// (package daemon/store), so that code written for the hosted service (the
// Go client of this project, the service's official clients, its webhook
// receivers) works against it unchanged. It runs no browser: runs reach the
// engine through the executor seam (package localrun/executor), which
// package daemon wires in.
//
// It owns what is HTTP about the daemon and nothing else: the routes, the
// middleware every request goes through (API keys, body limits, request
// ids, access log), reading requests and reporting their problems in the
// hosted service's 422 shapes, and the one table from error kinds (the
// API's own, the store's errors, the engine's action errors) to HTTP
// statuses and details. Each resource's handlers are a small type holding
// only the parts of the store and of the runner they use. What the API
// answers about runs is built by package daemon/runview, which the
// runner's webhooks share; agent definitions are put in the shape they are
// stored in by package daemon/definition.
package api

import (
	"crypto/rand"
	"encoding/binary"
	"log/slog"
	"net/http"
	"time"

	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// Server is the HTTP face of the daemon. Build it with NewServer.
type Server struct {
	store   store.Store
	logger  *slog.Logger
	handler http.Handler
	// ids makes the ids of the agent versions the server hands to the
	// store (package definition); now is their clock.
	ids *ids.Generator
	now func() time.Time
	// runs starts and shows runs; nil answers 503 to starting one.
	runs *Runs
	// accessLog receives one record per request; the logger by default.
	accessLog *slog.Logger
	// timers close browser sessions at their timeout (browsersessions.go);
	// minute is how long one of their minutes lasts (tests shorten it).
	timers sessionTimers
	minute time.Duration
	// modelCheck tries the endpoint of a custom model being saved; nil
	// saves every one with valid false (customllms.go).
	modelCheck ModelCheck
	// maxUpload caps the files of POST /v1/upload_file, in bytes
	// (uploads.go); version is what GET /v1/version answers (version.go).
	maxUpload int64
	version   string
	// scheduler is the clock of the schedules and wakes their planner
	// (schedules.go); none: time.Now, and nothing to wake.
	scheduler schedulerRef
	// metrics serves GET /metrics, browsers gives the "browsers" of GET
	// /healthz (health.go); nil: no such route, no such field.
	metrics  http.Handler
	browsers func() (any, bool)
	// pprof serves /debug/pprof/ on the admin socket (admin.go).
	pprof bool
}

// NewServer returns the daemon's handler over st. logger receives the access
// log and internal errors; nil discards them.
func NewServer(st store.Store, logger *slog.Logger, opts ...ServerOption) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{store: st, logger: logger, now: time.Now, minute: time.Minute, maxUpload: DefaultMaxUploadSize}
	for _, o := range opts {
		o(s)
	}
	if s.accessLog == nil {
		s.accessLog = logger
	}
	if s.ids == nil {
		var b [4]byte
		_, _ = rand.Read(b[:])
		s.ids = ids.New(binary.LittleEndian.Uint32(b[:]))
	}
	s.handler = s.routes()
	return s
}

// ServerOption configures NewServer.
type ServerOption func(*Server)

// WithAccessLog sends the access records (one per request) to logger
// instead of the server's logger.
func WithAccessLog(logger *slog.Logger) ServerOption {
	return func(s *Server) { s.accessLog = logger }
}

// WithRuns lets the server start, cancel and show runs and serve their
// files. Without it the run routes that need a runner answer 503.
func WithRuns(rs *Runs) ServerOption {
	return func(s *Server) { s.runs = rs }
}

// WithMinute makes a minute of a browser session's timeout last d (tests
// shorten it); the default is time.Minute.
func WithMinute(d time.Duration) ServerOption {
	return func(s *Server) {
		if d > 0 {
			s.minute = d
		}
	}
}

// WithIDs makes the server take the ids it makes (those of agent versions
// and their parameters) from g, the daemon's generator. Without it the
// server uses a generator of its own with a random worker.
func WithIDs(g *ids.Generator) ServerOption {
	return func(s *Server) { s.ids = g }
}

// WithPprof serves Go's profiles (net/http/pprof) under /debug/pprof/ on
// the admin handler, and only there: the TCP port never answers them (its
// /debug/pprof/cmdline would show the daemon's command line, --api-key
// included, to anyone who can reach the port).
func WithPprof(on bool) ServerOption {
	return func(s *Server) { s.pprof = on }
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) error(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, s.logger, err)
}
