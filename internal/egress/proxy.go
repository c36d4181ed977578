package egress

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// BrowserBypassList is the proxy bypass list a browser context is given
// with a run's Proxy: Chromium sends requests to loopback around any proxy
// unless told otherwise, and "<-loopback>" tells it otherwise, so that
// loopback too is decided by the policy.
const BrowserBypassList = "<-loopback>"

// Proxy is an HTTP proxy for one run's browser context: it makes the
// page's connections (navigations, subresources, fetch, websockets;
// CONNECT for https and wss) through the run's Guard, on the address each
// host resolves to. A refused request answers 403 with the reason. Its own
// address is protected from every run while it is open.
type Proxy struct {
	g   *Guard
	ln  net.Listener
	srv *http.Server
	rp  *httputil.ReverseProxy

	mu     sync.Mutex
	tunnel map[net.Conn]struct{} // hijacked connections (CONNECT, upgrades)
	closed bool
}

// StartProxy listens on host (an address of this machine the run's browser
// reaches; "" means 127.0.0.1) at a free port and serves until Close.
func (g *Guard) StartProxy(host string, logger *slog.Logger) (*Proxy, error) {
	if host == "" {
		host = "127.0.0.1"
	}
	if logger == nil {
		logger = slog.Default()
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("start the run's egress proxy on %s: %w", host, err)
	}
	p := &Proxy{g: g, ln: ln, tunnel: map[net.Conn]struct{}{}}
	if g != nil && g.p != nil {
		if err := g.p.Protect(ln.Addr().String(), "a run's egress proxy"); err != nil {
			ln.Close()
			return nil, err
		}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host },
		Transport: g.Transport(),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			writeRefusal(w, err)
		},
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	go p.srv.Serve(ln)
	return p, nil
}

// Addr is host:port of the proxy.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL is the proxy's address as a browser takes it (http://host:port).
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// Close stops the proxy and ends every connection it carries.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	conns := p.tunnel
	p.tunnel = nil
	p.mu.Unlock()
	err := p.srv.Close()
	for c := range conns {
		c.Close()
	}
	if p.g != nil && p.g.p != nil {
		p.g.p.Unprotect(p.Addr())
	}
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.tunnel[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.tunnel, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs():
		// net/http's reverse proxy handles websocket upgrades (101) too.
		r.Header.Del("Proxy-Authorization")
		p.rp.ServeHTTP(w, r)
	default:
		http.Error(w, "this is the egress proxy of a run's browser: it takes absolute-form requests and CONNECT only", http.StatusBadRequest)
	}
}

// connect opens a tunnel (https, wss) to an allowed address.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	up, err := p.g.DialContext(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		writeRefusal(w, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "the connection cannot be taken over", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(down) || !p.track(up) {
		down.Close()
		up.Close()
		return
	}
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		p.untrack(down)
		p.untrack(up)
		return
	}
	// Bytes the browser sent after its request (a TLS hello) are in buf.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			p.untrack(down)
			p.untrack(up)
			return
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	pipe := func(dst, src net.Conn) {
		defer wg.Done()
		io.Copy(dst, src)
		if tc, ok := dst.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		} else {
			dst.Close()
		}
	}
	go pipe(up, down)
	go func() {
		pipe(down, up)
	}()
	go func() {
		wg.Wait()
		p.untrack(down)
		p.untrack(up)
	}()
}

// writeRefusal answers a refused or failed request: 403 with the reason
// for a refusal (the page a browser shows for plain http), 502 otherwise.
func writeRefusal(w http.ResponseWriter, err error) {
	status := http.StatusBadGateway
	title := "The request could not be made"
	var e *Error
	if errors.As(err, &e) {
		status, title = http.StatusForbidden, "abctl refused this request"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Abctl-Egress", "refused")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><p>%s</p>\n", title, title, html.EscapeString(err.Error()))
}
