package record

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// These tests check that a recording holds the whole run (issue 13, §3):
// the video lasts from the start of the recording to its end, plus the last
// picture held for a second; it ends on the last state of the page; and it
// is of the size of the viewport. Their bounds are relations between times
// that the test takes around Start and Stop, never a figure that a loaded
// machine could miss.

// defaultPeriod is the frame period at the default 4 fps.
const defaultPeriod = time.Second / defaultFPS

// frameColorAt returns the mean colour of the first frame at or after sec
// seconds (ffmpeg's -ss before -i drops the frames before sec).
func frameColorAt(t *testing.T, path string, sec float64) [3]float64 {
	t.Helper()
	png1 := filepath.Join(t.TempDir(), "at.png")
	out, err := exec.Command("ffmpeg", "-v", "error", "-ss", fmt.Sprintf("%.3f", sec), "-i", path,
		"-frames:v", "1", "-y", png1).CombinedOutput()
	if err != nil {
		t.Fatalf("extract the frame at %.3fs: %v: %s", sec, err, out)
	}
	return meanColor(t, png1)
}

// checkWindow checks the duration of a recording against the times taken
// around it: the video starts at most when Start returned and ends at least
// when Stop was called, then holds the last picture for a second. It starts
// at the earliest when Start was called and ends at the latest when Stop
// returned, plus the hold rounded up to a frame.
func checkWindow(t *testing.T, p probe, began, started, stopCalled, stopped time.Time) {
	t.Helper()
	lower := stopCalled.Sub(started) + holdTime
	upper := stopped.Sub(began) + holdTime + defaultPeriod
	const eps = 0.005 // the container stores milliseconds
	if p.Seconds < lower.Seconds()-eps || p.Seconds > upper.Seconds()+eps {
		t.Errorf("the video lasts %.3fs; the recording ran %.3fs to %.3fs, so with the %v hold it should last %.3fs to %.3fs",
			p.Seconds, stopCalled.Sub(started).Seconds(), stopped.Sub(began).Seconds(), holdTime, lower.Seconds(), upper.Seconds())
	}
}

// TestRecordingEndsOnLastState: the page turns green as the last thing of
// the run, and Stop follows at once, as the engine stops the recording
// right after the run's last action. The video must last the whole
// recording, end on the green page, and show it for the last second.
func TestRecordingEndsOnLastState(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	ts := pageServer(t)
	tab, _ := newTab(t, ts.URL+"/solid/ff0000")
	out := filepath.Join(t.TempDir(), "last.webm")
	began := time.Now()
	r, err := Start(context.Background(), tab, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	time.Sleep(1200 * time.Millisecond)
	if _, err := chromedp.Run(tab, chromedp.Evaluate[string](
		`document.documentElement.style.background = document.body.style.background = '#00ff00'; 'ok'`)); err != nil {
		t.Fatal(err)
	}
	stopCalled := time.Now()
	path, err := r.Stop(context.Background())
	stopped := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	p := ffprobe(t, path)
	t.Logf("%+v; %d pictures, %d video frames", p, r.Frames(), r.VideoFrames())
	if p.Width != 1280 || p.Height != 720 {
		t.Errorf("size %dx%d, want the viewport's 1280x720", p.Width, p.Height)
	}
	checkWindow(t, p, began, started, stopCalled, stopped)
	if c := frameColor(t, path, false); !near(c, 255, 0, 0) {
		t.Errorf("first frame colour %.0f, want red (the page at the start)", c)
	}
	if c := frameColor(t, path, true); !near(c, 0, 255, 0) {
		t.Errorf("last frame colour %.0f, want green (the last state of the page)", c)
	}
	// The frame that starts one second before the end must be green too:
	// the last state is held for at least a second. (The frames start at
	// multiples of the period, and so does the end.)
	if at := p.Seconds - holdTime.Seconds() - 0.001; at > 0 {
		if c := frameColorAt(t, path, at); !near(c, 0, 255, 0) {
			t.Errorf("frame at %.2fs (a second before the end) colour %.0f, want green: the last state is not held for a second", at, c)
		}
	}
}

// TestVideoSizeIsViewport opens tabs as the engine's sessions do (a new
// browser context whose first tab has a window of its own, then the
// viewport set by a device metrics override) and starts recording at once.
// The first screencast frame is then sometimes one that Chromium drew at the
// size of the window before the override applied, and a video that took its
// size from its first picture came out at that size, with the pictures of
// the viewport scaled into it between black bars. Every video must be of
// the viewport's size, and its first frame must be the white page edge to
// edge, without bars.
func TestVideoSizeIsViewport(t *testing.T) {
	t.Parallel() // after the sequential TestRecordingCPU, which must run alone
	b := browser(t)
	const rounds = 8
	for i := range rounds {
		bc, err := chromedp.CallBrowser(b, target.CreateBrowserContext, target.CreateBrowserContextParams{})
		if err != nil {
			t.Fatal(err)
		}
		newWindow := true
		ct, err := chromedp.CallBrowser(b, target.CreateTarget, target.CreateTargetParams{
			URL: "about:blank", BrowserContextID: bc.BrowserContextID, NewWindow: &newWindow,
		})
		if err != nil {
			t.Fatal(err)
		}
		tab, cancel := chromedp.NewContext(b, chromedp.WithTargetID(ct.TargetID))
		if _, err := chromedp.Call(tab, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: 1280, Height: 720, DeviceScaleFactor: 1,
		}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), fmt.Sprintf("size%d.webm", i))
		r, err := Start(context.Background(), tab, out, Options{})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(400 * time.Millisecond)
		path, err := r.Stop(context.Background())
		cancel()
		_, _ = chromedp.CallBrowser(b, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: bc.BrowserContextID})
		if err != nil {
			t.Fatal(err)
		}
		p := ffprobe(t, path)
		first := frameColor(t, path, false)
		t.Logf("round %d: %dx%d, first frame %.0f, %d pictures, %d dropped as drawn before the override",
			i, p.Width, p.Height, first, r.Frames(), staleFrames(r))
		if p.Width != 1280 || p.Height != 720 {
			t.Errorf("round %d: size %dx%d, want the viewport's 1280x720", i, p.Width, p.Height)
		}
		if !near(first, 255, 255, 255) {
			t.Errorf("round %d: first frame colour %.0f, want the white page edge to edge", i, first)
		}
	}
}

// staleFrames returns the number of cast frames that r dropped as drawn
// before the viewport got its size.
func staleFrames(r *Recorder) int64 { return r.stale.Load() }
