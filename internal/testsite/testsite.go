// Package testsite is the local web site the browser-engine tests drive.
//
// Start serves it on two loopback origins for the length of one test:
// http://127.0.0.1:PORT (the main origin, Site.URL) and
// http://localhost:PORT2 (a second origin with the same files, Site.OtherURL),
// so a page can embed a frame from another origin without leaving the
// machine (the localhost origin listens on 127.0.0.1, and on [::1] with the
// same port where the machine has it). Nothing in the site loads anything from the network: no CDNs,
// fonts or remote images, only inline styles, scripts and data.
//
// The pages report back to the server what the browser really did: form
// posts, uploads and clicks (sent by the pages' scripts with fetch to
// /event). Tests read them with Site.Events and Site.WaitEvent.
//
// Pages (every interactive element has a stable id or name):
//
//   - / (PageIndex): links to every page.
//   - /form.html (PageForm): every input type (text, email, password, number,
//     range, date, time, datetime-local, month, week, color, tel, url,
//     search), a checkbox pair, a radio group, a single and a multiple
//     select, a textarea, a contenteditable div, a disabled, a readonly and a
//     hidden input, labels by for= and by wrapping, and two controlled inputs
//     in the style of React: #controlled takes its value only from input
//     events and #controlled-react in addition ignores an input event whose
//     value was set through the element's value property, as React's value
//     tracker does (set it with the native setter, or type). Either is reset
//     to its state on blur and on submit. The form posts to /submit (Event
//     "submit").
//   - /upload.html (PageUpload): a single and a multiple file input and a
//     styled button that opens a hidden file input; posts multipart to
//     /upload (Event "upload", with each file's name, size and SHA-256).
//   - /download.html (PageDownload): an attachment link to /files/report.csv
//     (saved as "report 2026.csv"), a target=_blank link to an attachment
//     (/files/notes.txt), a button that downloads export.json through a blob
//     URL, a link with a download attribute (/files/plain.txt saved as
//     renamed.txt) and a link to /files/big.bin (its size is ?big=N of the
//     page, 5 MiB when absent).
//   - /dialogs.html (PageDialogs): buttons for alert, confirm and prompt; the
//     outcome goes to #result ("alert:closed", "confirm:true",
//     "confirm:false", "prompt:<answer>", "prompt:null") and to Event
//     "dialog".
//   - /popup.html (PagePopup): a button that opens /popup-target.html with
//     window.open and a target=_blank link to it.
//   - /popup-target.html (PagePopupTarget): a small form posting to /submit
//     (form_id=popup-form) and a button that closes the window.
//   - /frames.html (PageFrames): a same-origin iframe and a cross-origin
//     iframe (the other origin's /frame-inner.html), and /frame-nested.html
//     on both origins, which holds /frame-inner.html two levels deep.
//   - /frame-nested.html (PageFrameNested), /frame-inner.html
//     (PageFrameInner): the frames; the inner one has #frame-input and
//     #frame-button, whose click reports Event "frame-click" (value, depth,
//     origin).
//   - /shadow.html (PageShadow): <x-widget id="widget"> with an open shadow
//     root (#shadow-input, #shadow-button) holding <x-inner id="inner">, a
//     nested open shadow root (#inner-input, #inner-button); a click reports
//     Event "shadow-click".
//   - /names.html (PageNames): controls whose names hide where a careless
//     reader misses them: links padded with whitespace (#headline-1..3), an
//     image link with a <noscript> fallback (#gallery-link), buttons named by
//     CSS ::after/::before content (#destroy-button "×", #css-search), an
//     SVG slider (<g role="slider"> #volume-slider), an open shadow root
//     with a "Mark all as complete" checkbox and todo titles (<x-todos>),
//     row checkboxes without labels (#row-1, #row-2) and a multi-select of
//     30 options (#toppings).
//   - /todos.html (PageTodos): a todo list that adds the text of #new-todo
//     to #todo-list on the Enter key only (no input or change handler), as
//     TodoMVC does, clears the field and reports Event "todo-added" (title);
//     its router adds #/all to the URL on load. /todos/ (PageTodosApp)
//     redirects to it, as an app's index to its build.
//   - /late.html (PageLate): controls that become actionable when the
//     server opens a gate (?gate=NAME; Site.OpenGate(NAME+"-show") and
//     -enable, -slide, -uncover): #late-button (display: none until then),
//     #disabled-button, #sliding-button (in a panel that slides in with a
//     300 ms transition) and #covered-button (under an overlay, #overlay).
//     A click reports Event "late-click" (button).
//   - /hostile.html (PageHostile): a fare search form (#from, #to,
//     #flexible, #search-fares, whose click writes "Searching FROM to TO"
//     into #fare-note and reports Event "fare-search") on a page that
//     replaces built-ins before anything else runs: Date (whose now is not
//     a function), JSON.stringify, Array.prototype.map, toJSON on
//     Array.prototype and Object.prototype, querySelectorAll,
//     getBoundingClientRect, getComputedStyle, MutationObserver and
//     Function.prototype.toString.
//   - /secure/login, /secure/verify, /secure/account: a sign-in that
//     checks passwords, with a TOTP second factor, behind which a page
//     needs the session cookie. Every site has the demo account
//     DemoUser / DemoPassword / DemoTOTPSecret; tests add their own with
//     AddAccount.
//   - /banner.html (PageCookieBanner): a fixed cookie banner covers the
//     #continue-button until #accept-cookies or #reject-cookies is clicked
//     (Event "cookie-accept"); a click on Continue reports Event
//     "banner-continue".
//   - /spa.html (PageLateSPA): renders its list and #open-detail button 800
//     ms after load (with ?gate=NAME: once Site.OpenGate(NAME) is called),
//     then routes on the client with pushState to
//     /spa.html#/detail (Event "spa-detail").
//   - /big.html (PageBig): about 2,000 elements, 450 of them interactive
//     (links, buttons, inputs, cycling), built deterministically; a few
//     controls are in the first viewport, the rest below. Button clicks
//     report Event "big-click".
//   - /rerender.html (PageRerender): clicking #load-more rebuilds the whole
//     list (and the button): new nodes, a new first item, the old texts
//     shifted down, so references held from before go stale. Item buttons
//     report Event "rerender-click".
//   - /slow?ms=N (PageSlow, SlowPath): answers after N ms (at most 10 s).
//   - /login.html (PageLogin): a username and password form posting to
//     /login (Event "login"); any non-empty pair signs in: a session cookie
//     is set and the browser is sent to /account.html (PageAccount), which
//     shows "Welcome, <user>" in #welcome. An empty field sends it back to
//     /login.html?error=missing. /logout signs out.
//   - /products.html (PageProducts): a table of products (see Products).
//
// Files: /files/report.csv (ReportCSV), /files/notes.txt (NotesTXT),
// /files/export.json (ExportJSON), /files/plain.txt (PlainTXT) and
// /files/big.bin?size=N (BigFile).
package testsite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Site is the test site served on two loopback origins.
type Site struct {
	origin      string // http://127.0.0.1:PORT
	otherOrigin string // http://localhost:PORT2

	mu      sync.Mutex
	events  []Event
	changed chan struct{}            // closed and replaced whenever an event is added
	gates   map[string]chan struct{} // closed by OpenGate; GET /gate waits on one

	// The secure sign-in (secure.go).
	accounts map[string]account
	sessions map[string]string // session token -> user; "pending:" token -> user awaiting a code
	signIns  map[string]int
}

// Event is one thing a page sent back to the server.
type Event struct {
	// Kind is "submit", "upload", "login", or the kind a page script
	// reported ("dialog", "shadow-click", "frame-click", ...).
	Kind string
	// Path is the path that was posted to (/submit, /upload, /login) or,
	// for a report from a page script, the path of the page that sent it.
	Path string
	// Form holds the posted fields. Reports from page scripts also carry
	// "origin" (location.origin) and "page" (pathname and hash).
	Form url.Values
	// Files are the uploaded files of a multipart post.
	Files []UploadedFile
	// Body is the raw request body, except for multipart posts.
	Body []byte
	// At is when the server received it.
	At time.Time
}

// UploadedFile is a file of a multipart post, as the server received it.
type UploadedFile struct {
	Field, Name string
	Size        int64
	SHA256      string // lower-case hex
}

// Paths of the pages.
const (
	PageIndex         = "/"
	PageForm          = "/form.html"
	PageUpload        = "/upload.html"
	PageDownload      = "/download.html"
	PageDialogs       = "/dialogs.html"
	PagePopup         = "/popup.html"
	PagePopupTarget   = "/popup-target.html"
	PageFrames        = "/frames.html"
	PageFrameNested   = "/frame-nested.html"
	PageFrameInner    = "/frame-inner.html"
	PageShadow        = "/shadow.html"
	PageCookieBanner  = "/banner.html"
	PageLateSPA       = "/spa.html"
	PageLateSPADetail = "/spa.html#/detail" // where the SPA routes to
	PageBig           = "/big.html"
	PageRerender      = "/rerender.html"
	PageSlow          = "/slow" // add ?ms=N, see SlowPath
	PageLogin         = "/login.html"
	PageAccount       = "/account.html"
	PageProducts      = "/products.html"
	PageNames         = "/names.html"
	PageTodos         = "/todos.html"
	PageTodosApp      = "/todos/" // redirects to PageTodos
	PageLate          = "/late.html"
	PageHostile       = "/hostile.html"
)

// Endpoints the pages post to, and the kinds of the events they record.
const (
	PathSubmit = "/submit" // Event "submit"
	PathUpload = "/upload" // Event "upload"
	PathLogin  = "/login"  // Event "login"
	PathLogout = "/logout"
	PathEvent  = "/event" // POST /event?kind=K&path=P: a report from a page script

	EventSubmit         = "submit"
	EventUpload         = "upload"
	EventLogin          = "login"
	EventDialog         = "dialog"
	EventFrameClick     = "frame-click"
	EventShadowClick    = "shadow-click"
	EventTodoAdded      = "todo-added"
	EventFareSearch     = "fare-search"
	EventLateClick      = "late-click"
	EventCookieAccept   = "cookie-accept" // Form "choice": "accept" or "reject"
	EventBannerContinue = "banner-continue"
	EventSPADetail      = "spa-detail"
	EventBigClick       = "big-click"
	EventRerenderClick  = "rerender-click"
)

// SlowMax bounds the delay of PageSlow.
const SlowMax = 10 * time.Second

// SlowPath is the path of a page that answers after ms milliseconds
// (bounded to SlowMax).
func SlowPath(ms int) string { return PageSlow + "?ms=" + strconv.Itoa(ms) }

// Start serves the site on 127.0.0.1 (the main origin) and on localhost (a
// second origin, same files, different port) until the test ends
// (t.Cleanup). It never contacts anything else.
func Start(t testing.TB) *Site {
	t.Helper()
	s, stop, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatalf("testsite: %v", err)
	}
	t.Cleanup(stop)
	return s
}

// Serve is Start outside a test: the main origin on mainAddr (a loopback
// address; port 0 for a free one), the second origin on localhost at a free
// port, until stop is called.
func Serve(mainAddr string) (s *Site, stop func(), err error) {
	s = &Site{changed: make(chan struct{})}
	if err := s.AddAccount(DemoUser, DemoPassword, DemoTOTPSecret); err != nil {
		return nil, nil, err
	}
	main, err := net.Listen("tcp4", mainAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", mainAddr, err)
	}
	if ip := main.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		main.Close()
		return nil, nil, fmt.Errorf("%s is not a loopback address: the test site serves only this machine", mainAddr)
	}
	others, err := listenLocalhost()
	if err != nil {
		main.Close()
		return nil, nil, fmt.Errorf("listen on localhost: %w", err)
	}
	s.origin = "http://" + main.Addr().String()
	s.otherOrigin = "http://localhost:" + strconv.Itoa(others[0].Addr().(*net.TCPAddr).Port)

	type served struct {
		l             net.Listener
		origin, other string
	}
	listeners := []served{{main, s.origin, s.otherOrigin}}
	for _, l := range others {
		listeners = append(listeners, served{l, s.otherOrigin, s.origin})
	}

	quiet := log.New(io.Discard, "", 0)
	var servers []*http.Server
	for _, x := range listeners {
		srv := &http.Server{
			Handler:           s.handler(x.origin, x.other),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          quiet,
		}
		servers = append(servers, srv)
		go srv.Serve(x.l)
	}
	return s, func() {
		for _, srv := range servers {
			srv.Close()
		}
	}, nil
}

// listenLocalhost listens for the second origin. Its name is localhost,
// which a client may resolve to 127.0.0.1 or to [::1]: where the machine
// has an IPv6 loopback, it takes the same port on both, so that nothing
// else can answer on the other address; otherwise 127.0.0.1 alone.
func listenLocalhost() ([]net.Listener, error) {
	for range 20 {
		l6, err := net.Listen("tcp6", "[::1]:0")
		if err != nil {
			break // no IPv6 loopback
		}
		port := strconv.Itoa(l6.Addr().(*net.TCPAddr).Port)
		l4, err := net.Listen("tcp4", "127.0.0.1:"+port)
		if err == nil {
			return []net.Listener{l4, l6}, nil
		}
		l6.Close() // the port is taken on 127.0.0.1: try another
	}
	l4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return []net.Listener{l4}, nil
}

// URL is the address of path on the main origin: http://127.0.0.1:PORT/path.
func (s *Site) URL(path string) string { return s.origin + slash(path) }

// OtherURL is the address of path on the second origin:
// http://localhost:PORT2/path (cross-origin to URL).
func (s *Site) OtherURL(path string) string { return s.otherOrigin + slash(path) }

func slash(path string) string {
	if path == "" || strings.HasPrefix(path, "/") {
		return path
	}
	return "/" + path
}

// Events records what the pages sent back to the server (form posts,
// uploads, clicks reported via fetch), so tests can assert what the browser
// really did. It returns a copy, oldest first.
func (s *Site) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Event, len(s.events))
	for i, e := range s.events {
		out[i] = e.clone()
	}
	return out
}

// WaitEvent returns the first event of that kind, recorded before the call
// or after it, waiting until ctx ends.
func (s *Site) WaitEvent(ctx context.Context, kind string) (Event, error) {
	return s.WaitEventSince(ctx, 0, kind)
}

func (s *Site) record(e Event) {
	e.At = time.Now()
	s.mu.Lock()
	s.events = append(s.events, e)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (e Event) clone() Event {
	if e.Form != nil {
		f := make(url.Values, len(e.Form))
		for k, v := range e.Form {
			f[k] = append([]string(nil), v...)
		}
		e.Form = f
	}
	if e.Files != nil {
		e.Files = append([]UploadedFile(nil), e.Files...)
	}
	if e.Body != nil {
		e.Body = bytes.Clone(e.Body)
	}
	return e
}

// gate returns the channel of the named gate, made on first use.
func (s *Site) gate(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gates == nil {
		s.gates = make(map[string]chan struct{})
	}
	g := s.gates[name]
	if g == nil {
		g = make(chan struct{})
		s.gates[name] = g
	}
	return g
}

// OpenGate opens the named gate: the requests of GET /gate?name=NAME that
// wait answer, and later ones answer at once. A page uses it to act when
// the test says so (see PageLateSPA).
func (s *Site) OpenGate(name string) {
	g := s.gate(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-g:
	default:
		close(g)
	}
}
