package testsite

// Pages of the agent's evaluation (bench/agent): widgets as real sites
// build them, each reporting what the user did with Event "eval-<page>".
// Static files under site/eval/ unless said; every report carries the
// fields named here besides "origin" and "page".
//
//   - /eval/tree.html (PageEvalTree): a team directory drawn as nested
//     <li> elements, each with cursor: pointer and a click handler; a
//     folder opens on click; a person reports {person, team}.
//   - /eval/icons.html (PageEvalIcons): a feed of seven posts whose reply,
//     share, like and "more" icons are drawn with CSS content: url()
//     (images from /eval/icons/NAME.svg), their handlers attached by
//     script, a pointer cursor only on hover; "more" opens a menu
//     (Report, Mute). Reports {post, action}.
//   - /eval/inbox.html (PageEvalInbox): a mail list whose rows have
//     unnamed icons told apart only by class (icon-star, icon-trash) and
//     icon-font ligatures (<span class="mi">archive</span>). Reports
//     {message, action}.
//   - /eval/menu.html (PageEvalMenu): a top bar with a menu opened by hover
//     (Products) and one opened by click (Account) with a submenu
//     (Language). Reports {item}.
//   - /eval/tabs.html (PageEvalTabs): tabs Overview, Shipping, Returns;
//     Shipping holds a delivery-speed choice and Save. Reports {speed}.
//   - /eval/dialog.html (PageEvalDialog): a project list; Delete opens a
//     modal asking to type the project's name; Invite opens a modal form
//     (email, role). Reports {action, project} or {action, email, role}.
//   - /eval/flights.html (PageEvalFlights): two airport fields with
//     suggestions fetched, debounced, from /eval/api/airports?q=
//     (EvalAirports); Search reports {from, to} as airport codes.
//   - /eval/weather.html (PageEvalWeather): a city field with suggestions
//     from /eval/api/cities?q= (EvalCities), several of the same name;
//     Show reports {city}.
//   - /eval/booking.html (PageEvalBooking): a read-only check-in field
//     that opens a calendar (Prev and Next months, from March 2027), a
//     nights spinner (− and + buttons); Book reports {checkin, nights}.
//   - /eval/filters.html (PageEvalFilters): guests and rooms spinners, a
//     price range slider (input type=range, step 50) and a custom volume
//     slider (role=slider, arrow keys); Apply reports {guests, rooms,
//     max_price, volume}.
//   - /eval/paints.html (PageEvalPaints): a long table of paint colours,
//     each row with a "Select" button; the names repeat in other words
//     around; Select reports {paint}. Below, orders with identical
//     "Details" links (?order=N opens one, reporting {order}).
//   - /eval/catalog.html (PageEvalCatalog, served here): 400 items "Item
//     1".."Item 400" (EvalCatalog), each with a colour, a stock, a serial
//     number and an Add button, as inline spans without spaces between;
//     Add reports {item}.
//   - /eval/settings.html (PageEvalSettings): notification settings in a
//     scrolled inner container (#wrap), and a license in a scrolled box
//     whose acceptance checkbox is at its end; Save reports {digest,
//     mentions, accepted}.
//   - /eval/cart.html, /eval/shipping.html, /eval/payment.html,
//     /eval/confirm.html (PageEvalCart...): a checkout over four pages,
//     kept in sessionStorage; Place order reports {items, address, city,
//     shipping, card_last4} and the last page shows EvalOrderNumber.
//   - /eval/contact.html (PageEvalContact): a contact form whose sending
//     reports {email, topic, message} and then shows an error ("Our inbox
//     is full").
//   - /eval/billing (PageEvalBilling, served here): the invoices of the
//     user signed in through the secure sign-in (/secure/login, then
//     /secure/verify); without a session it redirects to the sign-in. Pay
//     reports {invoice, user}. EvalInvoices lists them.
//   - /eval/icons/NAME.svg: the icon images (EvalIconNames).

import (
	"context"
	"fmt"
	"net/http"
	"strings"
)

// Paths of the evaluation pages.
const (
	PageEvalTree     = "/eval/tree.html"
	PageEvalIcons    = "/eval/icons.html"
	PageEvalInbox    = "/eval/inbox.html"
	PageEvalMenu     = "/eval/menu.html"
	PageEvalTabs     = "/eval/tabs.html"
	PageEvalDialog   = "/eval/dialog.html"
	PageEvalFlights  = "/eval/flights.html"
	PageEvalWeather  = "/eval/weather.html"
	PageEvalBooking  = "/eval/booking.html"
	PageEvalFilters  = "/eval/filters.html"
	PageEvalPaints   = "/eval/paints.html"
	PageEvalCatalog  = "/eval/catalog.html"
	PageEvalSettings = "/eval/settings.html"
	PageEvalCart     = "/eval/cart.html"
	PageEvalShipping = "/eval/shipping.html"
	PageEvalPayment  = "/eval/payment.html"
	PageEvalConfirm  = "/eval/confirm.html"
	PageEvalContact  = "/eval/contact.html"
	PageEvalBilling  = "/eval/billing"

	PathEvalAirports = "/eval/api/airports" // ?q=TEXT
	PathEvalCities   = "/eval/api/cities"   // ?q=TEXT
)

// EvalOrderNumber is the number the checkout's last page shows.
const EvalOrderNumber = "NW-58213"

// EvalEvent is the kind of the reports of an evaluation page: "eval-" and
// the page's file name without extension ("eval-tree" for PageEvalTree,
// "eval-billing" for PageEvalBilling).
func EvalEvent(page string) string {
	name := page[strings.LastIndex(page, "/")+1:]
	name, _, _ = strings.Cut(name, ".")
	return "eval-" + name
}

// EvalPages lists the evaluation pages, for the evaluation's checks.
func EvalPages() []string {
	return []string{PageEvalTree, PageEvalIcons, PageEvalInbox, PageEvalMenu, PageEvalTabs, PageEvalDialog,
		PageEvalFlights, PageEvalWeather, PageEvalBooking, PageEvalFilters, PageEvalPaints, PageEvalCatalog,
		PageEvalSettings, PageEvalCart, PageEvalShipping, PageEvalPayment, PageEvalConfirm, PageEvalContact, PageEvalBilling}
}

// EvalIconNames are the images served as /eval/icons/NAME.svg.
var EvalIconNames = []string{"reply", "share", "heart", "dots"}

// EvalSuggestion is an entry of a suggestion endpoint.
type EvalSuggestion struct {
	Code  string `json:"code"`
	Label string `json:"label"`
}

// EvalAirports are what PathEvalAirports suggests from.
var EvalAirports = []EvalSuggestion{
	{"PAH", "Paducah, KY (PAH)"}, {"UCA", "Utica, NY (UCA)"}, {"PDX", "Portland, OR (PDX)"},
	{"PWM", "Portland, ME (PWM)"}, {"UIN", "Quincy, IL (UIN)"}, {"PIA", "Peoria, IL (PIA)"},
	{"PHL", "Philadelphia, PA (PHL)"}, {"PIT", "Pittsburgh, PA (PIT)"}, {"UTM", "Tunica, MS (UTM)"},
	{"BOS", "Boston, MA (BOS)"}, {"BUF", "Buffalo, NY (BUF)"}, {"SYR", "Syracuse, NY (SYR)"},
}

// EvalCities are what PathEvalCities suggests from.
var EvalCities = []EvalSuggestion{
	{"springfield-il", "Springfield, Illinois"}, {"springfield-ma", "Springfield, Massachusetts"},
	{"springfield-mo", "Springfield, Missouri"}, {"springfield-or", "Springfield, Oregon"},
	{"salem-or", "Salem, Oregon"}, {"salem-ma", "Salem, Massachusetts"}, {"portland-or", "Portland, Oregon"},
	{"portland-me", "Portland, Maine"}, {"columbus-oh", "Columbus, Ohio"}, {"columbus-ga", "Columbus, Georgia"},
}

// EvalInvoice is an invoice of PageEvalBilling.
type EvalInvoice struct {
	Number, Date, Amount string // Amount without the $ sign, as "1,204.50"
	Paid                 bool
}

// EvalInvoices are the invoices PageEvalBilling shows to any signed-in
// user.
var EvalInvoices = []EvalInvoice{
	{"INV-3001", "2027-01-05", "310.00", true},
	{"INV-3007", "2027-02-05", "1,204.50", false},
	{"INV-3012", "2027-03-05", "87.25", false},
	{"INV-3019", "2027-04-05", "642.10", false},
}

// evalRoutes registers the evaluation's dynamic pages and endpoints.
func (s *Site) evalRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /eval/icons/{file}", serveEvalIcon)
	mux.HandleFunc("GET "+PageEvalCatalog, func(w http.ResponseWriter, r *http.Request) { writeHTML(w, http.StatusOK, evalCatalogPage()) })
	mux.HandleFunc("GET "+PathEvalAirports, func(w http.ResponseWriter, r *http.Request) { serveSuggestions(w, r, EvalAirports) })
	mux.HandleFunc("GET "+PathEvalCities, func(w http.ResponseWriter, r *http.Request) { serveSuggestions(w, r, EvalCities) })
	mux.HandleFunc("GET "+PageEvalBilling, func(w http.ResponseWriter, r *http.Request) {
		user := s.sessionUser(r)
		if user == "" {
			http.Redirect(w, r, PageSecureLogin, http.StatusSeeOther)
			return
		}
		writeHTML(w, http.StatusOK, render(evalBillingTmpl, struct {
			User     string
			Invoices []EvalInvoice
		}{user, EvalInvoices}))
	})
}

// evalIconSVG are the icons' drawings: simple shapes, no text.
var evalIconSVG = map[string]string{
	"reply": `<path d="M9 5 3 11l6 6v-4c5 0 8 1 11 5-1-6-4-10-11-10z"/>`,
	"share": `<circle cx="6" cy="12" r="3"/><circle cx="18" cy="6" r="3"/><circle cx="18" cy="18" r="3"/><path d="M6 12 18 6M6 12l12 6" stroke="#333" stroke-width="2"/>`,
	"heart": `<path d="M12 21 4 13a5 5 0 0 1 8-6 5 5 0 0 1 8 6z"/>`,
	"dots":  `<circle cx="5" cy="12" r="2"/><circle cx="12" cy="12" r="2"/><circle cx="19" cy="12" r="2"/>`,
}

func serveEvalIcon(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("file"), ".svg")
	shape, known := evalIconSVG[name]
	if !ok || !known {
		http.NotFound(w, r)
		return
	}
	body := `<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" viewBox="0 0 24 24" fill="#333">` + shape + `</svg>`
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Write([]byte(body))
}

// serveSuggestions answers ?q= with the entries whose label or code
// contains it (case ignored), at most 6, as a JSON array; an empty query
// gets none.
func serveSuggestions(w http.ResponseWriter, r *http.Request, from []EvalSuggestion) {
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	var b strings.Builder
	b.WriteString("[")
	n := 0
	for _, e := range from {
		if q == "" || n == 6 {
			break
		}
		if strings.Contains(strings.ToLower(e.Label), q) || strings.ToLower(e.Code) == q {
			if n > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"code":%q,"label":%q}`, e.Code, e.Label)
			n++
		}
	}
	b.WriteString("]")
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(b.String()))
}

var evalBillingTmpl = pageTmpl(`<h1 id="billing-title">Invoices</h1>
<p id="billing-user">Signed in as {{.User}}.</p>
<table id="invoices"><thead><tr><th>Invoice</th><th>Date</th><th>Amount</th><th>Status</th><th></th></tr></thead><tbody>
{{range .Invoices}}<tr data-invoice="{{.Number}}"><td>{{.Number}}</td><td>{{.Date}}</td><td>${{.Amount}}</td><td>{{if .Paid}}Paid{{else}}Due{{end}}</td><td>{{if not .Paid}}<button type="button" class="pay" data-invoice="{{.Number}}">Pay now</button>{{end}}</td></tr>
{{end}}</tbody></table>
<p id="billing-note" role="status"></p>
<script src="/site.js"></script>
<script>
document.querySelectorAll('button.pay').forEach(function (b) {
  b.addEventListener('click', function () {
    var inv = b.getAttribute('data-invoice');
    testsite.report('eval-billing', {invoice: inv, user: {{.User}}});
    b.closest('tr').children[3].textContent = 'Paid';
    b.remove();
    document.getElementById('billing-note').textContent = 'Payment received for ' + inv + '.';
  });
});
</script>`)

// EventCount is the number of events recorded so far: pass it to
// WaitEventSince to see only later ones.
func (s *Site) EventCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.events)
}

// EventsSince returns the events recorded after the first n, oldest first.
func (s *Site) EventsSince(n int) []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n > len(s.events) {
		n = len(s.events)
	}
	out := make([]Event, 0, len(s.events)-n)
	for _, e := range s.events[n:] {
		out = append(out, e.clone())
	}
	return out
}

// WaitEventSince returns the first event of that kind recorded after the
// first n, waiting until ctx ends.
func (s *Site) WaitEventSince(ctx context.Context, n int, kind string) (Event, error) {
	next := max(n, 0)
	for {
		s.mu.Lock()
		for ; next < len(s.events); next++ {
			if s.events[next].Kind == kind {
				e := s.events[next].clone()
				s.mu.Unlock()
				return e, nil
			}
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			if n <= 0 {
				return Event{}, fmt.Errorf("testsite: no %q event: %w", kind, ctx.Err())
			}
			return Event{}, fmt.Errorf("testsite: no %q event after the first %d: %w", kind, n, ctx.Err())
		}
	}
}

// EvalCatalogSize is the number of items of PageEvalCatalog.
const EvalCatalogSize = 400

// EvalCatalogItem is item n (1 to EvalCatalogSize) of PageEvalCatalog.
type EvalCatalogItem struct {
	N      int
	Colour string
	Stock  int
	Serial string
}

var evalColours = []string{"yarrow", "umber", "teal", "sienna", "ochre", "slate", "coral"}

// EvalCatalog returns the item n of PageEvalCatalog (1-based), made
// deterministically from n.
func EvalCatalog(n int) EvalCatalogItem {
	return EvalCatalogItem{N: n, Colour: evalColours[n%len(evalColours)], Stock: (n*37)%90 + 1,
		Serial: fmt.Sprintf("SN-%05d", 10000+(n*7919)%90000)}
}

// evalCatalogPage is PageEvalCatalog: the items as list entries whose
// inline spans follow each other without a space ("Item 22yarrow22 left"),
// an Add button each, which reports Event "eval-catalog" {item}.
func evalCatalogPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Catalogue</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/site.css"><link rel="stylesheet" href="/eval/eval.css"><script src="/site.js"></script>
<style>#items li span { margin-right: 6px; } .sn { color: #666; font-size: 12px; }</style></head>
<body><h1>Catalogue</h1><p id="basket" class="status" role="status">Your basket is empty.</p><ol id="items">`)
	for n := 1; n <= EvalCatalogSize; n++ {
		it := EvalCatalog(n)
		fmt.Fprintf(&b, `<li data-item="%d"><span class="name">Item %d</span><span class="colour">%s</span><span class="stock">%d left</span><span class="sn">%s</span><button type="button">Add</button></li>`+"\n",
			n, n, it.Colour, it.Stock, it.Serial)
	}
	b.WriteString(`</ol>
<script>
document.querySelectorAll('#items li').forEach(function (li) {
  li.querySelector('button').addEventListener('click', function () {
    var n = li.getAttribute('data-item');
    document.getElementById('basket').textContent = 'Added Item ' + n + ' to your basket.';
    testsite.report('eval-catalog', {item: n});
  });
});
</script></body></html>
`)
	return b.String()
}
