package client

import (
	"context"
	"encoding/json"
	"errors"
)

// ActionsService runs single browser actions outside any agent
// (POST /v1/sdk/run_action).
type ActionsService service

// ActionType is the kind of a single action.
type ActionType string

// Action types. The ai_* actions use Selector when it is given and matches,
// and Intention (a description a model resolves) otherwise.
const (
	ActionClick         ActionType = "ai_click"
	ActionInputText     ActionType = "ai_input_text"
	ActionSelectOption  ActionType = "ai_select_option"
	ActionUploadFile    ActionType = "ai_upload_file"
	ActionAct           ActionType = "ai_act"         // free-form instruction; its result is always null
	ActionExtract       ActionType = "extract"        // extract data, optionally against ExtractSchema
	ActionLocateElement ActionType = "locate_element" // returns a selector for Prompt's element
	ActionValidate      ActionType = "validate"       // judge Prompt against the page
	ActionPrompt        ActionType = "prompt"         // ask a model, optionally with ResponseSchema
)

// Action is one action of a run_action request, discriminated by Type. Only
// the fields its type uses are sent:
//
//	ai_click         Selector, Intention, Data, Timeout
//	ai_input_text    Selector, Value, Intention, Data, TOTPIdentifier, TOTPURL, Timeout
//	ai_select_option Selector, Value, Intention, Data, Timeout
//	ai_upload_file   Selector, FileURL, Intention, Data, Timeout
//	ai_act           Intention, Data
//	extract          Prompt, ExtractSchema, ErrorCodeMapping, Intention, Data
//	locate_element   Prompt
//	validate         Prompt, Model
//	prompt           Prompt, ResponseSchema, Model
//
// A Selector is CSS, or XPath with an "xpath=" prefix.
type Action struct {
	Type             ActionType        `json:"type"`
	Selector         string            `json:"selector,omitempty"`
	Value            string            `json:"value,omitempty"`
	FileURL          string            `json:"file_url,omitempty"`
	Intention        string            `json:"intention,omitempty"`
	Prompt           string            `json:"prompt,omitempty"`
	Data             json.RawMessage   `json:"data,omitempty"` // a string or an object giving context
	TOTPIdentifier   string            `json:"totp_identifier,omitempty"`
	TOTPURL          string            `json:"totp_url,omitempty"`
	ExtractSchema    json.RawMessage   `json:"extract_schema,omitempty"`
	ResponseSchema   json.RawMessage   `json:"response_schema,omitempty"`
	ErrorCodeMapping map[string]string `json:"error_code_mapping,omitempty"`
	Model            Model             `json:"model,omitempty"`
	// Timeout is in milliseconds (a number on the wire). Nil means the
	// service's default: 10000 documented, 5000 in the open-source build.
	Timeout *float64 `json:"timeout,omitempty"`
}

// RunActionRequest runs one action on a page. Without WorkflowRunID the
// service creates a run, opens URL and keeps its browser for follow-up
// actions, which pass the returned WorkflowRunID to continue on the same
// page. A follow-up action with a URL goes there first unless the page is
// already there; without one (the abctl daemon) it acts on the page as it
// is. The hosted service's SDKs send the page's current URL.
type RunActionRequest struct {
	URL              string `json:"url,omitempty"`
	Action           Action `json:"action"`
	BrowserSessionID string `json:"browser_session_id,omitempty"`
	BrowserAddress   string `json:"browser_address,omitempty"`
	WorkflowRunID    string `json:"workflow_run_id,omitempty"`
}

// RunActionResponse is the run the action belongs to and its result, whose
// type depends on the action (a selector for locate_element, extracted data
// for extract, null for ai_act, ...).
type RunActionResponse struct {
	WorkflowRunID string          `json:"workflow_run_id"`
	Result        json.RawMessage `json:"result"`
}

// Run runs one action (POST /v1/sdk/run_action). An action that cannot be
// done (no element matches within the timeout, the page closed) is an
// *Error with status 422 whose Detail says why.
//
// It is not retried once it may have reached the service, since the action
// may have happened.
func (s *ActionsService) Run(ctx context.Context, req *RunActionRequest, opts ...Option) (*RunActionResponse, error) {
	switch {
	case req == nil:
		return nil, errors.New("client: Actions.Run: no request")
	case req.Action.Type == "":
		return nil, errors.New("client: Actions.Run: the request's Action.Type is required (ai_click, ai_input_text, ...)")
	case req.URL == "" && req.WorkflowRunID == "":
		return nil, errors.New("client: Actions.Run: the request's URL is required for a new run (a request without WorkflowRunID)")
	}
	out := new(RunActionResponse)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/sdk/run_action", body: req}, out, opts)
	return nil2(out, err)
}
