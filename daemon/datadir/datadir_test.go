package datadir_test

import (
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/datadir"
)

// The SDK's default address is the daemon's: the SDK, a leaf, cannot import
// this package, so this test keeps the two the same.
func TestSDKDefaultIsTheDaemon(t *testing.T) {
	if want := "http://" + datadir.DefaultAddr; client.DefaultBaseURL != want {
		t.Errorf("client.DefaultBaseURL = %q, the daemon listens at %q", client.DefaultBaseURL, want)
	}
}
