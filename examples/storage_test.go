package examples

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/sftptest"
	"github.com/abctl/abctl/internal/testsite"
)

// testSFTPUpload: the storage example fetches the site's report and
// uploads it to the SFTP server of the test site's account, which the test
// starts with the same host key (on a port of its own: the test runs a
// copy of the file with that port), without the model.
func testSFTPUpload(t *testing.T, e *exampleEnv, file string, cmds []string) {
	if params(t, cmds[0])["sftp_password"] != testsite.SFTPPassword {
		t.Fatalf("the command does not give the test site's SFTP password: %s", cmds[0])
	}
	server, err := sftptest.Start("127.0.0.1:0", testsite.SFTPUser, testsite.SFTPPassword, sftptest.WithHostKeySeed(testsite.SFTPHostKeySeed()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "sftp_host_key: "+server.Fingerprint()) {
		t.Fatalf("%s does not name the test site's SFTP host key %s", file, server.Fingerprint())
	}
	_, port := server.HostPort()
	copied := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(copied, []byte(strings.Replace(string(text), "sftp_port: 2222", fmt.Sprintf("sftp_port: %d", port), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	rel := "examples/agents/" + filepath.Base(file)
	cmd := strings.Replace(cmds[0], rel, copied, 1)
	if cmd == cmds[0] {
		t.Fatalf("the command does not name %s: %s", rel, cmds[0])
	}
	before := len(e.model.Calls())
	res, r := e.abctlRun(t, cmd)
	if res.code != 0 || r.Status != client.RunStatusCompleted {
		t.Fatalf("run %s: %s\n%s", r.Status, r.GetFailureReason(), res)
	}
	if n := len(e.model.Calls()) - before; n != 0 {
		t.Errorf("the model-free example called the model %d times", n)
	}
	want, err := os.ReadFile(filepath.Join(siteDir, "files", "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := server.ReadFile("/reports/report.csv"); err != nil || string(got) != string(want) {
		t.Errorf("the server holds %q (%v), want the site's report", got, err)
	}
	var out struct {
		Upload []string `json:"upload_report_output"`
	}
	if err := r.DecodeOutput(&out); err != nil || len(out.Upload) != 1 || out.Upload[0] != fmt.Sprintf("sftp://%s/reports/report.csv", server.Addr()) {
		t.Errorf("upload_report_output %v (%v)", out.Upload, err)
	}
	if strings.Contains(string(r.Output), testsite.SFTPPassword) {
		t.Error("the run's output shows the SFTP password")
	}
}
