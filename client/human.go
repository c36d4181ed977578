package client

import "context"

// HumanInteraction is the question a run's human_interaction block puts
// to people, and its answer once given. While a run waits for the answer,
// its status is paused; Approve or Reject answers it.
//
// The hosted service answers these blocks from its own web application and
// has no API for them: these routes are the abctl daemon's own
// (GET /v1/runs/{run_id}/interaction, POST /v1/runs/{run_id}/approve and
// /reject).
type HumanInteraction struct {
	RunID string `json:"run_id"`
	// BlockLabel is the label of the block that asks.
	BlockLabel string `json:"block_label"`
	// Instructions say what to review; the descriptors name the two
	// answers (by default "Approve" and "Reject").
	Instructions       string                `json:"instructions"`
	PositiveDescriptor string                `json:"positive_descriptor"`
	NegativeDescriptor string                `json:"negative_descriptor"`
	Recipients         []string              `json:"recipients"`
	State              HumanInteractionState `json:"state"`
	// AskedAt is when the run paused; ExpiresAt when the block stops
	// waiting (its timeout_seconds) and fails.
	AskedAt   Time `json:"asked_at"`
	ExpiresAt Time `json:"expires_at"`
	// AnsweredAt and Comment are the answer's, once given.
	AnsweredAt *Time   `json:"answered_at"`
	Comment    *string `json:"comment"`
}

// HumanInteractionState says where a HumanInteraction stands.
type HumanInteractionState string

// Human interaction states.
const (
	HumanWaiting  HumanInteractionState = "waiting"  // the run is paused until an answer comes
	HumanApproved HumanInteractionState = "approved" // answered with the positive descriptor: the block completed
	HumanRejected HumanInteractionState = "rejected" // answered with the negative descriptor: the block failed
	// HumanUnanswered: the wait ended without an answer (the block's
	// timeout, the run canceled, the daemon stopped, its email could not
	// be sent); the run's failure_reason says which.
	HumanUnanswered HumanInteractionState = "unanswered"
)

// HumanAnswerRequest is the body of Approve and Reject.
type HumanAnswerRequest struct {
	// Comment is kept with the answer and is the block's output "comment";
	// a rejection's comment is also in the block's failure reason.
	Comment string `json:"comment,omitempty"`
}

// Interaction returns the latest question a run's human_interaction blocks
// asked (GET /v1/runs/{run_id}/interaction): what a person is asked while
// the run is paused, or how the last question was answered. A run that
// never asked is an *Error matching ErrNotFound. This is an abctl daemon
// route (see HumanInteraction).
func (s *RunsService) Interaction(ctx context.Context, runID string, opts ...Option) (*HumanInteraction, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	out := new(HumanInteraction)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/runs/%s/interaction", runID), idempotent: true}, out, opts)
	return nil2(out, err)
}

// Approve answers a paused run's question with its positive descriptor
// (POST /v1/runs/{run_id}/approve): its human_interaction block completes
// and the run goes on. req may be nil. A run that is not waiting for an
// answer is an *Error with status 409. This is an abctl daemon route (see
// HumanInteraction).
func (s *RunsService) Approve(ctx context.Context, runID string, req *HumanAnswerRequest, opts ...Option) (*HumanInteraction, error) {
	return s.answer(ctx, runID, "approve", req, opts)
}

// Reject answers a paused run's question with its negative descriptor
// (POST /v1/runs/{run_id}/reject): its human_interaction block fails with
// a reason saying it was rejected, and the run goes on as the block's
// continue_on_failure says. Otherwise as Approve.
func (s *RunsService) Reject(ctx context.Context, runID string, req *HumanAnswerRequest, opts ...Option) (*HumanInteraction, error) {
	return s.answer(ctx, runID, "reject", req, opts)
}

func (s *RunsService) answer(ctx context.Context, runID, verb string, req *HumanAnswerRequest, opts []Option) (*HumanInteraction, error) {
	if err := requireID("run id", runID); err != nil {
		return nil, err
	}
	if req == nil {
		req = &HumanAnswerRequest{}
	}
	out := new(HumanInteraction)
	// Not retried: a second answer to a run that went on is a 409, which
	// would hide that the first one was taken.
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/runs/%s/"+verb, runID), body: req}, out, opts)
	return nil2(out, err)
}
