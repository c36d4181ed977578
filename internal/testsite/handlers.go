package testsite

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed site
var siteFS embed.FS

// maxUpload bounds a multipart post; maxBody any other post.
const (
	maxUpload = 256 << 20
	maxBody   = 1 << 20
)

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// handler serves the site for one origin; other is the peer origin that
// pages name in {{OTHER_ORIGIN}}.
func (s *Site) handler(origin, other string) http.Handler {
	subst := strings.NewReplacer("{{ORIGIN}}", origin, "{{OTHER_ORIGIN}}", other)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { serveStatic(w, r, subst) })
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET "+PageBig, func(w http.ResponseWriter, r *http.Request) { writeHTML(w, http.StatusOK, bigPage()) })
	mux.HandleFunc("GET "+PageSlow, serveSlow)
	mux.HandleFunc("GET /files/{name}", serveFile)
	mux.HandleFunc("GET "+PageAccount, serveAccount)
	mux.HandleFunc("GET "+PathLogout, serveLogout)
	mux.HandleFunc(PathSubmit, s.serveSubmit)
	mux.HandleFunc("POST "+PathUpload, s.serveUpload)
	mux.HandleFunc("POST "+PathLogin, s.serveLogin)
	mux.HandleFunc("POST "+PathEvent, s.serveEvent)
	mux.HandleFunc("GET /gate", s.serveGate)
	s.secureRoutes(mux)
	s.evalRoutes(mux)
	s.actionRoutes(mux)
	mux.HandleFunc("GET "+PageTodosApp, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, PageTodos, http.StatusFound)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

func serveStatic(w http.ResponseWriter, r *http.Request, subst *strings.Replacer) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := path.Clean("/" + r.URL.Path)
	if p == "/" {
		p = "/index.html"
	}
	ct, ok := contentTypes[path.Ext(p)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(siteFS, "site"+p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if path.Ext(p) == ".html" {
		b = []byte(subst.Replace(string(b)))
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

func writeHTML(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", contentTypes[".html"])
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// slowDelay reads ?ms= of PageSlow: missing means 1000, and the result is
// bounded to [0, SlowMax].
func slowDelay(q url.Values) (time.Duration, error) {
	v := q.Get("ms")
	if v == "" {
		return time.Second, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, err
	}
	d := time.Duration(min(max(ms, 0), SlowMax.Milliseconds())) * time.Millisecond
	return d, nil
}

// sleepUnlessGone waits d, or until the request's client goes away; it
// reports whether the whole wait passed.
func sleepUnlessGone(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func serveSlow(w http.ResponseWriter, r *http.Request) {
	d, err := slowDelay(r.URL.Query())
	if err != nil {
		http.Error(w, "bad ms", http.StatusBadRequest)
		return
	}
	if !sleepUnlessGone(r, d) {
		return
	}
	writeHTML(w, http.StatusOK, render(slowTmpl, d.Milliseconds()))
}

var slowTmpl = pageTmpl(`<h1 id="slow-done">Done after {{.}} ms</h1>
<p>This page was held back by the server on purpose.</p>`)

func serveFile(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	var body, ct, disp string
	switch r.PathValue("name") {
	case path.Base(FileReport):
		body, ct, disp = ReportCSV, "text/csv; charset=utf-8", `attachment; filename="`+ReportFilename+`"`
	case path.Base(FileNotes):
		body, ct, disp = NotesTXT, "text/plain; charset=utf-8", `attachment; filename="`+NotesFilename+`"`
	case path.Base(FileExport):
		body, ct = ExportJSON, "application/json"
	case path.Base(FilePlain):
		body, ct = PlainTXT, "text/plain; charset=utf-8"
	case path.Base(FileBig):
		serveBig(w, r)
		return
	default:
		http.NotFound(w, r)
		return
	}
	h.Set("Content-Type", ct)
	if disp != "" {
		h.Set("Content-Disposition", disp)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		io.WriteString(w, body)
	}
}

func serveBig(w http.ResponseWriter, r *http.Request) {
	n := int64(BigFileDefault)
	if v := r.URL.Query().Get("size"); v != "" {
		var err error
		n, err = strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > BigFileMax {
			http.Error(w, "size must be 0.."+strconv.Itoa(BigFileMax), http.StatusBadRequest)
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="`+BigFilename+`"`)
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// A chunk whose length is a multiple of 251 repeats the pattern exactly.
	chunk := BigFile(251 * 256)
	for n > 0 {
		k := min(n, int64(len(chunk)))
		if _, err := w.Write(chunk[:k]); err != nil {
			return
		}
		n -= k
	}
}

// readPost reads a POST body: a multipart body into fields and files
// (streamed, files hashed), anything else whole into body, parsed as
// URL-encoded fields when it says so.
func readPost(w http.ResponseWriter, r *http.Request) (form url.Values, files []UploadedFile, body []byte, err error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "multipart/form-data" {
		r.Body = http.MaxBytesReader(w, r.Body, maxUpload)
		form, files, err = readMultipart(r)
		return form, files, nil, err
	}
	body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return nil, nil, nil, err
	}
	if ct == "application/x-www-form-urlencoded" {
		form, err = url.ParseQuery(string(body))
	}
	return form, nil, body, err
}

func readMultipart(r *http.Request) (url.Values, []UploadedFile, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil, err
	}
	form := url.Values{}
	var files []UploadedFile
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return form, files, nil
		}
		if err != nil {
			return nil, nil, err
		}
		name := p.FormName()
		_, params, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
		filename, isFile := params["filename"]
		if name == "" {
			continue
		}
		if !isFile {
			b, err := io.ReadAll(io.LimitReader(p, maxBody))
			if err != nil {
				return nil, nil, err
			}
			form.Add(name, string(b))
			continue
		}
		sum := sha256.New()
		size, err := io.Copy(sum, p)
		if err != nil {
			return nil, nil, err
		}
		if filename == "" && size == 0 {
			continue // a file input with no file chosen
		}
		files = append(files, UploadedFile{Field: name, Name: path.Base(strings.ReplaceAll(filename, `\`, "/")), Size: size, SHA256: hex.EncodeToString(sum.Sum(nil))})
	}
}

func (s *Site) serveSubmit(w http.ResponseWriter, r *http.Request) {
	var e Event
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		e.Form = r.URL.Query()
	case http.MethodPost:
		var err error
		e.Form, e.Files, e.Body, err = readPost(w, r)
		if err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	e.Kind, e.Path = EventSubmit, PathSubmit
	s.record(e)
	writeHTML(w, http.StatusOK, render(submittedTmpl, receipt(e)))
}

func (s *Site) serveUpload(w http.ResponseWriter, r *http.Request) {
	form, files, body, err := readPost(w, r)
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	e := Event{Kind: EventUpload, Path: PathUpload, Form: form, Files: files, Body: body}
	s.record(e)
	writeHTML(w, http.StatusOK, render(uploadedTmpl, receipt(e)))
}

type field struct {
	Name  string
	Value string
}

type receiptData struct {
	Fields []field
	Files  []UploadedFile
}

func receipt(e Event) receiptData {
	var d receiptData
	keys := make([]string, 0, len(e.Form))
	for k := range e.Form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range e.Form[k] {
			d.Fields = append(d.Fields, field{k, v})
		}
	}
	d.Files = e.Files
	return d
}

var submittedTmpl = pageTmpl(`<h1 id="submitted">Form received</h1>
<dl id="submitted-fields">{{range .Fields}}
<dt>{{.Name}}</dt><dd data-name="{{.Name}}">{{.Value}}</dd>{{end}}
</dl>
{{if .Files}}<ul id="submitted-files">{{range .Files}}
<li data-field="{{.Field}}" data-name="{{.Name}}">{{.Name}} ({{.Size}} bytes)</li>{{end}}
</ul>{{end}}
<p><a id="back-to-form" href="/form.html">Back to the form</a></p>`)

var uploadedTmpl = pageTmpl(`<h1 id="uploaded-title">Upload received</h1>
<p id="upload-count">{{len .Files}} file(s)</p>
<ul id="uploaded">{{range .Files}}
<li data-field="{{.Field}}" data-name="{{.Name}}" data-size="{{.Size}}" data-sha256="{{.SHA256}}">{{.Field}}: {{.Name}} ({{.Size}} bytes, sha256 {{.SHA256}})</li>{{end}}
</ul>
<dl id="uploaded-fields">{{range .Fields}}
<dt>{{.Name}}</dt><dd data-name="{{.Name}}">{{.Value}}</dd>{{end}}
</dl>
<p><a id="back-to-upload" href="/upload.html">Upload more</a></p>`)

const sessionCookie = "testsite_session"

func (s *Site) serveLogin(w http.ResponseWriter, r *http.Request) {
	form, _, body, err := readPost(w, r)
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.record(Event{Kind: EventLogin, Path: PathLogin, Form: form, Body: body})
	user, pass := strings.TrimSpace(form.Get("username")), form.Get("password")
	if user == "" || pass == "" {
		http.Redirect(w, r, PageLogin+"?error=missing", http.StatusSeeOther)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    base64.RawURLEncoding.EncodeToString([]byte(user)),
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, PageAccount, http.StatusSeeOther)
}

func serveAccount(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(sessionCookie)
	var user []byte
	if err == nil {
		user, err = base64.RawURLEncoding.DecodeString(c.Value)
	}
	if err != nil || len(user) == 0 {
		http.Redirect(w, r, PageLogin, http.StatusSeeOther)
		return
	}
	writeHTML(w, http.StatusOK, render(accountTmpl, string(user)))
}

var accountTmpl = pageTmpl(`<h1 id="welcome">Welcome, {{.}}</h1>
<p id="account-info">You are signed in as <strong id="account-user">{{.}}</strong>.</p>
<p><a id="logout" href="/logout">Sign out</a></p>`)

func serveLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1})
	http.Redirect(w, r, PageLogin, http.StatusSeeOther)
}

var eventKind = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// serveEvent records a report from a page script:
// POST /event?kind=K&path=P with a URL-encoded (or any other) body.
func (s *Site) serveEvent(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	kind := q.Get("kind")
	if !eventKind.MatchString(kind) {
		http.Error(w, "bad kind", http.StatusBadRequest)
		return
	}
	p := q.Get("path")
	if !strings.HasPrefix(p, "/") {
		p = PathEvent
	}
	form, files, body, err := readPost(w, r)
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.record(Event{Kind: kind, Path: p, Form: form, Files: files, Body: body})
	w.WriteHeader(http.StatusNoContent)
}

// pageTmpl wraps the body of a page the server builds in the common frame.
func pageTmpl(body string) *template.Template {
	return template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>abctl test site</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/site.css">
</head>
<body>
` + body + `
</body>
</html>
`))
}

func render(t *template.Template, data any) string {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		panic(err) // the templates are fixed; an error is a bug here
	}
	return b.String()
}

// serveGate answers 204 once the gate named by ?name= is open (see
// Site.OpenGate), or 503 when the request ends first.
func (s *Site) serveGate(w http.ResponseWriter, r *http.Request) {
	select {
	case <-s.gate(r.URL.Query().Get("name")):
		w.WriteHeader(http.StatusNoContent)
	case <-r.Context().Done():
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}
