package agent

// The model calls: planning a step, checking conditions, locating one
// element, checking a statement, and free prompts. Extraction is in
// extract.go, error codes in errorcodes.go. Every call goes through call,
// which records it in the run's step log.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/llm"
)

// call makes a model call and records it.
func (a *Agent) call(ctx context.Context, m llm.Model, req *llm.Request, block string) (*llm.Response, error) {
	resp, err := m.Complete(ctx, req)
	a.steps.Call(req.Kind, m, block, resp, err)
	return resp, err
}

// userParts is the text of a user message with the observation's
// screenshot when the model reads images: a copy with the element ids drawn
// on it (page.MarkScreenshot), for prompts that list the elements with
// their ids. The observation's screenshot, which the run keeps, stays
// clean. Should the copy fail (a screenshot that does not decode), the
// model gets the clean screenshot: the ids are in the text anyway.
func userParts(m llm.Model, s string, obs *page.Observation) llm.Message {
	parts := []llm.Part{llm.Text(s)}
	if obs != nil && len(obs.Screenshot) > 0 && m.Info().Capabilities.Vision {
		shot := obs.Screenshot
		if marked, err := page.MarkScreenshot(obs); err == nil {
			shot = marked
		}
		parts = append(parts, llm.Image(shot))
	}
	return llm.User(parts...)
}

// userPartsUnmarked is userParts with the clean screenshot, for prompts
// that show no ids (extraction): marks there would only hide the page.
func userPartsUnmarked(m llm.Model, s string, obs *page.Observation) llm.Message {
	parts := []llm.Part{llm.Text(s)}
	if obs != nil && len(obs.Screenshot) > 0 && m.Info().Capabilities.Vision {
		parts = append(parts, llm.Image(obs.Screenshot))
	}
	return llm.User(parts...)
}

// answerErr turns a failed call into the error the loop expects: a
// *ModelError for infrastructure trouble, a plain error for an answer that
// held no JSON (the step may be tried again).
func answerErr(ctx context.Context, resp *llm.Response, err error) error {
	if errors.Is(err, llm.ErrNoJSON) {
		answer := ""
		if resp != nil {
			answer = resp.Text
		}
		return fmt.Errorf("no JSON in the answer %q", text.Clip(strings.TrimSpace(answer), 200))
	}
	return wrapModelErr(ctx, err)
}

// plan asks the model for the actions of step n, adding the size of the
// prompt and the call's time and tokens to the step's record.
func (l *loop) plan(ctx context.Context, s *steplog.Step, n int) (*plan, error) {
	g := l.g
	var b promptBuilder
	goalText := g.Navigation
	if strings.TrimSpace(goalText) == "" {
		goalText = g.Extraction
	}
	b.section("Goal", text.Clip(goalText, goalBudget))
	b.section("The goal is reached when", text.Clip(g.CompleteCriterion, criterionBudget))
	b.section("Terminate when", text.Clip(g.TerminateCriterion, criterionBudget))
	if g.CompleteOnDownload {
		b.line("The goal is reached as soon as a file has been downloaded.")
	}
	if g.Extraction != "" && g.Navigation != "" {
		b.section("Once the goal is reached, a separate step reads this information from the page where you complete: complete with \"data\": null, on the page that shows it", text.Clip(g.Extraction, criterionBudget))
	}
	b.section("User details (JSON)", DetailsJSON(g.Details))
	hist := l.history
	if len(hist) > historyLines {
		hist = hist[len(hist)-historyLines:]
		b.section("Steps so far (the latest)", strings.Join(hist, "\n"))
	} else {
		b.section("Steps so far", strings.Join(hist, "\n"))
	}
	if l.thought != "" {
		b.section("Your note from the previous step", text.Clip(l.thought, 600))
	}
	if len(l.notes) > 0 {
		b.section("Notes", "- "+strings.Join(l.notes, "\n- "))
		l.notes = nil
	}
	b.line(fmt.Sprintf("This is step %d of at most %d. Today is %s (UTC).", n, g.MaxSteps, time.Now().UTC().Format("Monday 2 January 2006")))
	b.pageBlock(l.a.tag, l.obs, planElementBudget, planTextBudget, true)
	prompt := b.String()
	req := &llm.Request{
		Kind: llm.KindPlan, System: planSystem,
		Messages:  []llm.Message{userParts(g.Model, prompt, l.obs)},
		Schema:    &llm.Schema{Name: "browser_actions", JSON: planSchema},
		MaxTokens: 2000,
	}
	s.PromptChars = len(planSystem) + len(prompt)
	resp, err := l.a.call(ctx, g.Model, req, g.Label)
	s.AddModel(resp)
	if err != nil {
		return nil, answerErr(ctx, resp, err)
	}
	return parsePlan(resp.JSON)
}

// Verdict is the answer of a condition check.
type Verdict struct {
	Status    string `json:"status"` // complete, terminate or continue
	Reasoning string `json:"reasoning"`
}

// Conditions are what a condition check looks at.
type Conditions struct {
	// Goal is the user's goal; Complete and Terminate the conditions.
	Goal                string
	Complete, Terminate string
	// Details are the user's values; History the steps taken, shown
	// when given.
	Details map[string]any
	History []string
	// Obs is the page, nil to judge without one.
	Obs *page.Observation
	// Label is the block's, for the step log.
	Label string
}

// verify checks the loop's page against the goal's criteria, adding the
// call's time and tokens to the step's record.
func (l *loop) verify(ctx context.Context, s *steplog.Step) (Verdict, error) {
	g := l.g
	c := Conditions{Goal: g.Navigation, Complete: g.CompleteCriterion, Terminate: g.TerminateCriterion, Details: g.Details, Obs: l.obs, Label: g.Label}
	if g.HistoryInVerify {
		c.History = l.history
	}
	v, resp, err := l.a.Judge(ctx, g.Model, c)
	s.AddModel(resp)
	return v, err
}

// Judge asks whether the completion or the termination condition holds.
func (a *Agent) Judge(ctx context.Context, m llm.Model, c Conditions) (Verdict, *llm.Response, error) {
	var b promptBuilder
	b.section("The user's goal", text.Clip(c.Goal, goalBudget))
	b.section("Completion condition", text.Clip(c.Complete, criterionBudget))
	b.section("Termination condition", text.Clip(c.Terminate, criterionBudget))
	b.section("User details (JSON)", DetailsJSON(c.Details))
	if len(c.History) > 0 {
		h := c.History
		if len(h) > historyLines {
			h = h[len(h)-historyLines:]
		}
		b.section("Steps taken", strings.Join(h, "\n"))
	}
	if c.Obs != nil {
		b.pageBlock(a.tag, c.Obs, planElementBudget, extractTextBudget/2, true)
	} else {
		b.line("No page is shown: judge from the conditions and the user's details.")
	}
	req := &llm.Request{
		Kind: llm.KindVerify, System: verifySystem(c),
		Messages: []llm.Message{userParts(m, b.String(), c.Obs)},
		Schema:   &llm.Schema{Name: "verdict", JSON: verifySchema},
	}
	resp, err := a.call(ctx, m, req, c.Label)
	if err != nil {
		return Verdict{}, resp, answerErr(ctx, resp, err)
	}
	var v Verdict
	if err := json.Unmarshal(resp.JSON, &v); err != nil {
		return Verdict{}, resp, fmt.Errorf("the condition check's answer is not a verdict: %v", err)
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

// Location is the answer of a locate call.
type Location struct {
	// ID is the element's id, "" when no element fits.
	ID string `json:"id"`
	// Text is the value to type or the option to choose that the
	// instruction implies, "" for none.
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
}

// Locate asks the model for the element an instruction is about. want
// narrows the kind of element ("the text field to type into", ...); value
// is the value that will be used, data the caller's extra context.
func (a *Agent) Locate(ctx context.Context, m llm.Model, obs *page.Observation, instruction, want, value string, data json.RawMessage) (Location, error) {
	var b promptBuilder
	b.section("Instruction", text.Clip(instruction, goalBudget))
	b.section("The element wanted", want)
	if value != "" {
		b.section("The value that will be used", text.Clip(value, 500))
	}
	if d := strings.TrimSpace(string(data)); d != "" && d != "null" {
		b.section("Context from the user", text.Clip(d, detailsBudget))
	}
	b.pageBlock(a.tag, obs, locateElementBudget, planTextBudget, true)
	req := &llm.Request{
		Kind: llm.KindLocate, System: locateSystem,
		Messages: []llm.Message{userParts(m, b.String(), obs)},
		Schema:   &llm.Schema{Name: "element", JSON: locateSchema},
	}
	resp, err := a.call(ctx, m, req, "")
	if err != nil {
		return Location{}, answerErr(ctx, resp, err)
	}
	var loc Location
	if err := json.Unmarshal(resp.JSON, &loc); err != nil {
		return Location{}, fmt.Errorf("the model's answer does not name an element: %v", err)
	}
	loc.ID = page.CleanID(loc.ID)
	return loc, nil
}

// Prompt sends a free prompt: with a schema, the answer is JSON checked
// against it (repaired once, the errors that remain returned and recorded
// in the run's errors); else it is the text as a JSON string.
func (a *Agent) Prompt(ctx context.Context, m llm.Model, prompt string, schema *Schema, label string) (json.RawMessage, []string, error) {
	req := &llm.Request{Kind: llm.KindPrompt, System: promptSystem}
	msg := prompt
	if schema != nil {
		if schema.description != "" {
			msg += "\n\nAnswer with JSON shaped like this description: " + schema.description
		}
		req.Schema = schema.llmSchema()
		if req.Schema == nil {
			req.Schema = &llm.Schema{Name: "answer", JSON: json.RawMessage(`{}`)}
		}
	}
	req.Messages = []llm.Message{llm.UserText(msg)}
	resp, err := a.call(ctx, m, req, label)
	if err != nil {
		return nil, nil, answerErr(ctx, resp, err)
	}
	if schema == nil {
		b, err := json.Marshal(resp.Text)
		return b, nil, err
	}
	return a.checkAndRepair(ctx, m, req, resp, schema, label)
}

// JudgeStatement asks whether a statement holds on the page, and why.
func (a *Agent) JudgeStatement(ctx context.Context, m llm.Model, statement string, obs *page.Observation) (bool, string, error) {
	var b promptBuilder
	b.section("Statement", text.Clip(statement, goalBudget))
	b.pageBlock(a.tag, obs, planElementBudget, extractTextBudget/2, true)
	req := &llm.Request{
		Kind: llm.KindVerify, System: validateSystem,
		Messages: []llm.Message{userParts(m, b.String(), obs)},
		Schema:   &llm.Schema{Name: "validation", JSON: validateSchema},
	}
	resp, err := a.call(ctx, m, req, "")
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
	return false, v.Reasoning, fmt.Errorf("the model's answer has no valid field: %s", text.Clip(string(resp.JSON), 200))
}
