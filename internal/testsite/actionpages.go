package testsite

// Pages for the tests of actions on controls that are hard to reach
// (static files under site/actions/, scripted in the page, and one
// handler):
//
//   - /actions/scroll.html (PageActionsScroll): buttons and fields inside
//     containers with overflow: auto, out of the container's view while
//     their box lies inside the viewport (#deep-button, #deep-input,
//     #hover-target, #menu-button with its options, in #wrap;
//     #nested-button in #inner inside #outer; #right-button to the right
//     in #wide), #far-button in #far, below the first screen, and
//     #cut-link, wider than the list item that cuts it off. A click
//     reports Event "actions-click" (button; "hover" for a hover of
//     #hover-target), a field's change Event "actions-field" (field,
//     value). ?modal=1 shows a fixed #modal over the whole page.
//   - /actions/readonly.html (PageActionsReadonly): fields that cannot be
//     typed into: #depart (read-only, opens a date picker whose days set
//     it), #return (read-only, a calendar button beside it), #guests
//     (read-only, nothing sets it), #masked (the page clears what is
//     typed; a button beside it sets it), #native (an <input type=date>).
//   - /actions/suggest.html (PageActionsSuggest): two fields with
//     suggestions fetched from PathActionsSuggest after a debounce: #city
//     (an ARIA combobox with the listbox #city-list) and #airport (no ARIA,
//     the class of a jQuery UI autocomplete; its list is appended to the
//     body). ?ms= sets both the debounce and the server's delay (300 by
//     default). Choosing a suggestion reports Event "actions-field".
//   - GET /actions/suggest?q=...&ms=... (PathActionsSuggest): after ms
//     milliseconds (at most SlowMax), a JSON array of the SuggestPlaces
//     whose name contains q, ignoring case (all of them for an empty q).

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Paths of the action pages and of the suggestions' handler.
const (
	PageActionsScroll   = "/actions/scroll.html"
	PageActionsReadonly = "/actions/readonly.html"
	PageActionsSuggest  = "/actions/suggest.html"

	PathActionsSuggest = "/actions/suggest"
)

// Events of the action pages.
const (
	EventActionsClick = "actions-click" // Form "button"
	EventActionsField = "actions-field" // Form "field", "value"
)

// SuggestPlaces returns the places the suggestions' handler chooses from.
func SuggestPlaces() []string {
	return []string{
		"Paducah, KY (PAH)",
		"Utica, NY (UCA)",
		"Pasco, WA (PSC)",
		"Palm Springs, CA (PSP)",
		"Portland, OR (PDX)",
		"Pueblo, CO (PUB)",
		"Lubbock, TX (LBB)",
	}
}

func (s *Site) actionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PathActionsSuggest, serveSuggest)
}

func serveSuggest(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d, err := slowDelay(q)
	if err != nil || q.Get("ms") == "" {
		http.Error(w, "ms must be a number of milliseconds", http.StatusBadRequest)
		return
	}
	if !sleepUnlessGone(r, d) {
		return
	}
	want := strings.ToLower(strings.TrimSpace(q.Get("q")))
	found := []string{}
	for _, p := range SuggestPlaces() {
		if strings.Contains(strings.ToLower(p), want) {
			found = append(found, p)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(found)
}
