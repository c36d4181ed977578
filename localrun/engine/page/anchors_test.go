package page

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

//go:embed testdata/anchors.html
var anchorsPage string

// hostilePage replaces the built-ins that the anchor and text operations
// use, in the page's own world.
const hostilePage = `<!doctype html><html><head><title>Hostile</title></head><body>
<ul id="list"><li><a href="#a" id="first" data-testid="first-link">First</a></li><li><span>$42.50</span></li></ul>
<input id="q" value="query">
<script>
Array.prototype.map = function () { throw new Error('map is broken'); };
Array.from = function () { throw new Error('from is broken'); };
JSON.stringify = function () { return '"hacked"'; };
Element.prototype.querySelectorAll = function () { return []; };
Element.prototype.querySelector = function () { return null; };
Document.prototype.querySelectorAll = function () { return []; };
Document.prototype.querySelector = function () { return null; };
Element.prototype.getBoundingClientRect = function () { return { width: 0, height: 0 }; };
CSS.escape = function () { return 'x'; };
String.prototype.replace = function () { return ''; };
</script></body></html>`

func num(v float64) *float64 { return &v }

func TestAnchors(t *testing.T) {
	base := serveHTML(t, map[string]string{"/": anchorsPage, "/other": "<!doctype html><p>elsewhere</p>"})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")

	cases := []struct {
		sel  string
		want Anchors
	}{
		{"#home-link", Anchors{DOMID: "home-link", CSSPath: "#home-link"}},
		// Generated ids are no anchors; the path starts at the nearest
		// usable id.
		{"#ember123", Anchors{CSSPath: "#top > nav > a:nth-of-type(2)"}},
		{`[id="react-select-3-input"]`, Anchors{CSSPath: "#top > nav > a:nth-of-type(3)"}},
		{`[id=":r1:"]`, Anchors{CSSPath: "#top > nav > a:nth-of-type(4)"}},
		{`[id^="a-very-long"]`, Anchors{CSSPath: "#top > nav > a:nth-of-type(5)"}},
		// Test ids: the first non-empty one in the order of preference.
		{`[data-testid="item-link"]`, Anchors{TestAttr: "data-testid", TestID: "item-link", CSSPath: "#cart > li:nth-of-type(1) > a"}},
		{`[data-qa="second"]`, Anchors{TestAttr: "data-qa", TestID: "second", CSSPath: "#cart > li:nth-of-type(2) > a"}},
		{"#cart span", Anchors{CSSPath: "#cart > li:nth-of-type(3) > span"}},
		// An id that two elements share is no anchor.
		{".dup:nth-of-type(2) > p", Anchors{CSSPath: "#main > div:nth-of-type(2) > p"}},
		// Deeper than 6 steps below #main: the last 6 steps alone are
		// the same for both deep spans, so neither has a path.
		{".deep-a span", Anchors{}},
		{".deep-b span", Anchors{}},
		{"#products tr:nth-of-type(3) td:nth-of-type(2)", Anchors{CSSPath: "#products > tbody > tr:nth-of-type(3) > td:nth-of-type(2)"}},
		{"#gt b", Anchors{CSSPath: "#gt > em > b"}},
		{"#main", Anchors{DOMID: "main", CSSPath: "#main"}},
		{"body > script", Anchors{CSSPath: "body > script"}},
	}
	for _, c := range cases {
		id := resolve(t, tab, p, c.sel)
		got, err := p.Anchors(tctx(t, tab), id)
		if err != nil {
			t.Fatalf("anchors of %s: %v", c.sel, err)
		}
		if got != c.want {
			t.Errorf("anchors of %s:\n got %+v\nwant %+v", c.sel, got, c.want)
			continue
		}
		if got.CSSPath == "" {
			continue
		}
		// The path names the same element again.
		again, err := p.ResolveNow(tctx(t, tab), got.CSSPath)
		if err != nil || again != id {
			t.Errorf("ResolveNow(%q) = %s, %v; want %s", got.CSSPath, again, err, id)
		}
	}

	// An element in a shadow root: its path is relative to the root.
	buy := resolve(t, tab, p, "#buy")
	got, err := p.Anchors(tctx(t, tab), buy)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Anchors{DOMID: "buy", TestAttr: "data-cy", TestID: "buy", CSSPath: "#buy", InShadow: true}); got != want {
		t.Errorf("anchors in a shadow root:\n got %+v\nwant %+v", got, want)
	}

	// An element in a same-origin frame: its path is one of the frame's
	// document, and Frame says which frame.
	obs := observe(t, tab, p, ObserveOptions{})
	inFrame := resolve(t, tab, p, "#in-frame")
	got, err = p.Anchors(tctx(t, tab), inFrame)
	if err != nil {
		t.Fatal(err)
	}
	if got.DOMID != "in-frame" || got.CSSPath != "#in-frame" || got.InShadow || got.Frame == "" || got.Frame != find(t, obs, inFrame).Frame {
		t.Errorf("anchors in a frame: %+v (observed frame %q)", got, find(t, obs, inFrame).Frame)
	}

	// Ids die with their document.
	home := resolve(t, tab, p, "#home-link")
	goTo(t, tab, p, base+"/other")
	if _, err := p.Anchors(tctx(t, tab), home); !errors.Is(err, ErrStaleID) {
		t.Errorf("anchors of an id of the previous page: %v, want ErrStaleID", err)
	}
	if _, err := p.Anchors(tctx(t, tab), "e999999"); !errors.Is(err, ErrStaleID) {
		t.Errorf("anchors of an id never issued: %v, want ErrStaleID", err)
	}
}

func TestFindTexts(t *testing.T) {
	base := serveHTML(t, map[string]string{"/": anchorsPage})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")

	cell := func(row, col int) string {
		return fmt.Sprintf("#products > tbody > tr:nth-of-type(%d) > td:nth-of-type(%d)", row, col)
	}
	button := func(row int) string { return cell(row, 3) + " > button" }
	cases := []struct {
		want TextWant
		sel  string
	}{
		{TextWant{Number: num(89)}, cell(1, 2)},                  // "$89.00"
		{TextWant{Number: num(89)}, cell(2, 2)},                  // "89 USD", not the one given above
		{TextWant{Number: num(1299)}, cell(3, 2)},                // "$1,299.00"
		{TextWant{Number: num(4.5)}, "#main > p:nth-of-type(1)"}, // "Rated 4.5 out of 5"
		{TextWant{Number: num(3450)}, "#split"},                  // "€3,450" across three spans
		{TextWant{Text: "Widget"}, cell(1, 1)},                   // not the script's "Widget"
		{TextWant{Text: "Add to cart"}, button(1)},
		{TextWant{Text: "Add to cart"}, button(2)},
		{TextWant{Text: "Add to cart"}, button(3)},
		{TextWant{Text: "Add to cart"}, button(1)}, // all given: the first again
		{TextWant{Text: " Grand\n total "}, "#gt"}, // split across nested elements
		{TextWant{Text: "Hidden text"}, "#shown"},  // the display:none one is left out
		{TextWant{Text: "Rated 4.5 out of 5"}, "#main > p:nth-of-type(1)"},
		{TextWant{Text: "grand total"}, ""}, // case matters
		{TextWant{Text: "Nowhere on the page"}, ""},
		{TextWant{Text: ""}, ""},
		{TextWant{Number: num(77)}, ""}, // visibility: hidden
		{TextWant{Number: num(66)}, ""}, // no size
		{TextWant{Number: num(12)}, ""}, // no such number
		{TextWant{Text: "Inside"}, ""},  // in a frame: not searched
		{TextWant{Text: "Buy"}, ""},     // in a shadow root: not searched
		{TextWant{Number: num(90)}, ""},
	}
	wants := make([]TextWant, len(cases))
	for i, c := range cases {
		wants[i] = c.want
	}
	got, err := p.FindTexts(tctx(t, tab), wants)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(cases) {
		t.Fatalf("%d selectors for %d wants", len(got), len(cases))
	}
	for i, c := range cases {
		if got[i] != c.sel {
			t.Errorf("want %d (%q %v): got %q, want %q", i, c.want.Text, deref(c.want.Number), got[i], c.sel)
		}
	}
	// The selectors name the elements that show the values.
	reads, err := p.ReadTexts(tctx(t, tab), got[:5])
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"$89.00", "89 USD", "$1,299.00", "Rated 4.5 out of 5", "€3,450"} {
		if !reads[i].Found || reads[i].Text != want {
			t.Errorf("read %q: %+v, want %q", got[i], reads[i], want)
		}
	}

	if _, err := p.FindTexts(tctx(t, tab), []TextWant{{Number: num(0)}, {}}); err != nil {
		t.Errorf("a want of 0: %v", err)
	}
	if got, err := p.FindTexts(tctx(t, tab), nil); err != nil || len(got) != 0 {
		t.Errorf("no wants: %q %v", got, err)
	}
}

// TestFindTextsBig checks the indexing on a page of 2,000 rows (some
// 10,000 elements): the right rows are found among many equal values.
func TestFindTextsBig(t *testing.T) {
	base := serveHTML(t, map[string]string{"/": rowsPage(2000)})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")
	wants := []TextWant{{Text: "Item 1500"}, {Number: num(1500)}, {Number: num(7.95)}, {Number: num(7.95)}, {Text: "Item 1999"}, {Number: num(7)}}
	start := time.Now()
	got, err := p.FindTexts(tctx(t, tab), wants)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FindTexts of %d wants on 2,000 rows: %s", len(wants), time.Since(start))
	want := []string{
		"#rows > tbody > tr:nth-of-type(1500) > td:nth-of-type(1)",
		"#rows > tbody > tr:nth-of-type(1500) > td:nth-of-type(2)", // "1,500 pcs"
		"#rows > tbody > tr:nth-of-type(1) > td:nth-of-type(3)",    // "$7.95", the first of many
		"#rows > tbody > tr:nth-of-type(11) > td:nth-of-type(3)",
		"#rows > tbody > tr:nth-of-type(1999) > td:nth-of-type(1)",
		"#rows > tbody > tr:nth-of-type(7) > td:nth-of-type(1)", // "Item 7": its first number is 7
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("want %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func TestReadTexts(t *testing.T) {
	base := serveHTML(t, map[string]string{"/": anchorsPage})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")
	sels := []string{"#email", "#notes", "#country", "#gt", "#split", "#products td", "#nothing-here", "div[", "", "#buy", "#in-frame", "body > script"}
	want := []TextRead{
		{true, "jane@example.test"},
		{true, "two\nlines"},
		{true, "Germany"},
		{true, "Grand total"},
		{true, "€3,450"},
		{true, "Widget"}, // the first match
		{false, ""},
		{false, ""}, // invalid: no match, no error
		{false, ""},
		{false, ""}, // shadow roots are not searched
		{false, ""}, // nor frames
		{true, ""},  // a script holds no page text
	}
	got, err := p.ReadTexts(tctx(t, tab), sels)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("read %q: got %+v, want %+v", sels[i], got[i], want[i])
		}
	}
	// A value typed by the user is read, not the attribute.
	email := resolve(t, tab, p, "#email")
	ok(t, "type the email")(p.InputText(tctx(t, tab), email, "joe@example.test"))
	if got, err := p.ReadTexts(tctx(t, tab), []string{"#email"}); err != nil || got[0] != (TextRead{true, "joe@example.test"}) {
		t.Errorf("read after typing: %+v %v", got, err)
	}
}

// TestAnchorsHostilePage: the operations run in page.js's world, so a page
// that breaks the built-ins they use in its own world changes nothing.
func TestAnchorsHostilePage(t *testing.T) {
	base := serveHTML(t, map[string]string{"/": hostilePage})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")
	first := resolve(t, tab, p, "#first")
	a, err := p.Anchors(tctx(t, tab), first)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Anchors{DOMID: "first", TestAttr: "data-testid", TestID: "first-link", CSSPath: "#first"}); a != want {
		t.Errorf("anchors: %+v, want %+v", a, want)
	}
	sels, err := p.FindTexts(tctx(t, tab), []TextWant{{Number: num(42.5)}, {Text: "First"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"#list > li:nth-of-type(2) > span", "#first"}; strings.Join(sels, "|") != strings.Join(want, "|") {
		t.Errorf("find texts: %q, want %q", sels, want)
	}
	reads, err := p.ReadTexts(tctx(t, tab), []string{"#q", sels[0]})
	if err != nil {
		t.Fatal(err)
	}
	if reads[0] != (TextRead{true, "query"}) || reads[1] != (TextRead{true, "$42.50"}) {
		t.Errorf("read texts: %+v", reads)
	}
}

// rowsPage is a table of n rows: a name, a quantity ("1,234 pcs") and a
// price ("$7.95" to "$16.95") that repeats every 10 rows, with a button; some 5n elements.
func rowsPage(n int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Rows</title></head><body><h1>Stock</h1><table id="rows">`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `<tr class="row"><td>Item %d</td><td>%s pcs</td><td>$%d.95</td><td><button>Add</button></td></tr>`, i, thousands(i), 7+(i-1)%10)
	}
	b.WriteString(`</table></body></html>`)
	return b.String()
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	if len(s) <= 3 {
		return s
	}
	return s[:len(s)-3] + "," + s[len(s)-3:]
}

// BenchmarkFindTexts looks up 50 texts and numbers on a page of 2,000
// rows.
func BenchmarkFindTexts(b *testing.B) {
	tab, p := newTab(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, rowsPage(2000))
	}))
	defer srv.Close()
	base := srv.URL
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	if res, err := p.GoTo(ctx, base); err != nil || !res.OK {
		b.Fatalf("go to the rows page: %+v %v", res, err)
	}
	wants := make([]TextWant, 0, 50)
	for i := range 25 {
		price, err := strconv.ParseFloat(fmt.Sprintf("%d.95", 7+i%10), 64)
		if err != nil {
			b.Fatal(err)
		}
		wants = append(wants, TextWant{Text: fmt.Sprintf("Item %d", 80*i+1)}, TextWant{Number: &price})
	}
	for b.Loop() {
		got, err := p.FindTexts(tab, wants)
		if err != nil {
			b.Fatal(err)
		}
		if got[0] == "" || got[1] == "" {
			b.Fatalf("nothing found: %q", got[:2])
		}
	}
}
