package testsite

// The secure sign-in: accounts with real passwords and, optionally, a
// TOTP second factor (internal/totp), for the tests of credentials and
// logged-in automation.
//
//   - GET  /secure/login (PageSecureLogin): a form (#secure-username,
//     #secure-password, #secure-login-button) posting to /secure/login
//     (Event "secure-login").
//   - A wrong username or password sends the browser back with
//     ?error=wrong, shown in #secure-error ("The username or password is
//     wrong.").
//   - An account with a TOTP secret goes on to GET /secure/verify
//     (PageSecureVerify): a form with #otp (autocomplete one-time-code),
//     posting to /secure/verify (Event "secure-verify"); a wrong code sends
//     the browser back with ?error=code.
//   - Signed in, the browser holds the cookie secure_session and GET
//     /secure/account (PageSecureAccount) shows "Welcome back, USER" in
//     #secure-welcome; without the cookie it redirects to the login, and
//     with it the login redirects to the account.

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/abctl/abctl/internal/totp"
)

// The secure sign-in's pages and endpoints.
const (
	PageSecureLogin   = "/secure/login"
	PageSecureVerify  = "/secure/verify"
	PageSecureAccount = "/secure/account"

	EventSecureLogin  = "secure-login"
	EventSecureVerify = "secure-verify"

	secureCookie  = "secure_session"
	pendingCookie = "secure_pending"
)

// The demo account every site has, for trying the secure sign-in by hand
// and for the examples: DemoUser and DemoPassword, then the code an
// authenticator app makes from DemoTOTPSecret.
const (
	DemoUser       = "demo@example.com"
	DemoPassword   = "northwind-demo-password"
	DemoTOTPSecret = "JBSWY3DPEHPK3PXP"
)

type account struct {
	password string
	totp     *totp.Key // nil: no second factor
}

// AddAccount registers an account of the secure sign-in. totpSecret is a
// base32 authenticator secret for a second factor, or "" for none.
func (s *Site) AddAccount(username, password, totpSecret string) error {
	a := account{password: password}
	if totpSecret != "" {
		k, err := totp.Parse(totpSecret)
		if err != nil {
			return err
		}
		a.totp = k
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.accounts == nil {
		s.accounts = map[string]account{}
		s.sessions = map[string]string{}
	}
	s.accounts[username] = a
	return nil
}

// SignIns returns how many times each user signed in fully (a session was
// made), so that a test can tell a run that reused a session from one
// that signed in again.
func (s *Site) SignIns(username string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.signIns[username]
}

func (s *Site) secureRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PageSecureLogin, func(w http.ResponseWriter, r *http.Request) {
		// Signed in already: the sign-in page sends the browser on, as
		// sites do.
		if s.sessionUser(r) != "" {
			http.Redirect(w, r, PageSecureAccount, http.StatusSeeOther)
			return
		}
		writeHTML(w, http.StatusOK, render(secureLoginTmpl, r.URL.Query().Get("error") != ""))
	})
	mux.HandleFunc("POST "+PageSecureLogin, s.serveSecureLogin)
	mux.HandleFunc("GET "+PageSecureVerify, func(w http.ResponseWriter, r *http.Request) {
		writeHTML(w, http.StatusOK, render(secureVerifyTmpl, r.URL.Query().Get("error") != ""))
	})
	mux.HandleFunc("POST "+PageSecureVerify, s.serveSecureVerify)
	mux.HandleFunc("GET "+PageSecureAccount, s.serveSecureAccount)
}

func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Site) serveSecureLogin(w http.ResponseWriter, r *http.Request) {
	form, _, body, err := readPost(w, r)
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.record(Event{Kind: EventSecureLogin, Path: PageSecureLogin, Form: form, Body: body})
	user := strings.TrimSpace(form.Get("username"))
	s.mu.Lock()
	a, ok := s.accounts[user]
	s.mu.Unlock()
	if !ok || a.password != form.Get("password") {
		http.Redirect(w, r, PageSecureLogin+"?error=wrong", http.StatusSeeOther)
		return
	}
	if a.totp != nil {
		tok := newToken()
		s.mu.Lock()
		s.sessions["pending:"+tok] = user
		s.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: pendingCookie, Value: tok, Path: "/secure", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, PageSecureVerify, http.StatusSeeOther)
		return
	}
	s.signIn(w, r, user)
}

func (s *Site) serveSecureVerify(w http.ResponseWriter, r *http.Request) {
	form, _, body, err := readPost(w, r)
	if err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.record(Event{Kind: EventSecureVerify, Path: PageSecureVerify, Form: form, Body: body})
	c, err := r.Cookie(pendingCookie)
	if err != nil {
		http.Redirect(w, r, PageSecureLogin, http.StatusSeeOther)
		return
	}
	s.mu.Lock()
	user := s.sessions["pending:"+c.Value]
	a := s.accounts[user]
	s.mu.Unlock()
	code := strings.TrimSpace(form.Get("code"))
	now := time.Now()
	valid := false
	if a.totp != nil {
		// The current code, or the one of the step before or after (clock
		// drift and a code typed as its step ended), as sites accept them.
		for _, d := range []time.Duration{0, -a.totp.Period, a.totp.Period} {
			valid = valid || code == a.totp.Code(now.Add(d))
		}
	}
	if user == "" || !valid {
		http.Redirect(w, r, PageSecureVerify+"?error=code", http.StatusSeeOther)
		return
	}
	s.mu.Lock()
	delete(s.sessions, "pending:"+c.Value)
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: pendingCookie, Value: "", Path: "/secure", MaxAge: -1})
	s.signIn(w, r, user)
}

func (s *Site) signIn(w http.ResponseWriter, r *http.Request, user string) {
	tok := newToken()
	s.mu.Lock()
	s.sessions[tok] = user
	if s.signIns == nil {
		s.signIns = map[string]int{}
	}
	s.signIns[user]++
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: secureCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Expires: time.Now().Add(24 * time.Hour)})
	http.Redirect(w, r, PageSecureAccount, http.StatusSeeOther)
}

// sessionUser is the user the request's session cookie signs in, "" for
// none.
func (s *Site) sessionUser(r *http.Request) string {
	c, err := r.Cookie(secureCookie)
	if err != nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

func (s *Site) serveSecureAccount(w http.ResponseWriter, r *http.Request) {
	user := s.sessionUser(r)
	if user == "" {
		http.Redirect(w, r, PageSecureLogin, http.StatusSeeOther)
		return
	}
	writeHTML(w, http.StatusOK, render(secureAccountTmpl, user))
}

var secureLoginTmpl = pageTmpl(`<h1 id="secure-title">Sign in to Northwind Billing</h1>
{{if .}}<p id="secure-error" role="alert">The username or password is wrong.</p>{{end}}
<form id="secure-form" action="/secure/login" method="post">
<div class="row"><label for="secure-username">Email</label> <input type="email" id="secure-username" name="username" autocomplete="username"></div>
<div class="row"><label for="secure-password">Password</label> <input type="password" id="secure-password" name="password" autocomplete="current-password"></div>
<div class="row"><button type="submit" id="secure-login-button">Sign in</button></div>
</form>`)

var secureVerifyTmpl = pageTmpl(`<h1 id="verify-title">Two-step verification</h1>
{{if .}}<p id="verify-error" role="alert">That code is not right. Try the current one.</p>{{end}}
<p>Enter the 6-digit code from your authenticator app.</p>
<form id="verify-form" action="/secure/verify" method="post">
<div class="row"><label for="otp">Verification code</label> <input type="text" id="otp" name="code" inputmode="numeric" autocomplete="one-time-code"></div>
<div class="row"><button type="submit" id="verify-button">Verify</button></div>
</form>`)

var secureAccountTmpl = pageTmpl(`<h1 id="secure-welcome">Welcome back, {{.}}</h1>
<p id="secure-info">Your invoices are ready.</p>`)
