package client

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// TimelineEntry is one entry of a run's timeline
// (GET /v1/runs/{run_id}/timeline). Type says which member is set, as in
// the hosted service's timeline, whose entries are "block" (a block of a
// workflow run, with its nested Children) and "thought" (a task-v2
// planning note); abctl's daemon answers "step" entries, one per step of
// the agent loop. Unknown types decode with their members left nil.
//
// The hosted service's block and thought objects are kept as raw JSON:
// their shape is not part of the documented contract.
type TimelineEntry struct {
	Type TimelineEntryType `json:"type"`
	// Step is set for TimelineStepEntry (the abctl daemon).
	Step *TimelineStep `json:"step,omitempty"`
	// Block and Thought are set by the hosted service for its entry
	// types; Children are the entries nested under a block.
	Block      json.RawMessage  `json:"block,omitempty"`
	Thought    json.RawMessage  `json:"thought,omitempty"`
	Children   []*TimelineEntry `json:"children,omitempty"`
	CreatedAt  Time             `json:"created_at"`
	ModifiedAt Time             `json:"modified_at"`
}

// TimelineEntryType says what a TimelineEntry describes.
type TimelineEntryType string

// Timeline entry types.
const (
	TimelineStepEntry    TimelineEntryType = "step"    // abctl: one step of the agent loop
	TimelineBlockEntry   TimelineEntryType = "block"   // hosted service: a block of a workflow run
	TimelineThoughtEntry TimelineEntryType = "thought" // hosted service: a planning note
)

// TimelineStep is one step of the agent loop: what the page was, what the
// model thought and decided, what was done and how it went, and where the
// time and tokens went.
type TimelineStep struct {
	// Number is the run's step count once this step was done (from 1).
	Number int `json:"number"`
	// BlockLabel is the label of the block the step belongs to; nil in a
	// task run.
	BlockLabel *string `json:"block_label"`
	// URL is the page the step acted on.
	URL string `json:"url"`
	// Thought is the model's note on the page and its plan.
	Thought string `json:"thought"`
	// Actions says, for people, what each action was and how it went, in
	// order: `click [e5] button "Sign in": ok, loaded /account.html`.
	Actions []string `json:"actions"`
	// Decision is how the step ended: "continue", "complete", "terminate",
	// "unusable answer", ...
	Decision  string      `json:"decision"`
	TimingsMS StepTimings `json:"timings_ms"`
	Tokens    StepTokens  `json:"tokens"`
}

// StepTimings are the phases of a step, in milliseconds: waiting for the
// page to settle, reading it, waiting for the model, acting.
type StepTimings struct {
	Settle  float64 `json:"settle"`
	Observe float64 `json:"observe"`
	Model   float64 `json:"model"`
	Act     float64 `json:"act"`
}

// StepTokens are the model's token counts for a step.
type StepTokens struct {
	Input  int `json:"input"`
	Output int `json:"output"`
}

// Summary is the step in one line for people: its first action (with a
// count of the others) and, when it is not "continue", its decision; the
// decision alone for a step without actions.
func (s *TimelineStep) Summary() string {
	if s == nil {
		return ""
	}
	line := ""
	if len(s.Actions) > 0 {
		line = s.Actions[0]
		if n := len(s.Actions) - 1; n == 1 {
			line += " (+1 more action)"
		} else if n > 1 {
			line += " (+" + strconv.Itoa(n) + " more actions)"
		}
	}
	if s.Decision != "" && (s.Decision != "continue" || line == "") {
		if line != "" {
			line += " → "
		}
		line += s.Decision
	}
	return line
}

// LatestStep returns the step with the highest number in a timeline, or
// nil when it has no step entries (a hosted service's timeline, or a run
// that took no step yet).
func LatestStep(timeline []*TimelineEntry) *TimelineStep {
	var latest *TimelineStep
	for _, e := range timeline {
		if e != nil && e.Step != nil && (latest == nil || e.Step.Number > latest.Number) {
			latest = e.Step
		}
	}
	return latest
}

// Timeline returns a run's timeline, newest first
// (GET /v1/runs/{run_id}/timeline). The abctl daemon keeps the latest 200
// steps of every run; the hosted service answers its own entry types for
// workflow and task-v2 runs (see TimelineEntry).
//
// A service without the route (a 404 "Not Found" for the path itself, as
// FastAPI and the abctl daemon answer unknown routes) gives a nil timeline
// and no error, so that callers showing progress need not tell services
// apart; an unknown run is still an *Error matching ErrNotFound.
func (s *RunsService) Timeline(ctx context.Context, runID string, opts ...Option) ([]*TimelineEntry, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	var out []*TimelineEntry
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/runs/%s/timeline", runID), idempotent: true}, &out, opts)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.StatusCode == 404 && e.Detail == "Not Found" {
			return nil, nil
		}
		return nil, err
	}
	if out == nil {
		out = []*TimelineEntry{}
	}
	return out, nil
}
