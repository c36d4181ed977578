package python

import (
	"strings"
	"testing"
)

func TestCodeOnly(t *testing.T) {
	for src, want := range map[string]string{
		"x = page  # page here\n":          "x = page  " + strings.Repeat(" ", len("# page here")) + "\n",
		"s = 'page'\nprint(\"a#b\")":       "s = '    '\nprint(\"   \")",
		"doc = \"\"\"page\nawait\"\"\"\nx": "doc = \"\"\"    \n     \"\"\"\nx",
		"'unterminated\npage":              "'            \npage",
	} {
		if got := CodeOnly(src); got != want {
			t.Errorf("CodeOnly(%q) = %q, want %q", src, got, want)
		}
	}
}
