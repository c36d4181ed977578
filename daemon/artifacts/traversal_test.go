package artifacts

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

// plantOutside puts files carrying outsideMarker in every place near the
// run directory that is not the run directory: beside the root, in the
// root itself and in the org directory.
func (e *env) plantOutside(t testing.TB) {
	t.Helper()
	if _, err := e.store.RunDir(testOrg, testRun); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		filepath.Join(e.store.Dir(), "secret.txt"),
		filepath.Join(e.store.Dir(), testOrg, "secret.txt"),
	} {
		if err := os.WriteFile(p, []byte(outsideMarker), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// decodeLikeHandler splits a raw path the way the handler does, so that a
// test can sign exactly what the handler will check.
func decodeLikeHandler(raw string) (run, name string) {
	rawRun, rawName, _ := strings.Cut(raw, "/")
	run, err := url.PathUnescape(rawRun)
	if err != nil {
		run = rawRun
	}
	name, err = url.PathUnescape(rawName)
	if err != nil {
		name = rawName
	}
	return run, name
}

// traversalPaths are raw paths after /artifacts/, each trying to reach a
// file outside the run directory.
func traversalPaths(e *env) []string {
	r := testRun + "/"
	abs := e.outside
	long := strings.Repeat("a", 300) + ".png"
	return []string{
		r + "../secret.txt",
		r + "../../secret.txt",
		r + "../../../secret.txt",
		"../" + testOrg + "/secret.txt",
		"..%2F" + testOrg + "/secret.txt",
		r + "..%2Fsecret.txt",
		r + "..%2F..%2F..%2Fsecret.txt",
		r + "..%2f..%2f..%2fsecret.txt",
		r + "%2e%2e/secret.txt",
		r + "%2e%2e%2fsecret.txt",
		r + "%2E%2E%2F%2E%2E%2F%2E%2E%2Fsecret.txt",
		r + "%2e%2e",
		r + "%2e",
		r + "..",
		r + ".",
		r + "",
		r + "..%5Csecret.txt",
		r + "..%5c..%5c..%5csecret.txt",
		r + "%5C..%5Csecret.txt",
		r + `..\secret.txt`,
		r + "%252e%252e%252fsecret.txt",       // double-encoded
		r + "%25252e%25252e%25252fsecret.txt", // triple-encoded
		r + "..%252fsecret.txt",
		r + url.PathEscape(abs),
		r + abs[1:], // absolute path as extra segments
		"/" + abs,
		r + "%2Fetc%2Fpasswd",
		r + "C:%5Csecret.txt",
		r + "C:secret.txt",
		r + "secret.txt%00.png",
		r + "%00",
		r + "shot.png%00",
		r + long,
		r + strings.Repeat("%2e%2e%2f", 100) + "secret.txt",
		r + ".secret.txt",
		r + ".hidden.png",
		r + "%2esecret.txt",
		r + "shot.png/",
		r + "shot.png/..",
		r + "./shot.png",
		r + "/shot.png",
		r + "%c0%ae%c0%ae%c0%afsecret.txt",          // overlong UTF-8
		r + "%ef%bc%8e%ef%bc%8e%ef%bc%8fsecret.txt", // full-width dots and slash
		r + "%e2%80%aegnp.exe",                      // right-to-left override
		r + "....//secret.txt",
		r + "...%2fsecret.txt",
		"%2e%2e/secret.txt",
		testOrg + "/secret.txt",
		"wr_1%2F..%2F..%2Fsecret.txt",
		"",
		"..",
	}
}

func TestTraversal(t *testing.T) {
	e := newEnv(t)
	e.plantOutside(t)
	e.write(t, testOrg, testRun, "shot.png", []byte("inside"))
	exp := e.clock.in(time.Hour)
	for _, raw := range traversalPaths(e) {
		run, name := decodeLikeHandler(raw)
		target := "/artifacts/" + raw + "?" + e.signedQuery(testOrg, run, name, exp)
		r := e.get(t, target)
		if strings.Contains(string(r.body), outsideMarker) {
			t.Fatalf("%q: served a file outside the run directory", raw)
		}
		switch r.status {
		case 404:
			wantDetail(t, r, 404)
		case 400: // the HTTP server refused the request line itself
		default:
			t.Errorf("%q: status %d, body %q", raw, r.status, r.body)
		}
	}
	// The org is a query parameter: traversal there is refused as well.
	for _, org := range []string{"..", "../..", "o_1/..", "o_1%2F..", "/", ".", "o_1/wr_1", `o_1\..`} {
		q := e.signedQuery(org, testRun, "shot.png", exp)
		r := e.get(t, "/artifacts/"+testRun+"/shot.png?"+q)
		wantDetail(t, r, 403)
	}
	// And the inside file is still served.
	r := e.get(t, e.signer.URL(e.base, testOrg, testRun, "shot.png", exp))
	if r.status != 200 || string(r.body) != "inside" {
		t.Fatalf("inside file: %d", r.status)
	}
}

func TestSymlinksNotFollowed(t *testing.T) {
	e := newEnv(t)
	e.plantOutside(t)
	e.write(t, testOrg, testRun, "shot.png", []byte("inside"))
	runDir, _ := e.store.RunDir(testOrg, testRun)
	orgDir := filepath.Dir(runDir)

	// An outside directory that looks like a run directory.
	outsideRun := filepath.Join(e.dir, "outside_run")
	if err := os.MkdirAll(filepath.Join(outsideRun, testRun), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(outsideRun, "shot.png"), filepath.Join(outsideRun, testRun, "shot.png")} {
		if err := os.WriteFile(p, []byte(outsideMarker), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(runDir, "rel.png"):       "../../../secret.txt",
		filepath.Join(runDir, "abs.png"):       e.outside,
		filepath.Join(runDir, "org.png"):       "../secret.txt",
		filepath.Join(runDir, "inside.png"):    "shot.png",
		filepath.Join(runDir, "dangle.png"):    "nowhere.png",
		filepath.Join(runDir, "dir.png"):       outsideRun,
		filepath.Join(orgDir, "wr_abs"):        outsideRun, // a run directory pointing out
		filepath.Join(orgDir, "wr_sib"):        testRun,    // a run directory pointing at another run
		filepath.Join(e.store.Dir(), "o_evil"): outsideRun, // an org directory pointing out
		filepath.Join(e.store.Dir(), "o_sib"):  testOrg,    // an org directory pointing at another org
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	exp := e.clock.in(time.Hour)
	cases := []struct{ org, run, name string }{
		{testOrg, testRun, "rel.png"},
		{testOrg, testRun, "abs.png"},
		{testOrg, testRun, "org.png"},
		{testOrg, testRun, "inside.png"},
		{testOrg, testRun, "dangle.png"},
		{testOrg, testRun, "dir.png"},
		{testOrg, "wr_abs", "shot.png"},
		{testOrg, "wr_sib", "shot.png"},
		{"o_evil", testRun, "shot.png"},
		{"o_sib", testRun, "shot.png"},
	}
	for _, c := range cases {
		r := e.get(t, e.signer.URL(e.base, c.org, c.run, c.name, exp))
		wantDetail(t, r, 404)
		if _, err := e.store.Record(c.org, c.run, c.name, client.ArtifactScreenshot); err == nil {
			t.Errorf("Record(%s, %s, %s) accepted a symbolic link", c.org, c.run, c.name)
		}
	}
	for _, c := range [][2]string{{testOrg, "wr_abs"}, {"o_evil", testRun}, {testOrg, "wr_sib"}} {
		if _, err := e.store.RunDir(c[0], c[1]); err == nil {
			t.Errorf("RunDir(%s, %s) accepted a symbolic link", c[0], c[1])
		}
	}
	// Removing a run whose directory is a link removes the link only.
	if err := e.store.RemoveRun(testOrg, "wr_abs"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outsideRun, "shot.png")); err != nil {
		t.Fatalf("RemoveRun followed a link: %v", err)
	}
	if b, err := os.ReadFile(e.outside); err != nil || string(b) != outsideMarker {
		t.Fatalf("outside file changed: %v", err)
	}
}
