package page

import (
	"net"
	"strings"
	"testing"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/internal/testsite"
)

// Clickable elements without a role, a custom checkbox whose input is
// hidden behind its label, and a sandboxed frame the page cannot script.
func TestClickablesAndSandbox(t *testing.T) {
	page := `<!doctype html><title>misc</title><style>
.card{cursor:pointer;border:1px solid #999;padding:8px;margin:4px;width:200px}
.sw input{position:absolute;opacity:0;width:1px;height:1px}
.sw span{display:inline-block;padding:4px;border:1px solid #333}
</style>
<div class="card" id="card" onclick="document.getElementById('out').textContent='card'"><b>Card title</b> <i>details</i></div>
<label class="sw" id="sw"><input type="checkbox" id="hidden-box"><span>Dark mode</span></label>
<p id="out">-</p>
<iframe id="sb" sandbox="allow-scripts" srcdoc="<button id=inner onclick=&quot;document.body.dataset.c='yes';this.textContent='pressed'&quot;>Sandboxed button</button>" style="width:300px;height:80px"></iframe>`
	base := serveHTML(t, map[string]string{"/": page})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")
	obs := observe(t, tab, p, ObserveOptions{})
	t.Log("\n" + obs.Rendered)
	var card, box, inner *Element
	for i := range obs.Elements {
		e := &obs.Elements[i]
		switch {
		case e.Text == "Card title details":
			card = e
		case e.Type == "checkbox":
			box = e
		case e.Text == "Sandboxed button":
			inner = e
		}
	}
	if card == nil || !card.Clickable || box == nil || box.Label != "Dark mode" || inner == nil || inner.Frame == "" {
		t.Fatalf("card %+v\nbox %+v\ninner %+v", card, box, inner)
	}
	ok(t, "click the card")(p.Click(tctx(t, tab), card.ID))
	ok(t, "click the hidden checkbox")(p.Click(tctx(t, tab), box.ID))
	ok(t, "click in the sandboxed frame")(p.Click(tctx(t, tab), inner.ID))
	obs = observe(t, tab, p, ObserveOptions{})
	if !strings.Contains(obs.Text, "card") {
		t.Errorf("card click lost: %q", obs.Text)
	}
	for _, e := range obs.Elements {
		if e.ID == box.ID && !e.Checked {
			t.Errorf("the checkbox is not checked")
		}
		if e.ID == inner.ID && e.Text != "pressed" {
			t.Errorf("the sandboxed button says %q", e.Text)
		}
	}
}

// An overlay in the top document over a cross-origin frame covers the
// frame's button: the hit test of the ancestor realm finds it.
func TestCoveredCrossOriginFrame(t *testing.T) {
	site := testsite.Start(t)
	inner := site.OtherURL(testsite.PageFrameInner)
	page := `<!doctype html><title>cover</title><body style="margin:0">
<iframe id=f src="` + inner + `" style="position:absolute;left:0;top:0;width:600px;height:300px;border:0"></iframe>
<div id="veil" style="position:fixed;left:0;top:0;width:600px;height:300px;background:rgba(0,0,0,.3)">Loading veil</div>
<button id=lift onclick="document.getElementById('veil').remove()" style="position:absolute;top:320px">Lift</button>`
	base := serveHTML(t, map[string]string{"/": page})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")
	var button string
	obs := observe(t, tab, p, ObserveOptions{})
	for _, e := range obs.Elements {
		if e.Text == "Frame button" {
			button = e.ID
		}
	}
	if button == "" {
		t.Fatalf("no frame button:\n%s", obs.Rendered)
	}
	res, err := p.Click(tctx(t, tab), button)
	if err != nil || res.OK || !strings.Contains(res.Reason, "div#veil") {
		t.Fatalf("covered frame button: %+v %v", res, err)
	}
	ok(t, "lift the veil")(p.Click(tctx(t, tab), resolve(t, tab, p, "#lift")))
	ok(t, "click the frame button")(p.Click(tctx(t, tab), button))
	waitEventWith(t, site, testsite.EventFrameClick, "", "")
}

// TestObserveAfterFailedNavigation: a navigation refused by the network
// fails with the browser's error, and the error page Chromium shows in its
// place can be observed at once, screenshot included. Chromium answers
// Page.navigate before it commits that page (in a renderer of its own);
// until then the tab has no active page ("Not attached to an active
// page"). GoTo waits for the commit (it used to give up after 3 s, which a
// busy machine exceeded), and a screenshot taken in that window, after a
// navigation GoTo did not make, waits for it too.
func TestObserveAfterFailedNavigation(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageForm))
	closed := closedPortURL(t)
	res, err := p.GoTo(tctx(t, tab), closed)
	if err == nil || res.OK || !strings.Contains(res.Reason, "ERR_CONNECTION_REFUSED") || !res.Navigated {
		t.Fatalf("go to a closed port: %+v %v; want the failure, and the error page committed", res, err)
	}
	obs, err := p.Observe(tctx(t, tab), ObserveOptions{Screenshot: true})
	if err != nil {
		t.Fatalf("observe the error page: %v", err)
	}
	if len(obs.Screenshot) == 0 || strings.Contains(obs.Rendered, "Form") {
		t.Errorf("the error page, %d bytes of screenshot:\n%s", len(obs.Screenshot), obs.Rendered)
	}

	// The same navigation made outside the Page: the screenshot right
	// after Page.navigate's answer finds the error page not yet attached
	// (mostly) and waits for it.
	goTo(t, tab, p, site.URL(testsite.PageForm))
	nav, err := chromedp.Call(tctx(t, tab), cdppage.Navigate, cdppage.NavigateParams{URL: closedPortURL(t)})
	if err != nil || !strings.Contains(nav.ErrorText, "ERR_CONNECTION_REFUSED") {
		t.Fatalf("navigate to a closed port: %+v %v", nav, err)
	}
	if b, err := p.Screenshot(tctx(t, tab), 0); err != nil || len(b) == 0 {
		t.Errorf("screenshot during the error page's commit: %d bytes, %v", len(b), err)
	}
}

// closedPortURL is an address on a port nothing listens on.
func closedPortURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String() + "/gone"
	ln.Close()
	return u
}
