package executor_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/abctl/abctl/localrun/executor"
)

// Names a run's file may and may not have.
var badNames = []string{
	"", ".", "..", "../x", "x/..", "a/b", `a\b`, "/abs", `C:\x`, "c:x", ".hidden", ".png",
	"a\x00b", "x..y", "trailing.", "trailing ", "ctl\x01.txt", "tab\t.txt", "nl\n.txt", "del\x7f",
	"bidi\u202egnp.exe", "lrm\u200e.png", "c1\u0085.txt", "\xff.png", "ok\xc0\xae.png",
	strings.Repeat("a", executor.MaxFileNameLen+1),
}

var goodNames = []string{
	"a", "shot.png", "a b.png", "ümlaut ☃.txt", "100%.txt", "q?x#y.json", "name-with_all.sorts+of~chars!",
	"%2e%2e", "x.y.z", "日本語.pdf", strings.Repeat("a", executor.MaxFileNameLen),
}

func TestValidFileName(t *testing.T) {
	for _, n := range badNames {
		if executor.ValidFileName(n) {
			t.Errorf("executor.ValidFileName(%q) = true", n)
		}
	}
	for _, n := range goodNames {
		if !executor.ValidFileName(n) {
			t.Errorf("executor.ValidFileName(%q) = false", n)
		}
	}
}

// TestCutFileName: a name over the limit loses the end of its stem, never
// its extension, and is never cut inside a UTF-8 sequence.
func TestCutFileName(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	snow := strings.Repeat("☃", 100) // 300 bytes, 3 a rune
	for _, c := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"short enough", "report.pdf", 255, "report.pdf"},
		{"exactly the limit", a(251) + ".pdf", 255, a(251) + ".pdf"},
		{"one byte over", a(252) + ".pdf", 255, a(251) + ".pdf"},
		{"far over", a(1000) + ".docx", 255, a(250) + ".docx"},
		{"double extension", a(300) + ".tar.gz", 255, a(248) + ".tar.gz"},
		{"no extension", a(300), 255, a(255)},
		{"dot file style", "." + a(300), 20, "." + a(19)},
		{"an extension too long to be one", "x." + a(300), 20, "x." + a(18)},
		{"an extension with a space", a(30) + ".not an ext", 20, a(20)},
		{"multi-byte stem: no half rune", snow + ".pdf", 255, strings.Repeat("☃", 83) + ".pdf"},
		{"multi-byte, no extension", snow, 10, "☃☃☃"},
		{"dots and spaces before the cut", a(10) + " . . ." + a(300) + ".csv", 20, a(10) + ".csv"},
		{"the limit of the engine's saved files", "日本語" + a(300) + ".xlsx", 200, "日本語" + a(186) + ".xlsx"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := executor.CutFileName(c.in, c.max)
			if got != c.want {
				t.Errorf("CutFileName(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
			}
			if len(got) > c.max || !utf8.ValidString(got) {
				t.Errorf("CutFileName(%q, %d) = %q: %d bytes, valid UTF-8 %v", c.in, c.max, got, len(got), utf8.ValidString(got))
			}
		})
	}
}
