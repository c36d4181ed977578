// Package record records a run of the local engine as a video that a browser
// plays: WebM (VP8) by default, or MP4 (H.264), encoded by ffmpeg.
//
// # Pipeline
//
// A sampler goroutine takes pictures (JPEGs) of the followed tab, each with
// the wall-clock time at which the tab looked like that: a screencast frame
// at the time Chromium drew it (the timestamp of its metadata), a screenshot
// at the time it was asked for. A timeline turns them into the
// frames of a constant frame rate video whose clock is the wall clock: frame
// k stands for t0 + k/FPS, where t0 is the call of Start, and shows the
// newest picture taken at or before that time. A writer goroutine feeds
// ffmpeg, through its stdin, one JPEG per frame (image2pipe with the mjpeg
// decoder, the same rate in and out), writeLag after the frame's time, so
// that pictures that arrive late still land in their frame. When the
// recording ends (Stop, or the end of the context of Start), the sampler
// takes a last screenshot, so that the video ends on the state of the page
// at the end even when the result of the run's last action was not cast
// yet, and the writer writes the frames up to the end plus holdTime (1 s)
// of the last picture. The video therefore lasts from Start to the end of
// the recording plus a second, whatever the load of the machine did to the
// goroutines, and its last second shows the last state.
//
// The video has the size of the viewport (bounded by MaxWidth×MaxHeight):
// that of the first picture, which is a screenshot, for which Chromium draws
// a frame of the viewport at its current size. A new tab gets its viewport
// (a device metrics override) just before its recording starts, and a cast
// started then sends first a frame of the old size, which made videos of
// 1280×632 (see sampler.first); such frames are dropped when they come
// anyway (staleFrame). Pictures of another size (another tab's viewport)
// are scaled and padded by ffmpeg to the size of the video.
//
// # Throttling and the CPU budget
//
// The budget is 15 % of one core. everyNthFrame does not get there: while a
// screencast runs, Chromium's frame capturer copies every frame that the
// compositor draws (up to 60 a second on an animated page) before
// everyNthFrame or the ack window drop any. Measured on the 2-core test
// machine (Chromium 156, --disable-gpu, 1280×720, a CSS + rAF animation), a
// continuous cast costs about 40 % of a core above the page alone with
// everyNthFrame=15, and about 70 % with every frame sent. everyNthFrame also
// drops the first frame of a cast and single changes, such as the result of
// a click on an otherwise still page: the part of a run that matters most.
// Short casts (start, first frame, stop) at each tick still cost Chromium 9
// to 23 % of a core, because each start sets the capturer up again.
//
// So the sampler has two modes:
//
//   - While the page is still or changes slowly, the screencast runs
//     (everyNthFrame=1). Chromium then sends a frame only when something
//     changes: next to no cost, and every change arrives at once. The sampler
//     acks each frame at once, from a goroutine; the goroutine that reads the
//     events only hands them over on a channel, so it never blocks.
//   - When the cast sends two frames within one tick, the page changes faster
//     than the video samples it. The sampler stops the cast and takes one JPEG
//     screenshot (Page.captureScreenshot, the same quality) per tick, which
//     copies one frame. When two screenshots in a row are the same bytes, the
//     page is still again and the cast restarts. The sampler does not wait
//     for a screenshot: one asked for while a navigation commits can take
//     until its timeout, and when it has not come by the next tick, the cast
//     restarts meanwhile (see sampler.tick).
//
// A cast that sent nothing for 5 s is restarted, so that a cast that Chromium
// dropped cannot freeze the video. ffmpeg encodes VP8 in realtime mode with
// one thread (-deadline realtime -cpu-used 16 -static-thresh 100): about 8 ms
// per 720p frame with the JPEG decode, so about 3 to 4 % of a core at 4 fps.
// TestRecordingCPU measures the whole cost against the same page unrecorded
// (RECORD_CPU_SECONDS=10 for the steady figure): on the machine above,
// shared with other jobs (load average 9 to 20), recording cost 10 to 15 % of
// a core on the animated page (Chromium's screenshots 7 to 10 %, ffmpeg about
// 4 %, Go under 1 %) and 2 to 4 % on a still page (almost all ffmpeg).
//
// # Tabs, navigations, failures
//
// The cast goes on across navigations in the same tab, also to another site
// and so another renderer process (checked by TestNavigations); while a
// navigation commits, Chromium refuses to start a cast, and the sampler tries
// again at the next tick. Follow moves the sampler to another tab; the tab
// must be visible (a hidden tab sends at most its last frame). When the
// followed tab closes, the sampler stops and the video repeats the last
// picture until Stop or Follow. When the context of Start ends, the recording
// ends as if Stop was called, and Stop still returns the file. When ffmpeg
// fails, Stop returns an error with the tail of its stderr and removes the
// partial file. When no picture ever arrived, Stop returns ErrNoFrames and
// writes no file: a video without a single real picture would only mislead.
package record

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/chromedp"
)

// Options configure a recording. The zero value is usable.
type Options struct {
	// FPS is the frame rate of the video and the rate at which the tab is
	// sampled. Default 4, at most 30.
	FPS int
	// Quality is the JPEG quality of the screencast pictures, 1 to 100.
	// Default 60.
	Quality int
	// MaxWidth and MaxHeight bound the size of the pictures, and so of the
	// video. Default 1280×720.
	MaxWidth, MaxHeight int
	// FFmpeg is the path of ffmpeg. "" looks up "ffmpeg" in PATH.
	FFmpeg string
	// Format is "webm" (VP8, the default) or "mp4" (H.264 with libx264
	// ultrafast, yuv420p, +faststart).
	//
	// WebM/VP8 is the default: every Chromium build plays it, also builds
	// without the proprietary codecs (Debian's plays both); Debian's ffmpeg
	// encodes it with libvpx in realtime mode at 3 to 4 % of a core at 4 fps
	// (x264 ultrafast costs about the same, VP9 realtime a little more); and
	// Matroska is written as a stream, so the file of an ffmpeg that dies is
	// a playable prefix, while an MP4 without its index is not.
	Format string
}

const (
	// stopTimeout bounds the wait of Stop for ffmpeg, whether or not the
	// context of Stop has ended; stopGrace bounds the wait for an ffmpeg
	// that was killed.
	stopTimeout = 30 * time.Second
	stopGrace   = 5 * time.Second

	defaultFPS     = 4
	maxFPS         = 30
	defaultQuality = 60
	defaultWidth   = 1280
	defaultHeight  = 720
)

// ErrNoFrames is returned by Stop when no picture was ever taken, for example
// of a page that never painted. No file is written then.
var ErrNoFrames = errors.New("record: no frame was captured, so no video was written")

// ErrStopped is returned by Follow after Stop, or after the context of Start
// ended.
var ErrStopped = errors.New("record: recording stopped")

// FindFFmpeg returns the path of ffmpeg: path itself when it is set and
// executable, or "ffmpeg" looked up in PATH.
func FindFFmpeg(path string) (string, error) {
	name := path
	if name == "" {
		name = "ffmpeg"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("record: ffmpeg not found (%v); install it, for example with `apt-get install ffmpeg`, or set Options.FFmpeg", err)
	}
	return p, nil
}

func (o Options) withDefaults() (Options, error) {
	if o.FPS == 0 {
		o.FPS = defaultFPS
	}
	if o.FPS < 0 || o.FPS > maxFPS {
		return o, fmt.Errorf("record: FPS %d out of range 1..%d", o.FPS, maxFPS)
	}
	if o.Quality == 0 {
		o.Quality = defaultQuality
	}
	if o.Quality < 1 || o.Quality > 100 {
		return o, fmt.Errorf("record: Quality %d out of range 1..100", o.Quality)
	}
	if o.MaxWidth == 0 {
		o.MaxWidth = defaultWidth
	}
	if o.MaxHeight == 0 {
		o.MaxHeight = defaultHeight
	}
	if o.MaxWidth < 16 || o.MaxHeight < 16 {
		return o, fmt.Errorf("record: MaxWidth×MaxHeight %d×%d too small", o.MaxWidth, o.MaxHeight)
	}
	switch o.Format {
	case "":
		o.Format = "webm"
	case "webm", "mp4":
	default:
		return o, fmt.Errorf("record: unknown Format %q (want \"webm\" or \"mp4\")", o.Format)
	}
	return o, nil
}

// Recorder records the followed tab into a video file. Its methods are safe
// for concurrent use.
type Recorder struct {
	opt     Options
	ffmpeg  string
	outPath string

	mu     sync.Mutex // guards the fields below
	tl     *timeline  // the pictures, and the frames taken from them
	enc    *encoder   // ffmpeg, from the first picture on
	encErr error      // the error of starting ffmpeg
	endAt  time.Time  // when the recording ended (finish)
	sealed bool       // no picture is taken any more (seal)

	captured atomic.Int64 // pictures taken
	written  atomic.Int64 // frames written to ffmpeg
	castErrs atomic.Int64 // failed Page.startScreencast calls
	// counters for tests and diagnostics
	castStarts, castFrames, shots, stale atomic.Int64

	followCh chan followReq
	done     chan struct{} // closed by finish: sampling ends
	finishMu sync.Once
	samplerQ chan struct{} // closed when the sampler returned
	sealCh   chan struct{} // closed by seal: the writer writes the last frames
	sealOnce sync.Once

	stopOnce sync.Once
	// captureOnce makes EndCapture's work happen once.
	captureOnce sync.Once
	stopPath    string
	stopErr     error
	unwatchFn   func() bool // ends the watch of the context of Start
}

type followReq struct {
	tab   context.Context
	reply chan error
}

// FileMode is the mode of a recording: readable and writable by its owner
// only, like every file of a run's directory.
const FileMode = 0o600

// Start starts recording tab into outPath. tab is a chromedp context that is
// attached to a page target (it has run an action). The recording ends with
// Stop, or when ctx ends; call Stop in both cases, to get the file. The video
// starts at the call of Start. Start takes a first picture (a screenshot, or
// else the first screencast frame, bounded by a second) and starts ffmpeg
// with it.
func Start(ctx context.Context, tab context.Context, outPath string, o Options) (*Recorder, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	ff, err := FindFFmpeg(o.FFmpeg)
	if err != nil {
		return nil, err
	}
	if outPath == "" {
		return nil, errors.New("record: empty output path")
	}
	if fi, err := os.Stat(filepath.Dir(outPath)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("record: output directory of %s does not exist", outPath)
	}
	if err := checkTab(tab); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := newRecorder(o, ff, outPath)
	s := newSampler(r, tab)
	// The cast starts here, so that a tab that cannot cast fails Start, and
	// ffmpeg starts (and can fail) with the first picture before Start
	// returns.
	err = s.first()
	if err != nil {
		err = fmt.Errorf("record: start screencast: %w", err)
	} else {
		r.mu.Lock()
		err = r.encErr
		r.mu.Unlock()
	}
	if err != nil {
		s.stopCast()
		s.close()
		r.abort()
		return nil, err
	}
	go s.run()
	r.unwatchFn = context.AfterFunc(ctx, r.finish)
	return r, nil
}

// Started is when the video starts: its time 0 shows the tab at that
// moment.
func (r *Recorder) Started() time.Time { return r.tl.t0 }

// newRecorder returns a recorder whose video starts now. o has its defaults.
func newRecorder(o Options, ffmpeg, outPath string) *Recorder {
	return &Recorder{
		opt:       o,
		ffmpeg:    ffmpeg,
		outPath:   outPath,
		tl:        newTimeline(time.Now(), time.Second/time.Duration(o.FPS)),
		followCh:  make(chan followReq),
		done:      make(chan struct{}),
		samplerQ:  make(chan struct{}),
		sealCh:    make(chan struct{}),
		unwatchFn: func() bool { return false },
	}
}

// checkTab reports whether tab is a chromedp context with a live target.
func checkTab(tab context.Context) error {
	if tab == nil || chromedp.FromContext(tab) == nil {
		return errors.New("record: tab is not a chromedp context")
	}
	ch, err := chromedp.Detached(tab)
	if err != nil {
		return fmt.Errorf("record: tab: %w (run an action on it first)", err)
	}
	select {
	case <-ch:
		return errors.New("record: tab is closed")
	default:
	}
	return tab.Err()
}

// Follow makes the recording follow tab, for example after the run switched
// tabs. It stops the cast of the old tab and takes a picture of the new one
// before it returns. It returns the error of that first capture, and the
// recorder follows tab also then.
func (r *Recorder) Follow(tab context.Context) error {
	if err := checkTab(tab); err != nil {
		return err
	}
	req := followReq{tab: tab, reply: make(chan error, 1)}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case r.followCh <- req:
	case <-r.done:
		return ErrStopped
	case <-t.C:
		return errors.New("record: Follow timed out")
	}
	select {
	case err := <-req.reply:
		return err
	case <-t.C:
		return errors.New("record: Follow timed out")
	}
}

// Frames returns the number of pictures taken so far: screencast frames, and
// screenshots while the page animates. The video repeats pictures to keep
// real time; VideoFrames counts the frames of the video.
func (r *Recorder) Frames() int { return int(r.captured.Load()) }

// VideoFrames returns the number of frames written to the video so far.
func (r *Recorder) VideoFrames() int { return int(r.written.Load()) }

// finish ends the recording: the video lasts until now (and the hold of its
// last picture), and the sampler takes a last picture and returns. It does
// not wait. It is safe to call more than once.
func (r *Recorder) finish() {
	r.finishMu.Do(func() {
		r.mu.Lock()
		r.endAt = time.Now()
		r.mu.Unlock()
		close(r.done)
	})
}

// seal ends the taking of pictures, after finish: the writer then writes the
// frames up to the end of the recording and the hold of its last picture,
// and closes ffmpeg's input. The sampler seals when it returns, after its
// last picture; Stop seals when the sampler takes too long. It is safe to
// call more than once.
func (r *Recorder) seal() {
	r.finish()
	r.sealOnce.Do(func() {
		r.mu.Lock()
		r.sealed = true
		r.mu.Unlock()
		close(r.sealCh)
	})
}

// abort ends a recording that failed to start: it ends ffmpeg when the first
// picture started it, and removes its partial file.
func (r *Recorder) abort() {
	r.seal()
	r.mu.Lock()
	enc := r.enc
	r.mu.Unlock()
	if enc != nil {
		enc.kill()
		ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
		_ = enc.wait(ctx)
		cancel()
		_ = os.Remove(enc.tmpPath)
	}
}

// Stop ends the recording: the video lasts until now, and then holds its
// last picture for holdTime (frames that ffmpeg gets at once; Stop does not
// wait that second). It takes a last screenshot of the followed tab (bounded
// by a second), stops the cast, writes the remaining frames, closes ffmpeg's
// input, waits for ffmpeg and returns the path of the finished file. Call it
// right after the last action of the run. The wait for ffmpeg is not cut
// short by ctx (a run canceled, or a daemon shutting down, still gets its
// video: ffmpeg finishes the file in milliseconds, or in seconds on a
// machine starved of CPU); it lasts 30 s at most, and then Stop kills
// ffmpeg and returns an error. A second call returns the result of the
// first.
func (r *Recorder) Stop(ctx context.Context) (string, error) {
	r.stopOnce.Do(func() {
		r.stopPath, r.stopErr = r.stop(ctx)
	})
	return r.stopPath, r.stopErr
}

// EndCapture ends the recording's use of the browser: the video lasts
// until now, the last picture is taken and the cast stopped, and no frame
// comes from the tab after it returns. The browser can then be closed
// while Stop waits for the video to be encoded, which needs no browser.
// Stop calls it; calling it first (then closing the browser context, then
// Stop) frees the browser sooner. It is safe to call more than once.
func (r *Recorder) EndCapture(ctx context.Context) {
	r.captureOnce.Do(func() {
		r.unwatchFn()
		r.finish()
		// The sampler takes a last picture and stops the cast on its way
		// out, and seals the recording when it returns. Each of its steps
		// is bounded (callTimeout), so it returns; this waits for it unless
		// ctx ends first, so that the video holds the run's last state
		// however busy the machine (a fixed wait shorter than the
		// sampler's own bounds cut it off).
		select {
		case <-r.samplerQ:
		case <-ctx.Done():
		}
		r.seal()
	})
}

func (r *Recorder) stop(ctx context.Context) (string, error) {
	r.EndCapture(ctx)

	r.mu.Lock()
	enc, encErr := r.enc, r.encErr
	r.mu.Unlock()
	if encErr != nil {
		return "", encErr
	}
	if enc == nil {
		return "", ErrNoFrames
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	if err := enc.wait(wctx); err != nil {
		return "", err
	}
	// Whatever ffmpeg did to the file, the recording is its owner's only.
	if err := os.Chmod(enc.tmpPath, FileMode); err != nil {
		os.Remove(enc.tmpPath)
		return "", fmt.Errorf("record: %w", err)
	}
	if err := os.Rename(enc.tmpPath, r.outPath); err != nil {
		os.Remove(enc.tmpPath)
		return "", fmt.Errorf("record: %w", err)
	}
	return r.outPath, nil
}

// setPicture adds a picture to the video, and starts ffmpeg on the first
// one: the video has the size of that picture, bounded by MaxWidth×MaxHeight
// (pictures of another size are scaled and padded to it). The sampler gives
// only pictures of the viewport at its current size (see sampler.frame and
// sampler.first), so the video has the size of the viewport. After seal, it
// does nothing.
func (r *Recorder) setPicture(p picture, width, height int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return
	}
	r.captured.Add(1)
	r.tl.add(p)
	if r.enc != nil || r.encErr != nil {
		return
	}
	w, h := fit(width, height, r.opt.MaxWidth, r.opt.MaxHeight)
	enc, err := startEncoder(r, w, h)
	if err != nil {
		r.encErr = err
		return
	}
	r.enc = enc
}

// fit returns the size w×h scaled down, keeping its aspect ratio, to fit in
// maxW×maxH, as Chromium scales the screencast frames for maxWidth and
// maxHeight, and rounded down to even numbers (yuv420p needs them).
func fit(w, h, maxW, maxH int) (int, int) {
	if w > maxW || h > maxH {
		s := min(float64(maxW)/float64(w), float64(maxH)/float64(h))
		w, h = int(float64(w)*s+0.5), int(float64(h)*s+0.5)
	}
	return max(2, min(w, maxW)&^1), max(2, min(h, maxH)&^1)
}
