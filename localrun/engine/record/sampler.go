package record

import (
	"bytes"
	"context"
	"errors"
	"image/jpeg"
	"math"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

const (
	// firstTimeout bounds the wait for the first picture in Start and
	// Follow. A page that is still loading, or hidden, may send nothing for
	// a while; the sampler goes on without waiting.
	firstTimeout = time.Second
	// callTimeout bounds each protocol command of the sampler.
	callTimeout = 3 * time.Second
	// shotTimeout bounds one screenshot. A hidden page draws no frame, so
	// its screenshot waits; the sampler then goes back to the cast.
	shotTimeout = time.Second
	// refreshAfter restarts a cast that sent nothing for this long, so that
	// a cast that Chromium dropped silently cannot freeze the video. On a
	// still page it costs one picture per period.
	refreshAfter = 5 * time.Second
	// fastFrames is the number of cast frames within one tick at which the
	// page counts as animated: it changes faster than the video samples.
	fastFrames = 2
	// maxCastAge bounds how much older than its arrival the metadata
	// timestamp of a cast frame may be to be believed (see castTime).
	maxCastAge = writeLag
	// clockSlack is how much later than its arrival the metadata timestamp
	// of a cast frame may be: the clocks of Chromium and Go are the same
	// wall clock when Chromium runs on this machine, read a moment apart.
	clockSlack = 20 * time.Millisecond
	// maxStale is the number of stale frames in a row (see staleFrame) that
	// the sampler drops. Chromium sends one or two when a cast starts right
	// after the viewport changed; more in a row would mean that this
	// Chromium's metadata means something else, and then a picture of
	// another shape is better than none.
	maxStale = 3
)

var errTabGone = errors.New("record: tab is closed")

// castFrame is one Page.screencastFrame event.
type castFrame struct {
	data    []byte // JPEG
	session int64
	at      time.Time                     // when Chromium drew it (castTime)
	arrived time.Time                     // when it came
	md      *page.ScreencastFrameMetadata // nil when Chromium sent none
}

// castTime returns the time at which Chromium drew a cast frame that arrived
// at arrived: its metadata timestamp (the time of the frame's swap, on the
// browser's wall clock), which a busy machine or a slow ack can put well
// before the arrival. The video places each picture at the time the page
// looked like that, not at the time the sampler got to it. A timestamp that
// is missing, later than the arrival or older than maxCastAge (the clock of a
// remote browser, or a frame that Chromium drew long ago and sends only now
// that a cast starts; the page has not changed since, so the arrival is as
// good) is not believed, and the arrival counts. The result keeps the
// monotonic clock reading of arrived, so that the timeline's arithmetic does
// not follow a step of the wall clock.
func castTime(ts cdp.TimeSinceEpoch, arrived time.Time) time.Time {
	if ts <= 0 {
		return arrived
	}
	sec, frac := math.Modf(float64(ts))
	drawn := time.Unix(int64(sec), int64(frac*1e9))
	age := arrived.Round(0).Sub(drawn) // wall clock against wall clock
	if age < -clockSlack || age > maxCastAge {
		return arrived
	}
	return arrived.Add(-max(age, 0))
}

// staleFrame reports whether a cast frame of w×h pixels was drawn before the
// viewport got the size that its metadata reports: its aspect ratio is not
// the one of the metadata's device size. Chromium sends such a frame when a
// cast starts right after the viewport changed (a new tab, whose window has
// another size, gets its device metrics override just before the recording
// starts): it is the last frame of the old size. It is dropped; Chromium
// sends the frame of the new size right after. The tolerance covers the
// rounding of a picture that maxWidth/maxHeight scaled down.
func staleFrame(w, h int, md *page.ScreencastFrameMetadata) bool {
	if md == nil {
		return false
	}
	dw, dh := md.DeviceWidth, md.DeviceHeight
	if dw <= 0 || dh <= 0 || w <= 0 || h <= 0 {
		return false // nothing to compare with
	}
	// The height that w pixels of the viewport's aspect ratio have, and the
	// width of h pixels.
	wantH, wantW := float64(w)*dh/dw, float64(h)*dw/dh
	return math.Abs(wantH-float64(h)) > 2 && math.Abs(wantW-float64(w)) > 2
}

// jpegSize returns the size of a JPEG, or 0×0 when it is not one.
func jpegSize(b []byte) (int, int) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return 0, 0
	}
	return cfg.Width, cfg.Height
}

// sampler takes the pictures of the followed tab. Only the sampler goroutine
// uses it (Start and Follow too go through that goroutine, or run before it).
//
// It has two modes. While the page is still, or changes slowly, the
// screencast runs: Chromium sends a frame only when something changes, so
// this costs next to nothing and catches every change at once. When the cast
// sends fastFrames frames within one tick, the page animates faster than the
// video samples it; the sampler stops the cast and takes one JPEG screenshot
// per tick instead. While a cast runs, Chromium's capturer copies every frame
// that the compositor draws, which is the main cost of a screencast and which
// everyNthFrame does not reduce; a screenshot copies one frame. When two
// screenshots in a row are the same bytes, the page is still again, and the
// cast restarts.
type sampler struct {
	r        *Recorder
	tab      context.Context
	detached <-chan struct{}
	frames   chan castFrame
	unsub    context.CancelFunc
	gone     bool

	casting   bool      // a cast runs on tab
	castSince time.Time // start of the cast, or time of its last frame
	// castArrived is when the newest cast frame taken came. A screenshot
	// asked for before it is not added (gotShot): the two pictures' times
	// come from two clocks (the screenshot's is its request's, on this
	// side; the frame's is Chromium's), which a loaded machine sets apart
	// by more than a frame period, and the screenshot, drawn before the
	// frame, could be placed after it: the video then went back to the
	// page as it was before a click for a frame.
	castArrived time.Time
	tickFrames  int  // cast frames since the last tick
	staleRun    int  // stale cast frames dropped in a row
	shooting    bool // the page animates: screenshots instead of the cast
	lastShot    []byte
	shotBusy    bool            // a screenshot of tick is under way
	shotCh      chan shotResult // its result
}

// shotResult is the result of a screenshot that tick asked for.
type shotResult struct {
	tab   context.Context // the tab it is of
	jpg   []byte
	asked time.Time
	err   error
}

func newSampler(r *Recorder, tab context.Context) *sampler {
	s := &sampler{r: r, shotCh: make(chan shotResult, 1)}
	s.attach(tab)
	return s
}

// attach subscribes to the frames of tab. The goroutine that reads the events
// only forwards them, so the event queue of the tab never waits.
func (s *sampler) attach(tab context.Context) {
	s.tab = tab
	s.gone = false
	s.casting = false
	s.shooting = false
	s.lastShot = nil
	s.tickFrames = 0
	s.staleRun = 0
	s.detached, _ = chromedp.Detached(tab) // checkTab has checked the error
	ctx, cancel := context.WithCancel(tab)
	s.unsub = cancel
	events := chromedp.Events(ctx, page.ScreencastFrame) // subscribed from here on
	frames := make(chan castFrame, 64)
	s.frames = frames
	go func() {
		for ev, err := range events {
			if err != nil {
				return
			}
			now := time.Now()
			f := castFrame{data: ev.Data, session: ev.SessionID, at: now, arrived: now, md: ev.Metadata}
			if f.md != nil {
				f.at = castTime(f.md.Timestamp, f.at)
			}
			select {
			case frames <- f:
			default:
				go ack(tab, ev.SessionID) // dropped, but acked
			}
		}
	}()
}

func (s *sampler) close() {
	if s.unsub != nil {
		s.unsub()
	}
}

func ack(tab context.Context, session int64) {
	ctx, cancel := context.WithTimeout(tab, callTimeout)
	defer cancel()
	_, _ = chromedp.Call(ctx, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: session})
}

// isGone reports whether the tab closed.
func (s *sampler) isGone() bool {
	if s.gone {
		return true
	}
	select {
	case <-s.detached:
		s.gone = true
	case <-s.tab.Done():
		s.gone = true
	default:
	}
	if s.gone {
		s.casting = false
		s.shooting = false
	}
	return s.gone
}

func (s *sampler) startCast() error {
	if s.isGone() {
		return errTabGone
	}
	q := int64(s.r.opt.Quality)
	ctx, cancel := context.WithTimeout(s.tab, callTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, page.StartScreencast, page.StartScreencastParams{
		Format:        page.StartScreencastFormatJpeg,
		Quality:       &q,
		MaxWidth:      int64(s.r.opt.MaxWidth),
		MaxHeight:     int64(s.r.opt.MaxHeight),
		EveryNthFrame: 1,
	})
	if err != nil {
		if s.isGone() {
			return errTabGone
		}
		return err
	}
	s.casting = true
	s.castSince = time.Now()
	s.r.castStarts.Add(1)
	return nil
}

func (s *sampler) stopCast() {
	if !s.casting {
		return
	}
	s.casting = false
	if s.isGone() {
		return
	}
	ctx, cancel := context.WithTimeout(s.tab, callTimeout)
	defer cancel()
	_, _ = chromedp.Call(ctx, page.StopScreencast, cdp.Empty{})
}

// screenshot takes one JPEG of the viewport of tab, as the cast would send
// it, bounded by timeout. It may run on another goroutine than the sampler's
// (see tick).
func (s *sampler) screenshot(tab context.Context, timeout time.Duration) ([]byte, error) {
	q := int64(s.r.opt.Quality)
	fast := true
	ctx, cancel := context.WithTimeout(tab, timeout)
	defer cancel()
	res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format:           page.CaptureScreenshotFormatJpeg,
		Quality:          &q,
		OptimizeForSpeed: &fast,
	})
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

// frame adds a frame of the cast to the video and acks it, and reports
// whether it took it: a frame that is not a JPEG, or that is stale (see
// staleFrame; up to maxStale in a row), is only acked. When the page changes
// faster than the video samples, it stops the cast (before the ack, so that
// the ack lets no further frame out) and switches to screenshots.
func (s *sampler) frame(f castFrame) bool {
	w, h := jpegSize(f.data)
	if w == 0 {
		go ack(s.tab, f.session)
		return false
	}
	if staleFrame(w, h, f.md) && s.staleRun < maxStale {
		s.staleRun++
		s.r.stale.Add(1)
		go ack(s.tab, f.session)
		return false
	}
	s.staleRun = 0
	s.castArrived = f.arrived
	s.r.setPicture(picture{jpg: f.data, at: f.at}, w, h)
	s.r.castFrames.Add(1)
	s.tickFrames++
	s.castSince = time.Now()
	if s.casting && s.tickFrames >= fastFrames {
		s.stopCast()
		s.shooting = true
		s.lastShot = nil
	}
	go ack(s.tab, f.session)
	return true
}

// shoot takes a screenshot of the followed tab, bounded by timeout, and
// adds it to the video at the time at (see addShot); a zero at means the
// time of the request. Start, Follow and the end of the recording use it;
// while the recording goes on, tick takes its screenshots without waiting.
func (s *sampler) shoot(timeout time.Duration, at time.Time) error {
	if s.isGone() {
		return errTabGone
	}
	asked := time.Now()
	shot, err := s.screenshot(s.tab, timeout)
	if err != nil {
		return err
	}
	if at.IsZero() {
		at = asked
	}
	return s.addShot(shot, at)
}

// addShot adds a screenshot to the video. A screenshot counts at the time of
// its request: Chromium draws the frame that it copies right after it.
func (s *sampler) addShot(shot []byte, at time.Time) error {
	w, h := jpegSize(shot)
	if w == 0 {
		return errors.New("record: the screenshot is not a JPEG")
	}
	s.r.shots.Add(1)
	s.r.setPicture(picture{jpg: shot, at: at}, w, h)
	return nil
}

// tick runs once per frame period. While the page animates, it asks for a
// screenshot, whose result comes to gotShot; the sampler does not wait for
// it. A screenshot asked for while a navigation commits fails at once
// ("Not attached to an active page") or comes only at its timeout, and a
// sampler that waited took no picture for that long (a second of a run's
// pages missing from the video of a quickstart). When the screenshot of
// the last tick has not come yet, the page is busy: the cast restarts, and
// sends what changes meanwhile.
func (s *sampler) tick() {
	s.tickFrames = 0
	if s.isGone() {
		return
	}
	if s.shooting {
		if !s.shotBusy {
			s.shotBusy = true
			tab, asked := s.tab, time.Now()
			go func() {
				jpg, err := s.screenshot(tab, shotTimeout)
				s.shotCh <- shotResult{tab: tab, jpg: jpg, asked: asked, err: err}
			}()
			return
		}
		s.shooting = false
	}
	s.castIfIdle()
}

// gotShot takes the result of the screenshot of tick. When two screenshots
// in a row are the same bytes, the page is still again, and the cast
// restarts; when one failed (a hidden or busy page), too: the cast copes
// with both.
func (s *sampler) gotShot(res shotResult) {
	s.shotBusy = false
	if res.tab != s.tab || s.isGone() {
		return // of a tab that the recording no longer follows
	}
	if res.err == nil && !res.asked.Before(s.castArrived) && s.addShot(res.jpg, res.asked) == nil {
		if !s.shooting || !bytes.Equal(res.jpg, s.lastShot) {
			s.lastShot = res.jpg
			return
		}
	}
	if s.shooting {
		s.shooting = false
		s.castIfIdle()
	}
}

// castIfIdle restarts a cast that sent nothing for refreshAfter, and starts
// the cast when none runs.
func (s *sampler) castIfIdle() {
	if s.casting && time.Since(s.castSince) > refreshAfter {
		s.stopCast()
	}
	if !s.casting {
		if err := s.startCast(); err != nil && err != errTabGone {
			s.r.castErrs.Add(1)
		}
	}
}

// first takes the first picture of the tab and starts the cast; Start and
// Follow call it. Its first step is a screenshot: Chromium draws a new frame
// for it, at the current size of the viewport. A cast that starts right
// after the viewport changed (a new tab gets its viewport just before the
// recording starts) otherwise sends, as its first frame, the last one of the
// old size: either at the old size or at the new size with the old picture
// in a corner and black around it. Once a frame of the new size was drawn,
// the cast sends only such frames. (TestVideoSizeIsViewport: about half of
// new tabs sent a wrong first frame without the screenshot, none with it.)
//
// A page that does not draw (busy before its first paint, or hidden) gives
// no screenshot; first then waits for the first frame of the cast. The whole
// is bounded by firstTimeout. Chromium refuses a cast while a navigation
// commits ("Not attached to an active page"), so a failed start is retried
// within the same bound. The error of the last try is returned when the
// cast never started.
func (s *sampler) first() error {
	deadline := time.Now().Add(firstTimeout)
	shotErr := s.shoot(firstTimeout, time.Time{})
	for {
		err := s.startCast()
		if err == nil {
			break
		}
		if err == errTabGone || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	if shotErr == nil {
		return nil // run takes the frames of the cast
	}
	t := time.NewTimer(max(0, time.Until(deadline)))
	defer t.Stop()
	for {
		select {
		case f := <-s.frames:
			if s.frame(f) {
				return nil
			}
		case <-t.C:
			return nil
		case <-s.detached:
			return nil
		case <-s.r.done:
			return nil
		}
	}
}

// follow moves the sampler to tab and takes a first picture of it.
func (s *sampler) follow(tab context.Context) error {
	if chromedp.FromContext(tab) == chromedp.FromContext(s.tab) {
		return nil
	}
	s.stopCast()
	s.close()
	s.attach(tab)
	return s.first()
}

// run samples the tab until the recording finishes; then it takes the last
// picture (see last), stops the cast and seals the recording.
func (s *sampler) run() {
	r := s.r
	defer close(r.samplerQ)
	tick := time.NewTicker(time.Second / time.Duration(r.opt.FPS))
	defer tick.Stop()
	for {
		select {
		case <-r.done:
			s.last()
			s.stopCast()
			s.close()
			r.seal()
			return
		case req := <-r.followCh:
			req.reply <- s.follow(req.tab)
		case f := <-s.frames:
			s.frame(f)
		case res := <-s.shotCh:
			s.gotShot(res)
		case <-tick.C:
			s.tick()
		case <-s.detached:
			s.isGone()
			s.detached = nil // closed: stop selecting on it
		}
	}
}

// last takes the last pictures of a recording: the cast frames that arrived
// already, then a screenshot. A recording stops right after the run's last
// action, when the page may not have drawn its result yet, or the cast not
// sent it; the screenshot makes Chromium draw the page as it is now, so the
// video ends on the last state of the run. The screenshot counts at the end
// of the recording, since it shows the state in which the run ended: it is
// asked for a moment later (later still when the sampler was in a slow
// protocol call), and that moment would lengthen the video. It is bounded
// as any protocol command of the sampler (callTimeout), not by shotTimeout:
// a tick must not stall the video on a page that draws nothing, but
// nothing waits on the last picture but Stop, and on a busy machine the
// page can take more than shotTimeout to draw the run's last state.
func (s *sampler) last() {
	for {
		select {
		case f := <-s.frames:
			s.frame(f)
			continue
		default:
		}
		break
	}
	s.r.mu.Lock()
	end := s.r.endAt
	s.r.mu.Unlock()
	_ = s.shoot(callTimeout, end)
}
