package engine

// The blocks a language model drives: navigation, task, task_v2, login and
// file_download (the agent loop), extraction (one extraction from the
// current page), validation (one condition check), action without a
// working selector (one located action) and text_prompt (a prompt, no
// page).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/llm"
	"github.com/abctl/abctl/tmpl"
)

// DefaultTaskV2MaxSteps is the step budget of a task_v2 block that sets
// none, as the hosted service's default.
const DefaultTaskV2MaxSteps = 25

// defaultLoginGoal is the goal of a login block that gives none.
const defaultLoginGoal = "Log in to the site with the credentials in the user details. The goal is reached when the site shows that you are logged in."

// blockSpec is an AI block in the engine's terms.
type blockSpec struct {
	url string // rendered; "" stays on the current page
	// mode: "loop" (the agent loop), "extract" (one extraction) or
	// "validate" (one check).
	mode string
	g    *goal
	// withoutPage: a validation that must not look at the page.
	withoutPage bool
	// dataOutput: the block's output is the extracted data itself.
	dataOutput bool
}

// blockModel is the model of a block: its own, else the agent's, else the
// default.
func (r *run) blockModel(b client.Block) (llm.Model, error) {
	return r.e.model(b.Base().Model, r.agentModel)
}

// renderAll renders the template fields of a block, stopping at the first
// that fails.
func (r *run) renderAll(sc *scope, fields ...*string) error {
	for _, f := range fields {
		if *f == "" {
			continue
		}
		out, err := r.render(*f, sc)
		if err != nil {
			return err
		}
		*f = out
	}
	return nil
}

// details are the values a block's model may use: the parameters its
// parameter_keys name (any template path), or, without keys, the run's
// parameters and the current loop's values.
func (r *run) details(keys []string, sc *scope) (map[string]any, error) {
	vars := r.vars(sc)
	out := map[string]any{}
	if len(keys) > 0 {
		for _, k := range keys {
			v, err := tmpl.Lookup(k, vars)
			if err != nil {
				return nil, &templateError{fmt.Errorf("parameter_keys: %w", err)}
			}
			out[k] = jsonValue(v)
		}
		return out, nil
	}
	for k, v := range r.params {
		out[k] = v
	}
	for s := sc; s != nil; s = s.parent {
		for k, v := range s.vals {
			if _, ok := out[k]; !ok {
				out[k] = jsonValue(v)
			}
		}
	}
	return out, nil
}

// jsonValue decodes JSON kept as json.RawMessage, so details marshal
// cleanly.
func jsonValue(v any) any {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			return x
		}
	}
	return v
}

// stepBudget is a goal's budget: the block's own, else the run's
// (x-max-steps-override), else def, else the engine's default.
func (r *run) stepBudget(block *int, def int) int {
	switch {
	case block != nil && *block > 0:
		return *block
	case r.maxSteps > 0:
		return r.maxSteps
	case def > 0:
		return def
	}
	return r.e.cfg.MaxSteps
}

func verifyFlag(v *bool) bool { return v == nil || *v }

// spec builds the blockSpec of an AI block, rendering its templates.
func (r *run) spec(b client.Block, sc *scope) (*blockSpec, error) {
	m, err := r.blockModel(b)
	if err != nil {
		return nil, err
	}
	g := &goal{label: b.Base().Label, model: m, verify: true}
	s := &blockSpec{mode: "loop", g: g}
	var keys []string
	var codes map[string]string
	switch x := b.(type) {
	case *client.NavigationBlock:
		s.url, g.navigation = x.URL, x.NavigationGoal
		g.completeCriterion, g.terminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		g.verify, g.historyInVerify = verifyFlag(x.CompleteVerification), x.IncludeActionHistoryInVerification
		g.completeOnDownload, g.downloadTimeout = x.CompleteOnDownload, downloadTimeout(x.DownloadTimeout)
		g.maxSteps = r.stepBudget(x.MaxStepsPerRun, 0)
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
	case *client.LoginBlock:
		s.url, g.navigation = x.URL, x.NavigationGoal
		if strings.TrimSpace(g.navigation) == "" {
			g.navigation = defaultLoginGoal
		}
		g.completeCriterion, g.terminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		g.verify, g.historyInVerify = verifyFlag(x.CompleteVerification), x.IncludeActionHistoryInVerification
		g.maxSteps = r.stepBudget(x.MaxStepsPerRun, 0)
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
	case *client.TaskBlock:
		s.url, g.navigation = x.URL, x.NavigationGoal
		if strings.TrimSpace(g.navigation) == "" {
			g.navigation = x.Prompt
		}
		g.extraction, g.schema = x.DataExtractionGoal, parseDataSchema(x.DataSchema)
		g.completeCriterion, g.terminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		g.verify, g.historyInVerify = verifyFlag(x.CompleteVerification), x.IncludeActionHistoryInVerification
		g.completeOnDownload, g.downloadTimeout = x.CompleteOnDownload, downloadTimeout(x.DownloadTimeout)
		g.maxSteps = r.stepBudget(x.MaxStepsPerRun, 0)
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
		if strings.TrimSpace(g.navigation) == "" {
			s.mode = "extract"
		}
		s.dataOutput = g.extraction != "" || g.schema != nil
	case *client.TaskV2Block:
		s.url, g.navigation = x.URL, x.Prompt
		var limit *int
		if x.MaxSteps > 0 {
			limit = &x.MaxSteps
		}
		g.maxSteps = r.stepBudget(limit, DefaultTaskV2MaxSteps)
	case *client.ExtractionBlock:
		s.url, s.mode, s.dataOutput = x.URL, "extract", true
		g.extraction, g.schema = x.DataExtractionGoal, parseDataSchema(x.DataSchema)
		keys = x.ParameterKeys
	case *client.ValidationBlock:
		s.mode, s.withoutPage = "validate", x.WithoutPageInformation
		g.completeCriterion, g.terminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
	default:
		return nil, fmt.Errorf("block type %s is not driven by a model", b.BlockType())
	}
	if err := r.renderAll(sc, &s.url, &g.navigation, &g.extraction, &g.completeCriterion, &g.terminateCriterion); err != nil {
		return nil, err
	}
	if g.details, err = r.details(keys, sc); err != nil {
		return nil, err
	}
	if r.def != nil {
		codes = mergeCodes(codes, r.def.ErrorCodeMapping)
	}
	g.errorCodes = codes
	return s, nil
}

// aiBlock runs a navigation, task, task_v2, login, extraction or
// validation block.
func (r *run) aiBlock(ctx context.Context, b client.Block, sc *scope) (any, bool, error) {
	s, err := r.spec(b, sc)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(s.url) != "" {
		if _, err := r.navigate(ctx, s.url); err != nil {
			return nil, true, err
		}
	}
	switch s.mode {
	case "extract":
		out, err := r.extractBlock(ctx, s)
		return out, false, err
	case "validate":
		out, err := r.validateBlock(ctx, s)
		return out, false, err
	}
	o, err := r.pursue(ctx, s.g)
	if err != nil {
		return r.goalOutput(o), false, r.goalFailed(ctx, s.g, o, err)
	}
	r.summaries = append(r.summaries, o.summary)
	if s.dataOutput {
		return jsonValue(o.data), false, nil
	}
	return r.goalOutput(o), false, nil
}

// goalOutput is the output of a loop block: where it ended, what it did,
// what it downloaded and the data the model gave, if any.
func (r *run) goalOutput(o *outcome) any {
	if o == nil {
		return nil
	}
	out := map[string]any{"url": o.url, "summary": o.summary, "downloaded_files": r.fileInfos(o.downloads)}
	if o.data != nil {
		out["extracted_information"] = jsonValue(o.data)
	}
	return out
}

// goalFailed classifies a goal that was not reached against its error
// codes and records what it did.
func (r *run) goalFailed(ctx context.Context, g *goal, o *outcome, err error) error {
	if o != nil && o.summary != "" {
		r.summaries = append(r.summaries, o.summary)
	}
	if !classifiable(ctx, err) || len(g.errorCodes) == 0 {
		return err
	}
	goalText := g.navigation
	if goalText == "" {
		goalText = g.extraction
	}
	if goalText == "" {
		goalText = strings.TrimSpace("Validate: " + g.completeCriterion + " " + g.terminateCriterion)
	}
	code := r.classify(ctx, g.model, g.errorCodes, failureInfo{goal: goalText, details: g.details, reason: err.Error(), history: r.ag.historyOf(g.label), label: g.label})
	if code == "" {
		return err
	}
	return &codedError{error: err, code: code}
}

// extractBlock extracts data from the current page, as one step.
func (r *run) extractBlock(ctx context.Context, s *blockSpec) (any, error) {
	if err := r.step(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	_, obs, err := r.lookNow(ctx)
	if err != nil {
		return nil, err
	}
	rec := &stepRecord{Step: r.steps, Block: s.g.label, URL: obs.URL, At: t0, Actions: []actionRecord{}}
	rec.Timings.Observe = millis(time.Since(t0))
	g := s.g
	what := g.extraction
	if what == "" {
		what = "the data the schema describes"
	}
	data, verrs, resp, err := r.extract(ctx, g.model, what, g.schema, g.details, obs, g.label)
	r.reportCall(rec, resp, t0, "extracted")
	if err != nil {
		return nil, r.goalFailed(ctx, g, nil, err)
	}
	if len(verrs) > 0 {
		rec.Decision = "extracted (not matching the schema)"
	}
	r.summaries = append(r.summaries, "Extracted "+clip(oneLine(what), 200)+".")
	return jsonValue(data), nil
}

// reportCall completes and reports the step record of a one-call step
// (an extraction, a validation).
func (r *run) reportCall(rec *stepRecord, resp *llm.Response, t0 time.Time, decision string) {
	if resp != nil {
		rec.Timings.Model = millis(resp.Duration)
		rec.Usage = resp.Usage
	}
	rec.Timings.Total = millis(time.Since(t0))
	rec.Decision = decision
	r.reportStep(rec)
}

// lookNow reads the active page as it is, after a short settle.
func (r *run) lookNow(ctx context.Context) (*page.Page, *page.Observation, error) {
	pg, err := r.page(ctx)
	if err != nil {
		return nil, nil, r.browserErr(ctx, err)
	}
	r.settle(ctx, pg, r.watches[r.tab])
	obs, err := r.look(ctx, pg)
	if err != nil {
		return nil, nil, r.browserErr(ctx, err)
	}
	return pg, obs, nil
}

// validateBlock checks the block's criteria on the current page: complete
// lets the run go on, anything else ends it terminated (with the user's
// code, when one matches).
func (r *run) validateBlock(ctx context.Context, s *blockSpec) (any, error) {
	if err := r.step(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	g := s.g
	in := judgeInput{complete: g.completeCriterion, terminate: g.terminateCriterion, details: g.details, label: g.label,
		goal: "Check that the page meets the conditions."}
	rec := &stepRecord{Step: r.steps, Block: g.label, At: t0, Actions: []actionRecord{}}
	if !s.withoutPage {
		_, obs, err := r.lookNow(ctx)
		if err != nil {
			return nil, err
		}
		in.obs, rec.URL = obs, obs.URL
		rec.Timings.Observe = millis(time.Since(t0))
	}
	v, resp, err := r.judge(ctx, g.model, in)
	r.reportCall(rec, resp, t0, "validation: "+v.Status)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"status": v.Status, "reasoning": v.Reasoning}
	if v.Status == "complete" {
		r.summaries = append(r.summaries, "Validated: "+clip(oneLine(v.Reasoning), 300))
		return out, nil
	}
	reason := "the validation did not pass: " + v.Reasoning
	if v.Status == "terminate" && strings.TrimSpace(g.terminateCriterion) != "" {
		reason = "the termination condition holds: " + v.Reasoning
	}
	return out, r.goalFailed(ctx, g, nil, &terminatedError{reason: reason})
}

// aiAction does an action block with the model: it locates the element
// the goal is about and acts on it (types or chooses when the model gives
// a value for a field, clicks otherwise). The output names a selector that
// finds the element without a model.
func (r *run) aiAction(ctx context.Context, b *client.ActionBlock, intention string, touched bool) (_ any, _ bool, err error) {
	m, err := r.blockModel(b)
	if err != nil {
		return nil, touched, err
	}
	rec, err := r.startStep(b.Label, actionRecord{Type: "ai_action", Text: intention})
	if err != nil {
		return nil, touched, err
	}
	var pageURL, result string
	defer func() { r.endStep(rec, pageURL, result, err) }()
	pg, obs, err := r.lookNow(ctx)
	if err != nil {
		return nil, true, err
	}
	pageURL = obs.URL
	loc, err := r.locate(ctx, m, obs, intention, "the element to act on", "", nil)
	if err != nil {
		return nil, true, err
	}
	el := findElement(obs, loc.ID)
	if el == nil {
		if loc.ID == "" {
			return nil, true, fmt.Errorf("no element on the page fits %q: %s", clip(intention, 200), loc.Reasoning)
		}
		return nil, true, fmt.Errorf("the model named the element [%s], which is not on the page", loc.ID)
	}
	// The selector is found before acting: the action may replace the page.
	selector := r.reusableSelector(ctx, pg, el)
	doneBefore, failedBefore := len(r.sess.Downloads()), len(r.sess.FailedDownloads())
	actx, cancel := context.WithTimeout(ctx, actionTimeout)
	var res page.Result
	switch {
	case isTextField(el) && loc.Text != "":
		res, err = pg.InputText(actx, el.ID, loc.Text)
	case el.Tag == "select" && loc.Text != "":
		res, err = pg.SelectOption(actx, el.ID, loc.Text)
	default:
		res, err = pg.Click(actx, el.ID)
	}
	cancel()
	if err == nil && !res.OK {
		err = errors.New(res.Reason)
	}
	if err != nil {
		return nil, true, fmt.Errorf("acting on %s: %w", elementLine(obs, el), actionErr(res, err))
	}
	out := map[string]any{"selector": selector, "element": elementLine(obs, el), "url": res.URL,
		"ai_used": true, "downloaded_files": []any{}}
	if b.CompleteOnDownload {
		names, err := r.waitDownload(ctx, doneBefore, failedBefore, downloadTimeout(b.DownloadTimeout))
		if err != nil {
			return out, true, err
		}
		out["downloaded_files"] = r.fileInfos(names)
	} else {
		r.syncDownloads()
	}
	if res.URL != "" {
		pageURL = res.URL
	}
	result = "acted on " + elementLine(obs, el)
	r.summaries = append(r.summaries, "Acted on "+elementLine(obs, el)+".")
	return out, true, nil
}

// isTextField reports whether one types into el.
func isTextField(el *page.Element) bool {
	switch el.Tag {
	case "textarea":
		return true
	case "input":
		switch el.Type {
		case "checkbox", "radio", "submit", "button", "reset", "image", "file":
			return false
		}
		return true
	}
	return el.Role == "textbox" || el.Role == "searchbox" || el.Role == "combobox"
}

// aiFileDownload finds a download on the page with the agent loop: the
// goal completes when a file has been downloaded.
func (r *run) aiFileDownload(ctx context.Context, b *client.FileDownloadBlock, sc *scope) (any, bool, error) {
	m, err := r.blockModel(b)
	if err != nil {
		return nil, false, err
	}
	goalText, err := r.render(b.NavigationGoal, sc)
	if err != nil {
		return nil, false, err
	}
	details, err := r.details(b.ParameterKeys, sc)
	if err != nil {
		return nil, false, err
	}
	g := &goal{label: b.Label, model: m, navigation: goalText, details: details, verify: true,
		completeOnDownload: true, downloadTimeout: downloadTimeout(b.DownloadTimeout),
		maxSteps: r.stepBudget(b.MaxStepsPerRun, 0)}
	g.errorCodes = b.ErrorCodeMapping
	if r.def != nil {
		g.errorCodes = mergeCodes(g.errorCodes, r.def.ErrorCodeMapping)
	}
	o, err := r.pursue(ctx, g)
	if err != nil {
		return nil, false, r.goalFailed(ctx, g, o, err)
	}
	if len(o.downloads) == 0 {
		err := errors.New("the agent reported the goal reached, but no file was downloaded")
		if b.ContinueOnEmpty {
			return map[string]any{"url": o.url, "downloaded_files": []any{}, "summary": o.summary}, false, nil
		}
		return nil, false, r.goalFailed(ctx, g, o, err)
	}
	r.summaries = append(r.summaries, o.summary)
	return map[string]any{"url": o.url, "downloaded_files": r.fileInfos(o.downloads), "summary": o.summary}, false, nil
}

// textPrompt sends a text_prompt block's prompt to the model. Without
// json_schema the output is {"llm_response": text}.
func (r *run) textPrompt(ctx context.Context, b *client.TextPromptBlock, sc *scope) (any, error) {
	var models []client.Model
	models = append(models, b.Model)
	if b.LLMKey != "" {
		models = append(models, client.Model{"name": b.LLMKey})
	}
	models = append(models, r.agentModel)
	m, err := r.e.model(models...)
	if err != nil {
		return nil, err
	}
	prompt, err := r.render(b.Prompt, sc)
	if err != nil {
		return nil, err
	}
	details, err := r.details(b.ParameterKeys, sc)
	if err != nil {
		return nil, err
	}
	if len(b.ParameterKeys) > 0 && len(details) > 0 {
		prompt += "\n\nValues (JSON):\n" + detailsJSON(details)
	}
	schema := parseDataSchema(b.JSONSchema)
	data, _, err := r.promptModel(ctx, m, prompt, schema, b.Label)
	if err != nil {
		return nil, err
	}
	if schema == nil {
		var text string
		json.Unmarshal(data, &text)
		return map[string]any{"llm_response": text}, nil
	}
	return jsonValue(data), nil
}
