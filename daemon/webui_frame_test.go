package daemon_test

// The live frame of a running run: GET /v1/runs/{id}/frame and the run
// page's picture, over a run_action run open in a real Chromium on a page
// whose colour the test sets.

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

// colourSite serves pages filled with one colour: /green, and /blue which
// the link on /green leads to.
func colourSite(t *testing.T) string {
	t.Helper()
	page := func(colour, next string) string {
		return `<!doctype html><title>` + colour + `</title><style>html,body{margin:0;height:100%;background:` + colour +
			`}</style><a id="next" href="` + next + `" style="color:` + colour + `">next</a>`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /green", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page("rgb(0, 200, 0)", "/blue"))
	})
	mux.HandleFunc("GET /blue", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page("rgb(0, 0, 220)", "/green"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// frameOf reads GET /v1/runs/{id}/frame with key: the status, the
// picture decoded (nil unless 200), when it was taken, and the body.
func frameOf(t *testing.T, base, key, id string) (int, image.Image, time.Time, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/v1/runs/"+id+"/frame", nil)
	req.Header.Set("x-api-key", key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, nil, time.Time{}, string(body)
	}
	if ct, cc := res.Header.Get("Content-Type"), res.Header.Get("Cache-Control"); ct != "image/jpeg" || cc != "no-store" {
		t.Errorf("frame headers: Content-Type %q, Cache-Control %q", ct, cc)
	}
	taken, err := time.Parse(time.RFC3339Nano, res.Header.Get(client.FrameTakenHeader))
	if err != nil {
		t.Fatalf("%s %q: %v", client.FrameTakenHeader, res.Header.Get(client.FrameTakenHeader), err)
	}
	img, err := jpeg.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the frame is not a JPEG: %v", err)
	}
	return res.StatusCode, img, taken, ""
}

// near reports whether the pixel at the centre of img is within a JPEG's
// error of r, g, b.
func near(img image.Image, r, g, b int) bool {
	bd := img.Bounds()
	cr, cg, cb, _ := img.At(bd.Dx()/2, bd.Dy()/2).RGBA()
	d := func(x uint32, want int) bool { v := int(x >> 8); return v >= want-24 && v <= want+24 }
	return d(cr, r) && d(cg, g) && d(cb, b)
}

func centre(img image.Image) string {
	bd := img.Bounds()
	r, g, b, _ := img.At(bd.Dx()/2, bd.Dy()/2).RGBA()
	return fmt.Sprintf("rgb(%d, %d, %d)", r>>8, g>>8, b>>8)
}

// TestWebUILiveFrame: a run open in a real Chromium on a green page has a
// frame: a JPEG of the viewport (1280×720) showing green, and blue once
// the run has moved to the blue page; another organization gets a 404. Its
// page shows the picture, loaded again while the run goes on, with alt
// text; once the run is over the picture goes, and the API answers 409
// with why.
func TestWebUILiveFrame(t *testing.T) {
	path, err := browser.FindChromium("")
	if err != nil {
		t.Skipf("skipped: Chromium is missing (apt-get install chromium): %v", err)
	}
	eng, err := engine.New(t.Context(), engine.Config{Chromium: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	exec := &scripted.Executor{}
	t.Cleanup(exec.ReleaseAll)
	d := newUIDaemon(t, daemon.Config{Executor: exec, Actions: eng, Workers: 1})
	site := colourSite(t)

	// The run opens on the green page; a click on its body changes nothing.
	act, err := d.a.Actions.Run(t.Context(), &client.RunActionRequest{URL: site + "/green",
		Action: client.Action{Type: client.ActionClick, Selector: "body", Intention: "the page"}})
	if err != nil {
		t.Fatal(err)
	}
	runID := act.WorkflowRunID

	status, img, taken, body := frameOf(t, d.url, d.keyA, runID)
	if status != http.StatusOK {
		t.Fatalf("the frame of an open run: %d %s", status, body)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 720 || !near(img, 0, 200, 0) {
		t.Fatalf("the frame is %dx%d with %s at its centre, want 1280x720 green", b.Dx(), b.Dy(), centre(img))
	}
	if age := time.Since(taken); age > 5*time.Second || age < -time.Second {
		t.Errorf("the frame was taken %v ago", age)
	}
	if _, err := d.b.Runs.Frame(t.Context(), runID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another organization's frame: %v, want a 404", err)
	}

	// The run moves to the blue page: a later frame shows it.
	if _, err := d.a.Actions.Run(t.Context(), &client.RunActionRequest{WorkflowRunID: runID,
		Action: client.Action{Type: client.ActionClick, Selector: "#next", Intention: "the next link"}}); err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(30 * time.Second)
	for {
		status, img, later, body := frameOf(t, d.url, d.keyA, runID)
		if status == http.StatusOK && near(img, 0, 0, 220) && later.After(taken) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no blue frame after the click: %d %s %v", status, body, img != nil && near(img, 0, 200, 0))
		}
		time.Sleep(100 * time.Millisecond) // the next picture is due a second after the last
	}

	// The run's page shows the picture, with alt text, loaded again while
	// the run goes on.
	tab := d.signedIn(t)
	d.open(t, tab, "/ui/runs/"+runID)
	uiUntil(t, tab, "the frame loaded", `(() => { const i = document.getElementById("frame"); return !!i && !i.hidden && i.complete && i.naturalWidth === 1280 && i.naturalHeight === 720; })()`)
	if alt := uiRun(t, tab, chromedp.Evaluate[string](`document.getElementById("frame").alt`)); !strings.Contains(alt, "page the run's browser shows now") {
		t.Errorf("the frame's alt text: %q", alt)
	}
	uiUntil(t, tab, "the frame loaded again", `(() => { const i = document.getElementById("frame"); return /[?]n=[0-9]+$/.test(i.getAttribute("src")) && i.complete && i.naturalWidth === 1280; })()`)

	// Over: the picture goes from the page, and the API says why.
	if err := d.a.Runs.Cancel(t.Context(), runID); err != nil {
		t.Fatal(err)
	}
	uiUntil(t, tab, "the frame gone once the run is over", `document.getElementById("frame") === null && !document.querySelector("[data-live]")`)
	status, _, _, body = frameOf(t, d.url, d.keyA, runID)
	if status != http.StatusConflict || !strings.Contains(body, "is over") {
		t.Errorf("the frame of a run that is over: %d %s, want 409 saying it is over", status, body)
	}
	if status, _, _, body := frameOf(t, d.url, d.keyA, "wr_1"); status != http.StatusNotFound {
		t.Errorf("an unknown run's frame: %d %s, want 404", status, body)
	}
}
