package executor_test

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/executor"
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
