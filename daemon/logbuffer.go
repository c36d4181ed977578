package daemon

import (
	"io"
	"sync"
	"time"
)

// logBuffer gathers log lines and writes them out together, at most every
// interval: the access log writes one line per request, and one write
// system call per line is a measurable share of a small request. Records
// that matter more than a request line (errors, warnings, start and stop)
// go through an unbuffered logger; the buffer holds only access lines, and
// Close writes what is left.
type logBuffer struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	stop chan struct{}
	done chan struct{}
}

// maxLogBuffer is how much the buffer holds before it writes at once.
const maxLogBuffer = 64 << 10

func newLogBuffer(w io.Writer, interval time.Duration) *logBuffer {
	b := &logBuffer{w: w, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.Flush()
			case <-b.stop:
				b.Flush()
				return
			}
		}
	}()
	return b
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) >= maxLogBuffer {
		b.flushLocked()
	}
	return len(p), nil
}

// Flush writes what the buffer holds.
func (b *logBuffer) Flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBuffer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	b.w.Write(b.buf) // a log that cannot be written has nowhere to report it
	b.buf = b.buf[:0]
}

// Close stops the timer and writes what is left.
func (b *logBuffer) Close() error {
	close(b.stop)
	<-b.done
	return nil
}
