package mcpserver_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/mcpserver"
)

// TestWebUILink: the tool gives a one-time sign-in link to the daemon's
// web UI, on the page of the id given, that signs in once; an id of
// something else is refused with what to give instead.
func TestWebUILink(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		got := call[mcpserver.WebUILinkResult](t, s, "skyvern_web_ui_link", map[string]any{"id": "wr_494469342201718946"})
		base := "http://" + e.addr
		page, fragment, ok := strings.Cut(got.URL, "#token=")
		if !ok || page != base+"/ui/sign-in?next=%2Fui%2Fruns%2Fwr_494469342201718946" || got.ExpiresAt == "" {
			t.Fatalf("the link: %+v", got)
		}
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for i, want := range []int{http.StatusSeeOther, http.StatusUnauthorized} {
			res, err := hc.PostForm(base+"/ui/sign-in/link", url.Values{"token": {fragment}})
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Fatalf("signing in with the link, time %d: %d, want %d", i+1, res.StatusCode, want)
			}
		}

		got = call[mcpserver.WebUILinkResult](t, s, "skyvern_web_ui_link", nil)
		if !strings.HasPrefix(got.URL, base+"/ui/sign-in?next=%2Fui%2Fruns#token=") {
			t.Errorf("the runs list's link: %q", got.URL)
		}
		if msg := callError(t, s, "skyvern_web_ui_link", map[string]any{"id": "fld_1"}); !strings.Contains(msg, "neither a run id") {
			t.Errorf("a folder's id: %q", msg)
		}
	})
}
