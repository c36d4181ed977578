package runs

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
)

// AnswerOptions are the inputs of `abctl runs approve` and `abctl runs
// reject`.
type AnswerOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// RunID is the paused run to answer, without the run/ of -o name.
	RunID    string
	Approve  bool
	Comment  string
	Question bool // only show the question (abctl runs question)
}

// NewCmdApprove returns `abctl runs approve`. runF, when not nil, is
// called with the validated options instead of answering.
func NewCmdApprove(f *cmdutil.Factory, runF func(*AnswerOptions) error) *cobra.Command {
	return newCmdAnswer(f, runF, true)
}

// NewCmdReject returns `abctl runs reject`. runF, when not nil, is called
// with the validated options instead of answering.
func NewCmdReject(f *cmdutil.Factory, runF func(*AnswerOptions) error) *cobra.Command {
	return newCmdAnswer(f, runF, false)
}

func newCmdAnswer(f *cmdutil.Factory, runF func(*AnswerOptions) error, approve bool) *cobra.Command {
	opts := &AnswerOptions{IO: f.IO, Client: f.Client, Now: f.Now, Approve: approve}
	verb, effect := "approve", "its human_interaction block completes and the run goes on"
	if !approve {
		verb, effect = "reject", "its human_interaction block fails with a reason saying it was\n"+
			"rejected (and the comment), and the run goes on as the block's continue_on_failure says"
	}
	cmd := &cobra.Command{
		Use:   verb + " RUN_ID",
		Short: strings.ToUpper(verb[:1]) + verb[1:] + " what a paused run asks (its human_interaction block)",
		Long: verb + " answers the question a paused run waits on: " + effect + ".\n" +
			"'abctl runs question RUN_ID' shows the question first. A run that is not paused\n" +
			"cannot be answered.",
		Example: "  abctl get runs --status paused\n" +
			"  abctl runs " + verb + " wr_490440779503358000 --comment \"checked the amount\"",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cmdutil.Run(cmd, opts, runF, runAnswer)
		},
	}
	cmd.Flags().StringVar(&opts.Comment, "comment", "", "a comment kept with the answer (the block's output; a rejection's reason)")
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.ActiveRun))
	return cmd
}

// NewCmdQuestion returns `abctl runs question`. runF, when not nil, is
// called with the validated options instead of reading the question.
func NewCmdQuestion(f *cmdutil.Factory, runF func(*AnswerOptions) error) *cobra.Command {
	opts := &AnswerOptions{IO: f.IO, Client: f.Client, Now: f.Now, Question: true}
	cmd := &cobra.Command{
		Use:   "question RUN_ID",
		Short: "Show what a run's human_interaction block asks, or how it was answered",
		Long: "question shows the latest question a run's human_interaction blocks asked: the\n" +
			"instructions, the two answers, until when the block waits, and the answer once given.\n" +
			"Answer a paused run with 'abctl runs approve' or 'abctl runs reject'.",
		Args: cmdutil.ExactArgs(1, "a run id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			return cmdutil.Run(cmd, opts, runF, runAnswer)
		},
	}
	cmd.ValidArgsFunction = completion.First(completion.Runs(f, completion.AnyRun))
	return cmd
}

// Validate reads the run id.
func (o *AnswerOptions) Validate() error {
	id, err := runID(o.RunID)
	o.RunID = id
	return err
}

func runAnswer(ctx context.Context, opts *AnswerOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if opts.Question {
		q, err := c.Runs.Interaction(ctx, opts.RunID)
		if err != nil {
			return fmt.Errorf("read the question of %s: %w", opts.RunID, err)
		}
		WriteQuestion(opts.IO.Out, q, opts.Now())
		return nil
	}
	answer, verb := c.Runs.Approve, "approve"
	if !opts.Approve {
		answer, verb = c.Runs.Reject, "reject"
	}
	q, err := answer(ctx, opts.RunID, &client.HumanAnswerRequest{Comment: opts.Comment})
	if err != nil {
		return fmt.Errorf("%s %s: %w", verb, opts.RunID, err)
	}
	said, next := q.PositiveDescriptor, "the block completes and the run goes on"
	if !opts.Approve {
		said, next = q.NegativeDescriptor, "the block fails"
	}
	fmt.Fprintf(opts.IO.ErrOut, "Answered %q to block %q of %s: %s.\n", said, q.BlockLabel, opts.RunID, next)
	return nil
}

// WriteQuestion writes what a run asks, for people: the instructions,
// the two answers and the commands that give them, or the answer given.
func WriteQuestion(w io.Writer, q *client.HumanInteraction, now time.Time) {
	fmt.Fprintf(w, "Run %s, block %q asks:\n\n", q.RunID, q.BlockLabel)
	for _, line := range strings.Split(strings.TrimSpace(q.Instructions), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
	fmt.Fprintln(w)
	switch q.State {
	case client.HumanWaiting:
		left := q.ExpiresAt.Sub(now).Round(time.Second)
		fmt.Fprintf(w, "It waits %s more (until %s UTC) for an answer:\n", max(left, 0), q.ExpiresAt.UTC().Format(time.DateTime))
		fmt.Fprintf(w, "  %-8s abctl runs approve %s [--comment TEXT]\n", q.PositiveDescriptor+":", q.RunID)
		fmt.Fprintf(w, "  %-8s abctl runs reject %s [--comment TEXT]\n", q.NegativeDescriptor+":", q.RunID)
	case client.HumanApproved, client.HumanRejected:
		said := q.PositiveDescriptor
		if q.State == client.HumanRejected {
			said = q.NegativeDescriptor
		}
		fmt.Fprintf(w, "Answered %q (%s)", said, q.State)
		if q.AnsweredAt != nil {
			fmt.Fprintf(w, " at %s UTC", q.AnsweredAt.UTC().Format(time.DateTime))
		}
		if q.Comment != nil && *q.Comment != "" {
			fmt.Fprintf(w, ": %s", *q.Comment)
		}
		fmt.Fprintln(w, ".")
	default:
		fmt.Fprintf(w, "Nobody answered (%s); the run's failure reason says why the wait ended.\n", q.State)
	}
}
