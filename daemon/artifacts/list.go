package artifacts

import (
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// URI returns the stable, non-secret identifier of a run's file that list
// items carry in uri: abctl://artifacts/<run id>/<name>. It locates the
// file for people and logs; it is not a URL anything serves.
func URI(runID, name string) string {
	return "abctl://artifacts/" + url.PathEscape(runID) + "/" + url.PathEscape(name)
}

// SignedURL returns the URL the daemon gives out for f: DownloadURL for
// downloaded files, URL for the others.
func SignedURL(base string, signer *Signer, orgID, runID string, f store.RunFile, expires time.Time) string {
	if f.Type == client.ArtifactDownload {
		return signer.DownloadURL(base, orgID, runID, f.Name, expires)
	}
	return signer.URL(base, orgID, runID, f.Name, expires)
}

// ListItems builds the items of GET /v1/runs/{run_id}/artifacts from a
// run's records, in the order given, with signed URLs valid until expires
// (normally now + DefaultLifetime) under base, the address the client
// reached the daemon on. run_id is always set; workflow_run_id too for an
// agent run (wr_…) and task_id for a task run (tsk_…, tsk_v2_…). The result
// is never nil, so that it encodes as [] for a run without files.
func ListItems(base string, signer *Signer, orgID, runID string, files []store.RunFile, expires time.Time) []client.Artifact {
	items := make([]client.Artifact, 0, len(files))
	for _, f := range files {
		a := client.Artifact{
			ArtifactID:     f.ID,
			ArtifactType:   f.Type,
			URI:            URI(runID, f.Name),
			Checksum:       client.Ptr(f.SHA256),
			FileSize:       client.Ptr(f.Size),
			RunID:          client.Ptr(runID),
			SignedURL:      client.Ptr(SignedURL(base, signer, orgID, runID, f, expires)),
			OrganizationID: orgID,
			CreatedAt:      f.CreatedAt,
			ModifiedAt:     f.CreatedAt,
		}
		if f.StepID != "" {
			a.StepID = client.Ptr(f.StepID)
		}
		switch {
		case strings.HasPrefix(runID, "wr_"):
			a.WorkflowRunID = client.Ptr(runID)
		case strings.HasPrefix(runID, "tsk_"):
			a.TaskID = client.Ptr(runID)
		}
		items = append(items, a)
	}
	return items
}

// FilterTypes returns the files of the given types (all of them when types
// is empty), for the artifact_type query parameter of the list route.
func FilterTypes(files []store.RunFile, types ...client.ArtifactType) []store.RunFile {
	if len(types) == 0 {
		return files
	}
	out := make([]store.RunFile, 0, len(files))
	for _, f := range files {
		if slices.Contains(types, f.Type) {
			out = append(out, f)
		}
	}
	return out
}

// IsScreenshot reports whether t is one of the screenshot types
// (screenshot, screenshot_llm, screenshot_action, screenshot_final).
func IsScreenshot(t client.ArtifactType) bool {
	switch t {
	case client.ArtifactScreenshot, client.ArtifactScreenshotLLM,
		client.ArtifactScreenshotAction, client.ArtifactScreenshotFinal:
		return true
	}
	return false
}

// newestFirst returns the indexes of the files that keep accepts, newest
// first: by CreatedAt, and among equal times the one recorded later (later
// in files) first.
func newestFirst(files []store.RunFile, keep func(store.RunFile) bool) []int {
	var idx []int
	for i := len(files) - 1; i >= 0; i-- {
		if keep(files[i]) {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return files[b].CreatedAt.Compare(files[a].CreatedAt.Time)
	})
	return idx
}

// URLFunc gives the URL of one of a run's files. The daemon's is SignedURL
// under the address of the request, with one expiry for the whole answer;
// the store passes placeholders when it encodes an answer ahead of time.
type URLFunc func(f store.RunFile) string

// ScreenshotURLs builds a run's screenshot_urls: the URLs of its
// screenshots (IsScreenshot), newest first, at most limit of them (all when
// limit <= 0), each file once (a screenshot that is one step's page after
// and the next one's page before has a record for each). It returns nil
// when there are none.
func ScreenshotURLs(files []store.RunFile, limit int, url URLFunc) []string {
	seen := map[string]bool{}
	idx := newestFirst(files, func(f store.RunFile) bool {
		if !IsScreenshot(f.Type) || seen[f.Name] {
			return false
		}
		seen[f.Name] = true
		return true
	})
	if limit > 0 && len(idx) > limit {
		idx = idx[:limit]
	}
	if len(idx) == 0 {
		return nil
	}
	urls := make([]string, len(idx))
	for i, j := range idx {
		urls[i] = url(files[j])
	}
	return urls
}

// RecordingURL builds a run's recording_url: the URL of its newest
// recording, nil when it has none.
func RecordingURL(files []store.RunFile, url URLFunc) *string {
	idx := newestFirst(files, func(f store.RunFile) bool { return f.Type == client.ArtifactRecording })
	if len(idx) == 0 {
		return nil
	}
	return client.Ptr(url(files[idx[0]]))
}

// FileInfos builds a run's downloaded_files from its records of type
// download, in the order given; with SignedURL as url, their URLs make the
// browser save the file. It returns nil when there are none.
func FileInfos(files []store.RunFile, url URLFunc) []client.FileInfo {
	var out []client.FileInfo
	for _, f := range files {
		if f.Type != client.ArtifactDownload {
			continue
		}
		out = append(out, client.FileInfo{
			URL:        url(f),
			Checksum:   client.Ptr(f.SHA256),
			Filename:   client.Ptr(f.Name),
			FileSize:   client.Ptr(f.Size),
			ModifiedAt: client.Ptr(f.CreatedAt),
			ArtifactID: client.Ptr(f.ID),
		})
	}
	return out
}
