package agent

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/abctl/abctl/localrun/engine/page"
)

// longText is a page text of n numbered lines and the byte offset of line k.
func longText(n, k int) (string, int) {
	var b strings.Builder
	at := 0
	for i := 0; i < n; i++ {
		if i == k {
			at = b.Len()
		}
		fmt.Fprintf(&b, "Line %d of the page, with a few words.\n", i)
	}
	return b.String(), at
}

// TestVisibleTextAroundViewport: the planning prompt's text is a window
// around the viewport (some text above it, marked, then the text in view
// and below), not the top of the document; the cuts are counted, with the
// characters the page package left out; a text that fits is whole, with
// the viewport marked where it starts, and an unscrolled page has no marks.
func TestVisibleTextAroundViewport(t *testing.T) {
	full, at := longText(400, 300)
	obs := &page.Observation{Rendered: "Page: Long\n", Text: full, TextAt: at, TextAbove: 1000, TextBelow: 50}
	var b promptBuilder
	b.pageBlock("1a2b3c4d", obs, 10000, planTextBudget, true)
	s := b.String()
	_, view, found := strings.Cut(s, "(the viewport starts here)\n")
	if !found || !strings.HasPrefix(view, "  Line 300 of the page") {
		t.Fatalf("the viewport's text is not marked where it starts:\n%s", s)
	}
	if !strings.Contains(s, "  Line 290 of the page") || strings.Contains(s, "Line 200 of") || strings.Contains(s, "Line 399 of") {
		t.Errorf("the window is not around the viewport:\n%s", s)
	}
	// The counts: what this prompt left out plus what the page package did.
	first := strings.Index(s, "  Line ")
	var n int
	fmt.Sscanf(s[first:], "  Line %d ", &n)
	above := utf8.RuneCountInString(full[:strings.Index(full, fmt.Sprintf("Line %d of", n))]) + 1000
	if want := fmt.Sprintf("… (%s characters above)\n  Line %d of", thousands(above), n); !strings.Contains(s, want) {
		t.Errorf("want %q in:\n%s", want, s)
	}
	if !strings.Contains(s, " characters below)\n</page-") {
		t.Errorf("the cut below is not marked:\n%s", s)
	}
	text := s[strings.Index(s, "Visible text of the page:"):]
	if lines := strings.Count(text, "\n  Line "); lines*len("Line 300 of the page, with a few words.") > planTextBudget {
		t.Errorf("%d lines of text exceed the budget of %d", lines, planTextBudget)
	}

	// A text that fits is kept whole, the viewport marked.
	short, at := longText(20, 12)
	obs = &page.Observation{Text: short, TextAt: at}
	b = promptBuilder{}
	b.pageBlock("1a2b3c4d", obs, 10000, planTextBudget, true)
	s = b.String()
	if !strings.Contains(s, "  Line 0 of") || !strings.Contains(s, "  Line 11 of the page, with a few words.\n(the viewport starts here)\n  Line 12 of") ||
		!strings.Contains(s, "  Line 19 of") || strings.Contains(s, "characters above") || strings.Contains(s, "characters below") {
		t.Errorf("a short text:\n%s", s)
	}
	// Unscrolled: no marks.
	obs.TextAt = 0
	b = promptBuilder{}
	b.pageBlock("1a2b3c4d", obs, 10000, planTextBudget, true)
	if s := b.String(); strings.Contains(s, "(the viewport") || strings.Contains(s, "characters") {
		t.Errorf("an unscrolled page:\n%s", s)
	}
	if thousands(1234567) != "1,234,567" || thousands(999) != "999" {
		t.Errorf("thousands: %s %s", thousands(1234567), thousands(999))
	}
}

// TestVisibleTextJustOverBudget: a text a little longer than the budget is
// kept whole, its last line (a status line, say) included.
func TestVisibleTextJustOverBudget(t *testing.T) {
	var sb strings.Builder
	for i := 0; sb.Len() < 2980; i++ {
		fmt.Fprintf(&sb, "Setting %d: on\n", i)
	}
	sb.WriteString("Settings saved.\n")
	obs := &page.Observation{Rendered: "Page: s\n", Text: sb.String()}
	var b promptBuilder
	b.visibleText(obs, 3000)
	s := b.String()
	if !strings.Contains(s, "  Settings saved.") || strings.Contains(s, "characters below") {
		t.Errorf("a text %d bytes long, 3,000 of budget:\n%s", len(obs.Text), s)
	}
}
