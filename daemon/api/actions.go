package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/runner"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/ptr"
	"github.com/abctl/abctl/localrun/executor"
)

// sdkRunTitle is the title of the workflow run a run_action request without
// workflow_run_id creates, as the hosted service names it.
const sdkRunTitle = "SDK Workflow"

// actionTypes are the action types of run_action, in the order the hosted
// service lists them.
var actionTypes = []client.ActionType{
	client.ActionClick, client.ActionInputText, client.ActionSelectOption, client.ActionUploadFile,
	client.ActionAct, client.ActionExtract, client.ActionLocateElement, client.ActionValidate, client.ActionPrompt,
}

// runActionBody is the body of POST /v1/sdk/run_action as sent: pointers
// tell a missing member from an empty one.
type runActionBody struct {
	URL              *string        `json:"url"`
	Action           *client.Action `json:"action"`
	BrowserSessionID *string        `json:"browser_session_id"`
	BrowserAddress   *string        `json:"browser_address"`
	WorkflowRunID    *string        `json:"workflow_run_id"`
}

// handleRunAction serves POST /v1/sdk/run_action.
func (s actionsAPI) handleRunAction(w http.ResponseWriter, r *http.Request) {
	if !s.starter.enabled(w, r) {
		return
	}
	if s.exec.Actions == nil || s.exec.Files == nil {
		s.error(w, r, errorf(KindUnavailable, "This daemon has no browser engine configured, so it cannot run actions."))
		return
	}
	var body runActionBody
	if err := decodeJSONBody(r, &body); err != nil {
		s.error(w, r, err)
		return
	}
	if err := checkRunAction(&body); err != nil {
		s.error(w, r, err)
		return
	}
	sessionID := strings.TrimSpace(ptr.Value(body.BrowserSessionID))
	if sessionID != "" && strings.TrimSpace(ptr.Value(body.WorkflowRunID)) == "" {
		if err := s.starter.checkBrowser(r, "", sessionID); err != nil {
			s.error(w, r, err)
			return
		}
	}
	req := &client.RunActionRequest{
		URL: normalizeURL(ptr.Value(body.URL)), Action: *body.Action,
		BrowserAddress: strings.TrimSpace(ptr.Value(body.BrowserAddress)),
		WorkflowRunID:  strings.TrimSpace(ptr.Value(body.WorkflowRunID)),
	}
	ctx := r.Context()
	org := organization(ctx)

	var rec *store.RunRecord
	if req.WorkflowRunID == "" {
		var err error
		if rec, err = s.createActionRun(ctx, r, req); err != nil {
			s.error(w, r, err)
			return
		}
	} else {
		var err error
		rec, err = s.runs.Get(ctx, org.ID, req.WorkflowRunID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && rec.Type != client.RunTypeWorkflowRun) {
			s.error(w, r, errorf(KindNotFound, "Workflow run %s not found", req.WorkflowRunID))
			return
		}
		if err != nil {
			s.error(w, r, err)
			return
		}
		if rec.Terminal() {
			s.error(w, r, errorf(KindBadRequest, "Workflow run %s has ended (%s), and its browser session with it. Leave workflow_run_id out to start a new one.", rec.ID, rec.Status))
			return
		}
	}
	dir, err := s.exec.Files.RunDir(org.ID, rec.ID)
	if err != nil {
		s.error(w, r, err)
		return
	}
	job := &executor.Job{RunID: rec.ID, OrgID: org.ID, RunType: client.RunTypeWorkflowRun, Dir: dir}
	if l := s.exec.links(); l != nil && l.Signer != nil {
		// The daemon's own file URLs are read from its disk (a run may
		// not reach the daemon's address).
		job.LocalFiles = artifacts.LocalFiles{Store: s.exec.Files, Signer: l.Signer}
	}
	if req.WorkflowRunID == "" {
		job.BrowserSessionID = sessionID // a follow-up acts in the browser its run already has
	}
	p := s.exec.Runner.NewProgress(rec)
	result, err := s.exec.Actions.RunAction(ctx, job, req, p, func(res executor.Result) {
		s.endActionRun(rec, res, p)
	})
	if err != nil {
		if req.WorkflowRunID == "" && !s.exec.Actions.ActionRunOpen(rec.ID) {
			// The run never got (or lost) its session: it ends here.
			s.failActionRun(org.ID, rec.ID, actionErrorDetail(err))
		}
		s.error(w, r, actionError(err))
		return
	}
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	writeJSON(w, http.StatusOK, client.RunActionResponse{WorkflowRunID: rec.ID, Result: result})
}

// checkRunAction validates the body as the hosted service does (422 lists),
// except that an action continuing a workflow run may leave url out (or
// empty): it then runs on the page the run's browser is on.
func checkRunAction(b *runActionBody) error {
	var errs []client.ValidationError
	continuing := strings.TrimSpace(ptr.Value(b.WorkflowRunID)) != ""
	switch {
	case continuing:
	case b.URL == nil:
		errs = append(errs, missingField("body", "url"))
	case strings.TrimSpace(*b.URL) == "":
		errs = append(errs, valueError("url must not be empty (it may be left out only with workflow_run_id)", *b.URL, "body", "url"))
	}
	if b.BrowserAddress != nil && *b.BrowserAddress != "" {
		u, err := url.Parse(strings.TrimSpace(*b.BrowserAddress))
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss") {
			errs = append(errs, valueError("browser_address must be an http, https, ws or wss URL with a host", *b.BrowserAddress, "body", "browser_address"))
		}
	}
	switch {
	case b.Action == nil:
		errs = append(errs, missingField("body", "action"))
	case b.Action.Type == "":
		errs = append(errs, fieldError("union_tag_not_found", "Unable to extract tag using discriminator 'type'", map[string]any{}, "body", "action"))
	case !knownActionType(b.Action.Type):
		names := make([]string, len(actionTypes))
		for i, t := range actionTypes {
			names[i] = "'" + string(t) + "'"
		}
		errs = append(errs, fieldError("union_tag_invalid",
			fmt.Sprintf("Input tag '%s' found using 'type' does not match any of the expected tags: %s", b.Action.Type, strings.Join(names, ", ")),
			b.Action.Type, "body", "action"))
	default:
		a := b.Action
		if a.Timeout != nil && *a.Timeout < 0 {
			errs = append(errs, fieldError("greater_than_equal", "Input should be greater than or equal to 0", *a.Timeout, "body", "action", string(a.Type), "timeout"))
		}
		if (a.Type == client.ActionValidate || a.Type == client.ActionPrompt) && strings.TrimSpace(a.Prompt) == "" {
			errs = append(errs, missingField("body", "action", string(a.Type), "prompt"))
		}
	}
	return invalid(errs)
}

func knownActionType(t client.ActionType) bool {
	for _, k := range actionTypes {
		if k == t {
			return true
		}
	}
	return false
}

// actionRunRequest is the run_request of a run_action run: the hosted
// service's workflow run request, whose workflow_id every workflow run
// carries, empty here because such a run executes no agent, then the
// first action's request (url, action) for people to read.
type actionRunRequest struct {
	WorkflowID string `json:"workflow_id"`
	Title      string `json:"title"`
	*client.RunActionRequest
}

// createActionRun stores the workflow run of a first action: running,
// titled "SDK Workflow", echoing the request.
func (s actionsAPI) createActionRun(ctx context.Context, r *http.Request, req *client.RunActionRequest) (*store.RunRecord, error) {
	echo, _ := json.Marshal(actionRunRequest{Title: sdkRunTitle, RunActionRequest: req})
	rec := &store.RunRecord{
		ID: s.runs.NewID(client.RunTypeWorkflowRun), OrgID: organization(ctx).ID, Type: client.RunTypeWorkflowRun,
		Status: client.RunStatusCreated, RunRequest: echo, Title: sdkRunTitle,
		KeyHash: keyHash(r), BaseURL: baseURL(r), Trigger: triggerOf(r),
	}
	if err := s.runs.Create(ctx, rec); err != nil {
		return nil, err
	}
	return s.runs.Update(ctx, rec.OrgID, rec.ID, func(rec *store.RunRecord) error {
		rec.Status = client.RunStatusRunning
		return nil
	})
}

// failActionRun ends a run whose first action could not open a session.
func (s actionsAPI) failActionRun(orgID, runID, reason string) {
	_, err := s.runs.Update(context.Background(), orgID, runID, func(rec *store.RunRecord) error {
		if rec.Terminal() {
			return store.ErrUnchanged
		}
		rec.Status, rec.FailureReason = client.RunStatusFailed, reason
		return nil
	})
	if err != nil {
		s.logger.Error("end a run_action run", "run_id", runID, "error", err)
	}
}

// endActionRun records the end of a run_action session: its files, its
// step count and, unless the run already ended, its status.
func (s actionsAPI) endActionRun(run *store.RunRecord, res executor.Result, p *runner.Progress) {
	ctx := context.Background()
	orgID, runID := run.OrgID, run.ID
	files := s.exec.Runner.ResultFiles(run, res, p)
	status := res.Status
	if status == "" {
		status = client.RunStatusCompleted
	}
	_, err := s.runs.Update(ctx, orgID, runID, func(rec *store.RunRecord) error {
		rec.Files = append(rec.Files, files...)
		if res.StepCount > 0 && (rec.StepCount == nil || *rec.StepCount < res.StepCount) {
			n := res.StepCount
			rec.StepCount = &n
		}
		if !rec.Terminal() {
			rec.Status = status
			if status != client.RunStatusCompleted {
				rec.FailureReason = res.FailureReason
			}
		}
		return nil
	})
	if err != nil {
		s.logger.Error("record the end of a run_action run", "run_id", runID, "error", err)
		return
	}
	s.logger.Info("run_action session ended", "run_id", runID, "status", status)
}

// actionError turns an error of Actions.RunAction into the API's error:
// the engine's *executor.ActionError by its kind (actionKinds), a request
// that ended before its action a 400; any other error is the daemon's.
func actionError(err error) error {
	var ae *executor.ActionError
	if errors.As(err, &ae) {
		return &Error{Kind: actionKind(ae.Kind), Detail: err.Error()}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errorf(KindBadRequest, "The request ended before the action finished.")
	}
	return err
}

func actionErrorDetail(err error) string {
	if e := actionError(err); e != nil {
		var ae *Error
		if errors.As(e, &ae) && ae.Kind != KindInternal {
			return ae.Detail
		}
	}
	return "The action could not be run: " + err.Error()
}
