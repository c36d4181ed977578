package page

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/abctl/abctl/internal/testsite"
)

// idPattern is the form of every element id: consonants only, two or more.
var idPattern = regexp.MustCompile(`^[bcdfghjklmnpqrstvwxz]{2,}$`)

// TestIDForm: ids hold no digit and no vowel, are unique, decode back to
// their number, and stay short (two letters for the first 400, three for
// the next 8,000).
func TestIDForm(t *testing.T) {
	seen := map[string]uint64{}
	for n := uint64(1); n <= 9000; n++ {
		id := encodeID(n)
		if !idPattern.MatchString(id) {
			t.Fatalf("id %d is %q", n, id)
		}
		if m, dup := seen[id]; dup {
			t.Fatalf("ids %d and %d are both %q", m, n, id)
		}
		seen[id] = n
		if back, ok := decodeID(id); !ok || back != n {
			t.Fatalf("decode %q = %d, %v; want %d", id, back, ok, n)
		}
		if want := 2 + min(1, int((n-1)/400)) + min(1, int((n-1)/8400)); len(id) != want {
			t.Fatalf("id %d is %q: want %d letters", n, id, want)
		}
	}
	for _, bad := range []string{"", "b", "e12", "ab", "b1", "bq!"} {
		if n, ok := decodeID(bad); ok {
			t.Errorf("decode %q = %d, want no id", bad, n)
		}
	}
	for in, want := range map[string]string{
		"bq": "bq", "[bq]": "bq", " bq ": "bq", "[ bq ]": "bq", "BQ": "bq", `"bq"`: "bq",
		"'[bq]'": "bq", "[bq": "bq", `[bq] button "Sign in"`: "bq", "": "",
	} {
		if got := CleanID(in); got != want {
			t.Errorf("CleanID(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestIDsOnNumberedPage: on a page of numbered items (PageBig: "Item 430"
// and so on) no element id can be read as one of the page's numbers, an id
// written as a model writes it ("[id]", " ID ") acts on its element, and
// unknown, malformed and old-form ids get errors that say what is wrong.
func TestIDsOnNumberedPage(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageBig))
	obs := observe(t, tab, p, ObserveOptions{})
	if len(obs.Elements) < testsite.BigItems {
		t.Fatalf("%d elements", len(obs.Elements))
	}
	for _, e := range obs.Elements {
		if !idPattern.MatchString(e.ID) {
			t.Fatalf("element %+v has id %q, which is not consonants only", e, e.ID)
		}
	}
	// The same nodes keep their ids across observations.
	again := observe(t, tab, p, ObserveOptions{})
	for i := range obs.Elements {
		if again.Elements[i].ID != obs.Elements[i].ID {
			t.Fatalf("element %d: id %s, then %s", i, obs.Elements[i].ID, again.Elements[i].ID)
		}
	}
	id := resolve(t, tab, p, "#button-1")
	ok(t, "click [id]")(p.Click(tctx(t, tab), "["+id+"]"))
	waitEventWith(t, site, testsite.EventBigClick, "id", "button-1")
	id = resolve(t, tab, p, "#button-4")
	ok(t, "click ID")(p.Click(tctx(t, tab), " "+strings.ToUpper(id)+" "))
	waitEventWith(t, site, testsite.EventBigClick, "id", "button-4")

	for _, c := range []struct{ id, says string }{
		{"zzzz", "never issued"},
		{"e430", "earlier version"},
		{"430", "not an element id"},
		{"", "empty"},
	} {
		_, err := p.Click(tctx(t, tab), c.id)
		if !errors.Is(err, ErrStaleID) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("click %q: %v, want an error that says %q", c.id, err, c.says)
		}
	}
}
