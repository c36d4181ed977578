package follow

// Runs paused for a person (a human_interaction block). When the followed
// run pauses, its question is read (client.RunsService.Interaction) and
// printed: the instructions and the commands that answer it. The live view
// also answers it: a approves, r rejects, each after a confirmation; a
// comment needs the commands. A service without the question's route (the
// hosted service) shows the pause only.

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/abctl/abctl/client"
)

// paused reports whether an event is the run pausing.
func paused(ev client.RunEvent) bool {
	return ev.StatusChanged() && ev.Run.Status == client.RunStatusPaused
}

// readQuestion reads what the paused run asks; nil when it cannot be read,
// which only means it is not shown.
func readQuestion(ctx context.Context, o Options) *client.HumanInteraction {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), latestTimeout)
	defer cancel()
	q, err := o.Client.Runs.Interaction(ctx, o.RunID, client.WithMaxRetries(0))
	if err != nil || q.State != client.HumanWaiting {
		return nil
	}
	return q
}

// questionLines are the question for people: the block, the instructions
// (each of their lines indented), and how to answer.
func questionLines(q *client.HumanInteraction, id string) []string {
	lines := []string{fmt.Sprintf("block %q waits for a person's answer, until %s UTC:", q.BlockLabel, q.ExpiresAt.UTC().Format(time.TimeOnly))}
	for _, l := range strings.Split(strings.TrimSpace(q.Instructions), "\n") {
		lines = append(lines, "  "+strings.TrimRight(l, "\r"))
	}
	return append(lines,
		fmt.Sprintf("  %s: abctl runs approve %s [--comment TEXT]", q.PositiveDescriptor, id),
		fmt.Sprintf("  %s: abctl runs reject %s [--comment TEXT]", q.NegativeDescriptor, id))
}

// The live view's messages about the question.
type (
	// questionMsg is a read of the question (nil: none to show).
	questionMsg struct{ q *client.HumanInteraction }
	// answerDoneMsg is the outcome of an answer sent from the view.
	answerDoneMsg struct {
		approve bool
		err     error
	}
)

// readQuestion reads the question in the background (questionMsg).
func (m *model) readQuestion() tea.Cmd {
	ctx, o := m.ctx, m.o
	return func() tea.Msg { return questionMsg{q: readQuestion(ctx, o)} }
}

// showQuestion prints the question above the view and lets the view
// answer it.
func (m *model) showQuestion(q *client.HumanInteraction) tea.Cmd {
	if q == nil || m.run == nil || m.run.Status != client.RunStatusPaused {
		return nil
	}
	m.question = q
	lines := questionLines(q, m.o.RunID)
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	lines[0] = m.cs.Yellow("⏸") + " " + strings.TrimSpace(lines[0])
	return m.println(lines...)
}

// answer sends the answer chosen in the view.
func (m *model) answer(approve bool) tea.Cmd {
	ctx, c, id := context.WithoutCancel(m.ctx), m.o.Client, m.o.RunID
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		send := c.Runs.Approve
		if !approve {
			send = c.Runs.Reject
		}
		_, err := send(ctx, id, nil)
		return answerDoneMsg{approve: approve, err: err}
	}
}

// answerable reports whether the view can answer the run now.
func (m *model) answerable() bool {
	return m.question != nil && m.run != nil && m.run.Status == client.RunStatusPaused
}

// descriptor is the name of the answer.
func (m *model) descriptor(approve bool) string {
	if m.question == nil {
		return map[bool]string{true: "approve", false: "reject"}[approve]
	}
	if approve {
		return m.question.PositiveDescriptor
	}
	return m.question.NegativeDescriptor
}
