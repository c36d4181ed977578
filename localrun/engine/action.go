package engine

// The single actions of a run_action run (actionrun.go keeps the runs
// open between their actions).
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
//	{"action": "ai_click", "element": "[kd] button \"Sign in\"",
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
	"net/url"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
	"github.com/abctl/abctl/localrun/llm"
)

// do loads the request's url when needed and runs the action. The caller
// holds as.lock.
func (as *actionRun) do(ctx context.Context, req *client.RunActionRequest, timeout time.Duration, created bool) (json.RawMessage, error) {
	r := as.r
	closed := func() error {
		err := r.browser.Err()
		as.close(client.RunStatusFailed, "The browser session ended: "+errText(err))
		return &executor.ActionError{Kind: executor.ActionFailed, Msg: "The browser closed: " + errText(err)}
	}
	if r.browser.Err() != nil {
		return nil, closed()
	}
	if created || (req.URL != "" && !as.onDocument(r.browser.CurrentURL(ctx), req.URL)) {
		rec, _ := r.steps.Start("", steplog.Action{Type: "goto_url", Text: steplog.ShownURL(req.URL)})
		res, err := r.browser.Navigate(ctx, req.URL)
		r.steps.End(rec, res.URL, "", err)
		as.asked, as.landed = req.URL, res.URL
		r.browser.Screenshot(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if r.browser.Ended(ctx) != nil {
				return nil, closed()
			}
			if created {
				as.close(client.RunStatusFailed, text.UpperFirst(err.Error()))
			}
			return nil, &executor.ActionError{Kind: executor.ActionInvalid, Msg: text.UpperFirst(err.Error())}
		}
	}
	target := req.Action.Selector
	if strings.TrimSpace(target) == "" {
		target = req.Action.Intention
	}
	rec, _ := r.steps.Start("", steplog.Action{Type: string(req.Action.Type), Text: target})
	result, err := as.single(ctx, &req.Action, timeout)
	r.steps.End(rec, "", "", err)
	r.browser.SyncDownloads()
	r.browser.Screenshot(ctx)
	if err != nil {
		if known := settledActionError(ctx, err); known != nil {
			return nil, known
		}
		if r.browser.Ended(ctx) != nil {
			return nil, closed()
		}
		return nil, &executor.ActionError{Kind: executor.ActionFailed, Msg: text.UpperFirst(err.Error())}
	}
	return json.Marshal(result)
}

// onDocument reports whether a follow-up asking for url is on the page the
// tab shows (current): the same document, or the url the run last
// navigated to while the tab is still where that landed.
func (as *actionRun) onDocument(current, url string) bool {
	return sameDocument(current, url) ||
		as.asked != "" && sameDocument(url, as.asked) && sameDocument(current, as.landed)
}

// sameDocument reports whether two URLs name the same document: equal but
// for the case of the scheme and host, an empty path and the fragment (a
// client-side route).
func sameDocument(a, b string) bool {
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
		u.Fragment, u.RawFragment = "", ""
		return u.String()
	}
	return norm(a) == norm(b)
}

// single runs an action: an ai_* action on the element of its selector,
// or with the model.
func (as *actionRun) single(ctx context.Context, act *client.Action, timeout time.Duration) (any, error) {
	switch act.Type {
	case client.ActionClick, client.ActionInputText, client.ActionSelectOption, client.ActionUploadFile:
	default:
		return as.withModel(ctx, act)
	}
	if strings.TrimSpace(act.Selector) == "" {
		return as.withModel(ctx, act)
	}
	canAI := strings.TrimSpace(act.Intention) != "" && as.e.models.Configured()
	if canAI {
		// The model takes over soon when the selector finds nothing.
		timeout = min(timeout, 3*time.Second)
	}
	// The element, once found, may take the rest of the action's timeout
	// to become actionable (visible, enabled, still).
	out, err := as.bySelector(page.WithActionWait(ctx, timeout), act, timeout)
	var nm *runbrowser.NoMatchError
	if err != nil && errors.As(err, &nm) && canAI && ctx.Err() == nil {
		as.e.log.Info("the selector matched nothing; the model looks for the element", "selector", act.Selector, "intention", act.Intention)
		return as.withModel(ctx, act)
	}
	return out, err
}

// bySelector runs a model-free ai_* action on the element of its
// selector.
func (as *actionRun) bySelector(ctx context.Context, act *client.Action, timeout time.Duration) (any, error) {
	rb, sel := as.r.browser, act.Selector
	switch act.Type {
	case client.ActionClick:
		if _, err := rb.Click(ctx, sel, timeout); err != nil {
			return nil, err
		}
		return sel, nil
	case client.ActionInputText, client.ActionSelectOption:
		set := (*page.Page).InputText
		if act.Type == client.ActionSelectOption {
			set = (*page.Page).SelectOption
		}
		if err := rb.OnElement(ctx, sel, timeout, func(pg *page.Page, id string) (page.Result, error) {
			return set(pg, ctx, id, act.Value)
		}); err != nil {
			return nil, err
		}
		return act.Value, nil
	case client.ActionUploadFile:
		// The browser reads the file when the form is sent, so it stays
		// until the run ends.
		path, err := as.r.files.FetchUpload(ctx, act.FileURL)
		if err != nil {
			return nil, fileURLErr(err)
		}
		if err := rb.OnElement(ctx, sel, timeout, func(pg *page.Page, id string) (page.Result, error) {
			return pg.UploadFile(ctx, id, []string{path})
		}); err != nil {
			return nil, err
		}
		return act.FileURL, nil
	}
	return nil, &executor.ActionError{Kind: executor.ActionInvalid, Msg: fmt.Sprintf("Unknown action type %q", act.Type)}
}

// withModel runs an action with the model, turning the model's failures
// into the API's answers.
func (as *actionRun) withModel(ctx context.Context, act *client.Action) (any, error) {
	m, err := as.e.models.Pick(act.Model)
	if err != nil {
		return nil, &executor.ActionError{Kind: executor.ActionInvalid, Msg: text.UpperFirst(err.Error())}
	}
	var out any
	switch act.Type {
	case client.ActionClick, client.ActionInputText, client.ActionSelectOption, client.ActionUploadFile:
		out, err = as.located(ctx, m, act)
	case client.ActionLocateElement:
		out, err = as.locate(ctx, m, act)
	case client.ActionExtract:
		out, err = as.extract(ctx, m, act)
	case client.ActionValidate:
		out, err = as.validate(ctx, m, act)
	case client.ActionPrompt:
		var data json.RawMessage
		data, _, err = as.r.agent.Prompt(ctx, m, act.Prompt, agent.ParseSchema(act.ResponseSchema), "")
		out = data
	case client.ActionAct:
		err = as.act(ctx, m, act)
	default:
		return nil, &executor.ActionError{Kind: executor.ActionInvalid, Msg: fmt.Sprintf("Unknown action type %q", act.Type)}
	}
	if err != nil {
		if known := settledActionError(ctx, err); known != nil {
			return nil, known
		}
		var me *agent.ModelError
		if errors.As(err, &me) {
			return nil, &executor.ActionError{Kind: executor.ActionUnavailable, Msg: text.UpperFirst(me.Error())}
		}
		return nil, err
	}
	return out, nil
}

// settledActionError returns what a failed action answers when the
// failure needs no further reading: the request's context ended, or the
// error already is the request's (*executor.ActionError). Otherwise nil.
func settledActionError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if ae, ok := errors.AsType[*executor.ActionError](err); ok {
		return ae
	}
	return nil
}

// elementWanted says, for the locate call, what kind of element an action
// needs.
var elementWanted = map[client.ActionType]string{
	client.ActionClick:        "the element to click",
	client.ActionInputText:    "the text field to type into",
	client.ActionSelectOption: "the select or dropdown to choose an option in",
	client.ActionUploadFile:   "the file input, or the button that opens the file chooser",
}

// located does an ai_* action on the element the model locates for its
// intention.
func (as *actionRun) located(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	pg, obs, el, loc, err := as.locateFor(ctx, m, act.Intention, elementWanted[act.Type], act.Value, act.Data)
	if err != nil {
		return nil, err
	}
	value := act.Value
	if value == "" {
		value = loc.Text
	}
	// The selector is found before acting: the action may replace the page.
	result := map[string]any{"action": string(act.Type), "element": agent.ElementLine(obs, el), "ai": true,
		"selector": runbrowser.ReusableSelector(ctx, pg, el)}
	actx, cancel := context.WithTimeout(ctx, agent.ActionTimeout)
	defer cancel()
	var res page.Result
	switch act.Type {
	case client.ActionClick:
		res, err = pg.Click(actx, el.ID)
	case client.ActionInputText:
		if value == "" {
			return nil, unprocessable("ai_input_text has no value, and the intention implies none")
		}
		res, err = pg.InputText(actx, el.ID, value)
		result["value"] = secrets.Shown(value, el.Type == "password")
	case client.ActionSelectOption:
		if value == "" {
			return nil, unprocessable("ai_select_option has no value, and the intention implies none")
		}
		res, err = pg.SelectOption(actx, el.ID, value)
		result["value"] = value
	case client.ActionUploadFile:
		var path string
		if path, err = as.r.files.FetchUpload(actx, act.FileURL); err != nil {
			return nil, fileURLErr(err)
		}
		res, err = pg.UploadFile(actx, el.ID, []string{path})
		result["file_url"] = act.FileURL
	}
	if err == nil && !res.OK {
		err = errors.New(res.Reason)
	}
	if err != nil {
		return nil, unprocessable(fmt.Sprintf("%s on %s: %v", act.Type, agent.ElementLine(obs, el), runbrowser.ActionErr(res, err)))
	}
	if res.Detail != "" {
		result["detail"] = res.Detail
	}
	return result, nil
}

// locateFor reads the page and asks the model for the element an
// instruction describes.
func (as *actionRun) locateFor(ctx context.Context, m llm.Model, instruction, want, value string, data json.RawMessage) (*page.Page, *page.Observation, *page.Element, agent.Location, error) {
	pg, obs, err := as.r.browser.LookNow(ctx)
	if err != nil {
		return nil, nil, nil, agent.Location{}, err
	}
	loc, err := as.r.agent.Locate(ctx, m, obs, instruction, want, value, data)
	if err != nil {
		return nil, nil, nil, loc, err
	}
	el := agent.FindElement(obs, loc.ID)
	if el == nil {
		if loc.ID == "" {
			return nil, nil, nil, loc, unprocessable(fmt.Sprintf("No element on the page fits %q: %s", text.Clip(instruction, 200), loc.Reasoning))
		}
		return nil, nil, nil, loc, unprocessable(fmt.Sprintf("The model named the element [%s], which is not on the page", loc.ID))
	}
	return pg, obs, el, loc, nil
}

// locate returns a selector of the element the prompt describes.
func (as *actionRun) locate(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	pg, obs, el, _, err := as.locateFor(ctx, m, act.Prompt, "the element described", "", act.Data)
	if err != nil {
		return nil, err
	}
	sel := runbrowser.ReusableSelector(ctx, pg, el)
	if sel == "" {
		return nil, unprocessable(fmt.Sprintf("The element is %s, but no selector was found that finds it again", agent.ElementLine(obs, el)))
	}
	return sel, nil
}

// extract extracts what the prompt asks from the page.
func (as *actionRun) extract(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	_, obs, err := as.r.browser.LookNow(ctx)
	if err != nil {
		return nil, err
	}
	what := strings.TrimSpace(act.Prompt)
	if what == "" {
		what = strings.TrimSpace(act.Intention)
	}
	if what == "" {
		what = "the data the schema describes"
	}
	data, _, _, err := as.r.agent.Extract(ctx, m, what, agent.ParseSchema(act.ExtractSchema), dataDetails(act.Data), obs, "")
	if err != nil {
		return nil, err
	}
	return data, nil
}

// validate says whether the prompt holds on the page.
func (as *actionRun) validate(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	_, obs, err := as.r.browser.LookNow(ctx)
	if err != nil {
		return nil, err
	}
	ok, _, err := as.r.agent.JudgeStatement(ctx, m, act.Prompt, obs)
	if err != nil {
		return nil, err
	}
	return ok, nil
}

// act does the intention with the agent loop.
func (as *actionRun) act(ctx context.Context, m llm.Model, act *client.Action) error {
	intention := strings.TrimSpace(act.Intention)
	if intention == "" {
		intention = strings.TrimSpace(act.Prompt)
	}
	g := &agent.Goal{Navigation: intention, Model: m, Details: dataDetails(act.Data), MaxSteps: as.e.cfg.MaxSteps}
	o, err := as.r.agent.Pursue(ctx, g)
	if o != nil && o.Summary != "" {
		as.r.steps.AddSummary(o.Summary)
	}
	var term *agent.TerminatedError
	var limit *agent.StepLimitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &term):
		return unprocessable("The intention cannot be carried out: " + term.Reason)
	case errors.As(err, &limit):
		return unprocessable(fmt.Sprintf("The intention was not carried out within %d steps", limit.Limit))
	}
	return err
}

// dataDetails turns an action's data (an object or a string) into the
// user's details.
func dataDetails(data json.RawMessage) map[string]any {
	t := strings.TrimSpace(string(data))
	if t == "" || t == "null" {
		return nil
	}
	var obj map[string]any
	if json.Unmarshal(data, &obj) == nil {
		return obj
	}
	var v any
	if json.Unmarshal(data, &v) == nil {
		return map[string]any{"data": v}
	}
	return map[string]any{"data": t}
}

func unprocessable(msg string) error {
	return &executor.ActionError{Kind: executor.ActionFailed, Msg: text.UpperFirst(msg)}
}
