package version

import (
	"bytes"
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/buildinfo"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
)

func TestVersion(t *testing.T) {
	saved := [3]string{buildinfo.Version, buildinfo.Commit, buildinfo.Date}
	t.Cleanup(func() { buildinfo.Version, buildinfo.Commit, buildinfo.Date = saved[0], saved[1], saved[2] })
	buildinfo.Version, buildinfo.Commit, buildinfo.Date = "1.2.3", "0123abc", "2026-01-31T15:20:42Z"

	var b bytes.Buffer
	if err := Print(&b); err != nil {
		t.Fatal(err)
	}
	if want := "abctl 1.2.3 (commit 0123abc, built 2026-01-31T15:20:42Z)\n"; b.String() != want {
		t.Errorf("%q, want %q", b.String(), want)
	}
	cmd := NewCmdVersion()
	if err := cmdtest.Exec(cmd, "extra"); !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "takes no arguments") {
		t.Errorf("version extra: %v", err)
	}
}
