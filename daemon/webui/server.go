package webui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
)

// Prefix is the path under which the web UI is served.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// contentSecurityPolicy lets a page load scripts, styles, images, media
// and its own refreshes from the daemon only, run no inline script, post
// forms only to the daemon, and be framed by nobody.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxFormBytes caps the body of a request to the web UI.
const maxFormBytes = 64 << 10

// Options configures a Server.
type Options struct {
	// Logger receives the errors a page could not show; nil discards them.
	Logger *slog.Logger
	// Now is the clock of sessions and sign-in links; nil is time.Now.
	Now func() time.Time
	// SessionTTL is how long a sign-in lasts (default 12 hours).
	SessionTTL time.Duration
	// Fleet is the daemon's fleet of browser endpoints as GET /healthz
	// shows it, false when it has none; nil: none (the fleet page).
	Fleet func() (client.BrowserFleet, bool)
}

// Server serves the web UI. Build it with New.
type Server struct {
	api      http.Handler
	log      *slog.Logger
	now      func() time.Time
	sessions *sessions
	fleet    func() (client.BrowserFleet, bool)
	pages    map[string]*template.Template
	mux      *http.ServeMux
}

// New returns the web UI over api, the handler of the v1 API behind its
// authentication (it is called in process, with the signed-in
// organization's key in x-api-key).
func New(api http.Handler, o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 12 * time.Hour
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s := &Server{api: api, log: o.Logger, now: o.Now, sessions: newSessions(o.Now, o.SessionTTL), fleet: o.Fleet, pages: pages}
	s.mux = s.routes()
	return s, nil
}

// ServeHTTP serves a request under Prefix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if r.Body != nil {
		// The forms are a few fields: a key, a token, an answer.
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	}
	s.mux.ServeHTTP(w, r)
}

// parsePages parses each page of templates/ with the layout.
func parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"when":     when,
		"duration": duration,
		"short":    short,
		"join":     strings.Join,
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("webui: the layout: %w", err)
	}
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range names {
		page := path.Base(name)
		if page == "layout.html" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(templateFiles, name)
		if err != nil {
			return nil, fmt.Errorf("webui: page %s: %w", page, err)
		}
		pages[strings.TrimSuffix(page, ".html")] = t
	}
	return pages, nil
}

// view is what every page's template receives.
type view struct {
	Title string // the page's title, after the product's name
	Nav   string // the section of the navigation to mark current
	CSRF  string // the session's CSRF token; "" when signed out
	Data  any    // the page's own data
}

// render writes page with data and status.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	t, ok := s.pages[page]
	if !ok {
		panic("webui: no page " + page)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		s.log.Error("web UI page not rendered", "page", page, "error", err)
		http.Error(w, "The page could not be shown: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail shows what went wrong with an API call as a page: a 404 for what
// the organization does not have (another organization's id among them,
// as in the API), the sign-in page for a key no longer accepted, and the
// API's own message for the rest.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, sess *session, err error) {
	var ae *client.Error
	status, msg := http.StatusInternalServerError, err.Error()
	if errors.As(err, &ae) {
		switch ae.StatusCode {
		case http.StatusNotFound:
			status, msg = http.StatusNotFound, "There is no such page in your organization."
		case http.StatusUnauthorized, http.StatusForbidden:
			s.sessions.end(sess)
			http.Redirect(w, r, signInPath(r.URL.RequestURI()), http.StatusSeeOther)
			return
		default:
			status = ae.StatusCode
		}
	}
	if status >= 500 {
		s.log.Error("web UI page failed", "path", r.URL.Path, "error", err)
	}
	s.render(w, r, status, "error", view{Title: http.StatusText(status), CSRF: sess.csrfToken(), Data: msg})
}

// api returns a client of the v1 API for the signed-in organization,
// calling the API's handler in process. Its base URL is the address the
// browser reached, so that the signed file URLs in the answers are ones
// the browser can open.
func (s *Server) client(r *http.Request, sess *session) (*client.Client, error) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return client.New(
		client.WithBaseURL(scheme+"://"+r.Host),
		client.WithAPIKey(sess.key),
		client.WithHTTPClient(&http.Client{Transport: inProcess{s.api}}),
		client.WithMaxRetries(0),
	)
}

// inProcess is an http.RoundTripper that serves each request with a
// handler, in this process.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &recorder{header: http.Header{}}
	if req.Body == nil {
		req.Body = http.NoBody
	}
	t.h.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rec.status, http.StatusText(rec.status)), StatusCode: rec.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: rec.header, Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()),
		Request: req,
	}, nil
}

// recorder is the ResponseWriter of an in-process request.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// when shows a time for people, "—" for none.
func when(t any) string {
	switch x := t.(type) {
	case *client.Time:
		if x == nil || x.IsZero() {
			return "—"
		}
		return x.Time.Local().Format("2006-01-02 15:04:05")
	case client.Time:
		if x.IsZero() {
			return "—"
		}
		return x.Time.Local().Format("2006-01-02 15:04:05")
	case time.Time:
		if x.IsZero() {
			return "—"
		}
		return x.Local().Format("2006-01-02 15:04:05")
	}
	return "—"
}

// duration shows how long a run took from started to finished (or until
// now while it runs), "—" before it started.
func duration(started, finished *client.Time) string {
	if started == nil || started.IsZero() {
		return "—"
	}
	end := time.Now()
	if finished != nil && !finished.IsZero() {
		end = finished.Time
	}
	d := end.Sub(started.Time)
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// short cuts text to n characters for a table cell.
func short(n int, s string) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
