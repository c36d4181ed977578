package testsite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read: %v", u, err)
	}
	return resp, string(b)
}

// keyIDs are the ids each page must carry, as tests select them.
var keyIDs = map[string][]string{
	PageIndex: {"pages", "link-form", "other-origin"},
	PageForm: {"main-form", "text", "email", "password", "number", "range", "date", "time",
		"datetime-local", "month", "week", "color", "tel", "url", "search", "nickname",
		"agree", "newsletter", "plan-free", "plan-pro", "plan-team", "country", "languages",
		"message", "editor", "disabled-input", "readonly-input", "token", "form-id",
		"controlled", "controlled-echo", "controlled-react", "controlled-react-echo", "submit-button"},
	PageUpload:       {"upload-form", "single-file", "multi-files", "hidden-file", "choose-file", "chosen", "note", "upload-button"},
	PageDownload:     {"report-link", "blank-download", "js-download", "js-status", "attr-download", "big-link"},
	PageDialogs:      {"alert-button", "confirm-button", "prompt-button", "result"},
	PagePopup:        {"open-popup", "blank-link", "popup-status"},
	PagePopupTarget:  {"popup-form", "popup-name", "popup-email", "popup-submit", "close-window", "via"},
	PageFrames:       {"same-frame", "cross-frame", "nested-frame", "cross-nested-frame"},
	PageFrameNested:  {"inner-frame"},
	PageFrameInner:   {"frame-input", "frame-button", "frame-result", "frame-origin", "frame-depth"},
	PageShadow:       {"widget", "shadow-input", "shadow-button", "inner", "inner-input", "inner-button", "result"},
	PageCookieBanner: {"cookie-banner", "accept-cookies", "reject-cookies", "continue-button", "result"},
	PageLateSPA:      {"spa-app", "spa-loading", "spa-list", "spa-item-", "open-detail", "detail-title", "back-button"},
	PageBig:          {"top-search", "top-button", "top-link", "big-result", "link-0", "button-1", "input-2", "button-448", "bottom-button"},
	PageRerender:     {"list-container", "render-count", "selected"},
	PageLogin:        {"login-form", "username", "password", "login-button", "login-error"},
	PageProducts:     {"products", "product-SKU-1001", "product-SKU-1008"},
	PageLate:         {"late-button", "disabled-button", "panel", "sliding-button", "covered-button", "overlay", "clicked"},
	PageTodos:        {"new-todo", "todo-list", "todo-count"},
	PageNames:        {"headline-1", "gallery-link", "destroy-button", "css-search", "volume-slider", "todos", "row-1", "toppings"},
	SlowPath(10):     {"slow-done"},
}

// Some ids are built by scripts; those pages name them in their scripts.
var scriptIDs = map[string]bool{"spa-list": true, "spa-item-": true, "open-detail": true,
	"detail-title": true, "back-button": true, "list-container": true,
	"shadow-input": true, "shadow-button": true, "inner-input": true, "inner-button": true}

func TestPagesAnswerWithTheirIDs(t *testing.T) {
	s := Start(t)
	for page, ids := range keyIDs {
		resp, body := get(t, s.URL(page))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", page, resp.StatusCode)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", page, ct)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: Cache-Control %q", page, cc)
		}
		for _, id := range ids {
			want := `id="` + id + `"`
			if scriptIDs[id] {
				want = id
			} else if strings.HasSuffix(id, "-") {
				want = `id="` + id
			}
			if !strings.Contains(body, want) {
				t.Errorf("%s: no %s", page, want)
			}
		}
	}
}

func TestStaticAssets(t *testing.T) {
	s := Start(t)
	for p, ct := range map[string]string{"/site.js": "text/javascript; charset=utf-8", "/site.css": "text/css; charset=utf-8"} {
		resp, body := get(t, s.URL(p))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != ct || body == "" {
			t.Errorf("%s: status %d, Content-Type %q, %d bytes", p, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
	for _, p := range []string{"/nope.html", "/files/nope.csv", "/site", "/../testsite.go"} {
		if resp, _ := get(t, s.URL(p)); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, resp.StatusCode)
		}
	}
}

// Every page is self-contained: any absolute URL in it is one of the
// site's two origins.
func TestNoExternalResources(t *testing.T) {
	s := Start(t)
	abs := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.\-\[\]:]*[a-z0-9\]]`)
	for page := range keyIDs {
		_, body := get(t, s.URL(page))
		for _, m := range abs.FindAllString(body, -1) {
			if m != s.URL("") && m != s.OtherURL("") {
				t.Errorf("%s: external reference %q", page, m)
			}
		}
	}
}

func TestOtherOrigin(t *testing.T) {
	s := Start(t)
	main, err := url.Parse(s.URL(PageForm))
	if err != nil {
		t.Fatal(err)
	}
	other, err := url.Parse(s.OtherURL(PageForm))
	if err != nil {
		t.Fatal(err)
	}
	if main.Hostname() != "127.0.0.1" || other.Hostname() != "localhost" {
		t.Errorf("hosts %q and %q, want 127.0.0.1 and localhost", main.Hostname(), other.Hostname())
	}
	if main.Port() == other.Port() || main.Port() == "" || other.Port() == "" {
		t.Errorf("ports %q and %q, want two different ports", main.Port(), other.Port())
	}
	if main.Path != PageForm || other.Path != PageForm {
		t.Errorf("paths %q and %q", main.Path, other.Path)
	}
	for _, page := range []string{PageForm, PageFrameInner, "/site.js"} {
		_, a := get(t, s.URL(page))
		_, b := get(t, s.OtherURL(page))
		if a != b {
			t.Errorf("%s differs between the origins", page)
		}
	}
	if got := s.URL("form.html"); got != s.URL(PageForm) {
		t.Errorf("URL without a slash: %q", got)
	}
}

func TestFramesReferenceOtherOrigin(t *testing.T) {
	s := Start(t)
	_, body := get(t, s.URL(PageFrames))
	for _, want := range []string{
		`src="` + s.OtherURL(PageFrameInner) + `"`,
		`src="` + s.OtherURL(PageFrameNested) + `"`,
		`src="` + PageFrameInner + `"`,
		`src="` + PageFrameNested + `"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("frames.html has no %s", want)
		}
	}
	if strings.Contains(body, "{{") {
		t.Error("frames.html has an unreplaced placeholder")
	}
	// Served from the other origin, the page points back at the main one.
	_, body = get(t, s.OtherURL(PageFrames))
	if !strings.Contains(body, `src="`+s.URL(PageFrameInner)+`"`) {
		t.Error("frames.html on the other origin does not reference the main origin")
	}
	_, body = get(t, s.URL(PageFrameNested))
	if !strings.Contains(body, `src="`+PageFrameInner+`"`) {
		t.Error("frame-nested.html does not hold frame-inner.html")
	}
}

func TestSubmitRecordsEvent(t *testing.T) {
	s := Start(t)
	form := url.Values{"text": {"Jane"}, "languages": {"go", "rust"}, "agree": {"yes"}, "message": {"<b>hi</b>"}}
	resp, err := http.PostForm(s.URL(PathSubmit), form)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="submitted"`) {
		t.Fatalf("status %d, body %s", resp.StatusCode, body)
	}
	if !strings.Contains(string(body), "&lt;b&gt;hi&lt;/b&gt;") {
		t.Error("the receipt does not escape values")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := s.WaitEvent(ctx, EventSubmit)
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != PathSubmit || !reflect.DeepEqual(e.Form, form) || string(e.Body) != form.Encode() || e.At.IsZero() {
		t.Errorf("event %+v", e)
	}
	if ev := s.Events(); len(ev) != 1 || ev[0].Kind != EventSubmit {
		t.Errorf("Events() = %+v", ev)
	}
	// Events hands out copies.
	s.Events()[0].Form.Set("text", "changed")
	if got := s.Events()[0].Form.Get("text"); got != "Jane" {
		t.Errorf("Events() shares its maps: %q", got)
	}
}

func TestUploadRecordsFiles(t *testing.T) {
	s := Start(t)
	a := []byte("first file\n")
	b := bytes.Repeat([]byte{0, 1, 2, 250, 255}, 100_000)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("note", "two files")
	for _, f := range []struct {
		field, name string
		data        []byte
	}{{"single", "a.txt", a}, {"multi", "b c.bin", b}, {"styled", "", nil}} {
		w, err := mw.CreateFormFile(f.field, f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.data)
	}
	mw.Close()
	resp, err := http.Post(s.URL(PathUpload), mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `id="uploaded"`) {
		t.Fatalf("status %d, body %s", resp.StatusCode, page)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := s.WaitEvent(ctx, EventUpload)
	if err != nil {
		t.Fatal(err)
	}
	sum := func(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }
	want := []UploadedFile{
		{Field: "single", Name: "a.txt", Size: int64(len(a)), SHA256: sum(a)},
		{Field: "multi", Name: "b c.bin", Size: int64(len(b)), SHA256: sum(b)},
	}
	if !reflect.DeepEqual(e.Files, want) {
		t.Errorf("files %+v, want %+v", e.Files, want)
	}
	if e.Form.Get("note") != "two files" || e.Path != PathUpload {
		t.Errorf("event %+v", e)
	}
}

func TestEventReport(t *testing.T) {
	s := Start(t)
	resp, err := http.Post(s.URL(PathEvent+"?kind=shadow-click&path=/shadow.html"),
		"application/x-www-form-urlencoded;charset=UTF-8", strings.NewReader("button=shadow-button&value=x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("status %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := s.WaitEvent(ctx, EventShadowClick)
	if err != nil {
		t.Fatal(err)
	}
	if e.Path != PageShadow || e.Form.Get("button") != "shadow-button" || string(e.Body) != "button=shadow-button&value=x" {
		t.Errorf("event %+v", e)
	}
	for _, bad := range []string{"", "Bad Kind", "../x"} {
		resp, err := http.Post(s.URL(PathEvent+"?kind="+url.QueryEscape(bad)), "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("kind %q: status %d", bad, resp.StatusCode)
		}
	}
}

func TestReportCSV(t *testing.T) {
	s := Start(t)
	resp, body := get(t, s.URL(FileReport))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := resp.Header.Get("Content-Disposition"); got != `attachment; filename="report 2026.csv"` {
		t.Errorf("Content-Disposition %q", got)
	}
	if got := resp.Header.Get("Content-Type"); !strings.HasPrefix(got, "text/csv") {
		t.Errorf("Content-Type %q", got)
	}
	if body != ReportCSV {
		t.Errorf("body %q, want %q", body, ReportCSV)
	}
	for p, want := range map[string]string{FileNotes: NotesTXT, FileExport: ExportJSON, FilePlain: PlainTXT} {
		if _, body := get(t, s.URL(p)); body != want {
			t.Errorf("%s: %q, want %q", p, body, want)
		}
	}
	if resp, _ := get(t, s.URL(FileNotes)); resp.Header.Get("Content-Disposition") != `attachment; filename="notes.txt"` {
		t.Errorf("notes.txt: Content-Disposition %q", resp.Header.Get("Content-Disposition"))
	}
	if resp, _ := get(t, s.URL(FilePlain)); resp.Header.Get("Content-Disposition") != "" {
		t.Error("plain.txt has a Content-Disposition")
	}
}

func TestBigFile(t *testing.T) {
	s := Start(t)
	for _, n := range []int64{0, 1000, 251*256 + 7} {
		resp, body := get(t, s.URL(BigPath(n)))
		if resp.StatusCode != http.StatusOK || body != string(BigFile(int(n))) || resp.ContentLength != n {
			t.Errorf("size %d: status %d, %d bytes, Content-Length %d", n, resp.StatusCode, len(body), resp.ContentLength)
		}
		if resp.Header.Get("Content-Disposition") != `attachment; filename="big.bin"` {
			t.Errorf("size %d: Content-Disposition %q", n, resp.Header.Get("Content-Disposition"))
		}
	}
	if resp, body := get(t, s.URL(FileBig)); len(body) != BigFileDefault {
		t.Errorf("default size: status %d, %d bytes", resp.StatusCode, len(body))
	}
	for _, bad := range []string{"-1", "x", "1073741825"} {
		if resp, _ := get(t, s.URL(FileBig+"?size="+bad)); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("size=%s: status %d", bad, resp.StatusCode)
		}
	}
}

func TestBigPageShape(t *testing.T) {
	s := Start(t)
	_, body := get(t, s.URL(PageBig))
	elements := len(regexp.MustCompile(`<[a-zA-Z]`).FindAllString(body, -1))
	if elements < 1900 || elements > 2200 {
		t.Errorf("%d elements, want about 2,000", elements)
	}
	interactive := len(regexp.MustCompile(`<(a|button|input|select|textarea)[\s>]`).FindAllString(body, -1))
	if interactive < 300 {
		t.Errorf("%d interactive elements, want several hundred", interactive)
	}
	_, again := get(t, s.URL(PageBig))
	if again != body {
		t.Error("big.html is not deterministic")
	}
}

func TestProductsPage(t *testing.T) {
	s := Start(t)
	_, body := get(t, s.URL(PageProducts))
	last := 0
	for _, p := range Products() {
		stock := "Out of stock"
		if p.InStock {
			stock = "In stock"
		}
		row := `<tr id="product-` + p.SKU + `" data-sku="` + p.SKU + `"><td class="name">` + p.Name +
			`</td><td class="sku">` + p.SKU + `</td><td class="price" data-price="` + p.Price[1:] + `">` + p.Price +
			`</td><td class="stock">` + stock + `</td></tr>`
		i := strings.Index(body, row)
		if i < last {
			t.Errorf("row of %s missing or out of order", p.SKU)
			continue
		}
		last = i
	}
}

func TestLoginFlow(t *testing.T) {
	s := Start(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}

	resp, err := c.Get(s.URL(PageAccount))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != PageLogin {
		t.Errorf("account without a session went to %s", resp.Request.URL)
	}

	resp, err = c.PostForm(s.URL(PathLogin), url.Values{"username": {"alice"}, "password": {""}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != PageLogin || resp.Request.URL.Query().Get("error") != "missing" {
		t.Errorf("empty password went to %s", resp.Request.URL)
	}

	resp, err = c.PostForm(s.URL(PathLogin), url.Values{"username": {"alice <3"}, "password": {"pw"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Request.URL.Path != PageAccount || !strings.Contains(string(body), `<h1 id="welcome">Welcome, alice &lt;3</h1>`) {
		t.Errorf("login went to %s: %s", resp.Request.URL, body)
	}
	ev := s.Events()
	if len(ev) != 2 || ev[1].Kind != EventLogin || ev[1].Form.Get("username") != "alice <3" {
		t.Errorf("events %+v", ev)
	}

	resp, err = c.Get(s.URL(PathLogout))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = c.Get(s.URL(PageAccount))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != PageLogin {
		t.Errorf("account after logout went to %s", resp.Request.URL)
	}
}

func TestSlow(t *testing.T) {
	s := Start(t)
	start := time.Now()
	resp, body := get(t, s.URL(SlowPath(150)))
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Done after 150 ms") {
		t.Errorf("status %d, body %s", resp.StatusCode, body)
	}
	for q, want := range map[string]time.Duration{"": time.Second, "ms=-5": 0, "ms=99999999": SlowMax, "ms=20": 20 * time.Millisecond} {
		v, _ := url.ParseQuery(q)
		if got, err := slowDelay(v); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", q, got, err, want)
		}
	}
	if resp, _ := get(t, s.URL(PageSlow+"?ms=soon")); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("ms=soon: status %d", resp.StatusCode)
	}
}

func TestWaitEventTimesOut(t *testing.T) {
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	_, err := s.WaitEvent(ctx, "never")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want a deadline error", err)
	}
	if now := time.Now(); now.Before(deadline) {
		t.Errorf("returned %v before the deadline", deadline.Sub(now))
	}
}

func TestWaitEventWakesUp(t *testing.T) {
	s := Start(t)
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.record(Event{Kind: "other"})
		resp, err := http.Post(s.OtherURL(PathEvent+"?kind=frame-click&path=/frame-inner.html"),
			"application/x-www-form-urlencoded", strings.NewReader("value=v&depth=1"))
		if err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, err := s.WaitEvent(ctx, EventFrameClick)
	if err != nil {
		t.Fatal(err)
	}
	if e.Form.Get("value") != "v" || e.Path != PageFrameInner {
		t.Errorf("event %+v", e)
	}
}

// TestStaticReportCopy: site/files/report.csv is for serving the site with a
// plain static server (python3 -m http.server, as the examples do); it must
// stay the same bytes as the report this package generates.
func TestStaticReportCopy(t *testing.T) {
	b, err := os.ReadFile("site/files/report.csv")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != ReportCSV {
		t.Errorf("site/files/report.csv differs from ReportCSV:\n%q\nwant\n%q", b, ReportCSV)
	}
}
