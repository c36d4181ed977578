package testsite

// Pages for the agent loop's tests (static files under site/, scripted in
// the page; no handler of their own):
//
//   - /members/login.html (PageMembersLogin): a sign-in form that accepts
//     only MembersUser / MembersPassword; it reports Event "members-login"
//     (Form username, ok) and goes to /members/home.html?user=... (welcome)
//     or to /members/denied.html, the error page ("Sign-in failed").
//   - /apply/step1.html, step2.html, review.html, done.html: a form over
//     three pages (name and email; plan and the terms; review and submit),
//     kept in sessionStorage; the submit reports Event "application" (Form
//     name, email, plan) and done.html shows ApplyReference.
//   - /shop/search.html and /shop/results.html?q=...: a search box, then
//     the ShopCatalog items whose name contains the query.

// Paths of the agent pages.
const (
	PageMembersLogin  = "/members/login.html"
	PageMembersHome   = "/members/home.html"
	PageMembersDenied = "/members/denied.html"

	PageApplyStep1  = "/apply/step1.html"
	PageApplyStep2  = "/apply/step2.html"
	PageApplyReview = "/apply/review.html"
	PageApplyDone   = "/apply/done.html"

	PageShopSearch  = "/shop/search.html"
	PageShopResults = "/shop/results.html"
)

// Events of the agent pages.
const (
	EventMembersLogin = "members-login" // Form "username", "ok" ("true"/"false")
	EventApplication  = "application"   // Form "name", "email", "plan"
)

// The members sign-in's only good pair, and the reference the
// application's last page shows.
const (
	MembersUser     = "alice"
	MembersPassword = "wonderland"
	ApplyReference  = "APP-2026-0042"
)

// ShopItem is an item of the shop's catalogue.
type ShopItem struct {
	Name   string
	Price  string // without the $ sign, as "24.50"
	Rating string // as "4.7"
}

// ShopCatalog returns the shop's catalogue in page order (the CATALOG of
// shop/results.html).
func ShopCatalog() []ShopItem {
	return []ShopItem{
		{"Merino Wool Socks", "24.50", "4.7"},
		{"Hiking Socks Twin Pack", "18.00", "4.2"},
		{"Waterproof Jacket", "149.00", "4.5"},
		{"Insulated Down Jacket", "219.00", "4.8"},
		{"Trail Running Shoes", "89.99", "4.4"},
		{"Headlamp 400 lm", "45.95", "4.6"},
		{"Trekking Poles", "119.00", "4.1"},
		{"Dry Bag 20 L", "19.99", "4.3"},
	}
}
