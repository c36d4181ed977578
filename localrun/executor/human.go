package executor

import (
	"context"
	"time"
)

// HumanAsker asks people to approve or reject what an agent run is about
// to do: the human_interaction blocks of its agent. The daemon gives every
// agent run its own (Job.Human); while it waits for an answer, the run's
// status is paused.
type HumanAsker interface {
	// Ask puts q to people and waits for the first answer. It moves the
	// run to paused, then calls asked with a few lines of text telling a
	// person how to answer (the CLI commands, the API routes: the executor
	// puts them in the email it sends), then waits until an answer comes
	// or ctx ends (the block's timeout, the run's cancellation), returning
	// ctx's error in that case. When asked returns an error, Ask stops
	// waiting and returns that error. However Ask returns, the run is no
	// longer paused.
	Ask(ctx context.Context, q HumanQuestion, asked func(howToAnswer string) error) (HumanAnswer, error)
}

// HumanQuestion is what a human_interaction block asks, its templates
// rendered.
type HumanQuestion struct {
	// Block is the label of the block asking.
	Block string
	// Instructions say what the person is asked to review; the
	// descriptors name the two answers ("Approve", "Reject").
	Instructions       string
	PositiveDescriptor string
	NegativeDescriptor string
	// Recipients are the email addresses the question is sent to (none:
	// no email).
	Recipients []string
	// Timeout is how long the block waits for an answer.
	Timeout time.Duration
}

// HumanAnswer is a person's answer to a HumanQuestion.
type HumanAnswer struct {
	// Approved is true for the positive answer, false for the negative
	// one.
	Approved bool
	// Comment is what the person added, "" for nothing.
	Comment string
	// At is when the answer was given.
	At time.Time
}
