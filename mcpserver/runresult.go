package mcpserver

import "github.com/abctl/abctl/client"

// RunResult describes a run: the answer of the run tools and of
// skyvern_workflow_status.
type RunResult struct {
	RunID   string `json:"run_id" jsonschema:"id of the run: tsk_... for a task, wr_... for an agent run"`
	Status  string `json:"status" jsonschema:"created, queued, running, paused, completed, failed, terminated, timed_out or canceled"`
	RunType string `json:"run_type,omitempty" jsonschema:"task_v1, task_v2, ..., or workflow_run for an agent run"`
	// Finished is true once the status is terminal.
	Finished      bool   `json:"finished" jsonschema:"true once the status is terminal (completed, failed, terminated, timed_out, canceled)"`
	Output        any    `json:"output,omitempty" jsonschema:"what the run extracted; for an agent run one <label>_output member per block"`
	FailureReason string `json:"failure_reason,omitempty" jsonschema:"why the run did not complete"`
	StepCount     int    `json:"step_count" jsonschema:"browser steps executed so far"`
	// ScreenshotURLs are newest first.
	ScreenshotURLs  []string   `json:"screenshot_urls,omitempty" jsonschema:"screenshots of the page, newest first"`
	RecordingURL    string     `json:"recording_url,omitempty" jsonschema:"video of the browser session"`
	DownloadedFiles []FileLink `json:"downloaded_files,omitempty" jsonschema:"files the run downloaded"`
	AppURL          string     `json:"app_url,omitempty" jsonschema:"the run in the service's web application"`
	CreatedAt       string     `json:"created_at,omitempty"`
	StartedAt       string     `json:"started_at,omitempty"`
	FinishedAt      string     `json:"finished_at,omitempty"`
	Errors          any        `json:"errors,omitempty" jsonschema:"errors the run reported (custom error codes among them)"`
	// StillRunning is set by the waiting tools when timeout_seconds ended
	// before the run did.
	StillRunning bool   `json:"still_running,omitempty" jsonschema:"true when the wait ended before the run did"`
	Note         string `json:"note,omitempty" jsonschema:"what to do next, when there is something to say"`
	// Run is the service's whole run object (verbosity full).
	Run any `json:"run,omitempty" jsonschema:"the service's whole run object (verbosity full only)"`
}

// FileLink is a file a run downloaded.
type FileLink struct {
	URL      string `json:"url"`
	Filename string `json:"filename,omitempty"`
	Size     int64  `json:"size,omitempty"`
	Checksum string `json:"checksum,omitempty" jsonschema:"SHA-256, hex"`
}

// runResult summarises r; full adds the wire object.
func runResult(r *client.Run, full bool) *RunResult {
	out := &RunResult{
		RunID: r.RunID, Status: string(r.Status), RunType: string(r.RunType),
		Finished:       r.IsTerminal(),
		Output:         rawValue(r.Output),
		FailureReason:  r.GetFailureReason(),
		StepCount:      r.GetStepCount(),
		ScreenshotURLs: r.ScreenshotURLs,
		RecordingURL:   r.GetRecordingURL(),
		AppURL:         r.GetAppURL(),
		CreatedAt:      timeText(&r.CreatedAt),
		StartedAt:      timeText(r.StartedAt),
		FinishedAt:     timeText(r.FinishedAt),
	}
	for _, f := range r.DownloadedFiles {
		l := FileLink{URL: f.URL}
		if f.Filename != nil {
			l.Filename = *f.Filename
		}
		if f.FileSize != nil {
			l.Size = *f.FileSize
		}
		if f.Checksum != nil {
			l.Checksum = *f.Checksum
		}
		out.DownloadedFiles = append(out.DownloadedFiles, l)
	}
	if len(r.Errors) > 0 {
		errs := make([]any, len(r.Errors))
		for i, e := range r.Errors {
			errs[i] = rawValue(e)
		}
		out.Errors = errs
	}
	if full {
		out.Run = r
	}
	return out
}
