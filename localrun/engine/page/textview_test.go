package page

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// longPage is a page of 200 sections under a fixed header. Every section is
// a heading "Details" (the same text 200 times) and a line "Part N: ...";
// sizes are fixed so that a test can scroll a given section to a given
// place.
func longPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Long</title><style>
body { margin: 0; font: 14px sans-serif; }
header { position: fixed; top: 0; left: 0; right: 0; height: 40px; background: #eee; }
main { padding-top: 40px; }
h2, p { margin: 0; height: 30px; font-size: 14px; }
</style></head><body>
<header>Shop header <a href="/">Home</a></header>
<main>
`)
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "<section id=\"s%d\"><h2>Details</h2><p>Part %d: the text of part %d.</p></section>\n", i, i, i)
	}
	b.WriteString("</main></body></html>\n")
	return b.String()
}

// TestTextAroundViewport: after scrolling far down, the observation says
// where the viewport's text starts (not at the fixed header, which is at
// the top of the document's text, and at the right one of 200 identical
// headings), and a text limit keeps a window around the viewport instead
// of the top of the document, counting what it left out.
func TestTextAroundViewport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, longPage())
	}))
	defer srv.Close()
	tab, p := newTab(t)
	goTo(t, tab, p, srv.URL)

	obs := observe(t, tab, p, ObserveOptions{})
	if obs.TextAt != 0 || obs.TextAbove != 0 || obs.TextBelow != 0 || !strings.HasPrefix(obs.Text, "Shop header") {
		t.Fatalf("unscrolled: TextAt %d, above %d, below %d, text %.40q", obs.TextAt, obs.TextAbove, obs.TextBelow, obs.Text)
	}

	// Section 120's heading just below the header: 40 + 60*120 - 50.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](`window.scrollTo(0, 40 + 60 * 120 - 50), true`)); err != nil {
		t.Fatal(err)
	}
	obs = observe(t, tab, p, ObserveOptions{})
	if obs.Scroll[1] < 7000 {
		t.Fatalf("the page did not scroll: %v", obs.Scroll)
	}
	if got := obs.Text[obs.TextAt:]; !strings.HasPrefix(got, "Details\n\nPart 120:") {
		t.Errorf("the viewport's text starts at %d: %.60q", obs.TextAt, got)
	}
	if obs.TextAbove != 0 || obs.TextBelow != 0 {
		t.Errorf("nothing was cut, yet above %d, below %d", obs.TextAbove, obs.TextBelow)
	}

	// A text limit far smaller than the page's text: a window around the
	// viewport, a quarter of it above.
	whole := obs
	obs = observe(t, tab, p, ObserveOptions{TextLimit: 2000})
	if len(obs.Text) > 2000 || obs.TextAbove+obs.TextAt != whole.TextAt || obs.TextAbove+len(obs.Text)+obs.TextBelow != len(whole.Text) {
		t.Errorf("window: %d characters, %d above, %d below", len(obs.Text), obs.TextAbove, obs.TextBelow)
	}
	if got := obs.Text[obs.TextAt:]; !strings.HasPrefix(got, "Details\n\nPart 120:") || obs.TextAt < 300 || obs.TextAt > 600 {
		t.Errorf("window: the viewport's text starts at %d: %.60q", obs.TextAt, got)
	}
	if strings.Contains(obs.Text, "Shop header") || !strings.Contains(obs.Text, "Part 119:") {
		t.Errorf("window: %.200q", obs.Text)
	}
}
