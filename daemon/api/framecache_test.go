package api

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/abctl/abctl/localrun/executor"
)

// testClock is a clock that moves only when told.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// frameSource takes a numbered picture at the clock's time each time it is
// asked, or has none.
type frameSource struct {
	clock *testClock
	mu    sync.Mutex
	taken int
	none  bool
}

func (s *frameSource) Frame(_ context.Context, runID string, maxAge time.Duration) (executor.Frame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if maxAge != frameMaxAge {
		panic("the cache asks for pictures of another age than frameMaxAge")
	}
	if s.none {
		return executor.Frame{}, executor.ErrNoFrame
	}
	s.taken++
	return executor.Frame{JPEG: []byte{byte(s.taken)}, Taken: s.clock.now()}, nil
}

func (s *frameSource) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// TestFrameCacheSharesAFrameForASecond: two requests within frameMaxAge of the
// picture get the same one (one picture taken); a request after it gets a
// newer one; each run has its own.
func TestFrameCacheSharesAFrameForASecond(t *testing.T) {
	clk := &testClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	src := &frameSource{clock: clk}
	c := newFrameCache(src, clk.now)

	first, err := c.Frame(t.Context(), "wr_1")
	if err != nil {
		t.Fatal(err)
	}
	clk.add(frameMaxAge)
	again, err := c.Frame(t.Context(), "wr_1")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Taken.Equal(first.Taken) || again.JPEG[0] != first.JPEG[0] || src.count() != 1 {
		t.Fatalf("within %v: got picture %d taken %v after %d taken at %v (%d pictures taken), want the same, one taken",
			frameMaxAge, again.JPEG[0], again.Taken, first.JPEG[0], first.Taken, src.count())
	}
	clk.add(time.Millisecond)
	newer, err := c.Frame(t.Context(), "wr_1")
	if err != nil {
		t.Fatal(err)
	}
	if !newer.Taken.After(first.Taken) || src.count() != 2 {
		t.Fatalf("after %v: got a picture taken %v (first %v), %d taken; want a newer one", frameMaxAge, newer.Taken, first.Taken, src.count())
	}
	other, err := c.Frame(t.Context(), "wr_2")
	if err != nil {
		t.Fatal(err)
	}
	if other.JPEG[0] == newer.JPEG[0] || src.count() != 3 {
		t.Fatalf("another run got picture %d, %d taken; want its own", other.JPEG[0], src.count())
	}
}

// TestFrameCacheViewersShareOneCapture: many viewers asking at once cause one
// picture.
func TestFrameCacheViewersShareOneCapture(t *testing.T) {
	clk := &testClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	src := &frameSource{clock: clk}
	c := newFrameCache(src, clk.now)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, err := c.Frame(t.Context(), "wr_1"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := src.count(); n != 1 {
		t.Fatalf("20 viewers at once took %d pictures, want 1", n)
	}
}

// TestFrameCacheNoFrame: a run without a browser has no frame, and a nil
// source none for any run; a picture kept is not served once the source
// has none and the picture is older than frameMaxAge.
func TestFrameCacheNoFrame(t *testing.T) {
	clk := &testClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	src := &frameSource{clock: clk}
	c := newFrameCache(src, clk.now)
	if _, err := c.Frame(t.Context(), "wr_1"); err != nil {
		t.Fatal(err)
	}
	src.none = true
	clk.add(2 * frameMaxAge)
	if _, err := c.Frame(t.Context(), "wr_1"); !errors.Is(err, executor.ErrNoFrame) {
		t.Fatalf("a run whose browser closed: err %v, want ErrNoFrame", err)
	}
	if _, err := newFrameCache(nil, nil).Frame(t.Context(), "wr_1"); !errors.Is(err, executor.ErrNoFrame) {
		t.Fatalf("no source: err %v, want ErrNoFrame", err)
	}
}
