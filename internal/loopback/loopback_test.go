package loopback

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := Client()
	resp, err := c.Get(srv.URL + "/")
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("a loopback server: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = c.Get(srv.URL + "/moved")
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Errorf("a redirect is not followed: %v %v", resp, err)
	}
	resp.Body.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	resp, err = c.Get("http://localhost" + port + "/")
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Errorf("localhost: %v %v", resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	for _, u := range []string{"http://127.0.0B1:1/h", "http://example.com/", "http://10.0.0.1:80/", "http://[2001:db8::1]/"} {
		// Refused by the dialer itself, before any lookup: the error is its.
		_, err := c.Get(u)
		if err == nil || !strings.Contains(err.Error(), "is not a loopback address") {
			t.Errorf("%s: %v, want a refusal", u, err)
		}
	}
}
