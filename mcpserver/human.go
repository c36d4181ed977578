package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
)

// The answers to runs paused by a human_interaction block. An assistant
// answers only when the person it works for tells it to: the tools say so.

// HumanAnswerInput is the input of skyvern_run_approve and
// skyvern_run_reject.
type HumanAnswerInput struct {
	RunID   string `json:"run_id" jsonschema:"id of the paused agent run (wr_...)"`
	Comment string `json:"comment,omitempty" jsonschema:"a comment kept with the answer; a rejection's comment is also in the block's failure reason"`
}

// HumanQuestionInput is the input of skyvern_run_question.
type HumanQuestionInput struct {
	RunID string `json:"run_id" jsonschema:"id of the agent run (wr_...)"`
}

// HumanQuestionResult is a run's question and its answer once given.
type HumanQuestionResult struct {
	RunID              string   `json:"run_id"`
	BlockLabel         string   `json:"block_label" jsonschema:"the human_interaction block that asks"`
	Instructions       string   `json:"instructions" jsonschema:"what the person is asked to review"`
	PositiveDescriptor string   `json:"positive_descriptor" jsonschema:"the name of the positive answer (skyvern_run_approve)"`
	NegativeDescriptor string   `json:"negative_descriptor" jsonschema:"the name of the negative answer (skyvern_run_reject)"`
	Recipients         []string `json:"recipients" jsonschema:"who was emailed the question"`
	State              string   `json:"state" jsonschema:"waiting, approved, rejected or unanswered"`
	AskedAt            string   `json:"asked_at" jsonschema:"when the run paused (UTC)"`
	ExpiresAt          string   `json:"expires_at" jsonschema:"when the block stops waiting and fails (UTC)"`
	AnsweredAt         string   `json:"answered_at,omitempty" jsonschema:"when the answer was given (UTC)"`
	Comment            string   `json:"comment,omitempty" jsonschema:"the comment given with the answer"`
}

func questionResult(q *client.HumanInteraction) HumanQuestionResult {
	out := HumanQuestionResult{RunID: q.RunID, BlockLabel: q.BlockLabel, Instructions: q.Instructions,
		PositiveDescriptor: q.PositiveDescriptor, NegativeDescriptor: q.NegativeDescriptor, Recipients: q.Recipients,
		State: string(q.State), AskedAt: q.AskedAt.String(), ExpiresAt: q.ExpiresAt.String()}
	if out.Recipients == nil {
		out.Recipients = []string{}
	}
	if q.AnsweredAt != nil {
		out.AnsweredAt = q.AnsweredAt.String()
	}
	if q.Comment != nil {
		out.Comment = *q.Comment
	}
	return out
}

// humanTools show and answer the questions of runs paused by a
// human_interaction block.
type humanTools struct {
	runs *client.RunsService
}

func (t *humanTools) register(s *mcp.Server) {
	runID := nonEmptyArgs("run_id")
	addTool(s, spec{
		name:  "skyvern_run_question",
		title: "Show what a paused run asks",
		description: "Show the question of a run paused by a human_interaction block (status paused): the instructions, " +
			"the two answers (positive_descriptor, negative_descriptor), until when it waits (expires_at), " +
			"and the answer once given (state approved, rejected or unanswered)." + ownTool,
		annotations: readOnly(),
		refine:      runID,
	}, t.runQuestion)
	addTool(s, spec{
		name:  "skyvern_run_approve",
		title: "Approve a paused run",
		description: "Answer a run paused by a human_interaction block with its positive answer: the block completes and the run goes on. " +
			"Only when the person you work for has read the question (skyvern_run_question) and told you to approve." + ownTool,
		annotations: writes(false),
		refine:      runID,
	}, t.runApprove)
	addTool(s, spec{
		name:  "skyvern_run_reject",
		title: "Reject a paused run",
		description: "Answer a run paused by a human_interaction block with its negative answer: the block fails with a reason " +
			"saying it was rejected (and the comment). Only when the person you work for has told you to reject." + ownTool,
		annotations: writes(false),
		refine:      runID,
	}, t.runReject)
}

func (t *humanTools) runQuestion(ctx context.Context, in HumanQuestionInput) (*HumanQuestionResult, error) {
	return answerWith(questionResult)(t.runs.Interaction(ctx, in.RunID))
}

func (t *humanTools) runApprove(ctx context.Context, in HumanAnswerInput) (*HumanQuestionResult, error) {
	return answerWith(questionResult)(t.runs.Approve(ctx, in.RunID, &client.HumanAnswerRequest{Comment: in.Comment}))
}

func (t *humanTools) runReject(ctx context.Context, in HumanAnswerInput) (*HumanQuestionResult, error) {
	return answerWith(questionResult)(t.runs.Reject(ctx, in.RunID, &client.HumanAnswerRequest{Comment: in.Comment}))
}
