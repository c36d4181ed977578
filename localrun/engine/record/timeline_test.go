package record

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
)

// These tests need neither Chromium nor, except TestMixedSizes, ffmpeg: the
// timeline is a function of the times of the pictures, not of the machine.

// pic is a picture whose JPEG bytes are its name, for the timeline tests.
func pic(name string, t0 time.Time, ms int) picture {
	return picture{jpg: []byte(name), at: t0.Add(time.Duration(ms) * time.Millisecond)}
}

func takeAll(tl *timeline, n int64) string {
	var b bytes.Buffer
	for tl.next < n {
		b.Write(tl.take())
	}
	return b.String()
}

func TestTimelineFrames(t *testing.T) {
	t0 := time.Now()
	tl := newTimeline(t0, 250*time.Millisecond)
	if tl.take() != nil {
		t.Fatal("a frame without a picture")
	}
	// A drawn before the start; B and C in the same period (B is never
	// shown: C is newer at the time of frame 2); D at 1 s. Added out of
	// order, as a late cast frame and a screenshot can arrive.
	tl.add(pic("A", t0, -100))
	tl.add(pic("C", t0, 310))
	tl.add(pic("B", t0, 300))
	tl.add(pic("D", t0, 1000))
	// End at 1.1 s: frames up to 1.25 s (5), then 1 s of hold (4).
	n := tl.frames(t0.Add(1100*time.Millisecond), time.Second)
	if n != 9 {
		t.Fatalf("frames = %d, want 9", n)
	}
	// frame k at k×0.25 s shows the newest picture at or before it.
	if got := takeAll(tl, n); got != "AACCDDDDD" {
		t.Errorf("frames %q, want AACCDDDDD", got)
	}
}

func TestTimelineBeforeFirstPicture(t *testing.T) {
	t0 := time.Now()
	tl := newTimeline(t0, 250*time.Millisecond)
	tl.add(pic("A", t0, 600))
	// Frames 0 to 2 come before A: they show A, the first picture.
	if got := takeAll(tl, tl.frames(t0.Add(800*time.Millisecond), time.Second)); got != "AAAAAAAA" {
		t.Errorf("frames %q, want 8 × A (0.8 s rounded up to 1 s, and the hold)", got)
	}
}

func TestTimelineLatePicture(t *testing.T) {
	t0 := time.Now()
	tl := newTimeline(t0, 250*time.Millisecond)
	tl.add(pic("A", t0, 0))
	takeAll(tl, 4) // frames up to 0.75 s were written
	// B was drawn at 0.1 s but arrived only now: it shows from the next
	// frame on, rather than never.
	tl.add(pic("B", t0, 100))
	tl.add(pic("C", t0, 1300))
	if got := takeAll(tl, 7); got != "BBC" {
		t.Errorf("frames %q, want BBC", got)
	}
	// A late picture older than the one shown is obsolete.
	tl.add(pic("X", t0, 200))
	if got := takeAll(tl, 8); got != "C" {
		t.Errorf("frame %q, want C (X is older than C)", got)
	}
}

// TestTimelineHoldsALateLastPicture: the last picture of a recording,
// drawn at 2.3 s but arriving after the frame of its time (2.5 s) was
// taken, as on a loaded machine, shows from the next frame (2.75 s); the
// video then lasts long enough to hold it for the whole hold from there.
func TestTimelineHoldsALateLastPicture(t *testing.T) {
	t0 := time.Now()
	period := 250 * time.Millisecond
	tl := newTimeline(t0, period)
	tl.add(pic("R", t0, 0))
	takeAll(tl, 11) // frames 0 to 10 (0 s to 2.5 s) were written
	tl.add(pic("G", t0, 2300))
	n := tl.frames(t0.Add(2300*time.Millisecond), time.Second)
	got := takeAll(tl, n)
	if want := "GGGG"; len(got) < 4 || got[len(got)-4:] != want {
		t.Fatalf("the last frames %q (%d frames), want the late picture held for four frames (a second)", got, n)
	}
	if n != 15 {
		t.Errorf("%d frames, want 15: the late picture shows from frame 11 and is held four frames", n)
	}
}

func TestTimelineDue(t *testing.T) {
	t0 := time.Now()
	tl := newTimeline(t0, 250*time.Millisecond)
	for _, c := range []struct {
		ms   int
		want int64
	}{{0, 0}, {999, 0}, {1000, 1}, {1249, 1}, {1250, 2}, {1500, 3}} {
		if got := tl.due(t0.Add(time.Duration(c.ms)*time.Millisecond), time.Second); got != c.want {
			t.Errorf("due at %d ms with a lag of 1 s = %d, want %d", c.ms, got, c.want)
		}
	}
}

func TestTimelineQueueBound(t *testing.T) {
	t0 := time.Now()
	tl := newTimeline(t0, 250*time.Millisecond)
	for i := range 3 * maxQueue {
		tl.add(pic(string(rune('a'+i%26)), t0, i))
	}
	if len(tl.queue) > maxQueue {
		t.Fatalf("%d pictures queued, want at most %d", len(tl.queue), maxQueue)
	}
	// The pictures beyond the bound were merged into base, the newest of
	// them first: a writer that is stuck shows it a little early.
	if got, want := string(tl.take()), string(rune('a'+(2*maxQueue-1)%26)); got != want {
		t.Errorf("frame 0 shows %q, want %q, the newest of the merged pictures", got, want)
	}
}

// TestTimelineCoversAndHolds checks, for random pictures, frame rates and
// ends, the two promises of a recording: the video lasts at least from its
// start to its end plus the hold, and the last picture is on screen for at
// least the hold.
func TestTimelineCoversAndHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		fps := 1 + rng.IntN(maxFPS)
		period := time.Second / time.Duration(fps)
		t0 := time.Unix(1000, 0)
		tl := newTimeline(t0, period)
		var last time.Time
		for j := range 1 + rng.IntN(20) {
			at := t0.Add(time.Duration(rng.IntN(5000)-200) * time.Millisecond)
			tl.add(picture{jpg: []byte{byte(j)}, at: at})
			if at.After(last) {
				last = at
			}
		}
		end := t0.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
		n := tl.frames(end, holdTime)
		reach := end
		if last.After(reach) {
			reach = last
		}
		if d := time.Duration(n) * period; d < reach.Sub(t0)+holdTime {
			t.Fatalf("fps %d: %d frames (%v) for an end at %v and a last picture at %v",
				fps, n, d, end.Sub(t0), last.Sub(t0))
		}
		var frames [][]byte
		for tl.next < n {
			frames = append(frames, tl.take())
		}
		lastJPG := frames[len(frames)-1]
		held := 0
		for i := len(frames) - 1; i >= 0 && bytes.Equal(frames[i], lastJPG); i-- {
			held++
		}
		if d := time.Duration(held) * period; d < holdTime {
			t.Fatalf("fps %d: the last picture is held %v, want at least %v", fps, d, holdTime)
		}
	}
}

func TestCastTime(t *testing.T) {
	arrived := time.Now()
	epoch := func(d time.Duration) cdp.TimeSinceEpoch {
		return cdp.TimeSinceEpoch(float64(arrived.Add(d).UnixNano()) / 1e9)
	}
	for _, c := range []struct {
		name string
		ts   cdp.TimeSinceEpoch
		want time.Duration // before arrived
	}{
		{"drawn 40 ms before", epoch(-40 * time.Millisecond), 40 * time.Millisecond},
		{"same time", epoch(0), 0},
		{"a little later (clock reads)", epoch(5 * time.Millisecond), 0},
		{"much later (another clock)", epoch(2 * time.Second), 0},
		{"too old", epoch(-maxCastAge - time.Second), 0},
		{"missing", 0, 0},
	} {
		got := castTime(c.ts, arrived)
		if d := arrived.Sub(got) - c.want; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("%s: %v before the arrival, want %v", c.name, arrived.Sub(got), c.want)
		}
	}
}

func TestStaleFrame(t *testing.T) {
	md := func(w, h float64) *page.ScreencastFrameMetadata {
		return &page.ScreencastFrameMetadata{DeviceWidth: w, DeviceHeight: h}
	}
	for _, c := range []struct {
		w, h  int
		md    *page.ScreencastFrameMetadata
		stale bool
	}{
		{1280, 720, md(1280, 720), false},
		{1280, 633, md(1280, 720), true},   // the window's size before the override
		{1138, 720, md(1280, 720), true},   // the same, scaled to maxHeight
		{1280, 720, md(1920, 1080), false}, // scaled to maxWidth×maxHeight
		{1280, 720, md(1366, 768), false},  // scaled, rounded
		{1024, 768, md(1280, 720), true},
		{16, 9, md(1280, 720), false},
		{1280, 720, md(0, 0), false},
		{1280, 633, nil, false},
	} {
		if got := staleFrame(c.w, c.h, c.md); got != c.stale {
			t.Errorf("%dx%d with metadata %+v: stale = %v, want %v", c.w, c.h, c.md, got, c.stale)
		}
	}
}

func TestFit(t *testing.T) {
	for _, c := range []struct{ w, h, wantW, wantH int }{
		{1280, 720, 1280, 720},
		{1920, 1080, 1280, 720},
		{1366, 768, 1280, 720},
		{800, 600, 800, 600},
		{1279, 719, 1278, 718},
		{4000, 100, 1280, 32},
		{1, 1, 2, 2},
	} {
		if w, h := fit(c.w, c.h, 1280, 720); w != c.wantW || h != c.wantH {
			t.Errorf("fit(%d×%d) = %d×%d, want %d×%d", c.w, c.h, w, h, c.wantW, c.wantH)
		}
	}
}

// solidJPEG returns a JPEG of w×h in one colour.
func solidJPEG(t *testing.T, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pixelAt returns the colour at x, y of the first frame at or after sec
// seconds.
func pixelAt(t *testing.T, path string, sec float64, x, y int) [3]float64 {
	t.Helper()
	png1 := filepath.Join(t.TempDir(), "px.png")
	if out, err := exec.Command("ffmpeg", "-v", "error", "-ss", fmt.Sprintf("%.3f", sec), "-i", path,
		"-frames:v", "1", "-y", png1).CombinedOutput(); err != nil {
		t.Fatalf("extract frame: %v: %s", err, out)
	}
	f, err := os.Open(png1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, _ := img.At(x, y).RGBA()
	return [3]float64{float64(r >> 8), float64(g >> 8), float64(b >> 8)}
}

// TestMixedSizes feeds the encoder pictures of two sizes at known times,
// without a browser: the video has the size of the first picture (the
// viewport), a picture of another size (another tab's viewport, say) is
// scaled into it and padded, and each picture shows from the frame of its
// time on, whatever the speed of the machine.
func TestMixedSizes(t *testing.T) {
	t.Parallel()
	ff := needFFmpegOnly(t)
	o, err := Options{FFmpeg: ff}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "mixed.webm")
	r := newRecorder(o, ff, out)
	close(r.samplerQ) // no sampler
	t0 := r.tl.t0
	red := solidJPEG(t, 1280, 720, color.RGBA{255, 0, 0, 255})
	blue := solidJPEG(t, 800, 600, color.RGBA{0, 0, 255, 255}) // 4:3, scaled to 960×720
	r.setPicture(picture{jpg: red, at: t0}, 1280, 720)
	r.setPicture(picture{jpg: blue, at: t0.Add(500 * time.Millisecond)}, 800, 600)
	path, err := r.Stop(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := ffprobe(t, path)
	t.Logf("%+v", p)
	if p.Width != 1280 || p.Height != 720 {
		t.Errorf("size %dx%d, want 1280x720", p.Width, p.Height)
	}
	// Blue at 0.5 s, held for a second: 1.5 s at least.
	if p.Seconds < 1.5-0.005 {
		t.Errorf("the video lasts %.3fs, want at least 1.5s", p.Seconds)
	}
	// Frames 0 and 1 (0 s, 0.25 s) are red, frame 2 (0.5 s) blue. A seek
	// to just before a frame's time gives that frame.
	if c := pixelAt(t, path, 0, 640, 360); !near(c, 255, 0, 0) {
		t.Errorf("centre of frame 0 %.0f, want red", c)
	}
	if c := pixelAt(t, path, 0.249, 640, 360); !near(c, 255, 0, 0) {
		t.Errorf("centre of frame 1 %.0f, want red (blue comes at 0.5s)", c)
	}
	if c := pixelAt(t, path, 0.499, 640, 360); !near(c, 0, 0, 255) {
		t.Errorf("centre of frame 2 %.0f, want blue", c)
	}
	if c := pixelAt(t, path, 0.499, 40, 360); !near(c, 0, 0, 0) {
		t.Errorf("left edge of frame 2 %.0f, want the black of the padding (800×600 scaled to 960×720)", c)
	}
}

// needFFmpegOnly skips the test when ffmpeg or ffprobe is missing; it needs
// no browser.
func needFFmpegOnly(t *testing.T) string {
	t.Helper()
	ff, err := FindFFmpeg("")
	if err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Skip("skipping: ffprobe is missing (apt-get install ffmpeg)")
	}
	return ff
}
