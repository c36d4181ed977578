//go:build !windows

package daemon_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

const (
	runFilesBucket = "abctl-run-files"
	runFilesKeyID  = "AKIARUNFILES"
	runFilesSecret = "run-files-secret-key-never-printed"
)

// startRunFilesS3 starts an S3-compatible service on loopback (gofakes3,
// in memory) with the bucket of the runs' files, and returns the
// environment that gives its endpoint and keys.
func startRunFilesS3(t *testing.T) (*s3mem.Backend, func(string) string) {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(runFilesBucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	env := map[string]string{
		"AWS_ENDPOINT_URL_S3":   srv.URL,
		"AWS_REGION":            "us-east-1",
		"AWS_ACCESS_KEY_ID":     runFilesKeyID,
		"AWS_SECRET_ACCESS_KEY": runFilesSecret,
	}
	return backend, func(k string) string { return env[k] }
}

// TestDaemonsShareRunFilesInBucket: two daemons on one PostgreSQL database
// with one bucket for the runs' files (--artifacts s3://...) and no
// shared directory: the files of a run executed by one are in the bucket,
// not on the other's disk, and the URLs the other gives out serve them.
// The bucket's secret key shows in no log.
func TestDaemonsShareRunFilesInBucket(t *testing.T) {
	dbURL := newPostgresStore(t)
	secret := newSecret(t)
	backend, getenv := startRunFilesS3(t)
	type node struct {
		dir, addr string
		exec      *scripted.Executor
		logs      syncBuffer
	}
	nodes := [2]*node{{}, {}}
	for _, n := range nodes {
		n.dir, n.exec = t.TempDir(), &scripted.Executor{}
		n.addr, _ = daemontest.Start(t, n.dir, daemon.Config{Store: dbURL, Secret: secret, Executor: n.exec,
			ArtifactsDir: "s3://" + runFilesBucket + "/shared", ArtifactsEnv: getenv,
			Logger: slog.New(slog.NewTextHandler(&n.logs, nil))})
	}
	key := keyOf(t, nodes[0].dir)
	c0 := apiClient(t, nodes[0].addr, key)
	run, err := c0.Runs.StartTask(t.Context(), &client.TaskRunRequest{Prompt: scripted.Prefix + " screenshots=1;downloads=1"})
	if err != nil {
		t.Fatal(err)
	}
	waitRun(t, c0, run.RunID)

	// The daemon that executed it (the queue is shared: either) has the
	// files on its disk; the other has none.
	ran, other := nodes[0], nodes[1]
	if _, ok := ran.exec.Job(run.RunID); !ok {
		ran, other = other, ran
	}
	job, ok := ran.exec.Job(run.RunID)
	if !ok {
		t.Fatal("neither daemon executed the run")
	}
	shot, download := scripted.ScreenshotName(1), scripted.DownloadName(1)
	if _, err := os.Stat(filepath.Join(job.Dir, shot)); err != nil {
		t.Fatalf("the executing daemon's copy: %v", err)
	}
	if !strings.HasPrefix(job.Dir, filepath.Join(ran.dir, datadir.ArtifactsDirName)+string(filepath.Separator)) {
		t.Errorf("the run's working directory %s is not in the data directory's %s", job.Dir, datadir.ArtifactsDirName)
	}
	err = filepath.WalkDir(other.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && (d.Name() == shot || d.Name() == download) {
			return errors.New("the other daemon has " + p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := backend.ListBucket(runFilesBucket, &gofakes3.Prefix{Prefix: "shared/", HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, o := range list.Contents {
		keys[o.Key] = true
	}
	orgID := job.OrgID
	for _, name := range []string{shot, download} {
		if k := "shared/" + orgID + "/" + run.RunID + "/" + name; !keys[k] {
			t.Errorf("%s is not in the bucket (%v)", k, keys)
		}
	}

	// Through the other daemon: its URLs serve the files.
	got, err := apiClient(t, other.addr, key).Runs.Get(t.Context(), run.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ScreenshotURLs) != 1 || len(got.DownloadedFiles) != 1 {
		t.Fatalf("screenshot_urls %v, downloaded_files %v", got.ScreenshotURLs, got.DownloadedFiles)
	}
	if u := got.ScreenshotURLs[0]; !strings.HasPrefix(u, "http://"+other.addr+"/") {
		t.Fatalf("the other daemon's URL %s", u)
	}
	if b := fetch(t, got.ScreenshotURLs[0]); !bytes.Equal(b, scripted.ScreenshotPNG(run.RunID, 1)) {
		t.Errorf("the screenshot through the other daemon: %d bytes", len(b))
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, got.DownloadedFiles[0].URL, nil)
	req.Header.Set("Range", "bytes=2-5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := scripted.DownloadBytes(run.RunID, 1)
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, want[2:6]) ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment;") {
		t.Errorf("a range of the download through the other daemon: %d %q, %v", resp.StatusCode, body, resp.Header)
	}

	for i, n := range nodes {
		if s := n.logs.String(); strings.Contains(s, runFilesSecret) {
			t.Errorf("daemon %d's log shows the bucket's secret key", i)
		} else if !strings.Contains(s, "s3://"+runFilesBucket+"/shared at ") {
			t.Errorf("daemon %d's log does not name the bucket:\n%s", i, s)
		}
	}
}

// TestDaemonArtifactsBucketChecked: a daemon whose bucket of run files does
// not exist, or that has no keys for it, does not start, and says why
// without the secret key.
func TestDaemonArtifactsBucketChecked(t *testing.T) {
	_, getenv := startRunFilesS3(t)
	noKeys := func(k string) string {
		if strings.HasPrefix(k, "AWS_ACCESS") || strings.HasPrefix(k, "AWS_SECRET") {
			return ""
		}
		return getenv(k)
	}
	for _, tc := range []struct {
		artifacts string
		env       func(string) string
		want      []string
	}{
		{"s3://no-such-bucket/p", getenv, []string{"--artifacts", `"no-such-bucket" does not exist`}},
		{"s3://" + runFilesBucket, noKeys, []string{"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"}},
	} {
		err := daemon.Run(t.Context(), daemon.Config{DataDir: t.TempDir(), Addr: "127.0.0.1:0", ArtifactsDir: tc.artifacts, ArtifactsEnv: tc.env,
			Logger: slog.New(slog.DiscardHandler), Stderr: io.Discard})
		if err == nil {
			t.Fatalf("%s: the daemon started", tc.artifacts)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v lacks %q", tc.artifacts, err, w)
			}
		}
		if strings.Contains(err.Error(), runFilesSecret) {
			t.Errorf("%s: the error shows the secret key: %v", tc.artifacts, err)
		}
	}
}
