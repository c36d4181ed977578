package agent

// error_code_mapping (see "How a goal ends" in docs/blocks.md): when a run
// or a block does not complete (failed, terminated or timed out; not
// canceled), and the user gave codes, one model call matches the situation
// against the codes' descriptions: the failure reason, the last steps, and
// the page as it is now when the browser still answers. The answer's schema
// lists the user's codes as an enum; codes the user did not define are
// dropped all the same (a provider without structured output may ignore
// the enum), after matching one that differs only in case. The best match becomes output.error; every match
// is recorded in the run's errors. Classification never changes the run's
// status: when it fails, the run simply has no code.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/llm"
)

// classifyLookTimeout bounds the look at the page before a classification.
const classifyLookTimeout = 5 * time.Second

// errorMatch is one code the model chose.
type errorMatch struct {
	Code       string  `json:"error_code"`
	Reasoning  string  `json:"reasoning"`
	Confidence float64 `json:"confidence"`
}

// FailureInfo is what classification knows of a failure.
type FailureInfo struct {
	// Goal is what was to be done; Reason why it was not.
	Goal, Reason string
	// History is the last steps. The run's parameters are not given:
	// matching a failure to the user's codes needs none of them.
	History []string
	// Label is the block's ("" for a task run).
	Label string
}

// Classify returns the user's code that best describes the failure, ""
// when none fits or there are no codes. It records the matches in the
// run's errors.
func (a *Agent) Classify(ctx context.Context, m llm.Model, codes map[string]string, f FailureInfo) string {
	if len(codes) == 0 || m == nil || ctx.Err() != nil {
		return ""
	}
	var obs *page.Observation
	if a.browser != nil {
		lctx, cancel := context.WithTimeout(ctx, classifyLookTimeout)
		obs, _, _ = a.browser.Observe(lctx, false)
		cancel()
	}
	var b promptBuilder
	b.section("The user's error codes", codesJSON(codes))
	b.section("The goal", text.Clip(f.Goal, goalBudget))
	b.section("Why it was not reached", text.Clip(f.Reason, 2000))
	h := f.History
	if len(h) > historyLines {
		h = h[len(h)-historyLines:]
	}
	b.section("The last steps", strings.Join(h, "\n"))
	if obs != nil {
		b.pageBlock(a.tag, obs, planElementBudget/2, classifyTextBudget, true)
	} else {
		b.line("The page cannot be shown (the browser is gone).")
	}
	req := &llm.Request{
		Kind: llm.KindClassify, System: classifySystem,
		Messages: []llm.Message{userParts(m, b.String(), obs)},
		Schema:   &llm.Schema{Name: "error_codes", JSON: classifySchema(codes)},
	}
	resp, err := a.call(ctx, m, req, f.Label)
	if err != nil {
		a.logger.Warn("the error codes could not be matched", "block", f.Label, "error", err)
		return ""
	}
	var ans struct {
		Errors []errorMatch `json:"errors"`
	}
	if err := json.Unmarshal(resp.JSON, &ans); err != nil {
		a.logger.Warn("the error code answer is not usable", "block", f.Label, "error", err)
		return ""
	}
	best, bestConf := "", -1.0
	for _, e := range ans.Errors {
		code, ok := userCode(codes, e.Code)
		if !ok {
			continue // only the user's codes
		}
		a.steps.AddError(map[string]any{"error_code": code, "reasoning": e.Reasoning, "confidence_float": e.Confidence, "block_label": f.Label})
		if e.Confidence > bestConf {
			best, bestConf = code, e.Confidence
		}
	}
	return best
}

// userCode is the user's code an answer names: exactly, else the one
// code that differs from it only in case and surrounding spaces (a model
// may write "Out_Of_Stock" for "out_of_stock"). ok is false for any other.
func userCode(codes map[string]string, answered string) (code string, ok bool) {
	if _, ok := codes[answered]; ok {
		return answered, true
	}
	answered = strings.TrimSpace(answered)
	found := 0
	for k := range codes {
		if strings.EqualFold(strings.TrimSpace(k), answered) {
			code, found = k, found+1
		}
	}
	return code, found == 1
}

// Classifiable reports whether a failure should be matched against error
// codes: not a canceled run, not a model that cannot be reached (the
// classification would fail the same way).
func Classifiable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var me *ModelError
	return !errors.As(err, &me)
}
