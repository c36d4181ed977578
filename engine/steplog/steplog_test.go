package steplog

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/abctl/abctl/client"
)

func TestActionDescribe(t *testing.T) {
	a := Action{Type: "click", ID: "e5", Element: `[e5] button "Sign in"`, OK: true, Result: "loaded /account.html"}
	if got := a.Describe(); got != `click [e5] button "Sign in": ok, loaded /account.html` {
		t.Errorf("%q", got)
	}
	a = Action{Type: "input_text", ID: "e9", Text: "x", Result: "there is no element [e9]"}
	if got := a.Describe(); got != `input_text [e9] "x": FAILED, there is no element [e9]` {
		t.Errorf("%q", got)
	}
}

type counter struct{ steps int }

func (c *counter) Step(n int)        { c.steps = n }
func (c *counter) Screenshot(string) {}

// TestLimitAndHistory: steps are counted up to the limit, and every step
// started and ended is listed in its block's history.
func TestLimitAndHistory(t *testing.T) {
	p := &counter{}
	l := New(p, slog.New(slog.DiscardHandler), 2)
	s, err := l.Start("open", Action{Type: "goto_url", Text: "http://x/"})
	if err != nil {
		t.Fatal(err)
	}
	l.End(s, "http://x/", "", nil)
	s, _ = l.Start("open", Action{Type: "click", Text: "#a"})
	l.End(s, "", "", errors.New("no element matches"))
	if _, err := l.Start("open", Action{Type: "wait"}); !errors.Is(err, ErrLimit) {
		t.Errorf("a third step: %v", err)
	}
	if p.steps != 2 || l.Count() != 2 {
		t.Errorf("counted %d, reported %d", l.Count(), p.steps)
	}
	h := l.History("open")
	if len(h) != 2 || !strings.Contains(h[0], "goto_url") || !strings.Contains(h[1], "FAILED, no element matches") {
		t.Errorf("history %q", h)
	}
	if got := l.Summarize(client.RunStatusCompleted, ""); got != "Ran 2 steps." {
		t.Errorf("summary %q", got)
	}
}
