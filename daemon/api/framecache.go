package api

// The pictures of running runs' pages, shared among their viewers (GET
// /v1/runs/{id}/frame, frame.go): a picture at most frameMaxAge old is
// served again, and only an older one makes the executor take a new one,
// one at a time per run however many viewers ask. A web page refreshing
// every second, a CLI and an MCP client watching the same run so cost the
// run's browser one picture a second.

import (
	"context"
	"sync"
	"time"

	"github.com/abctl/abctl/localrun/executor"
)

// frameMaxAge is how old a picture may be and still be served: the frame of a
// running run is at most a second old.
const frameMaxAge = time.Second

// frameForget is how long a run's last picture is kept after it was last
// asked for.
const frameForget = time.Minute

// frameCache gives the pictures of an executor's Frames, shared. Build it with newFrameCache; it is
// safe for concurrent use.
type frameCache struct {
	src executor.Frames
	now func() time.Time

	mu   sync.Mutex
	runs map[string]*frameEntry
}

// frameEntry is one run's newest picture; its mutex is held while a new one is
// taken, so that the viewers who asked meanwhile get that one.
type frameEntry struct {
	mu    sync.Mutex
	frame executor.Frame
	has   bool
	asked time.Time // when it was last asked for (under frameCache.mu)
}

// newFrameCache returns a cache over src; now is its clock (nil: time.Now). A nil
// src has no frame for any run.
func newFrameCache(src executor.Frames, now func() time.Time) *frameCache {
	if now == nil {
		now = time.Now
	}
	return &frameCache{src: src, now: now, runs: map[string]*frameEntry{}}
}

// Frame returns the picture of run runID: the one kept when it was taken
// at most frameMaxAge ago, else a new one from the source. An error wraps
// executor.ErrNoFrame when the run has no browser to show (see
// executor.Frames); the run's browser is then forgotten.
func (c *frameCache) Frame(ctx context.Context, runID string) (executor.Frame, error) {
	if c == nil || c.src == nil {
		return executor.Frame{}, executor.ErrNoFrame
	}
	now := c.now()
	c.mu.Lock()
	for id, e := range c.runs {
		if now.Sub(e.asked) > frameForget {
			delete(c.runs, id)
		}
	}
	e := c.runs[runID]
	if e == nil {
		e = &frameEntry{}
		c.runs[runID] = e
	}
	e.asked = now
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.has && c.now().Sub(e.frame.Taken) <= frameMaxAge {
		return e.frame, nil
	}
	f, err := c.src.Frame(ctx, runID, frameMaxAge)
	if err != nil {
		e.has = false
		c.mu.Lock()
		if c.runs[runID] == e {
			delete(c.runs, runID)
		}
		c.mu.Unlock()
		return executor.Frame{}, err
	}
	e.frame, e.has = f, true
	return f, nil
}
