package api

import (
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
)

// loginCredentialTypes are the credential_type values of a login run; the
// daemon keeps its credentials itself ("skyvern").
var loginCredentialTypes = []string{"skyvern", "bitwarden", "1password", "azure_vault"}

// handleStartLogin serves POST /v1/run/tasks/login: an agent run of one
// login block that signs in with a stored credential, answered as an agent
// run. The run's definition is kept with the run (no agent is created).
func (s runsAPI) handleStartLogin(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	var req client.LoginRequest
	var present struct {
		CredentialType *string `json:"credential_type"`
	}
	if err := decodeWithPresence(r, &req, &present); err != nil {
		s.error(w, r, err)
		return
	}
	var errs []client.ValidationError
	switch {
	case present.CredentialType == nil:
		errs = append(errs, missingField("body", "credential_type"))
	case !contains(loginCredentialTypes, req.CredentialType):
		errs = append(errs, enumError(loginCredentialTypes, req.CredentialType, "body", "credential_type"))
	case req.CredentialType != "skyvern":
		errs = append(errs, valueError("this daemon keeps credentials itself: credential_type must be skyvern (external vaults are read by the hosted service only)", req.CredentialType, "body", "credential_type"))
	case strings.TrimSpace(req.CredentialID) == "":
		errs = append(errs, valueError("credential_id is required with credential_type skyvern", nil, "body", "credential_id"))
	}
	errs = append(errs, callbackURLErrors(req.WebhookURL, "")...)
	if err := invalid(errs); err != nil {
		s.error(w, r, err)
		return
	}
	org := organization(r.Context())
	// The credential and the profile must exist now, rather than fail the
	// run later.
	if _, err := s.credentials.Get(r.Context(), org.ID, req.CredentialID); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.starter.checkBrowser(r, req.BrowserProfileID, req.BrowserSessionID); err != nil {
		s.error(w, r, err)
		return
	}
	def := &client.WorkflowDefinition{
		Parameters: []client.Parameter{{Key: "credentials", ParameterType: client.ParameterTypeCredential, CredentialID: req.CredentialID}},
		Blocks: client.Blocks{&client.LoginBlock{
			BlockBase: client.BlockBase{Label: "login"}, URL: req.URL, NavigationGoal: req.Prompt,
			ParameterKeys: []string{"credentials"}, TOTPIdentifier: req.TOTPIdentifier, TOTPVerificationURL: req.TOTPURL,
		}},
	}
	s.starter.start(w, r, s.starter.definitionRunRecord(org.ID, req, def, definitionRun{
		title: "Login", webhookURL: req.WebhookURL, browserProfileID: req.BrowserProfileID, sessionID: req.BrowserSessionID,
	}))
}
