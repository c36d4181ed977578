package storage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/egress/egresstest"
	"github.com/abctl/abctl/internal/sftptest"
)

// sharedGuard is the guard of an organization of a daemon serving
// several, whose API listens at apiAddr (a test server playing it).
func sharedGuard(t *testing.T, apiAddr string) *egress.Guard {
	return egresstest.Shared(t, nil, apiAddr, "the daemon's API").For("o_1")
}

// singleGuard is the guard of a daemon serving one organization, which
// reaches loopback.
func singleGuard() *egress.Guard { return egresstest.Single().For("o_1") }

// wantRefusal checks that err names the target, the address and the rule.
func wantRefusal(t *testing.T, what string, err error, target, addr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: not refused", what)
	}
	t.Logf("%s: %v", what, err)
	for _, want := range []string{"refused to reach " + target, addr, "the daemon's API is never reachable by a run"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not say %q", what, err, want)
		}
	}
}

// TestSFTPThroughGuard: an SFTP server a block names is refused on the
// daemon's address, reached by a single organization's daemon.
func TestSFTPThroughGuard(t *testing.T) {
	srv, err := sftptest.Start("127.0.0.1:0", "robot", "pw")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host, port := srv.HostPort()
	file := filepath.Join(t.TempDir(), "report.csv")
	if err := os.WriteFile(file, []byte("a,b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := SFTPTarget{Host: host, Port: port, User: "robot", Password: "pw", Dir: "/up",
		HostKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(srv.HostKey())))}
	target.Dial = sharedGuard(t, srv.Addr()).DialContext
	_, err = PutSFTP(t.Context(), target, []string{file})
	wantRefusal(t, "sftp", err, srv.Addr(), srv.Addr())
	if srv.SignIns() != 0 {
		t.Errorf("%d sign-ins", srv.SignIns())
	}
	target.Dial = singleGuard().DialContext
	if _, err := PutSFTP(t.Context(), target, []string{file}); err != nil {
		t.Fatal(err)
	}
	if b, err := srv.ReadFile("/up/report.csv"); err != nil || string(b) != "a,b\n" {
		t.Errorf("the server holds %q (%v)", b, err)
	}
}
