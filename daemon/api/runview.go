package api

import (
	"errors"
	"net/http"
	"sync"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// Runs is what the server needs to start, cancel and show runs. Package
// daemon builds its parts and shares them with the runner: the same Links
// make the URLs of the API's answers and of the webhooks' payloads.
type Runs struct {
	Runner *runner.Runner
	Files  *artifacts.Store
	// Links makes the URLs of the answers about runs; with a Signer, the
	// server also serves the files at their signed URLs.
	Links *runview.Links
	// Webhooks sends the webhooks that retry_webhook asks for.
	Webhooks *runner.Webhooks
	// Actions runs single actions (POST /v1/sdk/run_action); nil answers
	// 503 to them.
	Actions executor.Actions
	// Sessions keeps browser sessions (POST /v1/browser_sessions); nil
	// answers 503 to opening one.
	Sessions executor.BrowserSessions
	// Frames shows the pages of running runs (GET /v1/runs/{id}/frame,
	// frame.go); nil: no run has a frame.
	Frames executor.Frames

	frameOnce  sync.Once
	frameCache *frameCache
}

// links makes the URLs of run answers; nil (a server without runs, rs
// nil) makes answers without file URLs.
func (rs *Runs) links() *runview.Links {
	if rs == nil {
		return nil
	}
	return rs.Links
}

// writeRun answers GET /v1/runs/{id} from the run's stored view, the
// encoded answer with its URLs filled in for this request, and builds the
// answer from the record only for a run without a usable view (see
// runview.ErrNoView).
func (s runsAPI) writeRun(w http.ResponseWriter, r *http.Request, orgID, runID string) {
	base := baseURL(r)
	err := writeAppended(w, func(dst []byte) ([]byte, error) {
		return s.exec.links().AppendJSON(r.Context(), s.runs, dst, base, orgID, runID)
	})
	if err == nil {
		return
	}
	if !errors.Is(err, runview.ErrNoView) {
		s.error(w, r, err)
		return
	}
	rec, err := s.runs.Get(r.Context(), orgID, runID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.exec.links().Run(rec, base))
}

// runArtifacts lists a run's files as GET /v1/runs/{id}/artifacts answers,
// only those of the given types when types is not empty.
func (s runsAPI) runArtifacts(rec *store.RunRecord, base string, types map[client.ArtifactType]bool) []client.Artifact {
	var keep []client.ArtifactType
	for t := range types {
		keep = append(keep, t)
	}
	return s.exec.links().Artifacts(rec, base, keep...)
}
