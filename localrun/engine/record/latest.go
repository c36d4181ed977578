package record

import "time"

// Latest returns the newest picture the recording took of its tab (a JPEG
// of the viewport, bounded by MaxWidth×MaxHeight) and when the tab looked
// like that; ok is false before the first picture and once the recording
// has ended. It is safe to call from any goroutine, and costs the
// browser nothing: viewers of a running run can be shown what the
// recording sees.
func (r *Recorder) Latest() (jpg []byte, at time.Time, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return nil, time.Time{}, false
	}
	tl := r.tl
	if n := len(tl.queue); n > 0 {
		p := tl.queue[n-1]
		return p.jpg, p.at, true
	}
	if tl.base != nil {
		return tl.base.jpg, tl.base.at, true
	}
	return nil, time.Time{}, false
}
