package api

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

// The daemon serves the MCP tools of package mcpserver at /mcp (and /mcp/,
// the hosted service's form) over streamable HTTP. The route sits behind
// the API-key check like every v1 route, so a request without a valid key
// is answered 403 {"detail":"Invalid credentials"} before any MCP traffic.
//
// The tools do not re-implement handlers: they use a client.Client whose
// HTTP transport (inProcessTransport) serves each request with the
// daemon's own handler, in process. Each of those requests carries the
// x-api-key of the MCP request that caused it, so it is authenticated,
// scoped to that key's organization and signed (webhooks) exactly as if
// the assistant had called the API itself.
//
// The MCP handler is stateless: every MCP request is a session of its own,
// connected with that request's context. That is what lets the key travel
// in the context (a session outliving its request would keep the first
// request's key), and it keeps no per-client state in the daemon.

// mcpCaller is what the in-process requests of one MCP request carry over
// from it.
type mcpCaller struct {
	apiKey string
	// host, tls and remoteAddr are how the MCP client reached the daemon,
	// so that URLs in answers (screenshots, recordings) point where it can
	// reach them.
	host       string
	tls        *tls.ConnectionState
	remoteAddr string
}

type mcpCallerKey struct{}

// mountMCP registers the MCP routes on the (authenticated) API mux. The
// MCP server is built on the first MCP request: deriving the tools'
// schemas takes milliseconds and megabytes that a daemon nobody points an
// assistant at need not spend.
func (s *Server) mountMCP(api *http.ServeMux) {
	mcpHandler := sync.OnceValue(s.newMCPHandler)
	withCaller := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := mcpCaller{apiKey: r.Header.Get("X-Api-Key"), host: r.Host, tls: r.TLS, remoteAddr: r.RemoteAddr}
		mcpHandler().ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), mcpCallerKey{}, caller)))
	})
	api.Handle("/mcp", withCaller)
	api.Handle("/mcp/{$}", withCaller)
}

// newMCPHandler returns the streamable HTTP handler of the tools, over a
// client that calls this server in process.
func (s *Server) newMCPHandler() http.Handler {
	c, err := client.New(
		client.WithBaseURL("http://abctl-daemon.invalid"), // never dialled: see inProcessTransport
		client.WithHTTPClient(&http.Client{Transport: inProcessTransport{s}}),
		client.WithMaxRetries(0), // nothing transient happens in process
		client.WithUserAgent("abctl-mcp"),
	)
	if err != nil {
		panic("daemon: in-process client: " + err.Error()) // constant options: a programming error
	}
	// Every MCP request is a session, which the SDK logs at Info as it
	// starts and ends: the access log already has one line per request.
	logger := slog.New(minLevel{s.logger.Handler(), slog.LevelWarn})
	srv := mcpserver.New(c, mcpserver.Options{Logger: logger})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: logger})
}

// inProcessTransport serves the client's requests with the daemon's own
// handler (the whole middleware chain: request id, access log, auth, body
// limit), as the MCP caller found in the request's context.
type inProcessTransport struct{ s *Server }

var errNoMCPCaller = errors.New("daemon: an in-process API request without the MCP request it belongs to")

func (t inProcessTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	caller, ok := req.Context().Value(mcpCallerKey{}).(mcpCaller)
	if !ok {
		return nil, errNoMCPCaller
	}
	if req.Body != nil {
		defer req.Body.Close()
	}
	in := req.Clone(req.Context())
	// A server-side request: the URL holds only the path and query.
	in.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	in.RequestURI = in.URL.RequestURI()
	in.Host, in.TLS, in.RemoteAddr = caller.host, caller.tls, caller.remoteAddr
	in.Header.Set("X-Api-Key", caller.apiKey)
	if in.Body == nil {
		in.Body = http.NoBody
	}
	// As a network transport does, a request whose context ends fails with
	// the context's error, whatever the handler answered meanwhile.
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	t.s.ServeHTTP(rec, in)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}

// minLevel passes on the records of at least min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(attrs), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
