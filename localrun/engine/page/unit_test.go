package page

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
)

func TestParseKeys(t *testing.T) {
	for _, c := range []struct {
		keys, key string
		mods      int64
		typ       input.DispatchKeyEventType
		text      string
	}{
		{"Enter", "Enter", 0, input.DispatchKeyEventTypeKeyDown, "\r"},
		{"enter", "Enter", 0, input.DispatchKeyEventTypeKeyDown, "\r"},
		{"Tab", "Tab", 0, input.DispatchKeyEventTypeRawKeyDown, ""},
		{"Shift+Tab", "Tab", 8, input.DispatchKeyEventTypeRawKeyDown, ""},
		{"Escape", "Escape", 0, input.DispatchKeyEventTypeRawKeyDown, ""},
		{"ArrowDown", "ArrowDown", 0, input.DispatchKeyEventTypeRawKeyDown, ""},
		{"Control+A", "a", 2, input.DispatchKeyEventTypeRawKeyDown, ""},
		{"ctrl+shift+k", "k", 10, input.DispatchKeyEventTypeRawKeyDown, ""},
		{"a", "a", 0, input.DispatchKeyEventTypeKeyDown, "a"},
		{"Space", " ", 0, input.DispatchKeyEventTypeKeyDown, " "},
		{"Control++", "+", 2, input.DispatchKeyEventTypeRawKeyDown, ""},
	} {
		evs, err := parseKeys(c.keys)
		if err != nil {
			t.Errorf("%q: %v", c.keys, err)
			continue
		}
		d, u := evs[0], evs[1]
		if d.Key != c.key || d.Modifiers&^8 != c.mods&^8 || d.Type != c.typ || d.Text != c.text || u.Type != input.DispatchKeyEventTypeKeyUp || u.Key != c.key {
			t.Errorf("%q: down %+v up %+v", c.keys, d, u)
		}
	}
	for _, bad := range []string{"", "Hyper+A", "LaunchRocket", "Control+", "\x01"} {
		if _, err := parseKeys(bad); !errors.Is(err, ErrUnknownKey) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"example.com/x":          "https://example.com/x",
		" http://127.0.0.1:8/a ": "http://127.0.0.1:8/a",
		"about:blank":            "about:blank",
	} {
		if got, err := NormalizeURL(in); err != nil || got != want {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "javascript:alert(1)", "ftp://x/", "http://"} {
		if _, err := NormalizeURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFailureMapping(t *testing.T) {
	res, err := failure("e3", fmt.Errorf("%w (Execution context was destroyed)", errNavRace))
	if err != nil || res.OK || !res.Navigated || !strings.Contains(res.Reason, "navigated") {
		t.Errorf("navigation race: %+v %v", res, err)
	}
	res, err = failure("e3", errRealmGone)
	if !errors.Is(err, ErrStaleID) || !strings.Contains(res.Reason, "e3") {
		t.Errorf("gone frame: %+v %v", res, err)
	}
	if !isNavMessage("Cannot find context with specified id") || isNavMessage("TypeError: x is undefined") {
		t.Errorf("isNavMessage")
	}
}

// The renderer keeps every element in the viewport and stays in budget.
func TestRenderBudget(t *testing.T) {
	obs := &Observation{URL: "http://h/p", Title: "T", Viewport: [2]float64{1000, 500}, PageSize: [2]float64{1000, 50000}}
	for i := 0; i < 3000; i++ {
		e := Element{ID: fmt.Sprintf("e%d", i+1), Tag: "button", Text: strings.Repeat("word ", 8), Rect: [4]float64{10, float64(i * 16), 100, 14}}
		e.InViewport = e.Rect[1] < 500
		if i%7 == 0 {
			e.Frame = "f1"
		}
		obs.Elements = append(obs.Elements, e)
	}
	obs.Frames = []Frame{{ID: "f1", URL: "http://other/"}}
	for _, budget := range []int{0, 20000, 4000} {
		o := *obs
		render(&o, ObserveOptions{Budget: budget})
		limit := budget
		if limit == 0 {
			limit = DefaultBudget
		}
		if len(o.Rendered) > limit || o.Truncated == 0 {
			t.Errorf("budget %d: %d chars, truncated %d", budget, len(o.Rendered), o.Truncated)
		}
		for _, e := range o.Elements {
			if e.InViewport && !strings.Contains(o.Rendered, "["+e.ID+"] ") {
				t.Fatalf("budget %d: %s in the viewport is missing", budget, e.ID)
			}
		}
		if !strings.Contains(o.Rendered, "below the viewport") {
			t.Errorf("budget %d: no hint", budget)
		}
	}
}

// TestRenderScrollLine: the header gives the scroll position of a page that
// scrolls, and says nothing of it for a page that fits in the viewport.
func TestRenderScrollLine(t *testing.T) {
	for _, tc := range []struct {
		name          string
		size, scrollY float64
		want          bool
	}{
		{"fits", 720, 0, false},
		{"taller", 2000, 0, true},
		{"scrolled", 2000, 600, true},
	} {
		obs := &Observation{URL: "http://h/p", Title: "T", Viewport: [2]float64{1280, 720}, Scroll: [2]float64{0, tc.scrollY}, PageSize: [2]float64{1280, tc.size},
			Elements: []Element{{ID: "e1", Tag: "button", Text: "Go", InViewport: true}}}
		render(obs, ObserveOptions{})
		if got := strings.Contains(obs.Rendered, "Viewport 1280x720, scrolled to y="); got != tc.want {
			t.Errorf("%s: scroll line shown %v, want %v:\n%s", tc.name, got, tc.want, obs.Rendered)
		}
	}
}

// TestElementLineIconContext: a derived icon name and the context of a
// repeated control are shown, marked as such, after the name.
func TestElementLineIconContext(t *testing.T) {
	for _, c := range []struct {
		e    Element
		want string
	}{
		{Element{ID: "e1", Tag: "span", Clickable: true, Icon: "trash"}, `[e1] clickable(span) icon="trash"`},
		{Element{ID: "e2", Tag: "span", Clickable: true, Text: "‹", Icon: "prev"}, `[e2] clickable(span) "‹" icon="prev"`},
		{Element{ID: "e3", Tag: "button", Text: "Select", Context: "umber 22 in stock"}, `[e3] button "Select" in="umber 22 in stock"`},
		{Element{ID: "e4", Tag: "a", Text: "Details", Context: "Lamp $18.00", Href: "http://h/lamp"}, `[e4] link "Details" in="Lamp $18.00" -> /lamp`},
		{Element{ID: "e5", Tag: "button", Text: "Go"}, `[e5] button "Go"`},
	} {
		if got := elementLine(&c.e, "http://h"); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
