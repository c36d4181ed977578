package engine

// The runs of single actions (POST /v1/sdk/run_action), kept open between
// their actions; action.go does the actions.
//
// A request without workflow_run_id opens a browser context for the new
// workflow run the daemon created (files in Job.Dir), loads the request's
// url and runs the action. The run stays open for follow-up requests
// that name the run: each acts on the page it finds unless its url names
// another document (url is empty, as abctl action --run without --url
// sends; the url the tab is on, fragment aside, as the SDKs send it; or
// the url the tab was last sent to, while it is still on the page that
// load landed on after redirects): a router changing the fragment or a
// redirect does not reload the page and lose what was typed.
// A run closes after Config.ActionIdle without an action, when the
// browser goes away, or at shutdown; the end function given with the first
// request then receives the run's result: completed (failed when the browser
// went away or the first page could not be loaded), the step count and the
// files (screenshots, the recording, downloads).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/executor"
)

// maxActionTimeout caps the timeout of a single action.
const maxActionTimeout = 5 * time.Minute

// actionRun is a run_action workflow run whose browser stays open for
// its follow-up actions.
type actionRun struct {
	e     *Engine
	runID string
	// lock (capacity 1) is held during an action and while the run
	// ends; the fields below are guarded by it.
	lock     chan struct{}
	done     chan struct{} // closed when the run has ended
	r        *run
	end      func(executor.Result)
	timer    *time.Timer
	lastUsed time.Time
	ended    bool
	// asked and landed are the url the last navigation of the run was
	// asked for and the page it landed on (after redirects): while the tab
	// is still on that page, a follow-up naming the url asked for is on it.
	asked, landed string
}

func (as *actionRun) acquire(ctx context.Context) error {
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
func (as *actionRun) release() {
	idle := as.e.cfg.ActionIdle
	if !as.ended {
		as.lastUsed = time.Now()
		if as.timer == nil {
			as.timer = time.AfterFunc(idle, as.expire)
		} else {
			as.timer.Reset(idle)
		}
	}
	<-as.lock
}

// expire ends a run that was idle for ActionIdle.
func (as *actionRun) expire() {
	idle := as.e.cfg.ActionIdle
	as.lock <- struct{}{}
	if as.ended || time.Since(as.lastUsed) < idle-50*time.Millisecond {
		<-as.lock // an action came in the meantime; its release re-armed the timer
		return
	}
	as.e.log.Info("run_action session closed after its idle period", "run_id", as.runID, "idle", idle)
	as.close(client.RunStatusCompleted, "")
	<-as.lock
}

// close ends the run, closing its browser, and reports its result. The caller holds
// as.lock.
func (as *actionRun) close(status client.RunStatus, reason string) {
	if as.ended {
		return
	}
	as.ended = true
	if as.timer != nil {
		as.timer.Stop()
	}
	close(as.done)
	e := as.e
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

// ActionRunOpen implements executor.Actions: it reports whether the
// workflow run is a run_action run whose browser is still open.
func (e *Engine) ActionRunOpen(runID string) bool {
	e.actMu.Lock()
	defer e.actMu.Unlock()
	_, ok := e.acts[runID]
	return ok
}

// EndActionRuns closes every open run_action run, as the idle
// period would (each end function is called), waiting for the actions in
// progress, bounded by ctx.
func (e *Engine) EndActionRuns(ctx context.Context) {
	e.actMu.Lock()
	all := make([]*actionRun, 0, len(e.acts))
	for _, as := range e.acts {
		all = append(all, as)
	}
	e.actMu.Unlock()
	for _, as := range all {
		if err := as.acquire(ctx); err != nil {
			e.log.Warn("a run_action session did not end in time", "run_id", as.runID, "error", err)
			continue
		}
		as.close(client.RunStatusCompleted, "")
		<-as.lock
	}
}

// EndActionRun implements executor.Actions: it closes the run_action run
// runID after the action in progress, if any.
func (e *Engine) EndActionRun(ctx context.Context, runID string, status client.RunStatus, reason string) {
	e.actMu.Lock()
	as := e.acts[runID]
	e.actMu.Unlock()
	if as == nil {
		return
	}
	if err := as.acquire(ctx); err != nil {
		e.log.Warn("a run_action session did not end in time", "run_id", runID, "error", err)
		return
	}
	as.close(status, reason)
	<-as.lock
}

// actionRunEnded is the error of a follow-up action whose run has closed.
func actionRunEnded(runID string, idle time.Duration) error {
	return &executor.ActionError{Kind: executor.ActionInvalid, Msg: fmt.Sprintf(
		"The browser session of workflow run %s has ended (a session closes after %s without an action, or when its browser goes away). Leave workflow_run_id out to start a new one.",
		runID, idle)}
}

// RunAction runs req.Action in the browser of run_action workflow run
// job.RunID (see the comments at the top of this file and of action.go).
// Without req.WorkflowRunID it opens the run, whose files go to
// job.Dir, and progress (steps and screenshots) and end (the run's result
// when the run closes) are kept for its life; with it, the run
// must be open, and progress and end are ignored. The result is the
// action's result as JSON. Errors that are the request's are *executor.ActionError.
func (e *Engine) RunAction(ctx context.Context, job *executor.Job, req *client.RunActionRequest, progress executor.Progress, end func(executor.Result)) (json.RawMessage, error) {
	act := &req.Action
	if err := e.checkAction(act); err != nil {
		return nil, err
	}
	if act.Type == client.ActionUploadFile {
		if err := runbrowser.CheckFileURL(act.FileURL); err != nil {
			return nil, fileURLErr(err)
		}
	}
	timeout := DefaultActionTimeout
	if act.Timeout != nil && *act.Timeout > 0 {
		timeout = min(time.Duration(*act.Timeout*float64(time.Millisecond)), maxActionTimeout)
	}
	var as *actionRun
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
			return nil, actionRunEnded(job.RunID, e.cfg.ActionIdle)
		}
		if err := as.acquire(ctx); err != nil {
			return nil, err
		}
		if as.ended {
			<-as.lock
			return nil, actionRunEnded(job.RunID, e.cfg.ActionIdle)
		}
	}
	defer as.release()
	return as.do(ctx, req, timeout, created)
}

// openAction opens a new run_action workflow run and its browser, held.
func (e *Engine) openAction(ctx context.Context, job *executor.Job, req *client.RunActionRequest, progress executor.Progress, end func(executor.Result)) (*actionRun, error) {
	if progress == nil {
		progress = nopProgress{}
	}
	if req.BrowserAddress != "" {
		if err := CheckBrowserAddress(req.BrowserAddress); err != nil {
			return nil, &executor.ActionError{Kind: executor.ActionInvalid, Msg: err.Error()}
		}
	}
	pool, err := e.browserPool(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &executor.ActionError{Kind: executor.ActionUnavailable, Msg: text.UpperFirst(err.Error())}
	}
	var bs *browser.Context
	var be *browserEgress
	var release func()
	if job.BrowserSessionID != "" {
		// In a browser session, held until this run_action run ends.
		if bs, be, release, err = e.useBrowserSession(ctx, job.OrgID, job.BrowserSessionID); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &executor.ActionError{Kind: executor.ActionConflict, Msg: err.Error()}
		}
	} else if bs, be, err = e.acquire(ctx, pool, job.OrgID, browser.ContextOptions{RunID: job.RunID, BrowserAddress: req.BrowserAddress, DownloadDir: job.Dir}); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if egress.IsRefused(err) {
			return nil, &executor.ActionError{Kind: executor.ActionInvalid, Msg: "The browser_address cannot be used: " + err.Error()}
		}
		return nil, &executor.ActionError{Kind: executor.ActionUnavailable, Msg: "The browser session could not be opened: " + err.Error()}
	}
	r := e.newRun(e.guard(job.OrgID), job.Dir, progress, 0, release != nil, openedBrowser(bs, be))
	r.browser.Acquire(ctx) // open already: it cannot fail
	e.listFrames(job.RunID, r)
	r.files.UseNetwork(r.guard, job.LocalFiles)
	r.release = release
	as := &actionRun{e: e, runID: job.RunID, lock: make(chan struct{}, 1), done: make(chan struct{}), r: r, end: end}
	as.lock <- struct{}{}
	e.actMu.Lock()
	if old := e.acts[job.RunID]; old != nil {
		e.actMu.Unlock()
		<-as.lock
		r.finish(context.Background())
		return nil, &executor.ActionError{Kind: executor.ActionConflict, Msg: fmt.Sprintf("Workflow run %s already has a browser session", job.RunID)}
	}
	e.acts[job.RunID] = as
	e.actMu.Unlock()
	// A browser that goes away ends the run at once.
	e.wg.Go(func() {
		select {
		case <-bs.Done():
		case <-as.done:
			return
		}
		as.lock <- struct{}{}
		if !as.ended {
			as.close(client.RunStatusFailed, "The browser session ended: "+errText(bs.Err()))
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

// checkAction returns an *executor.ActionError (ActionInvalid) for an action that cannot
// run as given: an unknown type, a missing field, or the need for a model
// this engine does not have.
func (e *Engine) checkAction(act *client.Action) error {
	bad := func(format string, args ...any) error {
		return &executor.ActionError{Kind: executor.ActionInvalid, Msg: fmt.Sprintf(format, args...)}
	}
	noModel := func(what string) error {
		if e.models.Configured() {
			return nil
		}
		return bad("%s needs a language model, but %v.", what, agent.ErrNoModel)
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
		if _, err := e.models.Pick(act.Model); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// fileURLErr turns a file_url the engine could not use into the API's
// 400; other errors stay as they are.
func fileURLErr(err error) error {
	var fe *runbrowser.FetchError
	if errors.As(err, &fe) {
		return &executor.ActionError{Kind: executor.ActionInvalid, Msg: fe.Msg}
	}
	return err
}
