package client

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
)

// TimelineEntry is one entry of a run's timeline
// (GET /v1/runs/{run_id}/timeline), the hosted service's
// WorkflowRunTimeline: Type says which member is set, Block (a block
// execution of the run) or Thought (a decision of the agent loop, under
// the block it was taken in). Children are the entries nested under a
// block: the blocks a loop ran, and the block's thoughts, newest first.
type TimelineEntry struct {
	Type       TimelineEntryType `json:"type"`
	Block      *RunBlock         `json:"block"`
	Thought    *Thought          `json:"thought"`
	Children   []*TimelineEntry  `json:"children"`
	CreatedAt  Time              `json:"created_at"`
	ModifiedAt Time              `json:"modified_at"`
}

// TimelineEntryType says what a TimelineEntry describes.
type TimelineEntryType string

// Timeline entry types.
const (
	TimelineBlockEntry   TimelineEntryType = "block"   // a block execution
	TimelineThoughtEntry TimelineEntryType = "thought" // a decision of the agent loop
)

// RunBlock is one execution of a block of a run, as the timeline shows it
// (the hosted service's WorkflowRunBlock). A task run's timeline has one,
// standing for the task. The hosted service sends more members (actions,
// descriptors, branch results); they are not decoded here.
type RunBlock struct {
	WorkflowRunBlockID string `json:"workflow_run_block_id"`
	WorkflowRunID      string `json:"workflow_run_id"`
	OrganizationID     string `json:"organization_id"`
	// ParentWorkflowRunBlockID is the loop block execution this one ran
	// in; nil at the top level.
	ParentWorkflowRunBlockID *string   `json:"parent_workflow_run_block_id"`
	BlockType                BlockType `json:"block_type"`
	Label                    *string   `json:"label"`
	// Status is running while the block runs, then completed, failed,
	// terminated, canceled or timed_out.
	Status             *string         `json:"status"`
	Output             json.RawMessage `json:"output"`
	ContinueOnFailure  bool            `json:"continue_on_failure"`
	FailureReason      *string         `json:"failure_reason"`
	ErrorCodes         []string        `json:"error_codes"`
	TaskID             *string         `json:"task_id"`
	URL                *string         `json:"url"`
	NavigationGoal     *string         `json:"navigation_goal"`
	DataExtractionGoal *string         `json:"data_extraction_goal"`
	Prompt             *string         `json:"prompt"`
	// Duration is how long the block ran, in seconds; nil while it runs.
	Duration *float64 `json:"duration"`
	// LoopValues are what a loop block iterated over; CurrentValue and
	// CurrentIndex the iteration a block inside a loop ran in.
	LoopValues   []any   `json:"loop_values"`
	CurrentValue *string `json:"current_value"`
	CurrentIndex *int    `json:"current_index"`
	CreatedAt    Time    `json:"created_at"`
	ModifiedAt   Time    `json:"modified_at"`
}

// Thought is a decision of the agent loop as the timeline shows it (the
// hosted service's Thought): the model's note on the page (Thought), what
// was done and how the step ended (Answer), and the step's tokens.
type Thought struct {
	ThoughtID          string  `json:"thought_id"`
	TaskID             string  `json:"task_id"`
	OrganizationID     string  `json:"organization_id"`
	WorkflowRunID      *string `json:"workflow_run_id"`
	WorkflowRunBlockID *string `json:"workflow_run_block_id"`
	Observation        *string `json:"observation"`
	Thought            *string `json:"thought"`
	Answer             *string `json:"answer"`
	ThoughtType        *string `json:"thought_type"`
	InputTokenCount    *int    `json:"input_token_count"`
	OutputTokenCount   *int    `json:"output_token_count"`
	CreatedAt          Time    `json:"created_at"`
	ModifiedAt         Time    `json:"modified_at"`
}

// RunStep is one step of a run, as the abctl daemon records it
// (GET /v1/runs/{run_id}/steps): what the page was, what the model thought
// and decided, what was done and how it went, and where the time and
// tokens went.
type RunStep struct {
	// Number is the run's step count once this step was done (from 1).
	Number int `json:"number"`
	// BlockLabel is the label of the block the step belongs to; nil in a
	// task run. WorkflowRunBlockID is that block execution's id in the
	// run's timeline ("" outside blocks).
	BlockLabel         *string `json:"block_label"`
	WorkflowRunBlockID string  `json:"workflow_run_block_id,omitempty"`
	// URL is the page the step acted on.
	URL string `json:"url"`
	// Thought is the model's note on the page and its plan.
	Thought string `json:"thought"`
	// Actions says, for people, what each action was and how it went, in
	// order: `click [kd] button "Sign in": ok, loaded /account.html`.
	Actions []string `json:"actions"`
	// Decision is how the step ended: "continue", "complete", "terminate",
	// "unusable answer", ...
	Decision  string      `json:"decision"`
	TimingsMS StepTimings `json:"timings_ms"`
	Tokens    StepTokens  `json:"tokens"`
	// CreatedAt is when the step was recorded.
	CreatedAt Time `json:"created_at"`
	// StepID names the step among the run's artifacts: the screenshots of
	// the page before its actions (screenshot_llm) and after them
	// (screenshot_action) carry it as their step_id. "" for a step
	// recorded without screenshots.
	StepID string `json:"step_id,omitempty"`
	// Element is the element the step's first action acted on, where it
	// was on the page; nil when the step acted on none.
	Element *StepElement `json:"element,omitempty"`
	// RecordingOffsetMS is when the step started, in milliseconds from
	// the start of the run's recording; nil when the run was not recorded.
	RecordingOffsetMS *int64 `json:"recording_offset_ms,omitempty"`
}

// StepElement is the element a step acted on: its line as the model read
// it, and its box on the screenshot of the page before the step.
type StepElement struct {
	// Name is the element's line in the page as the model read it:
	// `[kd] button "Sign in"`.
	Name string `json:"name"`
	// Box is x, y, width and height of the element in CSS pixels of the
	// viewport; Viewport is the viewport's width and height in the same
	// pixels, which the screenshots show whole.
	Box      StepBox  `json:"box"`
	Viewport StepSize `json:"viewport"`
}

// StepBox is a rectangle on a page, in CSS pixels.
type StepBox struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// StepSize is a width and height in CSS pixels.
type StepSize struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
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
func (s *RunStep) Summary() string {
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

// LatestStep returns the step with the highest number, or nil when there
// is none.
func LatestStep(steps []*RunStep) *RunStep {
	var latest *RunStep
	for _, s := range steps {
		if s != nil && (latest == nil || s.Number > latest.Number) {
			latest = s
		}
	}
	return latest
}

// Timeline returns a run's timeline (GET /v1/runs/{run_id}/timeline): its
// block executions, newest first, each with the blocks it ran (a loop's)
// and the agent loop's decisions as children. The hosted service answers
// it for workflow and task-v2 runs (a 400 for the others); the abctl
// daemon for every run.
func (s *RunsService) Timeline(ctx context.Context, runID string, opts ...Option) ([]*TimelineEntry, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	var out []*TimelineEntry
	if _, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/runs/%s/timeline", runID), idempotent: true}, &out, opts); err != nil {
		return nil, err
	}
	if out == nil {
		out = []*TimelineEntry{}
	}
	return out, nil
}

// Steps returns a run's steps, newest first (GET /v1/runs/{run_id}/steps,
// an abctl daemon route): every step of its agent loop and its model-free
// blocks, the latest 200 of them.
//
// A service without the route (a 404 "Not Found" for the path itself, as
// FastAPI and the abctl daemon answer unknown routes; the hosted service)
// gives nil steps and no error, so that callers showing progress need not
// tell services apart; an unknown run is still an *Error matching
// ErrNotFound.
func (s *RunsService) Steps(ctx context.Context, runID string, opts ...Option) ([]*RunStep, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	var out []*RunStep
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/runs/%s/steps", runID), idempotent: true}, &out, opts)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.StatusCode == 404 && e.Detail == "Not Found" {
			return nil, nil
		}
		return nil, err
	}
	if out == nil {
		out = []*RunStep{}
	}
	return out, nil
}
