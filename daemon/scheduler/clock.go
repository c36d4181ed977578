package scheduler

import (
	"sync"
	"time"
)

// Clock is the scheduler's time: the real one in the daemon, a
// ManualClock in tests, which move it by hand instead of sleeping.
type Clock interface {
	Now() time.Time
	// At returns a channel that receives the time once the clock reads t
	// or later (at once when it does already). An instant rather than a
	// duration: a wait computed from Now and begun after the clock moved
	// on (a ManualClock set meanwhile) still ends at its instant.
	At(t time.Time) <-chan time.Time
}

// RealClock is the machine's clock.
type RealClock struct{}

// Now implements Clock.
func (RealClock) Now() time.Time { return time.Now() }

// At implements Clock.
func (RealClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

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

// At implements Clock.
func (c *ManualClock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, manualWaiter{at: t, ch: ch})
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
