package engine

// The model calls of the agent: planning a step, checking conditions,
// locating one element, and free prompts. Extraction is in extract.go,
// error codes in errorcodes.go. Every call goes through callModel, which
// records it in the run's step log.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/llm"
)

// callModel makes a model call and records it.
func (r *run) callModel(ctx context.Context, m llm.Model, req *llm.Request, block string) (*llm.Response, error) {
	resp, err := m.Complete(ctx, req)
	r.ag.call(req.Kind, m, r.steps, block, resp, err)
	return resp, err
}

// userParts is the text of a user message with the observation's
// screenshot when the model reads images.
func userParts(m llm.Model, text string, obs *page.Observation) llm.Message {
	parts := []llm.Part{llm.Text(text)}
	if obs != nil && len(obs.Screenshot) > 0 && m.Info().Capabilities.Vision {
		parts = append(parts, llm.Image(obs.Screenshot))
	}
	return llm.User(parts...)
}

// answerErr turns a failed call into the error the loop expects: a
// *modelError for infrastructure trouble, a plain error for an answer that
// held no JSON (the step may be tried again).
func answerErr(ctx context.Context, resp *llm.Response, err error) error {
	if errors.Is(err, llm.ErrNoJSON) {
		text := ""
		if resp != nil {
			text = resp.Text
		}
		return fmt.Errorf("no JSON in the answer %q", clip(strings.TrimSpace(text), 200))
	}
	return wrapModelErr(ctx, err)
}

// plan asks the model for the actions of step n. promptChars is the size
// of the prompt's text.
func (r *run) plan(ctx context.Context, st *loopState, n int) (*plan, *llm.Response, int, error) {
	g := st.g
	var b promptBuilder
	goalText := g.navigation
	if strings.TrimSpace(goalText) == "" {
		goalText = g.extraction
	}
	b.section("Goal", clip(goalText, goalBudget))
	b.section("The goal is reached when", clip(g.completeCriterion, criterionBudget))
	b.section("Terminate when", clip(g.terminateCriterion, criterionBudget))
	if g.completeOnDownload {
		b.line("The goal is reached as soon as a file has been downloaded.")
	}
	if g.extraction != "" && g.navigation != "" {
		b.section("Once the goal is reached, this information will be extracted from the page (you do not need to extract it)", clip(g.extraction, criterionBudget))
	}
	b.section("User details (JSON)", detailsJSON(g.details))
	hist := st.history
	if len(hist) > historyLines {
		hist = hist[len(hist)-historyLines:]
		b.section("Steps so far (the latest)", strings.Join(hist, "\n"))
	} else {
		b.section("Steps so far", strings.Join(hist, "\n"))
	}
	if st.thought != "" {
		b.section("Your note from the previous step", clip(st.thought, 600))
	}
	if len(st.notes) > 0 {
		b.section("Notes", "- "+strings.Join(st.notes, "\n- "))
		st.notes = nil
	}
	b.line(fmt.Sprintf("This is step %d of at most %d. Today is %s (UTC).", n, g.maxSteps, time.Now().UTC().Format("Monday 2 January 2006")))
	b.pageBlock(r.tag, st.obs, planElementBudget, planTextBudget, true)
	text := b.String()
	req := &llm.Request{
		Kind: llm.KindPlan, System: planSystem,
		Messages:  []llm.Message{userParts(g.model, text, st.obs)},
		Schema:    &llm.Schema{Name: "browser_actions", JSON: planSchema},
		MaxTokens: 2000,
	}
	chars := len(planSystem) + len(text)
	resp, err := r.callModel(ctx, g.model, req, g.label)
	if err != nil {
		return nil, resp, chars, answerErr(ctx, resp, err)
	}
	p, err := parsePlan(resp.JSON)
	if err != nil {
		return nil, resp, chars, err
	}
	return p, resp, chars, nil
}

// verdict is the answer of a condition check.
type verdict struct {
	Status    string `json:"status"` // complete, terminate or continue
	Reasoning string `json:"reasoning"`
}

// judgeInput is what a condition check looks at.
type judgeInput struct {
	goal                string
	complete, terminate string
	details             map[string]any
	history             []string
	obs                 *page.Observation
	label               string
}

// verify checks the loop's page against the criteria.
func (r *run) verify(ctx context.Context, st *loopState, complete, terminate string) (verdict, *llm.Response, error) {
	in := judgeInput{goal: st.g.navigation, complete: complete, terminate: terminate, details: st.g.details, obs: st.obs, label: st.g.label}
	if st.g.historyInVerify {
		in.history = st.history
	}
	return r.judge(ctx, st.g.model, in)
}

// judge asks whether the completion or termination condition holds.
func (r *run) judge(ctx context.Context, m llm.Model, in judgeInput) (verdict, *llm.Response, error) {
	var b promptBuilder
	b.section("The user's goal", clip(in.goal, goalBudget))
	b.section("Completion condition", clip(in.complete, criterionBudget))
	b.section("Termination condition", clip(in.terminate, criterionBudget))
	b.section("User details (JSON)", detailsJSON(in.details))
	if len(in.history) > 0 {
		h := in.history
		if len(h) > historyLines {
			h = h[len(h)-historyLines:]
		}
		b.section("Steps taken", strings.Join(h, "\n"))
	}
	if in.obs != nil {
		b.pageBlock(r.tag, in.obs, planElementBudget, extractTextBudget/2, true)
	} else {
		b.line("No page is shown: judge from the conditions and the user's details.")
	}
	req := &llm.Request{
		Kind: llm.KindVerify, System: verifySystem,
		Messages: []llm.Message{userParts(m, b.String(), in.obs)},
		Schema:   &llm.Schema{Name: "verdict", JSON: verifySchema},
	}
	resp, err := r.callModel(ctx, m, req, in.label)
	if err != nil {
		return verdict{}, resp, answerErr(ctx, resp, err)
	}
	var v verdict
	if err := json.Unmarshal(resp.JSON, &v); err != nil {
		return verdict{}, resp, fmt.Errorf("the condition check's answer is not a verdict: %v", err)
	}
	v.Status = strings.ToLower(strings.TrimSpace(v.Status))
	switch v.Status {
	case "complete", "terminate", "continue":
	case "completed", "done", "true", "yes":
		v.Status = "complete"
	case "terminated", "fail", "failed":
		v.Status = "terminate"
	default:
		v.Status = "continue"
	}
	if strings.TrimSpace(v.Reasoning) == "" {
		v.Reasoning = "the condition check gave no reason"
	}
	return v, resp, nil
}

// location is the answer of a locate call.
type location struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
}

// locate asks the model for the element an instruction is about. want
// narrows the kind of element ("a field to type into", ...); data is the
// caller's extra context.
func (r *run) locate(ctx context.Context, m llm.Model, obs *page.Observation, instruction, want, value string, data json.RawMessage) (location, error) {
	var b promptBuilder
	b.section("Instruction", clip(instruction, goalBudget))
	b.section("The element wanted", want)
	if value != "" {
		b.section("The value that will be used", clip(value, 500))
	}
	if d := strings.TrimSpace(string(data)); d != "" && d != "null" {
		b.section("Context from the user", clip(d, detailsBudget))
	}
	b.pageBlock(r.tag, obs, locateElementBudget, planTextBudget, true)
	req := &llm.Request{
		Kind: llm.KindLocate, System: locateSystem,
		Messages: []llm.Message{userParts(m, b.String(), obs)},
		Schema:   &llm.Schema{Name: "element", JSON: locateSchema},
	}
	resp, err := r.callModel(ctx, m, req, "")
	if err != nil {
		return location{}, answerErr(ctx, resp, err)
	}
	var loc location
	if err := json.Unmarshal(resp.JSON, &loc); err != nil {
		return location{}, fmt.Errorf("the model's answer does not name an element: %v", err)
	}
	loc.ID = strings.Trim(strings.TrimSpace(loc.ID), "[]")
	return loc, nil
}

// promptModel sends a free prompt: with a schema, the answer is JSON
// checked against it (repaired once); else it is the text as a JSON
// string.
func (r *run) promptModel(ctx context.Context, m llm.Model, prompt string, schema *dataSchema, label string) (json.RawMessage, []string, error) {
	req := &llm.Request{Kind: llm.KindPrompt, System: promptSystem}
	text := prompt
	if schema != nil {
		if schema.description != "" {
			text += "\n\nAnswer with JSON shaped like this description: " + schema.description
		}
		req.Schema = schema.llmSchema()
		if req.Schema == nil {
			req.Schema = &llm.Schema{Name: "answer", JSON: json.RawMessage(`{}`)}
		}
	}
	req.Messages = []llm.Message{llm.UserText(text)}
	resp, err := r.callModel(ctx, m, req, label)
	if err != nil {
		return nil, nil, answerErr(ctx, resp, err)
	}
	if schema == nil {
		b, err := json.Marshal(resp.Text)
		return b, nil, err
	}
	data, verrs, err := r.checkAndRepair(ctx, m, req, resp, schema, label)
	return data, verrs, err
}

// judgeStatement asks whether a statement holds on the page (run_action
// validate).
func (r *run) judgeStatement(ctx context.Context, m llm.Model, statement string, obs *page.Observation) (bool, string, error) {
	var b promptBuilder
	b.section("Statement", clip(statement, goalBudget))
	b.pageBlock(r.tag, obs, planElementBudget, extractTextBudget/2, true)
	req := &llm.Request{
		Kind: llm.KindVerify, System: validateSystem,
		Messages: []llm.Message{userParts(m, b.String(), obs)},
		Schema:   &llm.Schema{Name: "validation", JSON: validateSchema},
	}
	resp, err := r.callModel(ctx, m, req, "")
	if err != nil {
		return false, "", answerErr(ctx, resp, err)
	}
	var v struct {
		Valid     any    `json:"valid"`
		Reasoning string `json:"reasoning"`
	}
	if err := json.Unmarshal(resp.JSON, &v); err != nil {
		return false, "", fmt.Errorf("the model's answer is not a validation: %v", err)
	}
	switch x := v.Valid.(type) {
	case bool:
		return x, v.Reasoning, nil
	case string:
		return strings.EqualFold(strings.TrimSpace(x), "true") || strings.EqualFold(strings.TrimSpace(x), "yes"), v.Reasoning, nil
	}
	return false, v.Reasoning, fmt.Errorf("the model's answer has no valid field: %s", clip(string(resp.JSON), 200))
}
