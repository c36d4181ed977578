package engine_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/sftptest"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/blocks"
	"github.com/abctl/abctl/localrun/executor"
)

// fakeS3 is an S3-compatible service on loopback (gofakes3, in memory)
// that notes the access key of every upload it receives and, as AWS
// does, refuses an access key it does not know. (gofakes3 checks no
// signature: a wrong secret key is not noticed.)
type fakeS3 struct {
	url     string
	backend *s3mem.Backend
	known   map[string]bool // the access key IDs it knows

	mu      sync.Mutex
	keyIDs  map[string]string // bucket -> access key ID of its last upload
	uploads int
}

var credentialRE = regexp.MustCompile(`Credential=([^/]+)/`)

func startS3(t *testing.T, keyIDs []string, buckets ...string) *fakeS3 {
	t.Helper()
	f := &fakeS3{backend: s3mem.New(), keyIDs: map[string]string{}, known: map[string]bool{}}
	for _, k := range keyIDs {
		f.known[k] = true
	}
	for _, b := range buckets {
		if err := f.backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	h := gofakes3.New(f.backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			m := credentialRE.FindStringSubmatch(r.Header.Get("Authorization"))
			if m == nil || !f.known[m[1]] {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusForbidden)
				io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>`+
					`<Message>The AWS Access Key Id you provided does not exist in our records.</Message></Error>`)
				return
			}
			f.mu.Lock()
			f.uploads++
			f.keyIDs[bucket] = m[1]
			f.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// object returns the bytes stored at an s3:// URI.
func (f *fakeS3) object(t *testing.T, uri string) []byte {
	t.Helper()
	bucket, key, ok := strings.Cut(strings.TrimPrefix(uri, "s3://"), "/")
	if !ok || !strings.HasPrefix(uri, "s3://") {
		t.Fatalf("%q is not an s3:// URI", uri)
	}
	obj, err := f.backend.GetObject(bucket, key, nil)
	if err != nil {
		t.Fatalf("%s: %v", uri, err)
	}
	defer obj.Contents.Close()
	b, err := io.ReadAll(obj.Contents)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fakeS3) keyID(bucket string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keyIDs[bucket]
}

const (
	daemonS3Secret = "daemon-s3-secret-0123456789"
	blockS3Secret  = "block-s3-secret-9876543210"
)

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func downloadReport() client.Block {
	return &client.FileDownloadBlock{BlockBase: base("get_report"), URL: "{{ site }}" + testsite.FileReport}
}

func failedWith(t *testing.T, res executor.Result, what string, want ...string) {
	t.Helper()
	t.Logf("%s: %s", what, res.FailureReason)
	if res.Status != client.RunStatusFailed {
		t.Errorf("%s: status %s (%s), want failed", what, res.Status, res.FailureReason)
		return
	}
	for _, w := range want {
		if !strings.Contains(res.FailureReason, w) {
			t.Errorf("%s: the reason %q does not say %q", what, res.FailureReason, w)
		}
	}
}

// TestStorageS3: upload_to_s3 stores the run's download and
// download_to_s3 a URL's file in the daemon's bucket; file_upload stores
// the download in the block's bucket under its path, signed with the
// block's keys (a credential's secret) rather than the daemon's. A
// missing bucket, an unreachable service, a daemon without a bucket and
// a storage type this daemon lacks fail with a reason naming the block
// and the cause, and no secret is written anywhere.
func TestStorageS3(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	s3 := startS3(t, []string{"AKIADAEMON", "AKIABLOCK"}, "runs", "exports")
	e := newEngine(t, engine.Config{
		Vault: vault{"cred_aws": &client.SecretCredential{SecretValue: blockS3Secret}},
		S3: blocks.S3Config{Endpoint: s3.url, Region: "us-east-1", PathStyle: true, Bucket: "runs", Prefix: "abctl/",
			AccessKeyID: "AKIADAEMON", SecretAccessKey: daemonS3Secret},
	})
	awsParam := client.Parameter{Key: "aws_secret", ParameterType: client.ParameterTypeCredential, CredentialID: "cred_aws"}
	toBucket := func(bucket string) *client.FileUploadBlock {
		return &client.FileUploadBlock{BlockBase: base("to_bucket"), StorageType: "s3", S3Bucket: bucket, Path: "reports/{{ folder }}",
			AWSAccessKeyID: "AKIABLOCK", AWSSecretAccessKey: "{{ aws_secret.secret_value }}", RegionName: "us-east-1"}
	}
	params := map[string]any{"site": site.URL(""), "folder": "daily"}
	def := client.WorkflowDefinition{
		Parameters: []client.Parameter{stringParam("site"), stringParam("folder"), awsParam},
		Blocks: client.Blocks{
			downloadReport(),
			&client.UploadToS3Block{BlockBase: base("to_daemon")},
			&client.UploadToS3Block{BlockBase: base("one_file"), Path: "{{ get_report_output.downloaded_files[0].filename }}"},
			&client.DownloadToS3Block{BlockBase: base("fetch_notes"), URL: "{{ site }}" + testsite.FileNotes},
			toBucket("exports"),
		},
	}
	j := job(t, def, params)
	res := e.Execute(t.Context(), j, &progress{})
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	out := outputOf(t, res)
	uuidRE := `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	daemonURIs, _ := out["to_daemon_output"].([]any)
	if len(daemonURIs) != 1 || !regexp.MustCompile(`^s3://runs/abctl/`+uuidRE+`/`+regexp.QuoteMeta(testsite.ReportFilename)+`$`).MatchString(daemonURIs[0].(string)) {
		t.Fatalf("to_daemon_output %v", out["to_daemon_output"])
	}
	if got := string(s3.object(t, daemonURIs[0].(string))); got != testsite.ReportCSV {
		t.Errorf("upload_to_s3 stored %q", got)
	}
	if one, _ := out["one_file_output"].([]any); len(one) != 1 || one[0] == daemonURIs[0] || string(s3.object(t, one[0].(string))) != testsite.ReportCSV {
		t.Errorf("one_file_output %v", out["one_file_output"])
	}
	notesURI, _ := out["fetch_notes_output"].(string)
	if !regexp.MustCompile(`^s3://runs/abctl/` + uuidRE + `/notes\.txt$`).MatchString(notesURI) {
		t.Fatalf("fetch_notes_output %v", out["fetch_notes_output"])
	}
	if got := string(s3.object(t, notesURI)); got != testsite.NotesTXT {
		t.Errorf("download_to_s3 stored %q", got)
	}
	want := "s3://exports/reports/daily/" + testsite.ReportFilename
	if got, _ := out["to_bucket_output"].([]any); len(got) != 1 || got[0] != want {
		t.Fatalf("to_bucket_output %v, want [%s]", out["to_bucket_output"], want)
	}
	if got := string(s3.object(t, want)); got != testsite.ReportCSV {
		t.Errorf("file_upload stored %q", got)
	}
	if s3.keyID("runs") != "AKIADAEMON" || s3.keyID("exports") != "AKIABLOCK" {
		t.Errorf("access keys used: runs %q, exports %q", s3.keyID("runs"), s3.keyID("exports"))
	}
	noSecretIn(t, j.Dir, blockS3Secret, daemonS3Secret)

	// A bucket that does not exist.
	def.Blocks = client.Blocks{downloadReport(), toBucket("nope")}
	j = job(t, def, params)
	res = e.Execute(t.Context(), j, &progress{})
	failedWith(t, res, "a missing bucket", `Block "to_bucket" (file_upload) failed`, `the bucket "nope" does not exist`)
	noSecretIn(t, j.Dir, blockS3Secret, daemonS3Secret)

	// An access key the service does not know.
	wrongKey := toBucket("exports")
	wrongKey.AWSAccessKeyID = "AKIAWRONG"
	def.Blocks = client.Blocks{downloadReport(), wrongKey}
	j = job(t, def, params)
	res = e.Execute(t.Context(), j, &progress{})
	failedWith(t, res, "an unknown access key", `Block "to_bucket" (file_upload) failed`, "refused the access key (InvalidAccessKeyId")
	noSecretIn(t, j.Dir, blockS3Secret, daemonS3Secret)

	// A path that names no file of the run.
	def.Blocks = client.Blocks{downloadReport(), &client.UploadToS3Block{BlockBase: base("one_file"), Path: "invoice.pdf"}}
	res = e.Execute(t.Context(), job(t, def, params), &progress{})
	failedWith(t, res, "a file the run lacks", `Block "one_file" (upload_to_s3) failed`, `path "invoice.pdf" is not a file this run downloaded (its files: `+testsite.ReportFilename+")")

	// A URL that answers 404.
	def.Blocks = client.Blocks{&client.DownloadToS3Block{BlockBase: base("fetch"), URL: "{{ site }}/files/missing.pdf"}}
	res = e.Execute(t.Context(), job(t, def, params), &progress{})
	failedWith(t, res, "a missing file", `Block "fetch" (download_to_s3) failed`, "missing.pdf", "answered HTTP 404")

	// Storage types this daemon lacks are refused before the run starts.
	for _, st := range []string{"azure", "google_drive"} {
		def.Blocks = client.Blocks{&client.FileUploadBlock{BlockBase: base("to_cloud"), StorageType: st}}
		res = e.Execute(t.Context(), job(t, def, params), &progress{})
		failedWith(t, res, st, "The agent cannot run", `block "to_cloud" (file_upload)`, "storage_type "+st+" is not supported")
	}

	// An unreachable service; a daemon without a bucket.
	uploads := s3.uploads
	dead := newEngine(t, engine.Config{S3: blocks.S3Config{Endpoint: "http://" + deadAddr(t), Region: "us-east-1", PathStyle: true,
		AccessKeyID: "AKIADAEMON", SecretAccessKey: daemonS3Secret}})
	def.Parameters = []client.Parameter{stringParam("site"), stringParam("folder")}
	def.Blocks = client.Blocks{downloadReport(), &client.FileUploadBlock{BlockBase: base("to_bucket"), S3Bucket: "runs"}}
	j = job(t, def, params)
	res = dead.Execute(t.Context(), j, &progress{})
	failedWith(t, res, "an unreachable service", `Block "to_bucket" (file_upload) failed`, "cannot be reached")
	noSecretIn(t, j.Dir, daemonS3Secret)
	def.Blocks = client.Blocks{&client.UploadToS3Block{BlockBase: base("to_daemon")}}
	res = dead.Execute(t.Context(), job(t, def, params), &progress{})
	failedWith(t, res, "no bucket", `Block "to_daemon" (upload_to_s3) failed`, "--s3-bucket")
	if s3.uploads != uploads {
		t.Errorf("the fake S3 received %d more uploads", s3.uploads-uploads)
	}
}

const sftpPassword = "sftp-pa55word-secret"

// TestStorageSFTP: file_upload writes the run's download to an SFTP
// server on loopback, signing in with a password credential or a private
// key, the server vouched for by the block's sftp_host_key (a public key
// or its fingerprint) or the daemon's known_hosts file. A wrong password,
// a server nothing vouches for, a host key other than the block's and an
// unreachable server fail the block with the cause; before the host key
// is vouched for, no password is sent.
func TestStorageSFTP(t *testing.T) {
	needBrowser(t)
	site := testsite.Start(t)
	_, clientKey, _ := ed25519.GenerateKey(rand.Reader)
	clientPub, _ := ssh.NewPublicKey(clientKey.Public())
	srv, err := sftptest.Start("127.0.0.1:0", "robot", sftpPassword, sftptest.WithClientKey(clientPub))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	host, portText, _ := net.SplitHostPort(srv.Addr())
	port, _ := strconv.Atoi(portText)
	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	e := newEngine(t, engine.Config{
		Vault: vault{
			"cred_sftp":  &client.PasswordCredential{Username: "robot", Password: sftpPassword},
			"cred_wrong": &client.PasswordCredential{Username: "robot", Password: "not-the-password"},
		},
		S3: blocks.S3Config{KnownHostsFile: knownHosts},
	})
	hostLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(srv.HostKey())))
	upload := func(hostKey string) *client.FileUploadBlock {
		return &client.FileUploadBlock{BlockBase: base("to_sftp"), StorageType: "sftp",
			SFTPHost: host, SFTPPort: &port, SFTPUsername: "{{ sftp_login.username }}", SFTPPassword: "{{ sftp_login.password }}",
			SFTPRemotePath: "/uploads/daily", SFTPHostKey: hostKey}
	}
	def := func(cred string, b *client.FileUploadBlock) client.WorkflowDefinition {
		return client.WorkflowDefinition{
			Parameters: []client.Parameter{stringParam("site"), {Key: "sftp_login", ParameterType: client.ParameterTypeCredential, CredentialID: cred}},
			Blocks:     client.Blocks{downloadReport(), b},
		}
	}
	params := map[string]any{"site": site.URL("")}
	run := func(d client.WorkflowDefinition) (*executor.Job, executor.Result) {
		j := job(t, d, params)
		return j, e.Execute(t.Context(), j, &progress{})
	}

	// A password credential; the host key as known_hosts writes it.
	j, res := run(def("cred_sftp", upload(hostLine)))
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("%s: %s", res.Status, res.FailureReason)
	}
	remote := "/uploads/daily/" + testsite.ReportFilename
	if got, _ := outputOf(t, res)["to_sftp_output"].([]any); len(got) != 1 || got[0] != "sftp://"+srv.Addr()+remote {
		t.Errorf("to_sftp_output %v, want [sftp://%s%s]", outputOf(t, res)["to_sftp_output"], srv.Addr(), remote)
	}
	if b, err := srv.ReadFile(remote); err != nil || string(b) != testsite.ReportCSV {
		t.Errorf("the server holds %q (%v)", b, err)
	}
	noSecretIn(t, j.Dir, sftpPassword)

	// A private key (OpenSSH format); the host key's fingerprint; the
	// block's path as the folder.
	pemKey, err := ssh.MarshalPrivateKey(clientKey, "")
	if err != nil {
		t.Fatal(err)
	}
	b := upload(srv.Fingerprint())
	b.SFTPPassword, b.SFTPRemotePath, b.Path = "", "", "/by-key"
	b.SFTPPrivateKey = string(pem.EncodeToMemory(pemKey))
	_, res = run(def("cred_sftp", b))
	if res.Status != client.RunStatusCompleted {
		t.Fatalf("private key: %s: %s", res.Status, res.FailureReason)
	}
	if got, err := srv.ReadFile("/by-key/" + testsite.ReportFilename); err != nil || string(got) != testsite.ReportCSV {
		t.Errorf("private key: the server holds %q (%v)", got, err)
	}

	// A wrong password.
	j, res = run(def("cred_wrong", upload(hostLine)))
	failedWith(t, res, "a wrong password", `Block "to_sftp" (file_upload) failed`, `refused the sign-in of "robot"`)
	if strings.Contains(res.FailureReason, "not-the-password") {
		t.Errorf("the reason shows the password: %s", res.FailureReason)
	}
	noSecretIn(t, j.Dir, "not-the-password")

	// No sftp_host_key and no known_hosts entry: refused before signing in,
	// the fingerprint in the reason; with the server in known_hosts, done.
	before := srv.SignIns()
	_, res = run(def("cred_sftp", upload("")))
	failedWith(t, res, "an unknown host", "nothing vouches for the host key", srv.Fingerprint(), knownHosts)
	if srv.SignIns() != before {
		t.Errorf("the daemon signed in to a server nothing vouches for")
	}
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.Addr())}, srv.HostKey())
	if err := os.WriteFile(knownHosts, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, res = run(def("cred_sftp", upload("")))
	if res.Status != client.RunStatusCompleted {
		t.Errorf("known_hosts: %s: %s", res.Status, res.FailureReason)
	}

	// A host key other than the block's.
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, _ := ssh.NewPublicKey(otherPriv.Public())
	before = srv.SignIns()
	_, res = run(def("cred_sftp", upload(string(ssh.MarshalAuthorizedKey(otherPub)))))
	failedWith(t, res, "another host key", `Block "to_sftp" (file_upload) failed`, "not the one sftp_host_key gives")
	if srv.SignIns() != before {
		t.Errorf("the daemon signed in to a server whose key is not the block's")
	}

	// An unreachable server.
	deadHost, deadPort, _ := net.SplitHostPort(deadAddr(t))
	b = upload(hostLine)
	b.SFTPHost = deadHost
	p, _ := strconv.Atoi(deadPort)
	b.SFTPPort = &p
	_, res = run(def("cred_sftp", b))
	failedWith(t, res, "an unreachable server", `Block "to_sftp" (file_upload) failed`, "cannot be reached")
}
