package client_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
)

// TestWebUISignInLinkSDK: the Go client's SignInLink, against a real
// daemon, returns a link to the web UI's sign-in page that carries the
// page to open in its query and its token only in the fragment, lasts two
// minutes, and signs in once; a wrong key is the API's 403.
func TestWebUISignInLinkSDK(t *testing.T) {
	const key = "abk_webui_link_sdk_test_0123456789"
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: key})
	base := "http://" + addr
	c, err := client.New(client.WithBaseURL(base), client.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}

	before := time.Now()
	link, err := c.SignInLink(t.Context(), "/ui/runs/wr_123")
	if err != nil {
		t.Fatal(err)
	}
	page, fragment, ok := strings.Cut(link.URL, "#")
	if !ok || page != base+"/ui/sign-in?next=%2Fui%2Fruns%2Fwr_123" || !strings.HasPrefix(fragment, "token=") || len(fragment) < len("token=")+20 {
		t.Fatalf("the link is %q", link.URL)
	}
	if exp := link.ExpiresAt.Time; exp.Before(before.Add(time.Minute)) || exp.After(time.Now().Add(2*time.Minute+time.Second)) {
		t.Errorf("the link expires at %v, want about two minutes after %v", exp, before)
	}

	// The sign-in page's script posts the fragment's token: once it signs
	// in and goes to the page asked for, twice it is refused.
	token := strings.TrimPrefix(fragment, "token=")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	use := func() *http.Response {
		t.Helper()
		res, err := hc.PostForm(base+"/ui/sign-in/link", url.Values{"token": {token}, "next": {"/ui/runs/wr_123"}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := use(); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/runs/wr_123" {
		t.Fatalf("signing in with the link: %d to %q, want 303 to /ui/runs/wr_123", res.StatusCode, res.Header.Get("Location"))
	}
	if res := use(); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the link used a second time: %d, want 401", res.StatusCode)
	}

	// Without a page to open, the link opens the runs list.
	link, err = c.SignInLink(t.Context(), "")
	if err != nil || !strings.HasPrefix(link.URL, base+"/ui/sign-in?next=%2Fui%2Fruns#token=") {
		t.Fatalf("a link without next: %v %+v", err, link)
	}

	_, err = c.SignInLink(t.Context(), "", client.WithAPIKey("abk_not_this_daemons_key_000000"))
	var ae *client.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusForbidden {
		t.Fatalf("a link for a wrong key: %v, want the API's 403", err)
	}
	if strings.Contains(err.Error(), "abk_not_this") {
		t.Errorf("the error shows the key: %v", err)
	}
}
