package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestStateCarriesASignIn: the State of a session signed in to a site (an
// HttpOnly session cookie, a token in local storage) restored into a new
// session makes it signed in: the site receives the cookie and the page
// reads the token, in the first tab and in a tab opened later; a site that
// changes its storage afterwards keeps its change.
func TestStateCarriesASignIn(t *testing.T) {
	p := needBrowser(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3ss10n", Path: "/", HttpOnly: true})
		http.SetCookie(w, &http.Cookie{Name: "theme", Value: "dark", Path: "/", MaxAge: 3600})
		fmt.Fprint(w, `<!doctype html><title>in</title><script>localStorage.setItem('token', 't0k3n')</script>`)
	})
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		who := "nobody"
		if err == nil {
			who = c.Value
		}
		fmt.Fprintf(w, `<!doctype html><title>%s</title>`, who)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	a := acquire(t, p, ContextOptions{RunID: "first"})
	run(t, a.Tab(), chromedp.Navigate(srv.URL+"/signin"))
	st, err := ReadState(t.Context(), a)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Cookies) != 2 || len(st.Origins) != 1 || st.Origins[0].LocalStorage[0] != [2]string{"token", "t0k3n"} {
		t.Fatalf("state %+v", st)
	}
	var sid Cookie
	for _, c := range st.Cookies {
		if c.Name == "sid" {
			sid = c
		}
	}
	if !sid.HTTPOnly || sid.Expires != -1 || sid.Value != "s3ss10n" {
		t.Errorf("the session cookie: %+v", sid)
	}

	b := acquire(t, p, ContextOptions{RunID: "second"})
	if err := RestoreState(t.Context(), b, st); err != nil {
		t.Fatal(err)
	}
	run(t, b.Tab(), chromedp.Navigate(srv.URL+"/whoami"))
	if title := eval[string](t, b.Tab(), "document.title"); title != "s3ss10n" {
		t.Errorf("the site saw %q, not the restored session cookie", title)
	}
	if v := eval[string](t, b.Tab(), "localStorage.getItem('token')"); v != "t0k3n" {
		t.Errorf("local storage token = %q", v)
	}
	// The site's own change stays: the storage is restored once per tab.
	eval[bool](t, b.Tab(), "localStorage.setItem('token', 'changed'), true")
	run(t, b.Tab(), chromedp.Reload())
	if v := eval[string](t, b.Tab(), "localStorage.getItem('token')"); v != "changed" {
		t.Errorf("after the site changed it, the token is %q again", v)
	}
	// A tab opened later gets the restored storage too (in a fresh
	// session, where nothing else could have put it there).
	c := acquire(t, p, ContextOptions{RunID: "third"})
	if err := RestoreState(t.Context(), c, st); err != nil {
		t.Fatal(err)
	}
	tab, err := c.NewTab(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	run(t, tab, chromedp.Navigate(srv.URL+"/whoami"))
	if v := eval[string](t, tab, "localStorage.getItem('token')"); v != "t0k3n" {
		t.Errorf("a new tab: local storage token = %q", v)
	}
	// An empty state restores nothing and fails nothing.
	if err := RestoreState(t.Context(), c, &State{}); err != nil {
		t.Error(err)
	}
}
