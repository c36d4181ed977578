package record

import (
	"bytes"
	"context"
	"errors"
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
)

var errTabGone = errors.New("record: tab is closed")

// castFrame is one Page.screencastFrame event.
type castFrame struct {
	data    []byte // JPEG
	session int64
	at      time.Time
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

	casting    bool      // a cast runs on tab
	castSince  time.Time // start of the cast, or time of its last frame
	tickFrames int       // cast frames since the last tick
	shooting   bool      // the page animates: screenshots instead of the cast
	lastShot   []byte
}

func newSampler(r *Recorder, tab context.Context) *sampler {
	s := &sampler{r: r}
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
			select {
			case frames <- castFrame{data: ev.Data, session: ev.SessionID, at: time.Now()}:
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

// screenshot takes one JPEG of the viewport, as the cast would send it.
func (s *sampler) screenshot() ([]byte, error) {
	q := int64(s.r.opt.Quality)
	fast := true
	ctx, cancel := context.WithTimeout(s.tab, shotTimeout)
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

// frame takes a frame of the cast as the newest picture and acks it. When
// the page changes faster than the video samples, it stops the cast (before
// the ack, so that the ack lets no further frame out) and switches to
// screenshots.
func (s *sampler) frame(f castFrame) {
	s.r.setPicture(f.data, f.at)
	s.r.castFrames.Add(1)
	s.tickFrames++
	s.castSince = f.at
	if s.casting && s.tickFrames >= fastFrames {
		s.stopCast()
		s.shooting = true
		s.lastShot = nil
	}
	go ack(s.tab, f.session)
}

// tick runs once per frame period.
func (s *sampler) tick() {
	s.tickFrames = 0
	if s.isGone() {
		return
	}
	if s.shooting {
		shot, err := s.screenshot()
		if err != nil {
			// A hidden or busy page: the cast copes with both.
			s.shooting = false
		} else {
			s.r.shots.Add(1)
			s.r.setPicture(shot, time.Now())
			if !bytes.Equal(shot, s.lastShot) {
				s.lastShot = shot
				return
			}
			s.shooting = false // the page is still again
		}
	}
	if s.casting && time.Since(s.castSince) > refreshAfter {
		s.stopCast()
	}
	if !s.casting {
		if err := s.startCast(); err != nil && err != errTabGone {
			s.r.castErrs.Add(1)
		}
	}
}

// first starts the cast and waits, bounded by firstTimeout, for its first
// frame. Chromium refuses a cast while a navigation commits ("Not attached to
// an active page"), so a failed start is retried within the same bound. The
// error of the last try is returned when the cast never started.
func (s *sampler) first() error {
	deadline := time.Now().Add(firstTimeout)
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
	t := time.NewTimer(max(0, time.Until(deadline)))
	defer t.Stop()
	select {
	case f := <-s.frames:
		s.frame(f)
	case <-t.C:
	case <-s.detached:
	case <-s.r.done:
	}
	return nil
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

// run samples the tab until the recording finishes.
func (s *sampler) run() {
	r := s.r
	defer close(r.samplerQ)
	defer s.close()
	defer s.stopCast()
	tick := time.NewTicker(time.Second / time.Duration(r.opt.FPS))
	defer tick.Stop()
	for {
		select {
		case <-r.done:
			return
		case req := <-r.followCh:
			req.reply <- s.follow(req.tab)
		case f := <-s.frames:
			s.frame(f)
		case <-tick.C:
			s.tick()
		case <-s.detached:
			s.isGone()
			s.detached = nil // closed: stop selecting on it
		}
	}
}
