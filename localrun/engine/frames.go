package engine

import (
	"context"
	"time"

	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/executor"
)

var _ executor.Frames = (*Engine)(nil)

// Frame implements executor.Frames: a picture of the page of a task,
// agent or run_action run executing in this engine (runbrowser.Browser.Frame).
func (e *Engine) Frame(ctx context.Context, runID string, maxAge time.Duration) (executor.Frame, error) {
	v, ok := e.frameRuns.Load(runID)
	if !ok {
		return executor.Frame{}, executor.ErrNoFrame
	}
	return v.(*runbrowser.Browser).Frame(ctx, maxAge)
}

// listFrames makes r's browser the one Frame shows for runID until r
// finishes.
func (e *Engine) listFrames(runID string, r *run) {
	if runID == "" {
		return
	}
	e.frameRuns.Store(runID, r.browser)
	r.unlist = func() { e.frameRuns.CompareAndDelete(runID, r.browser) }
}
