package scheduler

import (
	"sync"
	"time"
)

// Clock is the scheduler's time: the real one in the daemon, a
// ManualClock in tests, which move it by hand instead of sleeping.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives the time once d has passed.
	After(d time.Duration) <-chan time.Time
}

// RealClock is the machine's clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// ManualClock is a Clock that moves only when told (Set, Advance): the
// channels After returned receive as soon as the clock reaches their time.
// It is safe for concurrent use.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []manualWaiter
}

type manualWaiter struct {
	at time.Time
	ch chan time.Time
}

// NewManualClock returns a clock reading now.
func NewManualClock(now time.Time) *ManualClock { return &ManualClock{now: now} }

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements Clock.
func (c *ManualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := c.now.Add(d)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, manualWaiter{at: at, ch: ch})
	return ch
}

// Set moves the clock to t (forwards or backwards) and wakes the waiters
// whose time has come.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(t) {
			kept = append(kept, w)
			continue
		}
		w.ch <- t
	}
	clear(c.waiters[len(kept):])
	c.waiters = kept
}

// Advance moves the clock forwards by d.
func (c *ManualClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }
