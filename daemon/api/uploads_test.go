package api

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/abctl/abctl/localrun/executor"
)

// TestUploadFileName: the name a client gives its upload is kept as its
// last path element, cleaned, and cut to executor.MaxFileNameLen bytes with
// its extension kept (a security review found 300-byte names losing it).
func TestUploadFileName(t *testing.T) {
	a := func(n int) string { return strings.Repeat("a", n) }
	for _, c := range []struct{ in, want string }{
		{"invoices.csv", "invoices.csv"},
		{`..\reports/invoices.csv`, "invoices.csv"},
		{"/", "upload"},
		{"a:b\x01c.txt", "a_b_c.txt"},
		{a(251) + ".pdf", a(251) + ".pdf"},
		{a(300) + ".pdf", a(251) + ".pdf"},
		{a(300) + ".tar.gz", a(248) + ".tar.gz"},
		{a(300), a(255)},
		{strings.Repeat("é", 200) + ".xlsx", strings.Repeat("é", 125) + ".xlsx"},
		{"dir/" + strings.Repeat("日", 100) + ".json", strings.Repeat("日", 83) + ".json"},
	} {
		got := uploadFileName(c.in)
		if got != c.want {
			t.Errorf("uploadFileName(%.40q…) = %q, want %q", c.in, got, c.want)
		}
		if !executor.ValidFileName(got) || !utf8.ValidString(got) {
			t.Errorf("uploadFileName(%.40q…) = %q, which is not a valid file name", c.in, got)
		}
	}
}
