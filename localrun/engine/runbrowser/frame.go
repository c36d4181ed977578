package runbrowser

import (
	"context"
	"fmt"
	"sync"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/record"
	"github.com/abctl/abctl/localrun/executor"
)

// frameTimeout bounds the screenshot of Frame: a tab in the middle of a
// navigation can hold it up, and a viewer rather sees no frame than waits.
const frameTimeout = 3 * time.Second

// frameQuality is the JPEG quality of the screenshots of Frame.
const frameQuality = 70

// frameSource is what Frame reads of the run's browser. The run's own
// goroutine sets it (as the browser opens, the recording starts and the
// browser closes) and viewers read it from theirs, hence its mutex; the
// rest of Browser is the run's alone.
type frameSource struct {
	mu     sync.Mutex
	bctx   *browser.Context // nil until the browser opens, and after Close
	rec    *record.Recorder // nil when the run is not recorded
	closed bool
}

func (f *frameSource) open(bs *browser.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.bctx = bs
	}
}

func (f *frameSource) recording(rec *record.Recorder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec = rec
}

func (f *frameSource) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed, f.bctx, f.rec = true, nil, nil
}

// Frame returns a JPEG of the active tab of the run's browser as it is
// now, and when it looked like that: the newest picture of the run's
// recording when it is at most maxAge old, else a screenshot. Unlike the
// other methods of Browser it is safe to call from any goroutine while
// the run goes on; the screenshot is bounded by ctx and a few seconds, and
// runs beside the run's own work on the tab, as the recording's do. An
// error wraps executor.ErrNoFrame: the browser is not open (yet, or any
// more), or the picture could not be taken.
func (s *Browser) Frame(ctx context.Context, maxAge time.Duration) (executor.Frame, error) {
	f := &s.frameSrc
	f.mu.Lock()
	bs, rec := f.bctx, f.rec
	f.mu.Unlock()
	if bs == nil || bs.Err() != nil {
		return executor.Frame{}, executor.ErrNoFrame
	}
	if rec != nil {
		if jpg, at, ok := rec.Latest(); ok && time.Since(at) <= maxAge {
			return executor.Frame{JPEG: jpg, Taken: at}, nil
		}
	}
	tab := bs.Tab()
	tctx, cancel := context.WithTimeout(tab, frameTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	q := int64(frameQuality)
	taken := time.Now()
	res, err := chromedp.Call(tctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
		Format:           cdppage.CaptureScreenshotFormatJpeg,
		Quality:          &q,
		OptimizeForSpeed: new(true),
	})
	if err != nil {
		return executor.Frame{}, fmt.Errorf("%w: the screenshot failed: %v", executor.ErrNoFrame, err)
	}
	return executor.Frame{JPEG: res.Data, Taken: taken}, nil
}
