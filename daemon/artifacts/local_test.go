package artifacts

import (
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// TestLocalFiles: a signed URL of the daemon's is opened from the store,
// whatever host it names; an expired one says so; a URL that is not the
// daemon's (another path, a forged signature) is left to the network.
func TestLocalFiles(t *testing.T) {
	e := newEnv(t)
	f, content := e.record(t, testOrg, testRun, "invoices.csv", client.ArtifactDownload, []byte("a,b\n"))
	l := LocalFiles{Store: e.store, Signer: e.signer}
	open := func(raw string) (string, string, bool, error) {
		t.Helper()
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		rc, name, ok, err := l.OpenURL(u)
		if rc == nil {
			return "", name, ok, err
		}
		defer rc.Close()
		b, _ := io.ReadAll(rc)
		return string(b), name, ok, err
	}
	signed := e.signer.URL("http://203.0.113.9:8780", testOrg, testRun, f.Name, e.clock.in(DefaultLifetime))
	if got, name, ok, err := open(signed); !ok || err != nil || got != string(content) || name != "invoices.csv" {
		t.Errorf("signed URL: %q %q %v %v", got, name, ok, err)
	}
	download := e.signer.DownloadURL(e.base, testOrg, testRun, f.Name, e.clock.in(DefaultLifetime))
	if got, _, ok, err := open(download); !ok || err != nil || got != string(content) {
		t.Errorf("download URL: %q %v %v", got, ok, err)
	}

	expired := e.signer.URL(e.base, testOrg, testRun, f.Name, e.clock.in(-1))
	if _, _, ok, err := open(expired); !ok || !errors.Is(err, ErrURLExpired) {
		t.Errorf("expired URL: %v %v", ok, err)
	}
	gone := e.signer.URL(e.base, testOrg, testRun, "other.csv", e.clock.in(DefaultLifetime))
	if _, _, ok, err := open(gone); !ok || err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("missing file: %v %v", ok, err)
	}
	for _, raw := range []string{
		strings.Replace(signed, "signature=", "signature=0", 1),
		strings.Replace(signed, "/artifacts/", "/v1/artifacts/", 1),
		"https://example.com/artifacts/" + testRun + "/invoices.csv",
	} {
		if _, _, ok, err := open(raw); ok || err != nil {
			t.Errorf("%s: ok %v, %v; want it left to the network", raw, ok, err)
		}
	}
}
