package webui

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// cookieName is the session cookie's name.
const cookieName = "abctl_session"

// linkTTL is how long a one-time sign-in link can be used.
const linkTTL = 2 * time.Minute

// session is one sign-in: the organization's key, kept in memory only,
// and the token every form of the session carries.
type session struct {
	key     string
	csrf    string
	expires time.Time
	id      [32]byte // sha256 of the cookie's token: the sessions' key
}

// csrfToken is the session's CSRF token, "" for no session.
func (s *session) csrfToken() string {
	if s == nil {
		return ""
	}
	return s.csrf
}

// sessions are the signed-in browsers and the sign-in links not used yet.
// Both are kept by the sha256 of their token, so that the map holds no
// token a timing or a dump could give away.
type sessions struct {
	now func() time.Time
	ttl time.Duration

	mu    sync.Mutex
	byID  map[[32]byte]*session
	links map[[32]byte]link
}

// link is a one-time sign-in link's key and end.
type link struct {
	key     string
	expires time.Time
}

func newSessions(now func() time.Time, ttl time.Duration) *sessions {
	return &sessions{now: now, ttl: ttl, byID: map[[32]byte]*session{}, links: map[[32]byte]link{}}
}

// newToken returns 32 random bytes as URL-safe text.
func newToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// start begins a session for key and returns it with its cookie's token.
func (ss *sessions) start(key string) (*session, string) {
	token := newToken()
	s := &session{key: key, csrf: newToken(), expires: ss.now().Add(ss.ttl), id: sha256.Sum256([]byte(token))}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.sweepLocked()
	ss.byID[s.id] = s
	return s, token
}

// get returns the session of a cookie's token, nil for none or an ended one.
func (ss *sessions) get(token string) *session {
	if token == "" {
		return nil
	}
	id := sha256.Sum256([]byte(token))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	if s == nil || !ss.now().Before(s.expires) {
		delete(ss.byID, id)
		return nil
	}
	return s
}

// end ends a session; nil is ignored.
func (ss *sessions) end(s *session) {
	if s == nil {
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byID, s.id)
}

// newLink returns the token of a one-time sign-in link for key.
func (ss *sessions) newLink(key string) (string, time.Time) {
	token := newToken()
	expires := ss.now().Add(linkTTL)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.sweepLocked()
	ss.links[sha256.Sum256([]byte(token))] = link{key: key, expires: expires}
	return token, expires
}

// useLink returns the key of a sign-in link's token and forgets the link;
// ok is false for a token that is unknown, used or expired.
func (ss *sessions) useLink(token string) (key string, ok bool) {
	id := sha256.Sum256([]byte(token))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	l, found := ss.links[id]
	delete(ss.links, id)
	if !found || !ss.now().Before(l.expires) {
		return "", false
	}
	return l.key, true
}

// sweepLocked forgets the ended sessions and links.
func (ss *sessions) sweepLocked() {
	now := ss.now()
	for id, s := range ss.byID {
		if !now.Before(s.expires) {
			delete(ss.byID, id)
		}
	}
	for id, l := range ss.links {
		if !now.Before(l.expires) {
			delete(ss.links, id)
		}
	}
}

// current returns the request's session, nil when it has none.
func (s *Server) current(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	return s.sessions.get(c.Value)
}

// setCookie gives the browser the session's cookie; an empty token (and
// a negative maxAge) removes it.
func setCookie(w http.ResponseWriter, r *http.Request, token string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: token, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// signedIn wraps a page that needs a session: without one, the browser
// goes to the sign-in page, which comes back here afterwards.
func (s *Server) signedIn(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess := s.current(r)
		if sess == nil {
			if r.Method != http.MethodGet {
				http.Error(w, "Sign in first: this session has ended.", http.StatusForbidden)
				return
			}
			http.Redirect(w, r, signInPath(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost && !s.sameOriginForm(w, r, sess) {
			return
		}
		h(w, r, sess)
	}
}

// sameOrigin reports whether a browser says the request comes from a page
// of this origin: Sec-Fetch-Site same-origin (or none: typed or
// bookmarked), and an Origin, when sent, of this host. A request with
// neither (not from a browser) passes here; the CSRF token is what stops
// it.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// sameOriginForm checks a POST of a signed-in page: from this origin, and
// carrying the session's CSRF token in its form. It answers 403 itself
// when not.
func (s *Server) sameOriginForm(w http.ResponseWriter, r *http.Request, sess *session) bool {
	if !sameOrigin(r) {
		http.Error(w, "This request came from another site, and is refused: changes are made from the daemon's own pages only.", http.StatusForbidden)
		return false
	}
	got := r.PostFormValue("csrf")
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(sess.csrf)) != 1 {
		http.Error(w, "This form is not from this session (its CSRF token is missing or wrong): reload the page and try again.", http.StatusForbidden)
		return false
	}
	return true
}

// signInPath is the sign-in page that comes back to next afterwards.
func signInPath(next string) string {
	return Prefix + "sign-in?next=" + url.QueryEscape(next)
}

// safeNext is where to go after signing in: next when it is a page of the
// web UI, the runs otherwise (never another site).
func safeNext(next string) string {
	if strings.HasPrefix(next, Prefix) && !strings.HasPrefix(next, "//") && !strings.Contains(next, "\\") {
		return next
	}
	return Prefix + "runs"
}
