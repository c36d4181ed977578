package api

import (
	"errors"
	"net/http"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// handleArtifactContent serves GET /v1/artifacts/{artifact_id}/content:
// the bytes of an artifact of the organization, with the API key, whether
// a run's file (its artifact_id in GET /v1/runs/{id}/artifacts) or an
// uploaded file (POST /v1/upload_file). Range requests are answered 206
// with Content-Range, or 416 when the range is past the end (see
// artifacts.Store.ServeFile); another organization's artifact is 404.
func (s filesAPI) handleArtifactContent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("artifact_id")
	if s.exec == nil || s.exec.Files == nil {
		s.error(w, r, errorf(KindNotFound, "Artifact %s not found", id))
		return
	}
	org := organization(r.Context()).ID
	const cache = "private, no-cache"
	up, err := s.uploads.Get(r.Context(), org, id)
	if err == nil {
		s.exec.Files.ServeFile(w, r, org, up.Dir, up.Name, true, cache)
		return
	}
	if !errors.Is(err, store.ErrNotFound) {
		s.error(w, r, err)
		return
	}
	runID, f, err := s.runs.FindFile(r.Context(), org, id)
	if errors.Is(err, store.ErrNotFound) {
		s.error(w, r, errorf(KindNotFound, "Artifact %s not found", id))
		return
	} else if err != nil {
		s.error(w, r, err)
		return
	}
	s.exec.Files.ServeFile(w, r, org, runID, f.Name, f.Type == client.ArtifactDownload, cache)
}
