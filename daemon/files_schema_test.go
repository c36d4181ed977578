package daemon_test

import (
	"io"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

// The operations of uploaded files, artifacts' content, file download
// runs and the server's version, checked against the upstream schema by
// TestResponsesMatchTheUpstreamSchema with the rest.
func init() {
	served = append(served,
		"POST /v1/upload_file",
		"GET /v1/artifacts/{artifact_id}/content",
		"POST /v1/run/tasks/download_files",
		"GET /v1/version",
	)
	moreExercises = append(moreExercises, exerciseFiles)
}

func exerciseFiles(t *testing.T, c *client.Client, raw func(method, path, body string) int) {
	ctx := t.Context()
	// The upstream answer of the content route is declared as JSON: the
	// file read here is JSON.
	up, err := c.Files.Upload(ctx, "answer.json", strings.NewReader(`{"answer": 42}`))
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if got := raw("POST", "/v1/upload_file", `{"file": "not multipart"}`); got != 422 {
		t.Errorf("upload_file with a JSON body: %d", got)
	}
	id := strings.Split(strings.TrimPrefix(up.S3URI, "abctl://uploads/"), "/")[0]
	for _, rng := range []*client.ByteRange{nil, {Start: 0, End: 3}} {
		ac, err := c.Files.Content(ctx, id, rng)
		if err != nil {
			t.Fatalf("content of %s: %v", id, err)
		}
		io.Copy(io.Discard, ac.Body)
		ac.Body.Close()
	}
	if _, err := c.Files.Content(ctx, "a_404", nil); statusOf(err) != 404 {
		t.Errorf("content of a missing artifact: %v", err)
	}
	if got := raw("GET", "/v1/artifacts/"+id+"/content", ""); got != 200 {
		t.Errorf("content read by hand: %d", got)
	}

	run, err := c.Runs.DownloadFiles(ctx, &client.DownloadFilesRequest{
		NavigationGoal: "Download the 2026 report", URL: "https://example.com/downloads", DownloadSuffix: "report.pdf"})
	if err != nil || !strings.HasPrefix(run.RunID, "wr_") {
		t.Fatalf("download_files: %+v %v", run, err)
	}
	if got := raw("POST", "/v1/run/tasks/download_files", `{"url": "https://example.com"}`); got != 422 {
		t.Errorf("download_files without navigation_goal: %d", got)
	}
	if v, err := c.Version(ctx); err != nil || v.Version == "" {
		t.Errorf("version: %+v %v", v, err)
	}
}
