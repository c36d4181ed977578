package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// handleDownloadFiles serves POST /v1/run/tasks/download_files: an agent
// run that opens url and then has the model reach and click the download
// that navigation_goal describes (a file_download block, which completes
// once a file was downloaded), answered as an agent run, as the hosted
// service answers it. The run's definition is
// kept with the run (no agent is created); the files are in the run's
// downloaded_files and artifacts.
func (s runsAPI) handleDownloadFiles(w http.ResponseWriter, r *http.Request) {
	if !s.runsEnabled(w, r) {
		return
	}
	var req client.DownloadFilesRequest
	var present struct {
		NavigationGoal *string `json:"navigation_goal"`
	}
	body, err := readBody(r)
	if err == nil {
		err = decodeJSON(body, &req)
	}
	if err == nil {
		err = decodeJSON(body, &present)
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	var errs []client.ValidationError
	if present.NavigationGoal == nil {
		errs = append(errs, missingField("body", "navigation_goal"))
	} else if strings.TrimSpace(req.NavigationGoal) == "" {
		errs = append(errs, valueError("navigation_goal must say how to reach and download the files", req.NavigationGoal, "body", "navigation_goal"))
	}
	if req.WebhookURL != "" {
		if msg := checkWebhookURL(req.WebhookURL); msg != "" {
			errs = append(errs, valueError(msg, req.WebhookURL, "body", "webhook_url"))
		}
	}
	if req.TOTPURL != "" {
		if msg := checkWebhookURL(req.TOTPURL); msg != "" {
			errs = append(errs, valueError(msg, req.TOTPURL, "body", "totp_url"))
		}
	}
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
	if err := s.checkProfile(r, req.BrowserProfileID); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.checkSession(r, req.BrowserSessionID); err != nil {
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
	def := &client.WorkflowDefinition{Blocks: blocks}
	// run_request echoes the request with the workflow_id every agent
	// run's has: none, as no agent backs the run.
	echo := map[string]any{}
	raw, _ := json.Marshal(req)
	json.Unmarshal(raw, &echo)
	echo["workflow_id"] = ""
	runRequest, _ := json.Marshal(echo)
	rec := &store.RunRecord{
		ID: s.store.Runs().NewID(client.RunTypeWorkflowRun), OrgID: org.ID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusQueued, RunRequest: runRequest, Definition: def, Title: "File download",
		MaxElapsedMinutes: defaultMaxElapsedMin, WebhookURL: strings.TrimSpace(req.WebhookURL),
		KeyHash: keyHash(r), BaseURL: baseURL(r), Trigger: triggerOf(r), BrowserProfileID: req.BrowserProfileID,
		BrowserSessionID: req.BrowserSessionID,
	}
	s.startRun(w, r, rec)
}
