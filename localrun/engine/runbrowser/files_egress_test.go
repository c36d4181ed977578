package runbrowser

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/egress/egresstest"
)

type nopProgress struct{}

func (nopProgress) Step(int)          {}
func (nopProgress) Screenshot(string) {}

// sharedPolicy is a daemon serving several organizations whose API listens
// at apiAddr; allow are the operator's --egress-allow patterns.
func sharedPolicy(t *testing.T, apiAddr string, allow ...string) *egress.Policy {
	return egresstest.Shared(t, allow, apiAddr, "the daemon's API")
}

func testFiles(t *testing.T) *Files {
	return newFiles(t.TempDir(), nopProgress{}, slog.New(slog.DiscardHandler), &http.Client{})
}

// localFiles serves one URL of "the daemon's" as a file.
type localFiles struct{ url, name, content string }

func (l localFiles) OpenURL(u *url.URL) (io.ReadCloser, string, bool, error) {
	switch {
	case u.String() == l.url:
		return io.NopCloser(strings.NewReader(l.content)), l.name, true, nil
	case strings.Contains(u.RawQuery, "expired"):
		return nil, "", true, errors.New("the daemon's file URL has expired")
	}
	return nil, "", false, nil
}

// TestFetchUploadThroughGuard: a file URL on the daemon's API address is
// refused by a shared daemon's guard, naming the URL, its address and the
// rule, and so is a redirect to it from a server the guard allows; a
// single organization's daemon reaches the same loopback server. The
// daemon's own signed URL is read locally, never fetched.
func TestFetchUploadThroughGuard(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("admin secrets"))
	}))
	defer api.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, api.URL+"/v1/admin/orgs", http.StatusFound)
	}))
	defer other.Close()
	apiAddr := strings.TrimPrefix(api.URL, "http://")
	otherAddr := strings.TrimPrefix(other.URL, "http://")
	shared := sharedPolicy(t, apiAddr, otherAddr)

	f := testFiles(t)
	f.UseNetwork(shared.For("o_1"), nil)
	_, err := f.FetchUpload(t.Context(), api.URL+"/report.csv?token=s3cret")
	var fe *FetchError
	if !errors.As(err, &fe) {
		t.Fatalf("a file URL on the daemon's API: %v", err)
	}
	for _, want := range []string{"refused to reach " + api.URL + "/report.csv", "(" + apiAddr + ")", "the daemon's API is never reachable by a run"} {
		if !strings.Contains(fe.Msg, want) {
			t.Errorf("%q does not say %q", fe.Msg, want)
		}
	}
	if strings.Contains(fe.Msg, "s3cret") {
		t.Errorf("%q shows the query", fe.Msg)
	}

	_, err = f.FetchUpload(t.Context(), other.URL+"/file.csv")
	if err == nil || !strings.Contains(err.Error(), "refused to reach "+api.URL+"/v1/admin/orgs") || !strings.Contains(err.Error(), "the daemon's API") {
		t.Errorf("a redirect to the daemon's API: %v", err)
	}

	// A single organization's daemon: loopback is reachable.
	single := egress.New(egress.Config{Shared: func() bool { return false }})
	f = testFiles(t)
	f.UseNetwork(single.For("o_1"), nil)
	p, err := f.FetchUpload(t.Context(), api.URL+"/report.csv")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "admin secrets" {
		t.Errorf("fetched %q", b)
	}

	// The daemon's own file URL, on its API address: read locally.
	own := api.URL + "/artifacts/up_1/invoices.csv?org=o_1&expires=1&signature=abc"
	f = testFiles(t)
	f.UseNetwork(shared.For("o_1"), localFiles{url: own, name: "invoices.csv", content: "a,b\n"})
	p, err = f.FetchUpload(t.Context(), own)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "a,b\n" || !strings.HasSuffix(p, "invoices.csv") {
		t.Errorf("the local file %s holds %q", p, b)
	}
	if _, err := f.FetchUpload(t.Context(), api.URL+"/artifacts/x/y?expired=1"); err == nil || !strings.Contains(err.Error(), "has expired") {
		t.Errorf("an expired URL of the daemon's: %v", err)
	}
	f.removeTemp()
}
