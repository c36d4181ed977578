package text

import "testing"

func TestClip(t *testing.T) {
	if got := Clip("héllo wörld", 4); got != "h…" {
		t.Errorf("Clip %q", got)
	}
	if got := Clip("short", 10); got != "short" {
		t.Errorf("Clip %q", got)
	}
}

func TestOneLineAndUpperFirst(t *testing.T) {
	if got := OneLine(" a \n\tb  c "); got != "a b c" {
		t.Errorf("OneLine %q", got)
	}
	if got := UpperFirst("the page"); got != "The page" {
		t.Errorf("UpperFirst %q", got)
	}
}
