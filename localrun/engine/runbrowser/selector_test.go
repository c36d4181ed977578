package runbrowser

import (
	"testing"

	"github.com/abctl/abctl/localrun/engine/page"
)

func TestQuoting(t *testing.T) {
	for in, want := range map[string]string{
		`Sign in`:         `"Sign in"`,
		`say "hi"`:        `'say "hi"'`,
		`it's "a" thing'`: `concat("it's ", '"', "a", '"', " thing'")`,
	} {
		if got := xpathString(in); got != want {
			t.Errorf("xpathString(%q) = %s, want %s", in, got, want)
		}
	}
	if got := cssString(`a"b\c`); got != `"a\"b\\c"` {
		t.Errorf("cssString = %s", got)
	}
	c := selectorCandidates(&page.Element{Tag: "input", Name: "email", Label: "Email", Placeholder: "you@x"})
	if len(c) < 3 || c[0] != `input[name="email"]` {
		t.Errorf("candidates %q", c)
	}
}
