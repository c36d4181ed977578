package runview

import (
	"encoding/json"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// AgentRun returns the workflow run of rec as the agent run lists
// (GET /v1/agents/runs, GET /v1/agents/{id}/runs) answer it, the hosted
// service's WorkflowRun: the run's record and the settings its request
// chose. versionID is the id (wf_...) of the agent version the run
// executes. The request's CDP connect headers are not part of it: they
// can carry credentials, and the echo the record keeps has them masked.
func AgentRun(rec *store.RunRecord, versionID string) *client.AgentRun {
	out := &client.AgentRun{
		WorkflowRunID:       rec.ID,
		WorkflowID:          versionID,
		WorkflowPermanentID: rec.AgentID,
		OrganizationID:      rec.OrgID,
		Status:              rec.Status,
		QueuedAt:            rec.QueuedAt,
		StartedAt:           rec.StartedAt,
		FinishedAt:          rec.FinishedAt,
		CreatedAt:           rec.CreatedAt,
		ModifiedAt:          rec.ModifiedAt,
		RunWith:             client.Ptr(runWith(rec)),
	}
	nonEmpty := func(s string) *string {
		if s == "" {
			return nil
		}
		return client.Ptr(s)
	}
	out.WorkflowTitle = nonEmpty(rec.Title)
	out.FailureReason = nonEmpty(rec.FailureReason)
	out.WebhookFailureReason = nonEmpty(rec.WebhookFailureReason)
	out.WebhookCallbackURL = nonEmpty(rec.WebhookURL)
	if rec.MaxElapsedMinutes > 0 {
		out.MaxElapsedTimeMin = client.Ptr(rec.MaxElapsedMinutes)
	}
	if rec.Trigger != "" {
		out.TriggerType = client.Ptr(rec.Trigger)
	}
	out.ParentWorkflowRunID = nonEmpty(rec.ParentRunID)
	out.WorkflowScheduleID = nonEmpty(rec.ScheduleID)
	// The settings the request chose, from its echo; a record without one
	// (or with one that does not decode) leaves them null.
	var req client.AgentRunRequest
	if len(rec.RunRequest) > 0 && json.Unmarshal(rec.RunRequest, &req) == nil {
		out.ProxyLocation = req.ProxyLocation
		out.ExtraHTTPHeaders = req.ExtraHTTPHeaders
		out.TOTPVerificationURL = nonEmpty(req.TOTPURL)
		out.TOTPIdentifier = nonEmpty(req.TOTPIdentifier)
		out.BrowserSessionID = nonEmpty(req.BrowserSessionID)
		out.BrowserProfileID = nonEmpty(req.BrowserProfileID)
		out.BrowserAddress = nonEmpty(req.BrowserAddress)
		out.MaxScreenshotScrolls = req.MaxScreenshotScrolls
		out.AIFallback = req.AIFallback
	}
	if rec.AIFallback != nil {
		out.AIFallback = rec.AIFallback
	}
	return out
}
