package runbrowser

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/localrun/executor"
)

// TestSafeName: a saved or downloaded file's name over 200 bytes (the room
// left for " (999)") is cut in its stem, its extension kept.
func TestSafeName(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../x/report.pdf", "report.pdf"},
		{a(300) + ".pdf", a(196) + ".pdf"},
		{a(300) + ".tar.gz", a(193) + ".tar.gz"},
		{strings.Repeat("ü", 150) + ".csv", strings.Repeat("ü", 98) + ".csv"},
		{"...", "file"},
	} {
		got := safeName(c.in, "file")
		if got != c.want || !executor.ValidFileName(got) {
			t.Errorf("safeName(%.40q…) = %q, want %q", c.in, got, c.want)
		}
	}
}
