package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// encoder is one ffmpeg process and the goroutine that feeds it.
type encoder struct {
	r       *Recorder
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	tmpPath string
	stderr  *tail

	exited  chan struct{} // closed when cmd.Wait returned
	waitErr error

	writerDone chan struct{}
	writeErr   error
}

// ffmpegArgs returns the arguments of ffmpeg for a video of w×h.
func ffmpegArgs(o Options, w, h int, out string) []string {
	fps := strconv.Itoa(o.FPS)
	gop := strconv.Itoa(5 * o.FPS) // a key frame every 5 s, for seeking
	vf := fmt.Sprintf("scale=%d:%d:force_original_aspect_ratio=decrease:force_divisible_by=2,"+
		"pad=%d:%d:-1:-1,setsar=1,format=yuv420p", w, h, w, h)
	args := []string{
		"-hide_banner", "-nostats", "-loglevel", "error",
		"-threads", "1",
		"-f", "image2pipe", "-framerate", fps, "-c:v", "mjpeg", "-i", "pipe:0",
		"-an", "-vf", vf, "-r", fps, "-threads", "1", "-g", gop,
	}
	switch o.Format {
	case "mp4":
		args = append(args,
			"-c:v", "libx264", "-preset", "ultrafast", "-crf", "26",
			"-pix_fmt", "yuv420p", "-movflags", "+faststart", "-f", "mp4")
	default:
		args = append(args,
			"-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "16",
			"-static-thresh", "100", "-b:v", "1M", "-crf", "10", "-qmin", "4", "-qmax", "50",
			"-auto-alt-ref", "0", "-f", "webm")
	}
	return append(args, "-y", out)
}

// writeLag is how long after its time the writer takes a frame while the
// recording goes on. A picture reaches the timeline some time after the tab
// looked like that: a screencast frame after the protocol round trip and the
// sampler's turn, a screenshot after its capture. When it arrives within
// writeLag it lands in the frame of its time; later, in the next frame
// written. A loaded machine delays it by tens, rarely hundreds of
// milliseconds. The cost is memory: the pictures of writeLag (a few
// JPEGs), and the frames of writeLag that the writer writes at the end.
const writeLag = time.Second

// holdTime is how long the last picture of a recording stays on screen at
// least: the final state of a run is what a viewer looks for, and a
// recording stops right after the run's last action.
const holdTime = time.Second

// startEncoder starts ffmpeg for a video of w×h (even numbers) and the
// writer goroutine.
func startEncoder(r *Recorder, w, h int) (*encoder, error) {
	e := &encoder{
		r:          r,
		tmpPath:    r.outPath + ".part",
		stderr:     &tail{max: 8 << 10},
		exited:     make(chan struct{}),
		writerDone: make(chan struct{}),
	}
	_ = os.Remove(e.tmpPath)
	// The file is created here, readable by its owner only like every
	// other file of a run; ffmpeg (-y) truncates it and keeps its mode,
	// where a file of its own would have the umask's 0644.
	f, err := os.OpenFile(e.tmpPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	f.Close()
	e.cmd = exec.Command(r.ffmpeg, ffmpegArgs(r.opt, w, h, e.tmpPath)...)
	e.cmd.Stderr = e.stderr
	e.cmd.SysProcAttr = sysProcAttr()
	if e.stdin, err = e.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("record: ffmpeg: %w", err)
	}
	if err := e.cmd.Start(); err != nil {
		return nil, fmt.Errorf("record: start ffmpeg: %w", err)
	}
	go func() {
		e.waitErr = e.cmd.Wait()
		close(e.exited)
	}()
	go e.writeLoop()
	return e, nil
}

// writeLoop writes the frames of the timeline to ffmpeg, one JPEG per frame
// (ffmpeg reads them at the frame rate of the video, so the k-th JPEG is the
// frame at k/FPS). While the recording goes on, it writes frame k writeLag
// after its time, t0 + k/FPS; a frame that came due while a write was slow
// is written at once. Which picture a frame shows depends only on the times
// of the pictures (see timeline), not on when the writer runs. When the
// recording is sealed, it writes the frames up to its end and the hold of
// its last picture, at once, and closes stdin.
func (e *encoder) writeLoop() {
	defer close(e.writerDone)
	defer e.stdin.Close()
	r := e.r
	maxBatch := int64(8 * r.opt.FPS) // bounds one round of catching up
	timer := time.NewTimer(0)
	defer timer.Stop()
	var n int64 // frames written
	for {
		final := false
		select {
		case <-timer.C:
		case <-r.sealCh:
			final = true
		case <-e.exited:
			e.writeErr = errors.New("ffmpeg exited before the end of the input")
			return
		}
		r.mu.Lock()
		due := r.tl.due(time.Now(), writeLag)
		if final {
			due = r.tl.frames(r.endAt, holdTime)
		}
		r.mu.Unlock()
		if !final {
			due = min(due, n+maxBatch)
		}
		for ; n < due; n++ {
			r.mu.Lock()
			jpg := r.tl.take()
			r.mu.Unlock()
			if jpg == nil { // cannot happen: ffmpeg starts with the first picture
				e.writeErr = errors.New("no picture for a frame")
				return
			}
			if _, err := e.stdin.Write(jpg); err != nil {
				e.writeErr = err
				return
			}
			r.written.Add(1)
		}
		if final {
			return
		}
		r.mu.Lock()
		next := r.tl.frameTime(n).Add(writeLag)
		r.mu.Unlock()
		timer.Reset(max(0, time.Until(next)))
	}
}

// kill ends ffmpeg at once.
func (e *encoder) kill() {
	if e.cmd.Process != nil {
		_ = e.cmd.Process.Kill()
	}
}

// wait waits for the writer and for ffmpeg, bounded by ctx; when ctx ends
// first, it kills ffmpeg. It removes the partial file on failure.
func (e *encoder) wait(ctx context.Context) error {
	killed := false
	select {
	case <-e.writerDone:
	case <-ctx.Done():
		e.kill() // a writer blocked on a full pipe gets EPIPE
		killed = true
	}
	select {
	case <-e.exited:
	case <-ctx.Done():
		e.kill()
		killed = true
		t := time.NewTimer(5 * time.Second)
		select {
		case <-e.exited:
		case <-t.C:
		}
		t.Stop()
	}
	// After a kill the writer ends at its next write; wait for it, bounded,
	// so that its error can be read.
	writerDone := false
	t := time.NewTimer(5 * time.Second)
	select {
	case <-e.writerDone:
		writerDone = true
	case <-t.C:
	}
	t.Stop()

	var err error
	select {
	case <-e.exited:
	default:
		return fmt.Errorf("record: ffmpeg did not exit after a kill (%v)", ctx.Err())
	}
	switch {
	case killed:
		err = fmt.Errorf("record: ffmpeg did not finish in time (%v), killed", ctx.Err())
	case e.waitErr != nil:
		err = fmt.Errorf("record: ffmpeg failed: %v", e.waitErr)
	case !writerDone:
		err = errors.New("record: the writer to ffmpeg did not finish")
	case e.writeErr != nil:
		err = fmt.Errorf("record: writing to ffmpeg: %v", e.writeErr)
	}
	if err == nil {
		if fi, serr := os.Stat(e.tmpPath); serr != nil || fi.Size() == 0 {
			err = errors.New("record: ffmpeg wrote no file")
		}
	}
	if err != nil {
		_ = os.Remove(e.tmpPath)
		if s := e.stderr.String(); s != "" {
			err = fmt.Errorf("%w; ffmpeg stderr: %s", err, s)
		}
		return err
	}
	return nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
