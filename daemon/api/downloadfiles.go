package api

import (
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
)

// handleDownloadFiles serves POST /v1/run/tasks/download_files: an agent
// run that opens url and then has the model reach and click the download
// that navigation_goal describes (a file_download block, which completes
// once a file was downloaded), answered as an agent run, as the hosted
// service answers it. The run's definition is
// kept with the run (no agent is created); the files are in the run's
// downloaded_files and artifacts.
func (s runsAPI) handleDownloadFiles(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	var req client.DownloadFilesRequest
	var present struct {
		NavigationGoal *string `json:"navigation_goal"`
	}
	if err := decodeWithPresence(r, &req, &present); err != nil {
		s.error(w, r, err)
		return
	}
	var errs []client.ValidationError
	if present.NavigationGoal == nil {
		errs = append(errs, missingField("body", "navigation_goal"))
	} else if strings.TrimSpace(req.NavigationGoal) == "" {
		errs = append(errs, valueError("navigation_goal must say how to reach and download the files", req.NavigationGoal, "body", "navigation_goal"))
	}
	errs = append(errs, callbackURLErrors(req.WebhookURL, req.TOTPURL)...)
	if n := req.MaxStepsPerRun; n != nil && *n < 1 {
		errs = append(errs, fieldError("greater_than_equal", "Input should be greater than or equal to 1", *n, "body", "max_steps_per_run"))
	}
	if t := req.DownloadTimeout; t != nil && *t <= 0 {
		errs = append(errs, fieldError("greater_than", "Input should be greater than 0", *t, "body", "download_timeout"))
	}
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.starter.checkBrowser(r, req.BrowserProfileID, req.BrowserSessionID); err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context())
	// url is the page the model starts from, as the hosted service reads
	// it: a goto_url block opens it, then the file_download block, without
	// a url of its own, has the model find and click the download (a
	// file_download block with a url would take it for the file's own
	// link).
	var blocks client.Blocks
	if u := normalizeURL(req.URL); u != "" {
		blocks = append(blocks, &client.GotoURLBlock{BlockBase: client.BlockBase{Label: "open"}, URL: u})
	}
	blocks = append(blocks, &client.FileDownloadBlock{
		BlockBase: client.BlockBase{Label: "download_files"}, NavigationGoal: req.NavigationGoal,
		DownloadSuffix: req.DownloadSuffix, DownloadTimeout: req.DownloadTimeout, MaxStepsPerRun: req.MaxStepsPerRun,
		TOTPIdentifier: req.TOTPIdentifier, TOTPVerificationURL: req.TOTPURL,
	})
	s.starter.start(w, r, s.starter.definitionRunRecord(org.ID, req, &client.WorkflowDefinition{Blocks: blocks}, definitionRun{
		title: "File download", webhookURL: req.WebhookURL, browserProfileID: req.BrowserProfileID, sessionID: req.BrowserSessionID,
	}))
}
