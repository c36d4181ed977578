package client

import (
	"context"
	"fmt"
	"time"
)

// FrameTakenHeader is the header of GET /v1/runs/{id}/frame that says when
// the page looked as the picture shows (RFC 3339 with milliseconds).
const FrameTakenHeader = "X-Frame-Taken-At"

// RunFrame is a picture of the page a running run's browser shows.
type RunFrame struct {
	JPEG  []byte    // the picture, a JPEG of the run's viewport
	Taken time.Time // when the page looked like this
}

// Frame returns a picture of the page the browser of a running run shows
// now, at most about a second old (GET /v1/runs/{id}/frame, a daemon
// route; viewers of one run share the pictures). A run that is over, or
// that has no browser open now, is a 409 *Error (ErrConflict) whose
// Detail says which; another organization's run is a 404.
func (s *RunsService) Frame(ctx context.Context, runID string, opts ...Option) (*RunFrame, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	cfg, err := s.client.callConfig(opts)
	if err != nil {
		return nil, err
	}
	req := request{method: "GET", path: pathf("/v1/runs/%s/frame", runID), idempotent: true}
	resp, body, _, err := s.client.attempt(ctx, cfg, req, cfg.baseURL.String()+req.path, nil, 0)
	if cfg.responseInto != nil && resp != nil {
		*cfg.responseInto = resp
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, newError(resp, body, cfg.now())
	}
	f := &RunFrame{JPEG: body}
	if v := resp.Header.Get(FrameTakenHeader); v != "" {
		if f.Taken, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return nil, fmt.Errorf("client: the frame of run %s: header %s is not a time: %q", runID, FrameTakenHeader, v)
		}
	}
	return f, nil
}
