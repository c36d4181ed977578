//go:build !windows

package cluster_test

import (
	"os"
	"testing"

	"github.com/abctl/abctl/internal/pgtest"
)

// TestMain runs the tests, or, in a subprocess the tests start
// (startDaemon), one daemon of the cluster (daemonProcess).
func TestMain(m *testing.M) {
	if os.Getenv(envDataDir) != "" {
		os.Exit(daemonProcess())
	}
	os.Exit(pgtest.Main(m))
}
