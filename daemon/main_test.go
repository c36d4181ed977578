//go:build !windows

package daemon_test

import (
	"os"
	"testing"

	"github.com/abctl/abctl/internal/pgtest"
)

// TestMain runs the tests, or, in a subprocess started by
// TestCrashRecovery, the daemon that test kills (crash_test.go). The
// tests on PostgreSQL share one server (pgtest.Shared), which pgtest.Main
// stops after them.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		os.Exit(crashDaemonProcess(dir))
	}
	os.Exit(pgtest.Main(m))
}
