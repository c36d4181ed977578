package testsite

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestActionPages: the action pages carry the ids tests use, and the
// suggestions' handler filters the places, refusing a bad delay.
func TestActionPages(t *testing.T) {
	s := Start(t)
	for path, ids := range map[string][]string{
		PageActionsScroll:   {"wrap", "deep-button", "deep-input", "hover-target", "menu-button", "outer", "inner", "nested-button", "wide", "right-button", "far", "far-button", "cut-link", "modal"},
		PageActionsReadonly: {"depart", "depart-picker", "return", "return-open", "guests", "masked", "masked-open", "native"},
		PageActionsSuggest:  {"city", "city-list", "airport"},
	} {
		resp, body := get(t, s.URL(path))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", path, resp.StatusCode)
			continue
		}
		for _, id := range ids {
			if !strings.Contains(body, `id="`+id+`"`) {
				t.Errorf("%s has no element #%s", path, id)
			}
		}
	}
	for q, want := range map[string][]string{
		"pa":   {"Paducah, KY (PAH)", "Pasco, WA (PSC)", "Palm Springs, CA (PSP)"},
		"UT":   {"Utica, NY (UCA)"},
		"zzz":  {},
		"(pdx": {"Portland, OR (PDX)"},
	} {
		resp, body := get(t, s.URL(PathActionsSuggest+"?ms=0&q="+strings.ReplaceAll(q, "(", "%28")))
		var got []string
		if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("q=%s: %d %s %q (%v)", q, resp.StatusCode, resp.Header.Get("Content-Type"), body, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("q=%s: %q, want %q", q, got, want)
		}
	}
	for _, bad := range []string{"?q=pa", "?q=pa&ms=soon"} {
		if resp, _ := get(t, s.URL(PathActionsSuggest+bad)); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, resp.StatusCode)
		}
	}
}
