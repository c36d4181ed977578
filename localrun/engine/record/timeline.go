package record

import (
	"slices"
	"time"
)

// A picture is one JPEG of the followed tab and the wall-clock time at which
// the tab looked like that: for a screencast frame, the time at which
// Chromium drew it (its metadata timestamp, see castTime); for a screenshot,
// the time at which it was asked for.
type picture struct {
	jpg []byte
	at  time.Time
}

// timeline turns pictures that come at irregular times (the screencast sends
// a frame only when the page paints) into the frames of a constant frame
// rate video whose clock is the wall clock:
//
//	frame k stands for the time t0 + k·period, and shows the newest picture
//	taken at or before that time.
//
// Frames before the first picture show the first picture (a tab that has
// not painted yet shows nothing else). The number of frames of a finished
// recording comes from frames(end): the video lasts from t0 to end, so its
// duration follows the wall clock whatever the machine's load did to the
// goroutines that sample and write.
//
// Pictures are added as they arrive (add) and frames are taken in order
// (take). The writer (encoder.writeLoop) takes frame k only writeLag after its time, so that a
// picture that arrives late (a busy machine, a slow protocol round trip)
// still lands in the right frame. A picture that arrives even later, after
// the frames of its time were taken, counts from the next frame on.
//
// timeline is not safe for concurrent use; the Recorder guards it.
type timeline struct {
	t0     time.Time
	period time.Duration
	next   int64     // the number of frames taken
	base   *picture  // the newest picture at or before the time of frame next-1
	queue  []picture // pictures not yet shown, by time
	last   time.Time // the time of the newest picture added
	// lastFirst is the first frame that shows the newest picture: the
	// first frame whose time is at or after the picture's, or, for a
	// picture that arrived after that frame was taken, the next frame.
	lastFirst int64
	count     int // pictures added
}

// maxQueue bounds the pictures kept ahead of the writer. The sampler sends
// at most a few pictures per period (it switches to one screenshot per
// period when the page animates) and the writer stays writeLag behind, so
// the bound is only reached when the writer is stuck; the oldest pictures
// are then merged into base.
const maxQueue = 64

func newTimeline(t0 time.Time, period time.Duration) *timeline {
	return &timeline{t0: t0, period: period}
}

// frameTime is the time that frame k stands for.
func (tl *timeline) frameTime(k int64) time.Time {
	return tl.t0.Add(time.Duration(k) * tl.period)
}

// add adds a picture.
func (tl *timeline) add(p picture) {
	tl.count++
	if tl.count == 1 || !p.at.Before(tl.last) {
		tl.last = p.at
		tl.lastFirst = max(ceilDiv(p.at.Sub(tl.t0), tl.period), tl.next)
	}
	// Usually p is the newest and goes at the end.
	i, _ := slices.BinarySearchFunc(tl.queue, p.at, func(q picture, at time.Time) int {
		if q.at.After(at) {
			return 1
		}
		return -1 // equal times: after the ones there, in the order of arrival
	})
	tl.queue = slices.Insert(tl.queue, i, p)
	for len(tl.queue) > maxQueue {
		tl.promote(tl.queue[0])
		tl.queue = tl.queue[1:]
	}
}

// promote makes p the base when it is newer than base.
func (tl *timeline) promote(p picture) {
	if tl.base == nil || !p.at.Before(tl.base.at) {
		tl.base = &p
	}
}

// empty reports whether no picture was added.
func (tl *timeline) empty() bool { return tl.count == 0 }

// take returns the picture of the next frame and advances. It returns nil
// when no picture was added yet.
func (tl *timeline) take() []byte {
	t := tl.frameTime(tl.next)
	n := 0
	for n < len(tl.queue) && !tl.queue[n].at.After(t) {
		tl.promote(tl.queue[n])
		n++
	}
	tl.queue = tl.queue[n:]
	var jpg []byte
	switch {
	case tl.base != nil:
		jpg = tl.base.jpg
	case len(tl.queue) > 0:
		jpg = tl.queue[0].jpg // before the first picture: show the first
	default:
		return nil
	}
	tl.next++
	return jpg
}

// due returns the number of frames whose time is at least lag before now:
// the frames that the writer can take while the recording goes on.
func (tl *timeline) due(now time.Time, lag time.Duration) int64 {
	d := now.Sub(tl.t0) - lag
	if d < 0 {
		return 0
	}
	return int64(d/tl.period) + 1
}

// frames returns the number of frames of a recording that ends at end, with
// its last picture held for hold: enough frames to reach the later of end
// and the time of the newest picture, then hold more (rounded up to whole
// frames). The video so covers the whole recording, and its last picture
// stays on screen for at least hold: the first frame that shows it is the
// first whose time is at or after the picture's, which is at or before the
// frame that reaches end. (A video that ends on the frame of the last change
// shows the final state for one frame period, or not at all.)
func (tl *timeline) frames(end time.Time, hold time.Duration) int64 {
	if tl.last.After(end) {
		end = tl.last
	}
	n := ceilDiv(end.Sub(tl.t0), tl.period) + ceilDiv(hold, tl.period)
	// A newest picture that arrived after the frame of its time was taken
	// (a loaded machine) shows from a later frame: it is still held for
	// hold from there.
	if tl.count > 0 {
		n = max(n, tl.lastFirst+ceilDiv(hold, tl.period))
	}
	return max(1, n)
}

// ceilDiv is d/p rounded up, and 0 for d <= 0.
func ceilDiv(d, p time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + p - 1) / p)
}
