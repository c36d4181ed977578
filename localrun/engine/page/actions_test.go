package page

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abctl/abctl/internal/testsite"
)

func TestInputTextAndSubmit(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageForm))
	observe(t, tab, p, ObserveOptions{})

	fields := []struct{ sel, text, want string }{
		{"#text", "Jane Q. Public", "Jane Q. Public"},
		{"#email", "jane@example.test", "jane@example.test"},
		{"#number", "42", "42"},
		{"#date", "2026-03-14", "2026-03-14"},
		{"#time", "09:30", "09:30"},
		{"#tel", "+1 555 0100", "+1 555 0100"},
		{"#nickname-label", "Janie", "Janie"}, // a label holding the field
		{"#message", "line one\nline two", "line one\r\nline two"},
		{"#controlled", "state by typing", "state by typing"},
		{"#controlled-react", "react state", "react state"},
		{"#editor", "some notes", "some notes"},
	}
	for _, f := range fields {
		id := resolve(t, tab, p, f.sel)
		res := ok(t, "type into "+f.sel)(p.InputText(tctx(t, tab), id, f.text))
		if res.Navigated {
			t.Errorf("%s: typing navigated", f.sel)
		}
	}
	// Replacing a value clears the old one first.
	id := resolve(t, tab, p, "#text")
	ok(t, "replace #text")(p.InputText(tctx(t, tab), id, "Jane Doe"))
	// A disabled field is a failed action, not an error.
	res, err := p.InputText(tctx(t, tab), resolve(t, tab, p, "#disabled-input"), "x")
	if err != nil || res.OK || !strings.Contains(res.Reason, "disabled") {
		t.Errorf("disabled field: %+v %v", res, err)
	}
	res, err = p.InputText(tctx(t, tab), resolve(t, tab, p, "#readonly-input"), "x")
	if err != nil || res.OK || !strings.Contains(res.Reason, "read-only") {
		t.Errorf("read-only field: %+v %v", res, err)
	}
	res, err = p.InputText(tctx(t, tab), resolve(t, tab, p, "#country"), "x")
	if err != nil || res.OK || !strings.Contains(res.Reason, "select_option") {
		t.Errorf("select as a text field: %+v %v", res, err)
	}

	// Enter in a field submits the form (implicit submission) and navigates.
	before := p.Epoch()
	res = ok(t, "press Enter")(p.KeyPress(tctx(t, tab), "Enter"))
	if !res.Navigated || !strings.Contains(res.URL, testsite.PathSubmit) {
		t.Errorf("Enter did not navigate to the submit page: %+v", res)
	}
	if p.Epoch() == before {
		t.Errorf("epoch did not change")
	}
	ev := waitEventWith(t, site, testsite.EventSubmit, "form_id", "main-form")
	want := map[string]string{
		"text": "Jane Doe", "email": "jane@example.test", "number": "42", "date": "2026-03-14",
		"time": "09:30", "tel": "+1 555 0100", "nickname": "Janie", "message": "line one\r\nline two",
		"controlled": "state by typing", "controlled_react": "react state", "editor": "some notes",
	}
	for k, v := range want {
		if got := ev.Form.Get(k); got != v {
			t.Errorf("posted %s = %q, want %q", k, got, v)
		}
	}
}

func TestSelectNative(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageForm))
	country := resolve(t, tab, p, "#country")
	res := ok(t, "select by label")(p.SelectOption(tctx(t, tab), country, "Germany"))
	if res.Detail != `selected "Germany"` {
		t.Errorf("detail %q", res.Detail)
	}
	obs := observe(t, tab, p, ObserveOptions{})
	if v := find(t, obs, country).Value; v != "Germany" {
		t.Errorf("value after select: %q", v)
	}
	ok(t, "select by value")(p.SelectOption(tctx(t, tab), country, "jp"))
	res, err := p.SelectOption(tctx(t, tab), country, "Atlantis")
	if err != nil || res.OK || !strings.Contains(res.Reason, "France") {
		t.Errorf("unknown option: %+v %v", res, err)
	}
	ok(t, "select a language")(p.SelectOption(tctx(t, tab), resolve(t, tab, p, "#languages"), "Rust"))
	ok(t, "submit")(p.Click(tctx(t, tab), resolve(t, tab, p, "#submit-button")))
	ev := waitEventWith(t, site, testsite.EventSubmit, "form_id", "main-form")
	if ev.Form.Get("country") != "jp" || ev.Form.Get("languages") != "rust" {
		t.Errorf("posted country %q languages %q", ev.Form.Get("country"), ev.Form.Get("languages"))
	}
}

// customSelect is a page with a dropdown made of divs: the options exist
// only after the trigger is clicked, in a list appended to the body.
const customSelect = `<!doctype html><html><head><title>Custom</title><style>
#menu{position:absolute;top:60px;left:10px;background:#fff;border:1px solid #999;list-style:none;margin:0;padding:0}
#menu li{padding:4px 12px;cursor:pointer}
#trigger{display:inline-block;border:1px solid #333;padding:4px 10px;cursor:pointer}
</style></head><body>
<p>Pick a fruit: <span id="trigger" role="combobox" aria-expanded="false" tabindex="0">Choose…</span></p>
<p id="out">none</p>
<p>Other text: Banana bread recipe</p>
<script>
var trig = document.getElementById('trigger');
trig.addEventListener('click', function () {
  if (document.getElementById('menu')) return;
  var ul = document.createElement('ul'); ul.id = 'menu'; ul.setAttribute('role', 'listbox');
  ['Apple', 'Banana', 'Cherry'].forEach(function (f) {
    var li = document.createElement('li'); li.setAttribute('role', 'option'); li.textContent = f;
    li.addEventListener('click', function () {
      trig.textContent = f; document.getElementById('out').textContent = 'picked ' + f; ul.remove();
    });
    ul.appendChild(li);
  });
  document.body.appendChild(ul);
  trig.setAttribute('aria-expanded', 'true');
});
</script></body></html>`

func serveHTML(t *testing.T, pages map[string]string) string {
	t.Helper()
	mux := http.NewServeMux()
	for path, body := range pages {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// reportedWait reads the "(waited 1.1s)" of an action's reason; 0 without.
func reportedWait(reason string) time.Duration {
	m := regexp.MustCompile(`\(waited ([^)]+)\)`).FindStringSubmatch(reason)
	if m == nil {
		return 0
	}
	d, _ := time.ParseDuration(m[1])
	return d
}

// hangingURL serves a page that answers only when the test ends.
func hangingURL(t *testing.T) string {
	t.Helper()
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(srv.CloseClientConnections)
	t.Cleanup(func() { close(block) })
	return srv.URL + "/"
}

func TestSelectCustom(t *testing.T) {
	base := serveHTML(t, map[string]string{"/": customSelect})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")
	obs := observe(t, tab, p, ObserveOptions{})
	trig := resolve(t, tab, p, "#trigger")
	if e := find(t, obs, trig); e.Role != "combobox" {
		t.Errorf("trigger: %+v", e)
	}
	res := ok(t, "choose from a custom dropdown")(p.SelectOption(tctx(t, tab), trig, "Banana"))
	if !strings.Contains(res.Detail, `"Banana"`) {
		t.Errorf("detail %q", res.Detail)
	}
	out := resolve(t, tab, p, "#out")
	_ = out
	obs = observe(t, tab, p, ObserveOptions{})
	if e := find(t, obs, trig); e.Text != "Banana" {
		t.Errorf("trigger shows %q after the choice", e.Text)
	}
	res, err := p.SelectOption(tctx(t, tab), trig, "Durian")
	if err != nil || res.OK || !strings.Contains(res.Reason, "Durian") {
		t.Errorf("missing option: %+v %v", res, err)
	}
}

func writeFile(t *testing.T, name, content string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	return path, hex.EncodeToString(sum[:])
}

func TestUploadFile(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageUpload))
	observe(t, tab, p, ObserveOptions{})
	one, oneSum := writeFile(t, "one.txt", "the first file\n")
	two, twoSum := writeFile(t, "two.csv", "a,b\n1,2\n")
	three, threeSum := writeFile(t, "three.pdf", "%PDF-1.4 not really\n")

	ok(t, "upload through a file input")(p.UploadFile(tctx(t, tab), resolve(t, tab, p, "#single-file"), []string{one}))
	ok(t, "upload two files")(p.UploadFile(tctx(t, tab), resolve(t, tab, p, "#multi-files"), []string{two, one}))
	// #hidden-file is hidden: only the styled button can reach it.
	chooser := resolve(t, tab, p, "#choose-file")
	res := ok(t, "upload through the chooser")(p.UploadFile(tctx(t, tab), chooser, []string{three}))
	if !strings.Contains(res.Detail, "chooser") {
		t.Errorf("detail %q", res.Detail)
	}
	obs := observe(t, tab, p, ObserveOptions{})
	if !strings.Contains(obs.Text, "three.pdf") {
		t.Errorf("the page did not see the chosen file: %q", obs.Text)
	}
	if v := find(t, obs, resolve(t, tab, p, "#multi-files")).Value; v != "two.csv, one.txt" {
		t.Errorf("multi-files value %q", v)
	}
	if _, err := p.UploadFile(tctx(t, tab), chooser, []string{filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Errorf("a missing file gave no error")
	}
	ok(t, "submit")(p.Click(tctx(t, tab), resolve(t, tab, p, "#upload-button")))
	ev := waitEventWith(t, site, testsite.EventUpload, "", "")
	got := map[string]string{}
	for _, f := range ev.Files {
		got[f.Field+"/"+f.Name] = f.SHA256
	}
	want := map[string]string{"single/one.txt": oneSum, "multi/two.csv": twoSum, "multi/one.txt": oneSum, "styled/three.pdf": threeSum}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("server got %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func TestNavigation(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)

	// An unreachable port: a failed result and ErrNavigation.
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String() + "/"
	l.Close()
	res, err := p.GoTo(tctx(t, tab), dead)
	if !errors.Is(err, ErrNavigation) || res.OK || !strings.Contains(res.Reason, "could not load "+dead+": net::ERR_CONNECTION_REFUSED") {
		t.Fatalf("unreachable: %+v %v", res, err)
	}

	goTo(t, tab, p, site.URL(testsite.PageIndex))
	obs := observe(t, tab, p, ObserveOptions{})
	var link string
	for _, e := range obs.Elements {
		if e.Tag == "a" && strings.HasSuffix(e.Href, testsite.PageProducts) {
			link = e.ID
		}
	}
	if link == "" {
		t.Fatalf("no link to the products page:\n%s", obs.Rendered)
	}
	res = ok(t, "follow a link")(p.Click(tctx(t, tab), link))
	if !res.Navigated || !strings.HasSuffix(res.URL, testsite.PageProducts) {
		t.Errorf("link click: %+v", res)
	}
	res = ok(t, "go back")(p.GoBack(tctx(t, tab)))
	if !strings.HasSuffix(res.URL, "/") {
		t.Errorf("back: %+v", res)
	}
	obs = observe(t, tab, p, ObserveOptions{})
	if !strings.HasSuffix(obs.URL, "/") {
		t.Errorf("after back the page is %s", obs.URL)
	}
	// An HTTP error still loads a page; Detail says so.
	res = ok(t, "go to a missing page")(p.GoTo(tctx(t, tab), site.URL("/missing.html")))
	if !strings.Contains(res.Detail, "404") {
		t.Errorf("404: %+v", res)
	}
	// A slow page within the deadline.
	res = ok(t, "slow page")(p.GoTo(tctx(t, tab), site.URL(testsite.SlowPath(300))))
	if !res.Navigated {
		t.Errorf("slow: %+v", res)
	}
	// A page slower than the deadline (it never answers): a failed
	// result, ErrNavigation.
	res, err = p.GoTo(expiringCtx(t, tab, 700*time.Millisecond), hangingURL(t))
	if !errors.Is(err, ErrNavigation) || res.OK || !strings.Contains(res.Reason, "timed out") {
		t.Errorf("too slow: %+v %v", res, err)
	}
	ok(t, "about:blank")(p.GoTo(tctx(t, tab), "about:blank"))
	if obs := observe(t, tab, p, ObserveOptions{}); obs.URL != "about:blank" || len(obs.Elements) != 0 {
		t.Errorf("about:blank: %s, %d elements", obs.URL, len(obs.Elements))
	}
	// The first entry of a fresh tab has nothing before it.
	tab2, p2 := newTab(t)
	res, err = p2.GoBack(tctx(t, tab2))
	if err != nil || res.OK {
		t.Errorf("back on a fresh tab: %+v %v", res, err)
	}
}

// A page whose load event never comes: an image that never finishes.
func TestGoToWithoutLoadEvent(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>never loads</title><button id=b>Ready</button><img src="/hang.png">`)
	})
	var imgDone atomic.Int32
	mux.HandleFunc("/hang.png", func(w http.ResponseWriter, r *http.Request) {
		defer imgDone.Add(1)
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.CloseClientConnections)
	t.Cleanup(srv.Close)
	tab, p := newTab(t)
	// The image, and so the load event, waits for the end of the test:
	// GoTo returns on the interactive document, after its own grace for
	// the load event, well before the hang guard.
	res := ok(t, "go to a page without load")(p.GoTo(tctx(t, tab), srv.URL+"/"))
	if !strings.Contains(res.Detail, "interactive") || imgDone.Load() != 0 {
		t.Errorf("no load event: %+v (image requests ended: %d)", res, imgDone.Load())
	}
	ok(t, "click on the interactive page")(p.Click(tctx(t, tab), resolve(t, tab, p, "#b")))
}

func TestResolve(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageForm))
	css := resolve(t, tab, p, "#email")
	xp := resolve(t, tab, p, "xpath=//input[@name='email']")
	if css != xp {
		t.Errorf("CSS gave %s, XPath %s", css, xp)
	}
	if id := resolve(t, tab, p, "//button[@id='submit-button']"); id == "" {
		t.Errorf("bare XPath")
	}
	// ResolveNow looks once: a match is the same element, no match an
	// error at once (the context would let it wait a minute).
	if id, err := p.ResolveNow(tctx(t, tab), "xpath=//input[@name='email']"); err != nil || id != css {
		t.Errorf("ResolveNow: %q, %v; Resolve gave %q", id, err, css)
	}
	if _, err := p.ResolveNow(tctx(t, tab), "#no-such-element"); !errors.Is(err, ErrNoMatch) || strings.Contains(err.Error(), "waited") {
		t.Errorf("ResolveNow with no match: %v", err)
	}
	// Resolve polls until its deadline: a missing element gives
	// ErrNoMatch once the deadline has passed, not before.
	start := time.Now()
	_, err := p.Resolve(expiringCtx(t, tab, 400*time.Millisecond), "#no-such-element")
	if !errors.Is(err, ErrNoMatch) || !strings.Contains(err.Error(), "#no-such-element") {
		t.Errorf("no match: %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("no match returned after %v, before its deadline", d)
	}
	// An invalid selector fails at once: before its context ends.
	ictx := tctx(t, tab)
	_, err = p.Resolve(ictx, "div[[[")
	if err == nil || errors.Is(err, ErrNoMatch) || ictx.Err() != nil {
		t.Errorf("invalid selector: %v (context: %v)", err, ictx.Err())
	}
	// A match in the cross-origin frame after an observation found it.
	goTo(t, tab, p, site.URL(testsite.PageFrames))
	observe(t, tab, p, ObserveOptions{})
	id, err := p.Resolve(tctx(t, tab), "xpath=//button[@id='frame-button']")
	if err != nil || id == "" {
		t.Errorf("frame button: %v", err)
	}
}

func TestKeysScrollHoverWait(t *testing.T) {
	page := `<!doctype html><title>misc</title><body style="height:3000px">
<input id=q><p id=hov>hover me</p><p id=out>-</p>
<div id=box style="height:100px;overflow:auto"><div style="height:1000px">tall</div></div>
<script>
document.getElementById('hov').addEventListener('mouseenter', function(){ document.getElementById('out').textContent = 'hovered'; });
document.getElementById('q').addEventListener('keydown', function(e){ if (e.key === 'Escape') document.getElementById('out').textContent = 'escape'; });
</script></body>`
	base := serveHTML(t, map[string]string{"/": page})
	tab, p := newTab(t)
	goTo(t, tab, p, base+"/")
	q := resolve(t, tab, p, "#q")
	ok(t, "type")(p.InputText(tctx(t, tab), q, "hello"))
	ok(t, "select all")(p.KeyPress(tctx(t, tab), "Control+A"))
	ok(t, "delete")(p.KeyPress(tctx(t, tab), "Backspace"))
	ok(t, "type a key")(p.KeyPress(tctx(t, tab), "x"))
	ok(t, "escape")(p.KeyPress(tctx(t, tab), "Escape"))
	obs := observe(t, tab, p, ObserveOptions{})
	if v := find(t, obs, q).Value; v != "x" {
		t.Errorf("after Control+A, Backspace, x: %q", v)
	}
	if !strings.Contains(obs.Text, "escape") {
		t.Errorf("Escape did not reach the field")
	}
	if _, err := p.KeyPress(tctx(t, tab), "Hyper+Q"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown modifier: %v", err)
	}
	if _, err := p.KeyPress(tctx(t, tab), "LaunchRocket"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}

	ok(t, "hover")(p.Hover(tctx(t, tab), resolve(t, tab, p, "#hov")))
	res := ok(t, "scroll the page")(p.Scroll(tctx(t, tab), "", 0, 600))
	obs = observe(t, tab, p, ObserveOptions{})
	if obs.Scroll[1] < 500 || !strings.Contains(res.Detail, "y=") {
		t.Errorf("scroll: %+v, now at %v", res, obs.Scroll)
	}
	if !strings.Contains(obs.Text, "hovered") {
		t.Errorf("hover did not fire mouseenter")
	}
	box := resolve(t, tab, p, "#box")
	res = ok(t, "scroll a box")(p.Scroll(tctx(t, tab), box, 0, 200))
	if !strings.Contains(res.Detail, "div#box") {
		t.Errorf("box scroll: %+v", res)
	}
	start := time.Now()
	ok(t, "wait")(p.Wait(tctx(t, tab), 50*time.Millisecond))
	if time.Since(start) < 50*time.Millisecond {
		t.Errorf("wait returned early")
	}
	if b, err := p.Screenshot(tctx(t, tab), 50); err != nil || len(b) < 100 {
		t.Errorf("screenshot: %d bytes, %v", len(b), err)
	}
	if b, err := p.PrintPDF(tctx(t, tab)); err != nil || !strings.HasPrefix(string(b), "%PDF") {
		t.Errorf("pdf: %d bytes, %v", len(b), err)
	}
}

// A click on an attachment link starts a download, not a navigation: it
// must come back quickly, with the page still usable.
func TestClickDownloadLink(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageDownload))
	obs := observe(t, tab, p, ObserveOptions{})
	var link string
	for _, e := range obs.Elements {
		if strings.HasSuffix(e.Href, "/files/report.csv") {
			link = e.ID
		}
	}
	if link == "" {
		t.Fatalf("no attachment link:\n%s", obs.Rendered)
	}
	// It returns when the tab stops loading, not after the wait for a
	// navigation that never commits ("had not finished").
	res, err := p.Click(tctx(t, tab), link)
	if err != nil || !res.OK || res.Navigated || strings.Contains(res.Detail, "had not finished") {
		t.Errorf("download click: %+v %v", res, err)
	}
	if _, err := p.Observe(tctx(t, tab), ObserveOptions{}); err != nil {
		t.Errorf("observe after the download: %v", err)
	}
}

// TestInputTextEnter: a newline ending the text of a one-line field is the
// Enter key, as a keyboard makes it: a todo list that adds items on Enter
// only gets them, and the result says Enter was pressed.
func TestInputTextEnter(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageTodos))
	observe(t, tab, p, ObserveOptions{})
	field := resolve(t, tab, p, "#new-todo")
	for _, title := range []string{"Buy milk", "Call the plumber"} {
		res := ok(t, "type "+title)(p.InputText(tctx(t, tab), field, title+"\n"))
		if !strings.Contains(res.Detail, "then pressed Enter") {
			t.Errorf("typing %q: detail %q", title, res.Detail)
		}
		if ev := waitEventWith(t, site, testsite.EventTodoAdded, "title", title); ev.Form.Get("title") != title {
			t.Errorf("added %q, want %q", ev.Form.Get("title"), title)
		}
	}
	obs := observe(t, tab, p, ObserveOptions{})
	if !strings.Contains(obs.Text, "Buy milk") || !strings.Contains(obs.Text, "Call the plumber") || !strings.Contains(obs.Text, "2 items left") {
		t.Errorf("the list after two Enters:\n%s", obs.Text)
	}
	if e := find(t, obs, field); e.Value != "" {
		t.Errorf("the field holds %q after Enter; the page clears it", e.Value)
	}
}

// TestClickWaitsForActionability: a click waits, within the action wait,
// for its element to appear, be enabled, stop moving and come into view,
// as a person waits for a control; when the wait ends first, the reason
// says which condition was not met and how long it was waited. A cover
// that stays is reported after a short wait.
func TestClickWaitsForActionability(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageLate+"?gate=late"))
	observe(t, tab, p, ObserveOptions{})
	for _, tc := range []struct {
		sel, gate, reason string
	}{
		{"#late-button", "late-show", "is not visible (it has no size)"},
		{"#disabled-button", "late-enable", "is disabled"},
		{"#sliding-button", "late-slide", "is "},
	} {
		id := resolve(t, tab, p, tc.sel)
		short := WithActionWait(tctx(t, tab), 300*time.Millisecond)
		res, err := p.Click(short, id)
		if err != nil || res.OK || !strings.Contains(res.Reason, tc.reason) || !strings.Contains(res.Reason, "(waited ") {
			t.Errorf("%s before its gate: %+v %v; want a failure saying %q and how long it waited", tc.sel, res, err, tc.reason)
		}
		long := WithActionWait(tctx(t, tab), hangGuard)
		done := make(chan Result, 1)
		go func() {
			res, err := p.Click(long, id)
			if err != nil {
				res.Reason += " (" + err.Error() + ")"
			}
			done <- res
		}()
		site.OpenGate(tc.gate)
		if res := <-done; !res.OK {
			t.Errorf("%s once its gate opened: %+v", tc.sel, res)
			continue
		}
		waitEventWith(t, site, testsite.EventLateClick, "button", strings.TrimPrefix(tc.sel, "#"))
	}
	// The overlay never goes by itself: the click reports it after the
	// short wait for covers (coveredWait), not the whole action wait, which
	// here is as long as the hang guard. The wait it reports tells which:
	// at least coveredWait, and far from the action wait.
	id := resolve(t, tab, p, "#covered-button")
	res, err := p.Click(WithActionWait(tctx(t, tab), hangGuard), id)
	waited := reportedWait(res.Reason)
	if err != nil || res.OK || !strings.Contains(res.Reason, "covered by div#overlay") || waited < coveredWait-2*actionPoll || waited > hangGuard/2 {
		t.Errorf("a covered button: %+v %v", res, err)
	}
	site.OpenGate("late-uncover")
}

// TestActionsInScrolledContainers: a control inside a container with
// overflow: auto, out of the container's view while its box lies inside
// the viewport (or below it, or inside a container inside another, or to
// the right), is scrolled into view by the action itself, for clicks,
// typing, hovering and custom dropdowns; a real overlay is still reported.
func TestActionsInScrolledContainers(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	open := func(query string) {
		t.Helper()
		goTo(t, tab, p, site.URL(testsite.PageActionsScroll+query))
		observe(t, tab, p, ObserveOptions{})
	}
	for _, sel := range []string{"#deep-button", "#nested-button", "#right-button", "#far-button", "#cut-link"} {
		open("")
		ok(t, "click "+sel)(p.Click(tctx(t, tab), resolve(t, tab, p, sel)))
		waitEventWith(t, site, testsite.EventActionsClick, "button", strings.TrimPrefix(sel, "#"))
	}

	open("")
	ok(t, "type into #deep-input")(p.InputText(tctx(t, tab), resolve(t, tab, p, "#deep-input"), "umber\n"))
	waitEventWith(t, site, testsite.EventActionsField, "field", "deep-input")

	open("")
	ok(t, "hover #hover-target")(p.Hover(tctx(t, tab), resolve(t, tab, p, "#hover-target")))
	waitEventWith(t, site, testsite.EventActionsClick, "button", "hover")

	open("")
	ok(t, "choose in #menu-button")(p.SelectOption(tctx(t, tab), resolve(t, tab, p, "#menu-button"), "Sienna"))
	if ev := waitEventWith(t, site, testsite.EventActionsField, "field", "menu"); ev.Form.Get("value") != "Sienna" {
		t.Errorf("the menu chose %q, want Sienna", ev.Form.Get("value"))
	}

	// A modal over the page covers the button wherever it is scrolled.
	open("?modal=1")
	res, err := p.Click(WithActionWait(tctx(t, tab), 200*time.Millisecond), resolve(t, tab, p, "#deep-button"))
	if err != nil || res.OK || !strings.Contains(res.Reason, "covered by div#modal") {
		t.Errorf("a button under a modal: %+v %v; want a failure saying it is covered by div#modal", res, err)
	}
}

// TestInputTextReadOnlyAndPickers: typing into a field that cannot take
// it fails with a reason that says what to do instead.
func TestInputTextReadOnlyAndPickers(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageActionsReadonly))
	observe(t, tab, p, ObserveOptions{})
	for _, tc := range []struct {
		sel, text string
		want      []string // in the reason
		not       string   // not in the reason
	}{
		{"#depart", "2026-05-14", []string{"read-only", "picker", "click it"}, ""},
		{"#return", "2026-05-20", []string{"read-only", "picker", `button "Open the calendar"`}, ""},
		{"#guests", "3", []string{"read-only", "cannot be typed into"}, "click"},
		{"#masked", "09:00-10:00", []string{`the page cleared it`, `button "Choose a slot"`}, ""},
		{"#native", "03/14/2026", []string{"a date field", "YYYY-MM-DD"}, ""},
	} {
		res, err := p.InputText(tctx(t, tab), resolve(t, tab, p, tc.sel), tc.text)
		if err != nil || res.OK {
			t.Errorf("%s: %+v %v; want a failure", tc.sel, res, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(res.Reason, w) {
				t.Errorf("%s: reason %q does not say %q", tc.sel, res.Reason, w)
			}
		}
		if tc.not != "" && strings.Contains(res.Reason, tc.not) {
			t.Errorf("%s: reason %q says %q", tc.sel, res.Reason, tc.not)
		}
	}
	// The date field takes the format it names.
	ok(t, "type a date in its format")(p.InputText(tctx(t, tab), resolve(t, tab, p, "#native"), "2026-03-14"))
	// What the reason for #depart tells the model to do works.
	ok(t, "open the picker")(p.Click(tctx(t, tab), resolve(t, tab, p, "#depart")))
	observe(t, tab, p, ObserveOptions{})
	ok(t, "choose a day")(p.Click(tctx(t, tab), resolve(t, tab, p, "#depart-picker .day:nth-child(3)")))
	if ev := waitEventWith(t, site, testsite.EventActionsField, "field", "depart"); ev.Form.Get("value") != "2026-05-14" {
		t.Errorf("the picker set %q", ev.Form.Get("value"))
	}
}

// TestInputTextWaitsForSuggestions: typing into a field whose suggestions
// come from the server after a debounce waits for them, so that the next
// observation shows them.
func TestInputTextWaitsForSuggestions(t *testing.T) {
	site := testsite.Start(t)
	tab, p := newTab(t)
	goTo(t, tab, p, site.URL(testsite.PageActionsSuggest))
	observe(t, tab, p, ObserveOptions{})
	for _, tc := range []struct{ sel, text, want string }{
		{"#city", "pa", "Paducah, KY (PAH)"},  // an ARIA combobox
		{"#airport", "ut", "Utica, NY (UCA)"}, // autocomplete=off and a jQuery UI class
	} {
		res := ok(t, "type into "+tc.sel)(p.InputText(tctx(t, tab), resolve(t, tab, p, tc.sel), tc.text))
		obs := observe(t, tab, p, ObserveOptions{})
		if !strings.Contains(obs.Rendered, tc.want) && !strings.Contains(obs.Text, tc.want) {
			t.Errorf("%s: after typing %q (%+v) the observation does not show the suggestion %q:\n%s\n%s", tc.sel, tc.text, res, tc.want, obs.Rendered, obs.Text)
		}
		if !strings.Contains(res.Detail, "suggestions") {
			t.Errorf("%s: the result %+v does not say that suggestions show", tc.sel, res)
		}
	}
}
