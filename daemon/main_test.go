//go:build !windows

package daemon_test

import (
	"os"
	"testing"
)

// TestMain runs the tests, or, in a subprocess started by
// TestCrashRecovery, the daemon that test kills (crash_test.go).
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		os.Exit(crashDaemonProcess(dir))
	}
	os.Exit(m.Run())
}
