package engine

// Single actions (POST /v1/sdk/run_action).
//
// A request without workflow_run_id opens a browser session for the new
// workflow run the daemon created (files in Job.Dir), loads the request's
// url and runs the action. The session stays open for follow-up requests
// that name the run: each loads url only when the active tab is not already
// there (the SDKs send the page's current URL), and nothing when url is
// empty (abctl action --run without --url), then acts on the same page.
// A session closes after Config.ActionIdle without an action, when the
// browser goes away, or at shutdown; the end function given with the first
// request then receives the run's result: completed (failed when the browser
// went away or the first page could not be loaded), the step count and the
// files (screenshots, the recording, downloads).
//
// The ai_* actions with a selector (CSS, or XPath with an "xpath="
// prefix) run without a model: the element must appear within the
// action's timeout (milliseconds; none or 0 means DefaultActionTimeout).
//   - ai_click clicks it; the result is the selector.
//   - ai_input_text replaces the field's text with value; the result is the
//     value.
//   - ai_select_option chooses the option value (by label, then value); the
//     result is the value.
//   - ai_upload_file fetches file_url (http or https only; anything else is
//     400 "Unsupported file url") and attaches it; the result is file_url.
//
// These are what the hosted service's SDKs return when the service returns
// no result of its own. With an intention and no selector, or a selector
// that matches nothing in time, the model locates the element the
// intention describes on the page, the action is done on it (a value the
// request leaves empty may come from the intention), and the result is an
// object saying what was done, with a selector that finds the element
// without a model next time:
//
//	{"action": "ai_click", "element": "[e7] button \"Sign in\"",
//	 "selector": "xpath=//button[normalize-space(.)=\"Sign in\"]", "ai": true}
//
// The other actions need a model too:
//   - ai_act does the intention with the agent loop (at most
//     Config.MaxSteps steps); the result is null.
//   - extract extracts what prompt (or intention) asks from the page,
//     validated against extract_schema when given; the result is the data.
//   - locate_element returns a selector of the element prompt describes.
//   - validate returns whether prompt holds on the page (true or false).
//   - prompt sends prompt to the model (no page): the result is its text,
//     or JSON following response_schema.
//
// Without a configured model these answer 400 saying how to configure
// one. An action that cannot be done (nothing matches in time, no element
// fits the intention, the element is covered or disabled, the goal cannot
// be reached, the browser closed) is a 422 whose detail says why; a url
// that cannot be loaded is a 400; a model that cannot be reached is a 503.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine/browser"
	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/executor"
)

// maxActionTimeout caps the timeout of a single action.
const maxActionTimeout = 5 * time.Minute

// maxUploadBytes caps the file ai_upload_file fetches.
const maxUploadBytes = 100 << 20

// ActionError is the error of RunAction for an action that cannot be done
// as asked. Status is the HTTP status the API answers (400, 422, 503) and
// Msg the detail.
type ActionError struct {
	Status int
	Msg    string
}

func (e *ActionError) Error() string { return e.Msg }

// StatusCode is the HTTP status of the error.
func (e *ActionError) StatusCode() int { return e.Status }

// actionSession is the open browser session of a run_action workflow run.
type actionSession struct {
	runID string
	// lock (capacity 1) is held during an action and while the session
	// ends; the fields below are guarded by it.
	lock     chan struct{}
	done     chan struct{} // closed when the session has ended
	r        *run
	end      func(executor.Result)
	timer    *time.Timer
	lastUsed time.Time
	ended    bool
}

func (as *actionSession) acquire(ctx context.Context) error {
	select {
	case as.lock <- struct{}{}:
		if as.timer != nil {
			as.timer.Stop()
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release ends an action: the idle period starts again.
func (e *Engine) release(as *actionSession) {
	if !as.ended {
		as.lastUsed = time.Now()
		if as.timer == nil {
			as.timer = time.AfterFunc(e.cfg.ActionIdle, func() { e.expire(as) })
		} else {
			as.timer.Reset(e.cfg.ActionIdle)
		}
	}
	<-as.lock
}

// ActionSessionOpen reports whether the workflow run has an open browser
// session for single actions.
func (e *Engine) ActionSessionOpen(runID string) bool {
	e.actMu.Lock()
	defer e.actMu.Unlock()
	_, ok := e.acts[runID]
	return ok
}

// EndActionSessions closes every open single-action session, as the idle
// period would (each end function is called), waiting for the actions in
// progress, bounded by ctx.
func (e *Engine) EndActionSessions(ctx context.Context) {
	e.actMu.Lock()
	all := make([]*actionSession, 0, len(e.acts))
	for _, as := range e.acts {
		all = append(all, as)
	}
	e.actMu.Unlock()
	for _, as := range all {
		if err := as.acquire(ctx); err != nil {
			e.log.Warn("a run_action session did not end in time", "run_id", as.runID, "error", err)
			continue
		}
		e.endAction(as, client.RunStatusCompleted, "")
		<-as.lock
	}
}

// expire ends a session that was idle for ActionIdle.
func (e *Engine) expire(as *actionSession) {
	as.lock <- struct{}{}
	if as.ended || time.Since(as.lastUsed) < e.cfg.ActionIdle-50*time.Millisecond {
		<-as.lock // an action came in the meantime; its release re-armed the timer
		return
	}
	e.log.Info("run_action session closed after its idle period", "run_id", as.runID, "idle", e.cfg.ActionIdle)
	e.endAction(as, client.RunStatusCompleted, "")
	<-as.lock
}

// endAction closes the session and reports the run's result. The caller
// holds as.lock.
func (e *Engine) endAction(as *actionSession, status client.RunStatus, reason string) {
	if as.ended {
		return
	}
	as.ended = true
	if as.timer != nil {
		as.timer.Stop()
	}
	close(as.done)
	e.actMu.Lock()
	if e.acts[as.runID] == as {
		delete(e.acts, as.runID)
	}
	e.actMu.Unlock()
	res := as.r.finish(context.Background())
	res.Status = status
	res.FailureReason = reason
	if as.end != nil {
		as.end(res)
	}
}

func sessionEnded(runID string, idle time.Duration) error {
	return &ActionError{Status: http.StatusBadRequest, Msg: fmt.Sprintf(
		"The browser session of workflow run %s has ended (a session closes after %s without an action, or when its browser goes away). Leave workflow_run_id out to start a new one.",
		runID, idle)}
}

// RunAction runs req.Action in the browser session of workflow run
// job.RunID (see the comment at the top of this file). Without
// req.WorkflowRunID it opens the session, whose files go to job.Dir, and
// progress (steps and screenshots) and end (the run's result when the
// session closes) are kept for its life; with it, the session must be
// open, and progress and end are ignored. The result is the action's
// result as JSON. Errors that are the request's are *ActionError.
func (e *Engine) RunAction(ctx context.Context, job *executor.Job, req *client.RunActionRequest, progress executor.Progress, end func(executor.Result)) (json.RawMessage, error) {
	act := &req.Action
	if err := e.checkAction(act); err != nil {
		return nil, err
	}
	if act.Type == client.ActionUploadFile {
		if err := checkFileURL(act.FileURL); err != nil {
			return nil, err
		}
	}
	timeout := DefaultActionTimeout
	if act.Timeout != nil && *act.Timeout > 0 {
		timeout = min(time.Duration(*act.Timeout*float64(time.Millisecond)), maxActionTimeout)
	}
	var as *actionSession
	created := req.WorkflowRunID == ""
	if created {
		var err error
		if as, err = e.openAction(ctx, job, req, progress, end); err != nil {
			return nil, err
		}
	} else {
		e.actMu.Lock()
		as = e.acts[job.RunID]
		e.actMu.Unlock()
		if as == nil {
			return nil, sessionEnded(job.RunID, e.cfg.ActionIdle)
		}
		if err := as.acquire(ctx); err != nil {
			return nil, err
		}
		if as.ended {
			<-as.lock
			return nil, sessionEnded(job.RunID, e.cfg.ActionIdle)
		}
	}
	defer e.release(as)
	return e.doAction(ctx, as, req, timeout, created)
}

// openAction opens the session of a new run_action workflow run, held.
func (e *Engine) openAction(ctx context.Context, job *executor.Job, req *client.RunActionRequest, progress executor.Progress, end func(executor.Result)) (*actionSession, error) {
	if progress == nil {
		progress = nopProgress{}
	}
	if req.BrowserAddress != "" {
		if err := CheckBrowserAddress(req.BrowserAddress); err != nil {
			return nil, &ActionError{Status: http.StatusBadRequest, Msg: err.Error()}
		}
	}
	pool, err := e.browserPool(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &ActionError{Status: http.StatusServiceUnavailable, Msg: upperFirst(err.Error())}
	}
	sess, err := pool.Acquire(ctx, browser.SessionOptions{RunID: job.RunID, BrowserAddress: req.BrowserAddress, DownloadDir: job.Dir})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &ActionError{Status: http.StatusServiceUnavailable, Msg: "The browser session could not be opened: " + err.Error()}
	}
	r := newRun(e, job.Dir, sess, progress)
	r.startRecording(ctx)
	as := &actionSession{runID: job.RunID, lock: make(chan struct{}, 1), done: make(chan struct{}), r: r, end: end}
	as.lock <- struct{}{}
	e.actMu.Lock()
	if old := e.acts[job.RunID]; old != nil {
		e.actMu.Unlock()
		<-as.lock
		r.finish(context.Background())
		return nil, &ActionError{Status: http.StatusConflict, Msg: fmt.Sprintf("Workflow run %s already has a browser session", job.RunID)}
	}
	e.acts[job.RunID] = as
	e.actMu.Unlock()
	// A browser that goes away ends the session at once.
	e.wg.Go(func() {
		select {
		case <-sess.Done():
		case <-as.done:
			return
		}
		as.lock <- struct{}{}
		if !as.ended {
			e.endAction(as, client.RunStatusFailed, "The browser session ended: "+errText(sess.Err()))
		}
		<-as.lock
	})
	return as, nil
}

func errText(err error) string {
	if err == nil {
		return "unknown reason"
	}
	return err.Error()
}

// doAction loads the request's url when needed and runs the action. The
// caller holds as.lock.
func (e *Engine) doAction(ctx context.Context, as *actionSession, req *client.RunActionRequest, timeout time.Duration, created bool) (json.RawMessage, error) {
	r := as.r
	closed := func() error {
		err := r.sess.Err()
		e.endAction(as, client.RunStatusFailed, "The browser session ended: "+errText(err))
		return &ActionError{Status: http.StatusUnprocessableEntity, Msg: "The browser closed: " + errText(err)}
	}
	if r.sess.Err() != nil {
		return nil, closed()
	}
	if created || (req.URL != "" && !sameURL(r.currentURL(ctx), req.URL)) {
		rec, _ := r.startStep("", actionRecord{Type: "goto_url", Text: shownURL(req.URL)})
		res, err := r.navigate(ctx, req.URL)
		r.endStep(rec, res.URL, "", err)
		r.screenshot(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if r.sess.Ended(ctx) != nil {
				return nil, closed()
			}
			if created {
				e.endAction(as, client.RunStatusFailed, upperFirst(err.Error()))
			}
			return nil, &ActionError{Status: http.StatusBadRequest, Msg: upperFirst(err.Error())}
		}
	}
	target := req.Action.Selector
	if strings.TrimSpace(target) == "" {
		target = req.Action.Intention
	}
	rec, _ := r.startStep("", actionRecord{Type: string(req.Action.Type), Text: target})
	result, err := r.singleAction(ctx, &req.Action, timeout)
	r.endStep(rec, "", "", err)
	r.syncDownloads()
	r.screenshot(ctx)
	if err != nil {
		var ae *ActionError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &ae):
			return nil, ae
		case r.sess.Ended(ctx) != nil:
			return nil, closed()
		}
		return nil, &ActionError{Status: http.StatusUnprocessableEntity, Msg: upperFirst(err.Error())}
	}
	return json.Marshal(result)
}

// currentURL is the URL of the active tab, "" when unknown.
func (r *run) currentURL(ctx context.Context) string {
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	tabs, err := r.sess.Tabs(tctx)
	if err != nil {
		return ""
	}
	for _, t := range tabs {
		if t.Active {
			return t.URL
		}
	}
	return ""
}

// sameURL reports whether two URLs name the same page (scheme and host
// case and an empty path aside).
func sameURL(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	norm := func(s string) string {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return s
		}
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		if u.Path == "" {
			u.Path = "/"
		}
		return u.String()
	}
	return norm(a) == norm(b)
}

// checkAction returns an *ActionError (400) for an action that cannot
// run as given: an unknown type, a missing field, or the need for a model
// this engine does not have.
func (e *Engine) checkAction(act *client.Action) error {
	bad := func(format string, args ...any) error {
		return &ActionError{Status: http.StatusBadRequest, Msg: fmt.Sprintf(format, args...)}
	}
	noModel := func(what string) error {
		if e.cfg.Models != nil {
			return nil
		}
		return bad("%s needs a language model, but %v.", what, errNoModel)
	}
	selector, intention := strings.TrimSpace(act.Selector), strings.TrimSpace(act.Intention)
	switch act.Type {
	case client.ActionClick, client.ActionInputText, client.ActionSelectOption, client.ActionUploadFile:
		if selector == "" && intention == "" {
			return bad("%s needs a selector (CSS, or XPath with an \"xpath=\" prefix) or an intention describing the element", act.Type)
		}
		if selector == "" {
			return noModel(string(act.Type) + " without a selector")
		}
		return nil
	case client.ActionAct:
		if intention == "" && strings.TrimSpace(act.Prompt) == "" {
			return bad("ai_act needs an intention saying what to do")
		}
	case client.ActionExtract:
		if strings.TrimSpace(act.Prompt) == "" && intention == "" && len(act.ExtractSchema) == 0 {
			return bad("extract needs a prompt saying what to extract, or an extract_schema")
		}
	case client.ActionLocateElement, client.ActionValidate, client.ActionPrompt:
		if strings.TrimSpace(act.Prompt) == "" {
			return bad("%s needs a prompt", act.Type)
		}
	default:
		return bad("Unknown action type %q", act.Type)
	}
	if err := noModel(string(act.Type)); err != nil {
		return err
	}
	if act.Model.Name() != "" {
		if _, err := e.model(act.Model); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

func checkFileURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if raw == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ActionError{Status: http.StatusBadRequest, Msg: "Unsupported file url"}
	}
	return nil
}

// singleAction runs an action: an ai_* action on the element of its
// selector, or with the model (aiactions.go).
func (r *run) singleAction(ctx context.Context, act *client.Action, timeout time.Duration) (any, error) {
	switch act.Type {
	case client.ActionClick, client.ActionInputText, client.ActionSelectOption, client.ActionUploadFile:
	default:
		return r.modelAction(ctx, act)
	}
	if strings.TrimSpace(act.Selector) == "" {
		return r.modelAction(ctx, act)
	}
	if strings.TrimSpace(act.Intention) != "" && r.e.cfg.Models != nil {
		// The model takes over soon when the selector finds nothing.
		timeout = min(timeout, 3*time.Second)
	}
	out, err := r.selectorAction(ctx, act, timeout)
	var nm *noMatchError
	if err != nil && errors.As(err, &nm) && strings.TrimSpace(act.Intention) != "" && r.e.cfg.Models != nil && ctx.Err() == nil {
		r.e.log.Info("the selector matched nothing; the model looks for the element", "selector", act.Selector, "intention", act.Intention)
		return r.modelAction(ctx, act)
	}
	return out, err
}

// selectorAction runs a model-free ai_* action on the element of its
// selector.
func (r *run) selectorAction(ctx context.Context, act *client.Action, timeout time.Duration) (any, error) {
	sel := act.Selector
	switch act.Type {
	case client.ActionClick:
		if _, err := r.click(ctx, sel, timeout); err != nil {
			return nil, err
		}
		return sel, nil
	case client.ActionInputText:
		if err := r.onElement(ctx, sel, timeout, func(pg *page.Page, id string) (page.Result, error) {
			return pg.InputText(ctx, id, act.Value)
		}); err != nil {
			return nil, err
		}
		return act.Value, nil
	case client.ActionSelectOption:
		if err := r.onElement(ctx, sel, timeout, func(pg *page.Page, id string) (page.Result, error) {
			return pg.SelectOption(ctx, id, act.Value)
		}); err != nil {
			return nil, err
		}
		return act.Value, nil
	case client.ActionUploadFile:
		// The browser reads the file when the form is sent, so it stays
		// until the session ends.
		path, err := r.fetchUpload(ctx, act.FileURL)
		if err != nil {
			return nil, err
		}
		if err := r.onElement(ctx, sel, timeout, func(pg *page.Page, id string) (page.Result, error) {
			return pg.UploadFile(ctx, id, []string{path})
		}); err != nil {
			return nil, err
		}
		return act.FileURL, nil
	}
	return nil, &ActionError{Status: http.StatusBadRequest, Msg: fmt.Sprintf("Unknown action type %q", act.Type)}
}

// onElement resolves a selector and runs fn on the element, resolving once
// more when the page replaced the element in between.
func (r *run) onElement(ctx context.Context, selector string, timeout time.Duration, fn func(*page.Page, string) (page.Result, error)) error {
	for attempt := 0; attempt < 2; attempt++ {
		pg, id, err := r.resolve(ctx, selector, timeout)
		if err != nil {
			return err
		}
		res, err := fn(pg, id)
		if errors.Is(err, page.ErrStaleID) {
			continue
		}
		if err != nil {
			return actionErr(res, err)
		}
		if !res.OK {
			return errors.New(res.Reason)
		}
		return nil
	}
	return fmt.Errorf("the element of %q kept being replaced by the page", selector)
}

// fetchUpload downloads the file of ai_upload_file into a temporary
// directory of the session (removed when it ends), under the name the
// response or URL gives.
func (r *run) fetchUpload(ctx context.Context, fileURL string) (string, error) {
	if err := checkFileURL(fileURL); err != nil {
		return "", err
	}
	u, _ := url.Parse(strings.TrimSpace(fileURL))
	hc := *r.e.http
	hc.Timeout = 2 * time.Minute
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", &ActionError{Status: http.StatusBadRequest, Msg: "Unsupported file url"}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", &ActionError{Status: http.StatusBadRequest, Msg: fmt.Sprintf("The file_url could not be fetched: %v", unwrapURLError(err))}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return "", &ActionError{Status: http.StatusBadRequest, Msg: fmt.Sprintf("The file_url answered HTTP %s", resp.Status)}
	}
	if r.tmpDir == "" {
		if r.tmpDir, err = os.MkdirTemp("", "abctl-uploads-"); err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp(r.tmpDir, "u")
	if err != nil {
		return "", err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	name := safeName(responseFileName(resp, u), "upload")
	path := filepath.Join(tmp, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		cleanup()
		return "", err
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, maxUploadBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxUploadBytes {
		err = fmt.Errorf("the file is larger than %d bytes", maxUploadBytes)
	}
	if err != nil {
		cleanup()
		return "", &ActionError{Status: http.StatusBadRequest, Msg: "The file_url could not be fetched: " + err.Error()}
	}
	return path, nil
}
