package sftptest

import (
	"io"
	"strings"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// TestServer: a client that trusts the host key and signs in writes a
// file, which ReadFile returns; a wrong password is refused and counted;
// a seed gives the same host key at every start; off-loopback addresses
// are refused.
func TestServer(t *testing.T) {
	seed := make([]byte, 32)
	written := make(chan string, 4)
	s, err := Start("127.0.0.1:0", "robot", "pw", WithHostKeySeed(seed), OnWrite(func(p string) { written <- p }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	dial := func(pw string) (*ssh.Client, error) {
		return ssh.Dial("tcp", s.Addr(), &ssh.ClientConfig{User: "robot", Auth: []ssh.AuthMethod{ssh.Password(pw)},
			HostKeyCallback: ssh.FixedHostKey(s.HostKey())})
	}
	if _, err := dial("wrong"); err == nil {
		t.Error("a wrong password signed in")
	}
	conn, err := dial("pw")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c, err := sftp.NewClient(conn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.MkdirAll("/in/box"); err != nil {
		t.Fatal(err)
	}
	f, err := c.Create("/in/box/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "hello, sftp")
	f.Close()
	if b, err := s.ReadFile("/in/box/a.txt"); err != nil || string(b) != "hello, sftp" {
		t.Errorf("ReadFile: %q, %v", b, err)
	}
	if s.SignIns() != 2 {
		t.Errorf("%d sign-ins counted, want 2", s.SignIns())
	}
	if len(written) != 1 || <-written != "/in/box/a.txt" {
		t.Error("OnWrite did not see the one file written")
	}
	again, err := Start("127.0.0.1:0", "robot", "pw", WithHostKeySeed(seed))
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if again.Fingerprint() != s.Fingerprint() || !strings.HasPrefix(s.Fingerprint(), "SHA256:") {
		t.Errorf("fingerprints %s and %s from one seed", again.Fingerprint(), s.Fingerprint())
	}
	if _, err := Start("0.0.0.0:0", "robot", "pw"); err == nil {
		t.Error("listening on every address")
	}
}
