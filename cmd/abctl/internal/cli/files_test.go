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
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/localrun/executor/scripted"
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

// TestArtifactsTableOnATerminal: on a terminal narrower than the links,
// 'abctl runs artifacts' shows each file's name and its whole link, which
// the terminal may wrap but which still opens (issue 30: the table cut the
// links to "…screenshot-00…").
func TestArtifactsTableOnATerminal(t *testing.T) {
	e := newCLIEnv(t)
	run, err := e.client.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=2;screenshots=2"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(run.RunID)
	arts, err := e.client.Runs.ListArtifacts(t.Context(), run.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := e.runIO("", func(ios *iostreams.IOStreams) { ios.SetTTY(false, true, false); ios.SetWidth(80) }, "runs", "artifacts", run.RunID).expect(t, 0)
	if !strings.Contains(r.stdout, "FILE") || !strings.Contains(r.stdout, "URL") {
		t.Errorf("no FILE or URL column:\n%s", r.stdout)
	}
	shots := 0
	for _, a := range arts {
		if a.ArtifactType != client.ArtifactScreenshot || a.SignedURL == nil {
			continue
		}
		shots++
		if len(*a.SignedURL) <= 80 {
			t.Fatalf("the link %s fits in 80 columns: the test shows nothing", *a.SignedURL)
		}
		contains(t, "runs artifacts on a terminal", r.stdout, *a.SignedURL)
	}
	for i := 1; i <= 2; i++ {
		contains(t, "runs artifacts on a terminal", r.stdout, " "+scripted.ScreenshotName(i)+" ")
	}
	if shots != 2 || strings.Contains(r.stdout, "…") {
		t.Errorf("%d screenshots; a cell was cut:\n%s", shots, r.stdout)
	}
}
