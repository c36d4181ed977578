package testsite_test

import (
	"testing"

	"github.com/abctl/abctl/internal/sftptest"
	"github.com/abctl/abctl/internal/testsite"
)

// TestSFTPHostKeyFingerprint: the fingerprint agents name is the one the
// seed gives.
func TestSFTPHostKeyFingerprint(t *testing.T) {
	s, err := sftptest.Start("127.0.0.1:0", testsite.SFTPUser, testsite.SFTPPassword, sftptest.WithHostKeySeed(testsite.SFTPHostKeySeed()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Fingerprint(); got != testsite.SFTPHostKeyFingerprint {
		t.Errorf("the seed gives %s; SFTPHostKeyFingerprint says %s", got, testsite.SFTPHostKeyFingerprint)
	}
}
