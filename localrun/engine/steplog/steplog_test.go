package steplog

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
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

// TestRefusalsBounded: a refusal is listed once however often it comes,
// and beyond MaxRefusals lines only counted; the log is written with them.
func TestRefusalsBounded(t *testing.T) {
	l := New(&counter{}, slog.New(slog.DiscardHandler), 0)
	for range 100 {
		l.AddRefusal("refused to reach 127.0.0.1:8780: the daemon's API is never reachable by a run")
	}
	if got := l.Refusals(); len(got) != 1 || l.Empty() {
		t.Fatalf("refusals %q, empty %v", got, l.Empty())
	}
	for i := range MaxRefusals + 10 {
		l.AddRefusal("refused to reach 10.0.0." + strconv.Itoa(i) + ":80: a private address is refused")
	}
	if got := l.Refusals(); len(got) != MaxRefusals {
		t.Errorf("%d refusals listed, want %d", len(got), MaxRefusals)
	}
	dir := t.TempDir()
	if err := l.Write(dir, FileName); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	var doc struct {
		Refused     []string `json:"refused"`
		RefusedMore int      `json:"refused_more"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Refused) != MaxRefusals || doc.RefusedMore != 11 {
		t.Errorf("written: %d lines, %d more (%v)", len(doc.Refused), doc.RefusedMore, err)
	}
}
