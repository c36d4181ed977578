package webui

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strings"

	"github.com/abctl/abctl/client"
)

// routes lists every page of the web UI.
func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	mux.Handle("GET "+Prefix+"static/", http.StripPrefix(Prefix+"static/", staticHandler(static)))

	mux.HandleFunc("GET "+Prefix+"{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"runs", http.StatusSeeOther)
	})
	mux.HandleFunc("GET "+Prefix+"sign-in", s.handleSignInPage)
	mux.HandleFunc("POST "+Prefix+"sign-in", s.handleSignIn)
	mux.HandleFunc("POST "+Prefix+"sign-in/link", s.handleSignInLink)
	mux.HandleFunc("POST "+Prefix+"sign-in-links", s.handleNewSignInLink)
	mux.HandleFunc("POST "+Prefix+"sign-out", s.signedIn(s.handleSignOut))

	mux.HandleFunc("GET "+Prefix+"runs", s.signedIn(s.handleRuns))
	mux.HandleFunc("GET "+Prefix+"runs/{id}", s.signedIn(s.handleRun))
	mux.HandleFunc("POST "+Prefix+"runs/{id}/approve", s.signedIn(s.handleAnswer(true)))
	mux.HandleFunc("POST "+Prefix+"runs/{id}/reject", s.signedIn(s.handleAnswer(false)))
	mux.HandleFunc("GET "+Prefix+"runs/{id}/frame", s.signedIn(s.handleFrame)) // frame.go
	mux.HandleFunc("GET "+Prefix+"runs/{id}/{answer}", s.signedIn(s.handleAnswered))
	s.agentRoutes(mux)
	s.resourceRoutes(mux)

	mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		sess := s.current(r)
		s.render(w, r, http.StatusNotFound, "error", view{Title: "Not found", CSRF: sess.csrfToken(), Data: "There is no such page."})
	})
	return mux
}

// staticHandler serves the embedded styles and script; they change only
// with the daemon, so browsers may keep them for an hour.
func staticHandler(files fs.FS) http.Handler {
	fsrv := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") || r.URL.Path == "" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fsrv.ServeHTTP(w, r)
	})
}

// signInData is the sign-in page's.
type signInData struct {
	Next    string
	Problem string // why the last try failed
}

func (s *Server) handleSignInPage(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if s.current(r) != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	s.render(w, r, http.StatusOK, "sign-in", view{Title: "Sign in", Data: signInData{Next: next}})
}

// handleSignIn signs in with the API key typed in the form.
func (s *Server) handleSignIn(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "This sign-in came from another site, and is refused.", http.StatusForbidden)
		return
	}
	next := safeNext(r.PostFormValue("next"))
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	if key == "" {
		s.render(w, r, http.StatusUnprocessableEntity, "sign-in", view{Title: "Sign in",
			Data: signInData{Next: next, Problem: "Type an API key: the one `abctl daemon` printed, or one of `abctl daemon orgs create`."}})
		return
	}
	if err := s.checkKey(r, key); err != nil {
		status := http.StatusInternalServerError
		problem := "The key could not be checked: " + err.Error()
		if isDenied(err) {
			status, problem = http.StatusUnauthorized, "That API key was not accepted by this daemon."
		}
		s.render(w, r, status, "sign-in", view{Title: "Sign in", Data: signInData{Next: next, Problem: problem}})
		return
	}
	s.begin(w, r, key, next)
}

// handleSignInLink signs in with the token of a one-time link, which the
// sign-in page's script read from the link's fragment and posts.
func (s *Server) handleSignInLink(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		http.Error(w, "This sign-in came from another site, and is refused.", http.StatusForbidden)
		return
	}
	next := safeNext(r.PostFormValue("next"))
	key, ok := s.sessions.useLink(r.PostFormValue("token"))
	if !ok {
		s.render(w, r, http.StatusUnauthorized, "sign-in", view{Title: "Sign in", Data: signInData{Next: next,
			Problem: "That sign-in link was used already or has expired (links last two minutes): run `abctl open` again, or sign in with a key."}})
		return
	}
	s.begin(w, r, key, next)
}

// begin starts a session for key and goes to next.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, key, next string) {
	sess, token := s.sessions.start(key)
	setCookie(w, r, token, int(sess.expires.Sub(s.now()).Seconds()))
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) handleSignOut(w http.ResponseWriter, r *http.Request, sess *session) {
	s.sessions.end(sess)
	setCookie(w, r, "", -1)
	http.Redirect(w, r, Prefix+"sign-in", http.StatusSeeOther)
}

// signInLink is the answer of POST /ui/sign-in-links.
type signInLink struct {
	URL       string      `json:"url"`
	ExpiresAt client.Time `json:"expires_at"`
}

// handleNewSignInLink makes a one-time sign-in link for the key in
// x-api-key (`abctl open` asks for one). It is an API call, not a page:
// JSON in and out, the key checked as the API checks it.
func (s *Server) handleNewSignInLink(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("X-Api-Key")
	writeJSON := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	if key == "" {
		writeJSON(http.StatusForbidden, map[string]string{"detail": "Send the API key in the x-api-key header."})
		return
	}
	if err := s.checkKey(r, key); err != nil {
		if isDenied(err) {
			writeJSON(http.StatusForbidden, map[string]string{"detail": "Invalid credentials"})
			return
		}
		writeJSON(http.StatusInternalServerError, map[string]string{"detail": "The key could not be checked: " + err.Error()})
		return
	}
	token, expires := s.sessions.newLink(key)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	next := safeNext(r.URL.Query().Get("next"))
	writeJSON(http.StatusCreated, signInLink{
		URL:       scheme + "://" + r.Host + Prefix + "sign-in?next=" + url.QueryEscape(next) + "#token=" + token,
		ExpiresAt: client.Time{Time: expires.UTC()},
	})
}

// checkKey asks the API whether key signs in an organization.
func (s *Server) checkKey(r *http.Request, key string) error {
	c, err := s.client(r, &session{key: key})
	if err != nil {
		return err
	}
	_, err = c.Agents.List(r.Context(), &client.ListAgentsOptions{PageSize: 1})
	return err
}

// isDenied reports whether err is the API refusing the key.
func isDenied(err error) bool {
	var ae *client.Error
	return errors.As(err, &ae) && (ae.StatusCode == http.StatusForbidden || ae.StatusCode == http.StatusUnauthorized)
}
