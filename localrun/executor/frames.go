package executor

import (
	"context"
	"errors"
	"time"
)

// Frames is implemented by an executor that can show the page a running
// run's browser is on now (GET /v1/runs/{id}/frame): the local engine.
type Frames interface {
	// Frame returns a JPEG of the active tab of run runID's browser,
	// taken at most maxAge ago. It must not slow the run down noticeably
	// and must return within a few seconds. An error that wraps
	// ErrNoFrame says the run has no picture to give: it is not executing
	// here, it has not opened its browser yet (or never needs one), its
	// browser has closed, or the picture could not be taken in time.
	Frame(ctx context.Context, runID string, maxAge time.Duration) (Frame, error)
}

// Frame is one picture of a run's page.
type Frame struct {
	JPEG  []byte
	Taken time.Time // when the page looked like this
}

// ErrNoFrame is the error of Frames.Frame for a run without a picture to
// give.
var ErrNoFrame = errors.New("the run has no browser open")
