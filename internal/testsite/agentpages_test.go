package testsite

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestAgentPages: the agent pages are served with the ids tests use, and
// the scripts agree with the Go side (catalogue, credentials, reference).
func TestAgentPages(t *testing.T) {
	s := Start(t)
	ids := map[string][]string{
		PageMembersLogin:  {"members-form", "member-user", "member-pass", "member-signin"},
		PageMembersHome:   {"member-welcome"},
		PageMembersDenied: {"denied-title", "denied-reason", "try-again"},
		PageApplyStep1:    {"full-name", "apply-email", "next-1"},
		PageApplyStep2:    {"apply-plan", "accept-terms", "next-2", "step2-error"},
		PageApplyReview:   {"review-name", "review-email", "review-plan", "submit-application"},
		PageApplyDone:     {"done-title", "reference"},
		PageShopSearch:    {"shop-query", "shop-search"},
		PageShopResults:   {"shop-query", "result-count", "results"},
	}
	bodies := map[string]string{}
	for path, want := range ids {
		resp, body := get(t, s.URL(path))
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, id := range want {
			if !strings.Contains(body, `id="`+id+`"`) {
				t.Errorf("%s has no element #%s", path, id)
			}
		}
		bodies[path] = body
	}
	for _, it := range ShopCatalog() {
		if row := fmt.Sprintf("['%s', '%s', '%s']", it.Name, it.Price, it.Rating); !strings.Contains(bodies[PageShopResults], row) {
			t.Errorf("results.html's CATALOG lacks %s", row)
		}
	}
	if n := strings.Count(bodies[PageShopResults], "\n  ['"); n != len(ShopCatalog()) {
		t.Errorf("results.html's CATALOG has %d items, ShopCatalog %d", n, len(ShopCatalog()))
	}
	if !strings.Contains(bodies[PageMembersLogin], fmt.Sprintf("user === '%s' && pass === '%s'", MembersUser, MembersPassword)) {
		t.Error("members/login.html does not check MembersUser and MembersPassword")
	}
	if !strings.Contains(bodies[PageApplyDone], ApplyReference) {
		t.Error("apply/done.html does not show ApplyReference")
	}
}
