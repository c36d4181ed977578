package engine

// The single actions a model drives (POST /v1/sdk/run_action; see the
// comment at the top of actions.go for what each returns).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/llm"
)

// modelAction runs an action with the model, turning the model's failures
// into the API's answers.
func (r *run) modelAction(ctx context.Context, act *client.Action) (any, error) {
	m, err := r.e.model(act.Model)
	if err != nil {
		return nil, &ActionError{Status: http.StatusBadRequest, Msg: upperFirst(err.Error())}
	}
	var out any
	switch act.Type {
	case client.ActionClick, client.ActionInputText, client.ActionSelectOption, client.ActionUploadFile:
		out, err = r.locatedAction(ctx, m, act)
	case client.ActionLocateElement:
		out, err = r.locateAction(ctx, m, act)
	case client.ActionExtract:
		out, err = r.extractAction(ctx, m, act)
	case client.ActionValidate:
		out, err = r.validateAction(ctx, m, act)
	case client.ActionPrompt:
		var data json.RawMessage
		data, _, err = r.promptModel(ctx, m, act.Prompt, parseDataSchema(act.ResponseSchema), "")
		out = data
	case client.ActionAct:
		err = r.actAction(ctx, m, act)
	default:
		return nil, &ActionError{Status: http.StatusBadRequest, Msg: fmt.Sprintf("Unknown action type %q", act.Type)}
	}
	if err != nil {
		var me *modelError
		var ae *ActionError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.As(err, &ae):
			return nil, ae
		case errors.As(err, &me):
			return nil, &ActionError{Status: http.StatusServiceUnavailable, Msg: upperFirst(me.Error())}
		}
		return nil, err
	}
	return out, nil
}

// elementWanted says, for the locate call, what kind of element an action
// needs.
var elementWanted = map[client.ActionType]string{
	client.ActionClick:        "the element to click",
	client.ActionInputText:    "the text field to type into",
	client.ActionSelectOption: "the select or dropdown to choose an option in",
	client.ActionUploadFile:   "the file input, or the button that opens the file chooser",
}

// locatedAction does an ai_* action on the element the model locates for
// its intention.
func (r *run) locatedAction(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	pg, obs, el, loc, err := r.locateFor(ctx, m, act.Intention, elementWanted[act.Type], act.Value, act.Data)
	if err != nil {
		return nil, err
	}
	value := act.Value
	if value == "" {
		value = loc.Text
	}
	// The selector is found before acting: the action may replace the page.
	result := map[string]any{"action": string(act.Type), "element": elementLine(obs, el), "ai": true,
		"selector": r.reusableSelector(ctx, pg, el)}
	actx, cancel := context.WithTimeout(ctx, actionTimeout)
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
		result["value"] = value
		if el.Type == "password" {
			result["value"] = "********"
		}
	case client.ActionSelectOption:
		if value == "" {
			return nil, unprocessable("ai_select_option has no value, and the intention implies none")
		}
		res, err = pg.SelectOption(actx, el.ID, value)
		result["value"] = value
	case client.ActionUploadFile:
		var path string
		if path, err = r.fetchUpload(actx, act.FileURL); err != nil {
			return nil, err
		}
		res, err = pg.UploadFile(actx, el.ID, []string{path})
		result["file_url"] = act.FileURL
	}
	if err == nil && !res.OK {
		err = errors.New(res.Reason)
	}
	if err != nil {
		return nil, unprocessable(fmt.Sprintf("%s on %s: %v", act.Type, elementLine(obs, el), actionErr(res, err)))
	}
	if res.Detail != "" {
		result["detail"] = res.Detail
	}
	return result, nil
}

// locateFor reads the page and asks the model for the element an
// instruction describes.
func (r *run) locateFor(ctx context.Context, m llm.Model, instruction, want, value string, data json.RawMessage) (*page.Page, *page.Observation, *page.Element, location, error) {
	pg, obs, err := r.lookNow(ctx)
	if err != nil {
		return nil, nil, nil, location{}, err
	}
	loc, err := r.locate(ctx, m, obs, instruction, want, value, data)
	if err != nil {
		return nil, nil, nil, loc, err
	}
	el := findElement(obs, loc.ID)
	if el == nil {
		if loc.ID == "" {
			return nil, nil, nil, loc, unprocessable(fmt.Sprintf("No element on the page fits %q: %s", clip(instruction, 200), loc.Reasoning))
		}
		return nil, nil, nil, loc, unprocessable(fmt.Sprintf("The model named the element [%s], which is not on the page", loc.ID))
	}
	return pg, obs, el, loc, nil
}

// locateAction returns a selector of the element the prompt describes.
func (r *run) locateAction(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	pg, obs, el, _, err := r.locateFor(ctx, m, act.Prompt, "the element described", "", act.Data)
	if err != nil {
		return nil, err
	}
	sel := r.reusableSelector(ctx, pg, el)
	if sel == "" {
		return nil, unprocessable(fmt.Sprintf("The element is %s, but no selector was found that finds it again", elementLine(obs, el)))
	}
	return sel, nil
}

// extractAction extracts what the prompt asks from the page.
func (r *run) extractAction(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	_, obs, err := r.lookNow(ctx)
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
	data, _, _, err := r.extract(ctx, m, what, parseDataSchema(act.ExtractSchema), dataDetails(act.Data), obs, "")
	if err != nil {
		return nil, err
	}
	return data, nil
}

// validateAction says whether the prompt holds on the page.
func (r *run) validateAction(ctx context.Context, m llm.Model, act *client.Action) (any, error) {
	_, obs, err := r.lookNow(ctx)
	if err != nil {
		return nil, err
	}
	ok, _, err := r.judgeStatement(ctx, m, act.Prompt, obs)
	if err != nil {
		return nil, err
	}
	return ok, nil
}

// actAction does the intention with the agent loop.
func (r *run) actAction(ctx context.Context, m llm.Model, act *client.Action) error {
	intention := strings.TrimSpace(act.Intention)
	if intention == "" {
		intention = strings.TrimSpace(act.Prompt)
	}
	g := &goal{navigation: intention, model: m, details: dataDetails(act.Data), maxSteps: r.e.cfg.MaxSteps}
	o, err := r.pursue(ctx, g)
	if o != nil && o.summary != "" {
		r.summaries = append(r.summaries, o.summary)
	}
	var term *terminatedError
	var limit *stepLimitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &term):
		return unprocessable("The intention cannot be carried out: " + term.reason)
	case errors.As(err, &limit):
		return unprocessable(fmt.Sprintf("The intention was not carried out within %d steps", limit.limit))
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
	return &ActionError{Status: http.StatusUnprocessableEntity, Msg: upperFirst(msg)}
}
