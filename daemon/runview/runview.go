// Package runview makes what the daemon answers about a run: the run as
// GET /v1/runs/{id} shows it, built from the store's record (Response),
// with the parts that depend on the request (Links: app_url under the
// address the client reached the daemon on, the URLs of the run's files
// signed with a fresh expiry); and the stored views of runs (Views),
// which let that read send the answer without building it.
//
// The HTTP face (package daemon/api) answers with it, and the runner's
// webhooks (package daemon/runner) send the same answer as their payload,
// so that a receiver sees the run as GET shows it. The API's answers and
// the stored views are both encoded with internal/jsonenc, so that a view
// filled in is, byte for byte, the answer built from the record.
package runview

import (
	"encoding/json"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/store"
)

// Response returns the run of rec as GET /v1/runs/{id} answers it, with
// appURL as its app_url and the URLs of its files from fileURL; a nil
// fileURL leaves the file URLs out (a daemon that cannot sign them).
func Response(rec *store.RunRecord, appURL string, fileURL artifacts.URLFunc) *client.Run {
	run := &client.Run{
		RunID:      rec.ID,
		Status:     rec.Status,
		Output:     rec.Output,
		CreatedAt:  rec.CreatedAt,
		ModifiedAt: rec.ModifiedAt,
		QueuedAt:   rec.QueuedAt,
		StartedAt:  rec.StartedAt,
		FinishedAt: rec.FinishedAt,
		Errors:     rec.Errors,
		StepCount:  rec.StepCount,
		RunType:    rec.Type,
		RunRequest: rec.RunRequest,
		AppURL:     client.Ptr(appURL),
	}
	if rec.FailureReason != "" {
		run.FailureReason = client.Ptr(rec.FailureReason)
	}
	if rec.WebhookFailureReason != "" {
		run.WebhookFailureReason = client.Ptr(rec.WebhookFailureReason)
	}
	if rec.Summary != "" {
		run.Summary = client.Ptr(rec.Summary)
	}
	if rec.Task != nil {
		run.MaxScreenshotScrolls = rec.Task.MaxScreenshotScrolls
		if rec.Task.BrowserSessionID != "" {
			run.BrowserSessionID = client.Ptr(rec.Task.BrowserSessionID)
		}
		if rec.Task.BrowserProfileID != "" {
			run.BrowserProfileID = client.Ptr(rec.Task.BrowserProfileID)
		}
	}
	if rec.Type == client.RunTypeWorkflowRun {
		run.RunWith = client.Ptr(runWith(rec))
		run.ScriptRun = rec.ScriptRun
	}
	if run.Errors == nil {
		run.Errors = []json.RawMessage{}
	}
	if fileURL != nil && len(rec.Files) > 0 {
		run.ScreenshotURLs = artifacts.ScreenshotURLs(rec.Files, 0, fileURL)
		run.RecordingURL = artifacts.RecordingURL(rec.Files, fileURL)
		run.DownloadedFiles = artifacts.FileInfos(rec.Files, fileURL)
	}
	return run
}

// runWith is how an agent run executes: its own run_with, else "agent"
// (the record keeps "" for runs that follow their agent's, which the
// runner resolves when the run starts).
func runWith(rec *store.RunRecord) string {
	if rec.RunWith == "" {
		return "agent"
	}
	return rec.RunWith
}

// Links makes the parts of a run's answer that depend on the request: its
// app_url, the run under the address the client reached the daemon on
// (base), and the URLs of its files, signed under base and valid for
// artifacts.DefaultLifetime from now. A nil *Links, like one without a
// Signer, makes answers without file URLs.
type Links struct {
	// Signer signs the file URLs; nil leaves them out.
	Signer *artifacts.Signer
	// Now is the clock of URL expiry; nil means time.Now.
	Now func() time.Time
}

func (l *Links) now() time.Time {
	if l != nil && l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// AppURL is a run's app_url: the run itself under the daemon's address.
func AppURL(base, runID string) string { return base + "/v1/runs/" + runID }

// FileURLs makes the URLs of a run's files in one answer: signed, under
// base, valid for artifacts.DefaultLifetime from now. nil when l cannot
// sign URLs; the answer then has none.
func (l *Links) FileURLs(base, orgID, runID string) artifacts.URLFunc {
	if l == nil || l.Signer == nil {
		return nil
	}
	exp := l.now().Add(artifacts.DefaultLifetime)
	return func(f store.RunFile) string {
		return artifacts.SignedURL(base, l.Signer, orgID, runID, f, exp)
	}
}

// Run returns the run of rec as GET /v1/runs/{id} answers it to a client
// that reached the daemon at base.
func (l *Links) Run(rec *store.RunRecord, base string) *client.Run {
	return Response(rec, AppURL(base, rec.ID), l.FileURLs(base, rec.OrgID, rec.ID))
}

// Artifacts lists a run's files as GET /v1/runs/{id}/artifacts answers,
// only those of the given types when types is not empty; none when l
// cannot sign URLs.
func (l *Links) Artifacts(rec *store.RunRecord, base string, types ...client.ArtifactType) []client.Artifact {
	if l == nil || l.Signer == nil {
		return []client.Artifact{}
	}
	files := artifacts.FilterTypes(rec.Files, types...)
	return artifacts.ListItems(base, l.Signer, rec.OrgID, rec.ID, files, l.now().Add(artifacts.DefaultLifetime))
}
