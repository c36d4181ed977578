package daemoncmd

import (
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
)

// TestMaxUploadSize: --max-upload-size takes bytes or a unit and reaches
// the daemon's configuration with the version of abctl; a bad size is a
// usage error.
func TestMaxUploadSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "100MiB": 100 << 20, "2gb": 2_000_000_000, "512K": 512 << 10, " 7 B": 7, "0": 0,
	} {
		f, _ := cmdtest.NewFactory(t, nil)
		var got *DaemonOptions
		err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { got = o; return nil }), "--data-dir", t.TempDir(), "--max-upload-size", in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got.Config.MaxUploadSize != want || got.Config.Version == "" {
			t.Errorf("%q: MaxUploadSize %d, Version %q; want %d", in, got.Config.MaxUploadSize, got.Config.Version, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "ten", "1.5GiB", "9999999999GiB"} {
		f, _ := cmdtest.NewFactory(t, nil)
		err := cmdtest.Exec(NewCmdDaemon(f, func(o *DaemonOptions) error { return nil }), "--data-dir", t.TempDir(), "--max-upload-size", in)
		if !cmdtest.IsUsage(err) {
			t.Errorf("%q: %v, want a usage error", in, err)
		}
	}
	var b byteSize = 100 << 20
	if b.String() != "100MiB" {
		t.Errorf("String %q", b.String())
	}
}
