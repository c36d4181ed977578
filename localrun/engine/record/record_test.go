package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const chromiumPath = "/usr/bin/chromium"

// animPage has a CSS animation and a counter that requestAnimationFrame
// updates, so the compositor draws every frame.
const animPage = `<!doctype html><html><head><title>anim</title><style>
html,body{margin:0;background:#fff}
#box{position:absolute;top:200px;left:0;width:120px;height:120px;background:#d00;animation:move 1s linear infinite alternate}
@keyframes move{to{transform:translateX(1000px) rotate(180deg)}}
#c{font:48px sans-serif;margin:20px}
</style></head><body><div id=c>0</div><div id=box></div><script>
let n=0;function f(){n++;document.getElementById('c').textContent=n;requestAnimationFrame(f)}requestAnimationFrame(f)
</script></body></html>`

// solidPage is a still page of one colour.
func solidPage(color string) string {
	return `<!doctype html><html><head><title>` + color + `</title><style>html,body{margin:0;height:100%;background:#` +
		color + `}</style></head><body></body></html>`
}

func pageServer(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if c, ok := strings.CutPrefix(r.URL.Path, "/solid/"); ok {
			fmt.Fprint(w, solidPage(c))
			return
		}
		fmt.Fprint(w, animPage)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// localhostURL gives the URL of the same server under another site name, so
// that a navigation there swaps the renderer process.
func localhostURL(ts *httptest.Server) string {
	return strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)
}

var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserCancel []context.CancelFunc
	browserErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	for i := len(browserCancel) - 1; i >= 0; i-- {
		browserCancel[i]()
	}
	os.Exit(code)
}

func needTools(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("skipping: %s is missing (apt-get install chromium)", chromiumPath)
	}
	ff, err := FindFFmpeg("")
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("skipping: ffprobe is missing (apt-get install ffmpeg)")
	}
	return ff
}

// browser returns the context of one shared Chromium.
func browser(t *testing.T) context.Context {
	t.Helper()
	needTools(t)
	browserOnce.Do(func() {
		actx, c1 := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(chromiumPath),
			chromedp.Flag("headless", "new"),
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.NoFirstRun,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
		)
		bctx, c2 := chromedp.NewContext(actx)
		browserCancel = append(browserCancel, c1, c2)
		browserCtx = bctx
		browserErr = chromedp.Do(bctx, chromedp.Navigate("about:blank"))
	})
	if browserErr != nil {
		t.Fatalf("start chromium: %v", browserErr)
	}
	return browserCtx
}

// newTab opens a 1280×720 tab on url.
func newTab(t *testing.T, url string, opts ...chromedp.ContextOption) (context.Context, context.CancelFunc) {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser(t), opts...)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 720), chromedp.Navigate(url)); err != nil {
		t.Fatalf("open tab: %v", err)
	}
	return tab, cancel
}

type probe struct {
	Format  string
	Codec   string
	Width   int
	Height  int
	Frames  int
	Seconds float64
}

func ffprobe(t *testing.T, path string) probe {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets",
		"-show_entries", "stream=codec_name,width,height,nb_read_packets:format=format_name,duration",
		"-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var v struct {
		Streams []struct {
			CodecName     string `json:"codec_name"`
			Width, Height int
			NbReadPackets string `json:"nb_read_packets"`
		}
		Format struct {
			FormatName string `json:"format_name"`
			Duration   string
		}
	}
	if err := json.Unmarshal(out, &v); err != nil || len(v.Streams) != 1 {
		t.Fatalf("ffprobe output %s: %v", out, err)
	}
	p := probe{Format: v.Format.FormatName, Codec: v.Streams[0].CodecName, Width: v.Streams[0].Width, Height: v.Streams[0].Height}
	p.Frames, _ = strconv.Atoi(v.Streams[0].NbReadPackets)
	p.Seconds, _ = strconv.ParseFloat(v.Format.Duration, 64)
	return p
}

// frameColor returns the mean colour of the first (last=false) or the last
// frame of the video, as 0..255 values.
func frameColor(t *testing.T, path string, last bool) [3]float64 {
	t.Helper()
	png1 := filepath.Join(t.TempDir(), "f.png")
	args := []string{"-v", "error", "-i", path, "-frames:v", "1", "-y", png1}
	if last {
		args = []string{"-v", "error", "-sseof", "-1", "-i", path, "-update", "1", "-y", png1}
	}
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("extract frame: %v: %s", err, out)
	}
	return meanColor(t, png1)
}

// meanColor returns the mean colour of a PNG, as 0..255 values.
func meanColor(t *testing.T, png1 string) [3]float64 {
	t.Helper()
	f, err := os.Open(png1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	var sum [3]float64
	n := 0.0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			sum[0] += float64(r >> 8)
			sum[1] += float64(g >> 8)
			sum[2] += float64(bl >> 8)
			n++
		}
	}
	return [3]float64{sum[0] / n, sum[1] / n, sum[2] / n}
}

func near(c [3]float64, r, g, b float64) bool {
	d := func(x, y float64) bool { return x-y < 30 && y-x < 30 }
	return d(c[0], r) && d(c[1], g) && d(c[2], b)
}

// playsInChromium loads the video in a <video> of a page and checks that
// Chromium decodes it.
func playsInChromium(t *testing.T, path, mime string) {
	t.Helper()
	vs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/video" {
			w.Header().Set("Content-Type", mime)
			http.ServeFile(w, r, path)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><video id=v src="/video" muted preload="auto"></video>`)
	}))
	defer vs.Close()
	tab, cancel := newTab(t, vs.URL)
	defer cancel()
	type state struct {
		Ready    int     `json:"ready"`
		Duration float64 `json:"duration"`
		Width    int     `json:"width"`
		Err      int     `json:"err"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		s, err := chromedp.Run(tab, chromedp.Evaluate[state](
			`(() => { const v = document.getElementById('v');
			  return {ready: v.readyState, duration: isFinite(v.duration) ? v.duration : -1,
			          width: v.videoWidth, err: v.error ? v.error.code : 0}; })()`))
		if err != nil {
			t.Fatalf("evaluate: %v", err)
		}
		if s.Err != 0 {
			t.Fatalf("Chromium cannot play %s: MediaError code %d", mime, s.Err)
		}
		if s.Ready >= 2 && s.Duration > 2 {
			t.Logf("Chromium plays it: readyState=%d duration=%.2fs videoWidth=%d", s.Ready, s.Duration, s.Width)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("video not playable in Chromium: %+v", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestFindFFmpeg(t *testing.T) {
	_, err := FindFFmpeg("/nonexistent/ffmpeg")
	if err == nil || !strings.Contains(err.Error(), "apt-get install ffmpeg") {
		t.Fatalf("want an error that names apt-get install ffmpeg, got %v", err)
	}
	if p, err := FindFFmpeg(""); err == nil && !filepath.IsAbs(p) {
		t.Fatalf("FindFFmpeg(\"\") = %q, want an absolute path", p)
	}
}

func TestOptions(t *testing.T) {
	o, err := Options{}.withDefaults()
	if err != nil || o.FPS != 4 || o.Quality != 60 || o.MaxWidth != 1280 || o.MaxHeight != 720 || o.Format != "webm" {
		t.Fatalf("defaults: %+v %v", o, err)
	}
	for _, bad := range []Options{{FPS: -1}, {FPS: 100}, {Quality: 101}, {Format: "avi"}, {MaxWidth: 4}} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%+v: want an error", bad)
		}
	}
	if _, err := Start(context.Background(), context.Background(), filepath.Join(t.TempDir(), "x.webm"), Options{FFmpeg: "/nonexistent/ffmpeg"}); err == nil {
		t.Fatal("Start with a missing ffmpeg: want an error")
	}
}

func TestRecord(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	for _, tc := range []struct {
		format, codec, container, mime string
	}{
		{"webm", "vp8", "matroska,webm", "video/webm"},
		{"mp4", "h264", "mov,mp4,m4a,3gp,3g2,mj2", "video/mp4"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			ts := pageServer(t)
			tab, _ := newTab(t, ts.URL+"/anim")
			out := filepath.Join(t.TempDir(), "run."+tc.format)
			o := Options{Format: tc.format}
			began := time.Now()
			r, err := Start(context.Background(), tab, out, o)
			if err != nil {
				t.Fatal(err)
			}
			started := time.Now()
			// At least 3 s, and until the animation gave 8 pictures: on a
			// busy machine Chromium paints, and so sends, fewer of them in
			// the same time (6 in 3 s was seen while benchmarks ran).
			for time.Since(started) < 3*time.Second || r.Frames() < 2*4 {
				if time.Since(started) > time.Minute {
					t.Fatalf("%d pictures from the screencast of an animated page in a minute, want >= 8", r.Frames())
				}
				time.Sleep(50 * time.Millisecond)
			}
			stopCalled := time.Now()
			path, err := r.Stop(context.Background())
			stopped := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			if p2, err2 := r.Stop(context.Background()); p2 != path || err2 != nil {
				t.Fatalf("second Stop = %q, %v", p2, err2)
			}
			if path != out {
				t.Fatalf("path %q, want %q", path, out)
			}
			if _, err := os.Stat(out + ".part"); !os.IsNotExist(err) {
				t.Fatalf("partial file left: %v", err)
			}
			p := ffprobe(t, path)
			fi, _ := os.Stat(path)
			t.Logf("%s: %+v, %d bytes, %d pictures, %d video frames", tc.format, p, fi.Size(), r.Frames(), r.VideoFrames())
			if p.Format != tc.container || p.Codec != tc.codec {
				t.Errorf("container/codec %s/%s, want %s/%s", p.Format, p.Codec, tc.container, tc.codec)
			}
			checkWindow(t, p, began, started, stopCalled, stopped) // 3 s and the hold of 1 s
			if p.Width != 1280 || p.Height != 720 {
				t.Errorf("size %dx%d, want 1280x720", p.Width, p.Height)
			}
			if p.Frames < 2*4 {
				t.Errorf("%d frames, want >= %d", p.Frames, 2*4)
			}
			playsInChromium(t, path, tc.mime)
		})
	}
}

func TestFollow(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	ts := pageServer(t)
	tabA, _ := newTab(t, ts.URL+"/solid/ff0000")
	tabB, _ := newTab(t, ts.URL+"/solid/0000ff")
	out := filepath.Join(t.TempDir(), "follow.webm")
	began := time.Now()
	r, err := Start(context.Background(), tabA, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	// Tab A's picture, then tab B's after Follow: each waited for.
	before := newPicture(r, 0)
	f0 := time.Now()
	if err := r.Follow(tabB); err != nil {
		t.Fatalf("Follow: %v", err)
	}
	t.Logf("Follow took %v", time.Since(f0).Round(time.Millisecond))
	after := newPicture(r, before)
	// Let tab B be on screen a while, so that the video ends on it.
	time.Sleep(500 * time.Millisecond)
	stopCalled := time.Now()
	path, err := r.Stop(context.Background())
	stopped := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Follow(tabA); !errors.Is(err, ErrStopped) {
		t.Errorf("Follow after Stop = %v, want ErrStopped", err)
	}
	p := ffprobe(t, path)
	first, last := frameColor(t, path, false), frameColor(t, path, true)
	t.Logf("%+v; pictures %d before Follow, %d after; first frame %.0f, last frame %.0f", p, before, after, first, last)
	if after <= before {
		t.Errorf("no picture after Follow (%d before, %d after)", before, after)
	}
	if !near(first, 255, 0, 0) {
		t.Errorf("first frame colour %.0f, want red (tab A)", first)
	}
	if !near(last, 0, 0, 255) {
		t.Errorf("last frame colour %.0f, want blue (tab B)", last)
	}
	checkWindow(t, p, began, started, stopCalled, stopped)
}

func TestNavigations(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	ts := pageServer(t)
	tab, _ := newTab(t, ts.URL+"/solid/ff0000")
	out := filepath.Join(t.TempDir(), "nav.webm")
	began := time.Now()
	r, err := Start(context.Background(), tab, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	// First a still page on another site (another renderer process): the
	// running cast must go on by itself, without a restart. Then back to the
	// first site, to an animated page.
	// After each navigation a new picture must come: waited for (bounded,
	// generously: a busy machine paints late), never assumed after a
	// fixed sleep.
	steps := []string{localhostURL(ts) + "/solid/00ff00", ts.URL + "/anim"}
	counts := []int{}
	starts := []int64{}
	for _, u := range steps {
		counts = append(counts, newPicture(r, lastOr(counts, 0)))
		starts = append(starts, r.castStarts.Load())
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatalf("navigate %s: %v", u, err)
		}
	}
	counts = append(counts, newPicture(r, lastOr(counts, 0)))
	// The animated page: let it draw a while, so that the video ends on it.
	time.Sleep(500 * time.Millisecond)
	starts = append(starts, r.castStarts.Load())
	stopCalled := time.Now()
	path, err := r.Stop(context.Background())
	stopped := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	p := ffprobe(t, path)
	last := frameColor(t, path, true)
	t.Logf("%+v; pictures after each step %v, cast starts %v (%d refused); last frame %.0f", p, counts, starts, r.castErrs.Load(), last)
	for i := 1; i < len(counts); i++ {
		if counts[i] <= counts[i-1] {
			t.Errorf("recording stalled after navigation %d: pictures %v", i, counts)
		}
	}
	if starts[1] != starts[0] {
		t.Errorf("the cast was restarted across the cross-site navigation of a still page: starts %v", starts)
	}
	if !near(last, 255, 255, 255) { // the animated page is white, with a small red box
		t.Errorf("last frame colour %.0f, want white (the page after the second navigation)", last)
	}
	checkWindow(t, p, began, started, stopCalled, stopped)
}

// newPicture waits until the recording has more pictures than after and
// returns how many it has; after a generous bound (a busy machine paints
// late) it returns the count as it is, which the caller finds no greater.
func newPicture(r *Recorder, after int) int {
	deadline := time.Now().Add(30 * time.Second)
	for n := r.Frames(); ; n = r.Frames() {
		if n > after || time.Now().After(deadline) {
			return n
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lastOr returns the last of xs, def when there is none.
func lastOr(xs []int, def int) int {
	if len(xs) == 0 {
		return def
	}
	return xs[len(xs)-1]
}

func TestTabClosed(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	ts := pageServer(t)
	tab, cancel := newTab(t, ts.URL+"/solid/00ff00")
	out := filepath.Join(t.TempDir(), "closed.webm")
	began := time.Now()
	r, err := Start(context.Background(), tab, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	time.Sleep(800 * time.Millisecond)
	cancel() // closes the tab
	time.Sleep(1200 * time.Millisecond)
	stopCalled := time.Now()
	path, err := r.Stop(context.Background())
	stopped := time.Now()
	if err != nil {
		t.Fatalf("Stop after the tab closed: %v", err)
	}
	p := ffprobe(t, path)
	t.Logf("%+v, %d pictures", p, r.Frames())
	checkWindow(t, p, began, started, stopCalled, stopped) // the last picture repeats until Stop, then for the hold
}

func TestContextCanceled(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	ts := pageServer(t)
	tab, _ := newTab(t, ts.URL+"/anim")
	out := filepath.Join(t.TempDir(), "ctx.webm")
	ctx, cancel := context.WithCancel(context.Background())
	began := time.Now()
	r, err := Start(ctx, tab, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	time.Sleep(1500 * time.Millisecond)
	canceled := time.Now()
	cancel()
	// The context's end ends the sampler (its last picture taken, the
	// recording sealed); nothing is added after that.
	select {
	case <-r.samplerQ:
	case <-time.After(time.Minute): // a hang guard, not a timing expectation
		t.Fatalf("the sampler still runs a minute after the context ended: %d pictures", r.Frames())
	}
	n := r.Frames()
	time.Sleep(700 * time.Millisecond)
	if m := r.Frames(); m != n {
		t.Errorf("sampling resumed after the context ended: %d -> %d pictures", n, m)
	}
	if err := r.Follow(tab); !errors.Is(err, ErrStopped) {
		t.Errorf("Follow after cancel = %v, want ErrStopped", err)
	}
	// Stop with the ended context still gets the file.
	stopCalled := time.Now()
	path, err := r.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p := ffprobe(t, path)
	t.Logf("%+v", p)
	// The recording ended with the context, not with the later Stop: the
	// video lasts from Start to the cancel (at the latest, to the call of
	// Stop), then holds its last picture.
	checkWindow(t, p, began, started, canceled, stopCalled)
}

func TestFFmpegFails(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	ts := pageServer(t)
	tab, _ := newTab(t, ts.URL+"/anim")
	dir := t.TempDir()
	fake := filepath.Join(dir, "ffmpeg")
	script := "#!/bin/sh\nhead -c 20000 >/dev/null\necho 'simulated encoder crash' >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "crash.webm")
	r, err := Start(context.Background(), tab, out, Options{FFmpeg: fake})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	_, err = r.Stop(context.Background())
	if err == nil || !strings.Contains(err.Error(), "simulated encoder crash") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Stop = %v, want the exit status and the stderr of ffmpeg", err)
	}
	t.Logf("Stop: %v", err)
	for _, p := range []string{out, out + ".part"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after a failure", p)
		}
	}
}

func TestNoFrames(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	// A page whose main thread is busy before its first paint has nothing to
	// cast.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html><head><script>const end = Date.now() + 2500; while (Date.now() < end) {}</script></head><body>late</body></html>`)
	}))
	defer ts.Close()
	tab, cancel := chromedp.NewContext(browser(t))
	defer cancel()
	// page.Navigate returns at the commit, without a wait for the load.
	if _, err := chromedp.Call(tab, page.Navigate, page.NavigateParams{URL: ts.URL}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "none.webm")
	r, err := Start(context.Background(), tab, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	path, err := r.Stop(context.Background())
	if n := r.Frames(); n != 0 {
		// The browser painted after all (a loaded machine can reorder the
		// busy script and the first paint): then Stop must make a video of
		// what it got, which is the other half of the contract.
		if err != nil {
			t.Fatalf("Stop after %d pictures = %v, want a video", n, err)
		}
		if info, statErr := os.Stat(path); statErr != nil || info.Size() == 0 {
			t.Fatalf("Stop after %d pictures: %s: %v", n, path, statErr)
		}
		return
	}
	if !errors.Is(err, ErrNoFrames) {
		t.Fatalf("Stop = %v, want ErrNoFrames", err)
	}
	t.Logf("Stop: %v", err)
	for _, p := range []string{out, out + ".part"} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists without frames", p)
		}
	}
}
