package testsite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestEvalPages: every evaluation page is served (the billing page sends
// a visitor without a session to the sign-in), the suggestion endpoints
// answer from their lists, the icons are images and the catalogue shows
// EvalCatalog's items.
func TestEvalPages(t *testing.T) {
	s := Start(t)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range EvalPages() {
		resp, err := noFollow.Get(s.URL(p))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		want := http.StatusOK
		if p == PageEvalBilling {
			want = http.StatusSeeOther
			if loc := resp.Header.Get("Location"); loc != PageSecureLogin {
				t.Errorf("billing without a session goes to %q", loc)
			}
		}
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", p, resp.StatusCode, want)
		}
		if !strings.HasPrefix(EvalEvent(p), "eval-") || strings.ContainsAny(EvalEvent(p), "./") {
			t.Errorf("EvalEvent(%s) = %q", p, EvalEvent(p))
		}
	}
	for _, c := range []struct {
		path, q string
		want    []string
	}{
		{PathEvalAirports, "portland", []string{"PDX", "PWM"}},
		{PathEvalAirports, "utica", []string{"UCA"}},
		{PathEvalCities, "Springfield", []string{"springfield-il", "springfield-ma", "springfield-mo", "springfield-or"}},
		{PathEvalCities, "", nil},
	} {
		resp, body := get(t, s.URL(c.path+"?q="+c.q))
		var got []EvalSuggestion
		if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s?q=%s: %d %s", c.path, c.q, resp.StatusCode, body)
		}
		var codes []string
		for _, e := range got {
			codes = append(codes, e.Code)
		}
		if fmt.Sprint(codes) != fmt.Sprint(c.want) && !(len(codes) == 0 && len(c.want) == 0) {
			t.Errorf("%s?q=%s: %v, want %v", c.path, c.q, codes, c.want)
		}
	}
	for _, name := range EvalIconNames {
		resp, body := get(t, s.URL("/eval/icons/"+name+".svg"))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(body, "<svg") {
			t.Errorf("icon %s: %d %s", name, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if resp, _ := get(t, s.URL("/eval/icons/nothing.svg")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown icon: %d", resp.StatusCode)
	}
	_, body := get(t, s.URL(PageEvalCatalog))
	for _, n := range []int{1, 22, 347, 388, EvalCatalogSize} {
		it := EvalCatalog(n)
		row := fmt.Sprintf(`<span class="name">Item %d</span><span class="colour">%s</span><span class="stock">%d left</span><span class="sn">%s</span>`, n, it.Colour, it.Stock, it.Serial)
		if !strings.Contains(body, row) {
			t.Errorf("the catalogue lacks %s", row)
		}
	}
	if strings.Count(body, "<li data-item=") != EvalCatalogSize {
		t.Errorf("the catalogue has %d items", strings.Count(body, "<li data-item="))
	}
}
