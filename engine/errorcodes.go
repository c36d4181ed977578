package engine

// error_code_mapping (api-v1.md §7.3): when a run or a block does not
// complete (failed, terminated or timed out; not canceled), and the user
// gave codes, one model call matches the situation against the codes'
// descriptions: the failure reason, the last steps, and the page as it is
// now when the browser still answers. Codes the user did not define are
// dropped. The best match becomes output.error; every match is recorded in
// the run's errors. Classification never changes the run's status: when it
// fails, the run simply has no code.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/abctl/abctl/engine/page"
	"github.com/abctl/abctl/llm"
)

// classifyTimeout bounds the look at the page before a classification.
const classifyLookTimeout = 5 * time.Second

// errorMatch is one code the model chose.
type errorMatch struct {
	Code       string  `json:"error_code"`
	Reasoning  string  `json:"reasoning"`
	Confidence float64 `json:"confidence"`
}

// failureInfo is what classification knows of a failure.
type failureInfo struct {
	goal    string
	details map[string]any
	reason  string
	history []string
	label   string
}

// classify returns the user's code that best describes the failure, ""
// when none fits or there are no codes. It records the matches in the
// run's errors.
func (r *run) classify(ctx context.Context, m llm.Model, codes map[string]string, f failureInfo) string {
	if len(codes) == 0 || m == nil || ctx.Err() != nil {
		return ""
	}
	var obs *page.Observation
	if r.sess != nil && r.sess.Err() == nil {
		lctx, cancel := context.WithTimeout(ctx, classifyLookTimeout)
		if pg, err := r.page(lctx); err == nil {
			obs, _ = r.look(lctx, pg)
		}
		cancel()
	}
	var b promptBuilder
	b.section("The user's error codes", codesJSON(codes))
	b.section("The goal", clip(f.goal, goalBudget))
	b.section("Why it was not reached", clip(f.reason, 2000))
	b.section("User details (JSON)", detailsJSON(f.details))
	h := f.history
	if len(h) > historyLines {
		h = h[len(h)-historyLines:]
	}
	b.section("The last steps", strings.Join(h, "\n"))
	if obs != nil {
		b.pageBlock(r.tag, obs, planElementBudget/2, classifyTextBudget, true)
	} else {
		b.line("The page cannot be shown (the browser is gone).")
	}
	req := &llm.Request{
		Kind: llm.KindClassify, System: classifySystem,
		Messages: []llm.Message{userParts(m, b.String(), obs)},
		Schema:   &llm.Schema{Name: "error_codes", JSON: classifySchema},
	}
	resp, err := r.callModel(ctx, m, req, f.label)
	if err != nil {
		r.e.log.Warn("the error codes could not be matched", "block", f.label, "error", err)
		return ""
	}
	var ans struct {
		Errors []errorMatch `json:"errors"`
	}
	if err := json.Unmarshal(resp.JSON, &ans); err != nil {
		r.e.log.Warn("the error code answer is not usable", "block", f.label, "error", err)
		return ""
	}
	best, bestConf := "", -1.0
	for _, e := range ans.Errors {
		code := strings.TrimSpace(e.Code)
		if _, ok := codes[code]; !ok {
			continue // only the user's codes
		}
		r.addError(map[string]any{"error_code": code, "reasoning": e.Reasoning, "confidence_float": e.Confidence, "block_label": f.label})
		if e.Confidence > bestConf {
			best, bestConf = code, e.Confidence
		}
	}
	return best
}

// classifiable reports whether a failure should be matched against error
// codes: not a canceled run, not a model that cannot be reached (the
// classification would fail the same way).
func classifiable(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var me *modelError
	return !errors.As(err, &me)
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
