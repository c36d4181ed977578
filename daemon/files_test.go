package daemon_test

// Uploaded files, the content of artifacts and the server's version,
// through the client against a real daemon (the scripted executor writes
// the runs' files): what is stored, what the URLs give, ranges, the size
// limit, organizations kept apart.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/admin"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

const filesTestKey = "abk_files_test_key"

// filesEnv is a daemon with the scripted executor and two organizations.
type filesEnv struct {
	dir, addr string
	ours      *client.Client
	theirs    *client.Client
}

func newFilesEnv(t *testing.T, cfg daemon.Config) *filesEnv {
	t.Helper()
	dir := t.TempDir()
	cfg.APIKey = filesTestKey
	cfg.Executor = &scripted.Executor{}
	addr, _ := daemontest.Start(t, dir, cfg)
	ac := admin.NewClient(admin.SocketPath(dir))
	other, err := ac.CreateOrganization(t.Context(), "other")
	if err != nil {
		t.Fatal(err)
	}
	return &filesEnv{dir: dir, addr: addr, ours: apiClient(t, addr, filesTestKey), theirs: apiClient(t, addr, other.APIKey)}
}

// statusOf returns the HTTP status of a client error, 0 for another error.
func statusOf(err error) int {
	var e *client.Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// readContent reads an artifact's content through the client.
func readContent(t *testing.T, c *client.Client, id string, rng *client.ByteRange) (*client.ArtifactContent, []byte) {
	t.Helper()
	ac, err := c.Files.Content(t.Context(), id, rng)
	if err != nil {
		t.Fatalf("content of %s: %v", id, err)
	}
	defer ac.Body.Close()
	b, err := io.ReadAll(ac.Body)
	if err != nil {
		t.Fatal(err)
	}
	return ac, b
}

// TestUploadFile: an uploaded file is answered with a URL that fetches it
// without a key and a stable name that holds its artifact id; the content
// route reads it with the key, whole or by range, for its organization
// only; a name with path parts is kept as its last element.
func TestUploadFile(t *testing.T) {
	e := newFilesEnv(t, daemon.Config{})
	ctx := t.Context()
	csv := "supplier,amount\nNorthwind,120.50\nContoso,80\n"
	up, err := e.ours.Files.Upload(ctx, `..\reports/invoices.csv`, strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(up.S3URI, "abctl://uploads/a_") || !strings.HasSuffix(up.S3URI, "/invoices.csv") {
		t.Errorf("s3_uri %q", up.S3URI)
	}
	if !strings.HasPrefix(up.PresignedURL, "http://"+e.addr+"/artifacts/upl_") || !strings.Contains(up.PresignedURL, "/invoices.csv?") {
		t.Errorf("presigned_url %q", up.PresignedURL)
	}

	// The URL is the credential: no key needed.
	resp, err := http.Get(up.PresignedURL)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != csv {
		t.Fatalf("GET presigned_url: %d %q", resp.StatusCode, got)
	}
	// Without its signature, the file is refused.
	resp, err = http.Get(up.PresignedURL[:strings.Index(up.PresignedURL, "?")])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET without the signature: %d", resp.StatusCode)
	}

	id := strings.Split(strings.TrimPrefix(up.S3URI, "abctl://uploads/"), "/")[0]
	ac, body := readContent(t, e.ours, id, nil)
	if ac.StatusCode != http.StatusOK || string(body) != csv || !strings.HasPrefix(ac.ContentType, "text/csv") {
		t.Errorf("content: %d %q %q", ac.StatusCode, ac.ContentType, body)
	}
	ac, body = readContent(t, e.ours, id, &client.ByteRange{Start: 0, End: 7})
	if ac.StatusCode != http.StatusPartialContent || string(body) != "supplier" || ac.ContentRange != "bytes 0-7/"+strconv.Itoa(len(csv)) {
		t.Errorf("range 0-7: %d %q %q", ac.StatusCode, ac.ContentRange, body)
	}
	ac, body = readContent(t, e.ours, id, &client.ByteRange{Start: -3})
	if ac.StatusCode != http.StatusPartialContent || string(body) != "80\n" {
		t.Errorf("last 3 bytes: %d %q", ac.StatusCode, body)
	}
	if _, err := e.ours.Files.Content(ctx, id, &client.ByteRange{Start: 10_000, End: -1}); statusOf(err) != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("a range past the end: %v", err)
	}
	// Another organization's artifact, and one that does not exist.
	for _, tc := range []struct {
		c  *client.Client
		id string
	}{{e.theirs, id}, {e.ours, "a_1"}} {
		_, err := tc.c.Files.Content(ctx, tc.id, nil)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.StatusCode != http.StatusNotFound || !strings.Contains(string(ce.Body), "Artifact "+tc.id+" not found") {
			t.Errorf("content of %s: %v", tc.id, err)
		}
	}

	// A name with nothing usable is kept as "upload"; an empty file is a file.
	up2, err := e.ours.Files.Upload(ctx, "/", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(up2.S3URI, "/upload") {
		t.Errorf("s3_uri of a file named /: %q", up2.S3URI)
	}
}

// TestUploadFileRefusals: a file over the daemon's limit is answered 413
// naming the limit, and nothing of it is left on disk; a body without a
// file part is 422 naming the field.
func TestUploadFileRefusals(t *testing.T) {
	e := newFilesEnv(t, daemon.Config{MaxUploadSize: 1000})
	ctx := t.Context()
	if _, err := e.ours.Files.Upload(ctx, "small.txt", bytes.NewReader(make([]byte, 1000))); err != nil {
		t.Fatalf("a file of exactly the limit: %v", err)
	}
	for _, size := range []int{1001, 200 << 10} { // over the limit; over the limit and the multipart slack
		_, err := e.ours.Files.Upload(ctx, "big.bin", bytes.NewReader(make([]byte, size)))
		var ce *client.Error
		if !errors.As(err, &ce) || ce.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(ce.Body), "limit of 1000 bytes") ||
			!strings.Contains(string(ce.Body), "--max-upload-size") {
			t.Errorf("a file of %d bytes: %v", size, err)
		}
	}
	// Only the small file is on disk.
	var names []string
	root := filepath.Join(e.dir, datadir.ArtifactsDirName)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, filepath.Base(p))
		}
		return nil
	})
	if len(names) != 1 || names[0] != "small.txt" {
		t.Errorf("files on disk: %v", names)
	}

	req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+e.addr+"/v1/upload_file", strings.NewReader(`{"file": "x"}`))
	req.Header.Set("X-Api-Key", filesTestKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), `"loc":["body","file"]`) {
		t.Errorf("a JSON body: %d %s", resp.StatusCode, b)
	}
}

// TestRunArtifactContent: the ids GET /v1/runs/{id}/artifacts lists read
// the run's files through the content route, for the run's organization
// only.
func TestRunArtifactContent(t *testing.T) {
	e := newFilesEnv(t, daemon.Config{})
	ctx := t.Context()
	run, err := e.ours.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: scripted.Prefix + "steps=1;screenshots=1;downloads=1"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if run, err = e.ours.Runs.Wait(wctx, run.RunID, &client.WaitOptions{Interval: 20 * time.Millisecond}); err != nil || run.Status != client.RunStatusCompleted {
		t.Fatalf("run: %+v %v", run, err)
	}
	list, err := e.ours.Runs.ListArtifacts(ctx, run.RunID, nil)
	if err != nil {
		t.Fatal(err)
	}
	var download *client.Artifact
	for _, a := range list {
		if !strings.HasPrefix(a.ArtifactID, "a_") {
			t.Errorf("artifact id %q", a.ArtifactID)
		}
		ac, body := readContent(t, e.ours, a.ArtifactID, nil)
		if a.FileSize == nil || int64(len(body)) != *a.FileSize || ac.StatusCode != http.StatusOK {
			t.Errorf("%s (%s): %d bytes, %d", a.ArtifactID, a.ArtifactType, len(body), ac.StatusCode)
		}
		if a.ArtifactType == client.ArtifactDownload {
			download = a
			if !bytes.Equal(body, scripted.DownloadBytes(run.RunID, 1)) {
				t.Errorf("the download holds %q", body)
			}
		}
		if _, err := e.theirs.Files.Content(ctx, a.ArtifactID, nil); statusOf(err) != http.StatusNotFound {
			t.Errorf("another organization reads %s: %v", a.ArtifactID, err)
		}
	}
	if download == nil {
		t.Fatalf("no download among the artifacts: %+v", list)
	}
}

// TestVersion: GET /v1/version answers the version the daemon was given,
// without an API key.
func TestVersion(t *testing.T) {
	dir := t.TempDir()
	addr, _ := daemontest.Start(t, dir, daemon.Config{APIKey: filesTestKey, Executor: &scripted.Executor{}, Version: "1.2.3"})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Version(t.Context())
	if err != nil || v.Version != "1.2.3" {
		t.Fatalf("version: %+v %v", v, err)
	}
}
