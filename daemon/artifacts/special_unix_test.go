//go:build unix

package artifacts

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/abctl/abctl/client"
)

// testSpecialFiles checks that a named pipe is refused by Record and by the
// handler (opening one for reading would block).
func testSpecialFiles(t *testing.T, e *env, runDir string) {
	if err := syscall.Mkfifo(filepath.Join(runDir, "pipe.png"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := e.store.Record(testOrg, testRun, "pipe.png", client.ArtifactScreenshot); !errors.Is(err, ErrNotRegular) {
		t.Errorf("fifo: %v", err)
	}
	wantDetail(t, e.get(t, e.signer.URL(e.base, testOrg, testRun, "pipe.png", e.clock.in(DefaultLifetime))), 404)
}
