package webui

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/abctl/abctl/client"
)

// handleFrame serves GET /ui/runs/{id}/frame, the picture of the page a
// running run's browser shows now, for the <img> of the run's page, which
// ui.js refreshes every second while the run is live: GET
// /v1/runs/{id}/frame, called in process with the session's organization.
// A run with no picture (over, or no browser open yet) answers the API's
// status and its detail as text; the page then shows its own note.
func (s *Server) handleFrame(w http.ResponseWriter, r *http.Request, sess *session) {
	c, err := s.client(r, sess)
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	f, err := c.Runs.Frame(r.Context(), r.PathValue("id"))
	var ae *client.Error
	if errors.As(err, &ae) && ae.StatusCode == http.StatusConflict {
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, ae.Detail, http.StatusConflict)
		return
	}
	if err != nil {
		s.fail(w, r, sess, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/jpeg")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(f.JPEG)))
	if !f.Taken.IsZero() {
		h.Set(client.FrameTakenHeader, f.Taken.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	}
	w.Write(f.JPEG)
}
