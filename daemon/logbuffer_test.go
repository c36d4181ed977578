package daemon

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingWriter records each Write call.
type countingWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	return c.buf.Write(p)
}

func (c *countingWriter) snapshot() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String(), c.writes
}

func TestLogBufferBatchesAndLosesNothing(t *testing.T) {
	w := &countingWriter{}
	b := newLogBuffer(w, time.Hour) // only Flush, size and Close write
	for i := range 100 {
		b.Write([]byte("line " + strings.Repeat("x", i%7) + "\n"))
	}
	if got, n := w.snapshot(); n != 0 || got != "" {
		t.Fatalf("wrote %d times before a flush: %q", n, got)
	}
	b.Flush()
	got, n := w.snapshot()
	if n != 1 || strings.Count(got, "\n") != 100 {
		t.Fatalf("after Flush: %d writes, %d lines", n, strings.Count(got, "\n"))
	}
	// A full buffer writes at once.
	big := bytes.Repeat([]byte("y"), maxLogBuffer)
	b.Write(big)
	if _, n := w.snapshot(); n != 2 {
		t.Fatalf("a full buffer did not write: %d writes", n)
	}
	b.Write([]byte("last\n"))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.snapshot(); !strings.HasSuffix(got, "last\n") {
		t.Fatal("Close lost the last line")
	}
}

func TestLogBufferFlushesOnItsOwn(t *testing.T) {
	w := &countingWriter{}
	b := newLogBuffer(w, 10*time.Millisecond)
	defer b.Close()
	b.Write([]byte("hello\n"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if got, _ := w.snapshot(); got == "hello\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the line was not written within 5 s of a 10 ms interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
