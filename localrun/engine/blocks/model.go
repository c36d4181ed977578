package blocks

// The blocks a language model drives: navigation, task, task_v2, login and
// file_download without a url (the agent loop), extraction (one extraction
// from the current page), validation (one condition check), action without
// a working selector (one located action) and text_prompt (a prompt, no
// page).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/llm"
)

// DefaultTaskV2MaxSteps is the step budget of a task_v2 block that sets
// none, as the hosted service's default.
const DefaultTaskV2MaxSteps = 25

// defaultLoginGoal is the goal of a login block that gives none.
const defaultLoginGoal = "Log in to the site with the credentials in the user details. The goal is reached when the site shows that you are logged in."

// blockSpec is a block a model drives, in the engine's terms.
type blockSpec struct {
	url string // rendered; "" stays on the current page
	// mode: "loop" (the agent loop), "extract" (one extraction) or
	// "validate" (one check).
	mode string
	g    *agent.Goal
	// withoutPage: a validation that must not look at the page.
	withoutPage bool
	// dataOutput: the block's output is the extracted data itself.
	dataOutput bool
}

// blockModel is the model of a block: its own, else the agent's, else the
// default.
func (in *Interpreter) blockModel(b client.Block) (llm.Model, error) {
	return in.env.Models.Pick(b.Base().Model, in.agentModel)
}

// stepBudget is a goal's budget: the block's own, else the run's
// (x-max-steps-override), else def, else the engine's default.
func (in *Interpreter) stepBudget(block *int, def int) int {
	switch {
	case block != nil && *block > 0:
		return *block
	case in.steps.Limit() > 0:
		return in.steps.Limit()
	case def > 0:
		return def
	}
	return in.env.MaxSteps
}

func verifyFlag(v *bool) bool { return v == nil || *v }

// spec builds the blockSpec of a block a model drives, rendering its
// templates.
func (in *Interpreter) spec(b client.Block, sc *scope) (*blockSpec, error) {
	m, err := in.blockModel(b)
	if errors.Is(err, agent.ErrNoModel) && in.scripts.replays(b.Base().Label) {
		// The script replays the block: no model needed, and none to
		// fall back on.
		m, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	g := &agent.Goal{Label: b.Base().Label, Model: m, Verify: true}
	s := &blockSpec{mode: "loop", g: g}
	var keys []string
	var codes map[string]string
	switch x := b.(type) {
	case *client.NavigationBlock:
		s.url, g.Navigation = x.URL, x.NavigationGoal
		g.CompleteCriterion, g.TerminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		g.Verify, g.HistoryInVerify = verifyFlag(x.CompleteVerification), x.IncludeActionHistoryInVerification
		g.CompleteOnDownload, g.DownloadTimeout = x.CompleteOnDownload, downloadTimeout(x.DownloadTimeout)
		g.MaxSteps = in.stepBudget(x.MaxStepsPerRun, 0)
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
	case *client.LoginBlock:
		s.url, g.Navigation = x.URL, x.NavigationGoal
		if strings.TrimSpace(g.Navigation) == "" {
			g.Navigation = defaultLoginGoal
		}
		g.CompleteCriterion, g.TerminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		g.Verify, g.HistoryInVerify = verifyFlag(x.CompleteVerification), x.IncludeActionHistoryInVerification
		g.MaxSteps = in.stepBudget(x.MaxStepsPerRun, 0)
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
	case *client.TaskBlock:
		s.url, g.Navigation = x.URL, x.NavigationGoal
		if strings.TrimSpace(g.Navigation) == "" {
			g.Navigation = x.Prompt
		}
		g.Extraction, g.Schema = x.DataExtractionGoal, agent.ParseSchema(x.DataSchema)
		g.CompleteCriterion, g.TerminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		g.Verify, g.HistoryInVerify = verifyFlag(x.CompleteVerification), x.IncludeActionHistoryInVerification
		g.CompleteOnDownload, g.DownloadTimeout = x.CompleteOnDownload, downloadTimeout(x.DownloadTimeout)
		g.MaxSteps = in.stepBudget(x.MaxStepsPerRun, 0)
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
		if strings.TrimSpace(g.Navigation) == "" {
			s.mode = "extract"
		}
		s.dataOutput = g.Extraction != "" || g.Schema != nil
	case *client.TaskV2Block:
		s.url, g.Navigation = x.URL, x.Prompt
		var limit *int
		if x.MaxSteps > 0 {
			limit = &x.MaxSteps
		}
		g.MaxSteps = in.stepBudget(limit, DefaultTaskV2MaxSteps)
	case *client.ExtractionBlock:
		s.url, s.mode, s.dataOutput = x.URL, "extract", true
		g.Extraction, g.Schema = x.DataExtractionGoal, agent.ParseSchema(x.DataSchema)
		keys = x.ParameterKeys
	case *client.ValidationBlock:
		s.mode, s.withoutPage = "validate", x.WithoutPageInformation
		g.CompleteCriterion, g.TerminateCriterion = x.CompleteCriterion, x.TerminateCriterion
		keys, codes = x.ParameterKeys, x.ErrorCodeMapping
	default:
		return nil, fmt.Errorf("block type %s is not driven by a model", b.BlockType())
	}
	if _, ok := b.(*client.LoginBlock); ok && len(keys) == 0 {
		// A login block without keys signs in with the run's credentials
		// (their secrets are placeholders).
		keys = in.sess.Secrets().Keys()
	}
	// The model is given what the block names (details), from its texts
	// as written; a block that acts on the page, the current loop's
	// values too. A validation is judged on what it names only.
	if g.Details, err = sc.details(keys, g.Navigation, g.Extraction, g.CompleteCriterion, g.TerminateCriterion); err != nil {
		return nil, err
	}
	if len(keys) == 0 && s.mode != "validate" {
		sc.addLoopValues(g.Details)
	}
	url, err := sc.renderURL(s.url)
	if err != nil {
		return nil, err
	}
	s.url = url
	if err := sc.renderAll(&g.Navigation, &g.Extraction, &g.CompleteCriterion, &g.TerminateCriterion); err != nil {
		return nil, err
	}
	g.ErrorCodes = mergeCodes(codes, in.def.ErrorCodeMapping)
	return s, nil
}

// mergeCodes returns the codes of a block over the definition's.
func mergeCodes(block, def map[string]string) map[string]string {
	if len(def) == 0 {
		return block
	}
	out := make(map[string]string, len(block)+len(def))
	for k, v := range def {
		out[k] = v
	}
	for k, v := range block {
		out[k] = v
	}
	return out
}

// modelBlock runs a navigation, task, task_v2, login, extraction or
// validation block.
func (in *Interpreter) modelBlock(ctx context.Context, b client.Block, sc *scope) (any, bool, error) {
	s, err := in.spec(b, sc)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(s.url) != "" {
		if _, err := in.sess.Navigate(ctx, s.url); err != nil {
			return nil, true, err
		}
	}
	switch s.mode {
	case "extract":
		out, err := in.extractBlock(ctx, s, sc)
		return out, false, err
	case "validate":
		in.scripts.keepModel(s.g.Label, "a validation is judged by the model every time")
		out, err := in.validateBlock(ctx, s)
		return out, false, err
	}
	o, err := in.pursue(ctx, s, sc)
	if err != nil {
		return in.goalOutput(o), false, in.goalFailed(ctx, s.g, o, err)
	}
	in.steps.AddSummary(o.Summary)
	if s.dataOutput {
		return jsonValue(o.Data), false, nil
	}
	return in.goalOutput(o), false, nil
}

// goalOutput is the output of a loop block: where it ended, what it did,
// what it downloaded and the data the model gave, if any.
func (in *Interpreter) goalOutput(o *agent.Outcome) any {
	if o == nil {
		return nil
	}
	out := map[string]any{"url": o.URL, "summary": o.Summary, "downloaded_files": in.files.Infos(o.Downloads)}
	if o.Data != nil {
		out["extracted_information"] = jsonValue(o.Data)
	}
	return out
}

// goalFailed classifies a goal that was not reached against its error
// codes and records what it did.
func (in *Interpreter) goalFailed(ctx context.Context, g *agent.Goal, o *agent.Outcome, err error) error {
	if o != nil && o.Summary != "" {
		in.steps.AddSummary(o.Summary)
	}
	if !agent.Classifiable(ctx, err) || len(g.ErrorCodes) == 0 {
		return err
	}
	goalText := g.Navigation
	if goalText == "" {
		goalText = g.Extraction
	}
	if goalText == "" {
		goalText = strings.TrimSpace("Validate: " + g.CompleteCriterion + " " + g.TerminateCriterion)
	}
	code := in.agent.Classify(ctx, g.Model, g.ErrorCodes, agent.FailureInfo{Goal: goalText, Reason: err.Error(), History: in.steps.History(g.Label), Label: g.Label})
	if code == "" {
		return err
	}
	return &agent.CodedError{Err: err, Code: code}
}

// extractBlock extracts data from the current page: from the places a
// script recorded, or as one step of the model.
func (in *Interpreter) extractBlock(ctx context.Context, s *blockSpec, sc *scope) (any, error) {
	var data json.RawMessage
	var err error
	if in.scripts != nil {
		data, err = in.scriptedExtract(ctx, s, sc)
	} else {
		data, err = in.modelExtract(ctx, s)
	}
	if err != nil {
		return nil, in.goalFailed(ctx, s.g, nil, err)
	}
	return jsonValue(data), nil
}

// modelExtract has the model extract the block's data from the current
// page, as one step.
func (in *Interpreter) modelExtract(ctx context.Context, s *blockSpec) (json.RawMessage, error) {
	n, err := in.steps.Next()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	_, obs, err := in.sess.LookNow(ctx)
	if err != nil {
		return nil, err
	}
	rec := &steplog.Step{Step: n, Block: s.g.Label, URL: obs.URL, At: t0, Actions: []steplog.Action{}}
	rec.Timings.Observe = steplog.Millis(time.Since(t0))
	g := s.g
	what := g.Extraction
	if what == "" {
		what = "the data the schema describes"
	}
	data, verrs, resp, err := in.agent.Extract(ctx, g.Model, what, g.Schema, g.Details, obs, g.Label)
	decision := "extracted"
	if err == nil && len(verrs) > 0 {
		decision = "extracted (not matching the schema)"
	}
	in.steps.EndCall(rec, resp, decision)
	if err != nil {
		return nil, err
	}
	in.steps.AddSummary("Extracted " + text.Clip(text.OneLine(what), 200) + ".")
	return data, nil
}

// validateBlock checks the block's criteria on the current page: complete
// lets the run go on, anything else ends it terminated (with the user's
// code, when one matches).
func (in *Interpreter) validateBlock(ctx context.Context, s *blockSpec) (any, error) {
	n, err := in.steps.Next()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	g := s.g
	c := agent.Conditions{Complete: g.CompleteCriterion, Terminate: g.TerminateCriterion, Details: g.Details, Label: g.Label,
		Goal: "Check that the page meets the conditions."}
	rec := &steplog.Step{Step: n, Block: g.Label, At: t0, Actions: []steplog.Action{}}
	if !s.withoutPage {
		_, obs, err := in.sess.LookNow(ctx)
		if err != nil {
			return nil, err
		}
		c.Obs, rec.URL = obs, obs.URL
		rec.Timings.Observe = steplog.Millis(time.Since(t0))
	}
	v, resp, err := in.agent.Judge(ctx, g.Model, c)
	in.steps.EndCall(rec, resp, "validation: "+v.Status)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"status": v.Status, "reasoning": v.Reasoning}
	if v.Status == "complete" {
		in.steps.AddSummary("Validated: " + text.Clip(text.OneLine(v.Reasoning), 300))
		return out, nil
	}
	reason := "the validation did not pass: " + v.Reasoning
	if v.Status == "terminate" && strings.TrimSpace(g.TerminateCriterion) != "" {
		reason = "the termination condition holds: " + v.Reasoning
	}
	return out, in.goalFailed(ctx, g, nil, &agent.TerminatedError{Reason: reason})
}

// modelAction does an action block with the model: it locates the element
// the goal is about and acts on it (types or chooses when the model gives
// a value for a field, clicks otherwise). The output names a selector that
// finds the element without a model.
func (in *Interpreter) modelAction(ctx context.Context, b *client.ActionBlock, intention string, touched bool) (_ any, _ bool, err error) {
	in.scripts.keepModel(b.Label, "an action block without a working selector is located by the model every time; give it the selector its output names")
	m, err := in.blockModel(b)
	if err != nil {
		return nil, touched, err
	}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "ai_action", Text: intention})
	if err != nil {
		return nil, touched, err
	}
	var pageURL, result string
	defer func() { in.steps.End(rec, pageURL, result, err) }()
	pg, obs, err := in.sess.LookNow(ctx)
	if err != nil {
		return nil, true, err
	}
	pageURL = obs.URL
	loc, err := in.agent.Locate(ctx, m, obs, intention, "the element to act on", "", nil)
	if err != nil {
		return nil, true, err
	}
	el := agent.FindElement(obs, loc.ID)
	if el == nil {
		if loc.ID == "" {
			return nil, true, fmt.Errorf("no element on the page fits %q: %s", text.Clip(intention, 200), loc.Reasoning)
		}
		return nil, true, fmt.Errorf("the model named the element [%s], which is not on the page", loc.ID)
	}
	// The selector is found before acting: the action may replace the page.
	selector := runbrowser.ReusableSelector(ctx, pg, el)
	mark := in.sess.Mark()
	actx, cancel := context.WithTimeout(ctx, agent.ActionTimeout)
	var res page.Result
	switch {
	case isTextField(el) && loc.Text != "":
		res, err = in.sess.TypeText(actx, pg, el.ID, loc.Text)
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
		return nil, true, fmt.Errorf("acting on %s: %w", agent.ElementLine(obs, el), runbrowser.ActionErr(res, err))
	}
	out := map[string]any{"selector": selector, "element": agent.ElementLine(obs, el), "url": res.URL,
		"ai_used": true, "downloaded_files": []any{}}
	if b.CompleteOnDownload {
		names, err := in.sess.WaitDownload(ctx, mark, downloadTimeout(b.DownloadTimeout))
		if err != nil {
			return out, true, err
		}
		out["downloaded_files"] = in.files.Infos(names)
	} else {
		in.sess.SyncDownloads()
	}
	if res.URL != "" {
		pageURL = res.URL
	}
	result = "acted on " + agent.ElementLine(obs, el)
	in.steps.AddSummary("Acted on " + agent.ElementLine(obs, el) + ".")
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

// modelDownload finds a download on the page with the agent loop: the
// goal completes when a file has been downloaded.
func (in *Interpreter) modelDownload(ctx context.Context, b *client.FileDownloadBlock, sc *scope) (any, bool, error) {
	m, err := in.blockModel(b)
	if err != nil {
		return nil, false, err
	}
	details, err := sc.details(b.ParameterKeys, b.NavigationGoal)
	if err != nil {
		return nil, false, err
	}
	if len(b.ParameterKeys) == 0 {
		sc.addLoopValues(details)
	}
	goalText, err := sc.render(b.NavigationGoal)
	if err != nil {
		return nil, false, err
	}
	g := &agent.Goal{Label: b.Label, Model: m, Navigation: goalText, Details: details, Verify: true,
		CompleteOnDownload: true, DownloadTimeout: downloadTimeout(b.DownloadTimeout),
		MaxSteps: in.stepBudget(b.MaxStepsPerRun, 0), ErrorCodes: mergeCodes(b.ErrorCodeMapping, in.def.ErrorCodeMapping)}
	o, err := in.pursue(ctx, &blockSpec{mode: "loop", g: g}, sc)
	if err != nil {
		return nil, false, in.goalFailed(ctx, g, o, err)
	}
	if len(o.Downloads) == 0 {
		err := errors.New("the agent reported the goal reached, but no file was downloaded")
		if b.ContinueOnEmpty {
			return map[string]any{"url": o.URL, "downloaded_files": []any{}, "summary": o.Summary}, false, nil
		}
		return nil, false, in.goalFailed(ctx, g, o, err)
	}
	in.steps.AddSummary(o.Summary)
	return map[string]any{"url": o.URL, "downloaded_files": in.files.Infos(o.Downloads), "summary": o.Summary}, false, nil
}

// textPrompt sends a text_prompt block's prompt to the model. Without
// json_schema the output is {"llm_response": text}.
func (in *Interpreter) textPrompt(ctx context.Context, b *client.TextPromptBlock, sc *scope) (any, error) {
	models := []client.Model{b.Model}
	if b.LLMKey != "" {
		models = append(models, client.Model{"name": b.LLMKey})
	}
	models = append(models, in.agentModel)
	m, err := in.env.Models.Pick(models...)
	if err != nil {
		return nil, err
	}
	prompt, err := sc.render(b.Prompt)
	if err != nil {
		return nil, err
	}
	details, err := sc.details(b.ParameterKeys)
	if err != nil {
		return nil, err
	}
	if len(b.ParameterKeys) > 0 && len(details) > 0 {
		prompt += "\n\nValues (JSON):\n" + agent.DetailsJSON(details)
	}
	schema := agent.ParseSchema(b.JSONSchema)
	data, _, err := in.agent.Prompt(ctx, m, prompt, schema, b.Label)
	if err != nil {
		return nil, err
	}
	if schema == nil {
		var answer string
		json.Unmarshal(data, &answer)
		return map[string]any{"llm_response": answer}, nil
	}
	return jsonValue(data), nil
}
