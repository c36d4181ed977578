package api

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/abctl/abctl/localrun/executor"
)

// FrameTakenHeader is the header of GET /v1/runs/{id}/frame that says
// when the page looked as the picture shows: RFC 3339 with milliseconds,
// UTC.
const FrameTakenHeader = "X-Frame-Taken-At"

// frameTakenFormat is the layout of FrameTakenHeader.
const frameTakenFormat = "2006-01-02T15:04:05.000Z07:00"

// frames returns the shared pictures of the runs' pages; nil Runs, or
// Runs without Frames, have none.
func (rs *Runs) frames() *frameCache {
	if rs == nil {
		return nil
	}
	rs.frameOnce.Do(func() { rs.frameCache = newFrameCache(rs.Frames, nil) })
	return rs.frameCache
}

// handleRunFrame serves GET /v1/runs/{id}/frame (abctl's own): a JPEG of
// the page the run's browser shows now, at most a second old, shared
// among the run's viewers (framecache.go). Another organization's run, or
// an unknown id, is a 404 as on every run route; a run that is over, or
// that has no browser open now (not yet, or never: a run whose blocks
// touch no page, a run of an executor without browsers), is a 409 whose
// detail says which.
func (s runsAPI) handleRunFrame(w http.ResponseWriter, r *http.Request) {
	orgID, id := organization(r.Context()).ID, r.PathValue("id")
	rec, err := s.runs.Get(r.Context(), orgID, id)
	if err != nil {
		s.error(w, r, err)
		return
	}
	if rec.Terminal() {
		s.error(w, r, errorf(KindConflict, "Run %s is over (%s): it has no browser to show any more. Its screenshots and recording are in GET /v1/runs/%s.", id, rec.Status, id))
		return
	}
	f, err := s.exec.frames().Frame(r.Context(), id)
	if errors.Is(err, executor.ErrNoFrame) {
		// Whether the run ended in the meantime.
		if again, gerr := s.runs.Get(r.Context(), orgID, id); gerr == nil && again.Terminal() {
			s.error(w, r, errorf(KindConflict, "Run %s is over (%s): it has no browser to show any more. Its screenshots and recording are in GET /v1/runs/%s.", id, again.Status, id))
			return
		}
		s.error(w, r, errorf(KindConflict, "Run %s (%s) has no browser open now: it has not opened one yet, or it does not need one. Ask again in a moment.", id, rec.Status))
		return
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/jpeg")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(f.JPEG)))
	h.Set(FrameTakenHeader, f.Taken.UTC().Format(frameTakenFormat))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(f.JPEG)
	}
}
