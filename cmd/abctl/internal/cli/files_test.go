package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// TestUploadAndArtifactCommands: abctl upload prints a URL that fetches
// the file without a key; -o json gives the stable name with the artifact
// id, which abctl runs artifact reads back, to stdout or to a file.
func TestUploadAndArtifactCommands(t *testing.T) {
	e := newCLIEnv(t)
	csv := "supplier,amount\nNorthwind,120.50\n"
	path := e.write("invoices.csv", csv)
	r := e.run("", "upload", path).expect(t, 0)
	u := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(u, e.baseURL+"/artifacts/upl_") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("upload printed %q", r.stdout)
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != csv {
		t.Errorf("the URL gives %q", b)
	}

	r = e.run("from stdin\n", "upload", "-", "--name", "notes.txt", "-o", "json").expect(t, 0)
	var up client.UploadFileResponse
	if err := json.Unmarshal([]byte(r.stdout), &up); err != nil || !strings.HasSuffix(up.S3URI, "/notes.txt") {
		t.Fatalf("upload -o json: %v %s", err, r.stdout)
	}
	id := strings.Split(strings.TrimPrefix(up.S3URI, "abctl://uploads/"), "/")[0]
	r = e.run("", "runs", "artifact", id).expect(t, 0)
	if r.stdout != "from stdin\n" {
		t.Errorf("runs artifact printed %q", r.stdout)
	}
	out := filepath.Join(e.dir, "copy.txt")
	e.run("", "runs", "artifact", id, "--out", out).expect(t, 0)
	if b, err := os.ReadFile(out); err != nil || string(b) != "from stdin\n" {
		t.Errorf("--out wrote %q (%v)", b, err)
	}

	r = e.run("x", "upload", "-").expect(t, 2)
	contains(t, "stderr", r.stderr, "--name is required")
	r = e.run("", "runs", "artifact", "wr_1").expect(t, 2)
	contains(t, "stderr", r.stderr, "not an artifact id")
	r = e.run("", "runs", "artifact", "a_1").expect(t, 1)
	contains(t, "stderr", r.stderr, "404", "Artifact a_1 not found")
	r = e.run("", "upload", filepath.Join(e.dir, "missing.csv")).expect(t, 1)
	contains(t, "stderr", r.stderr, "missing.csv")
}
