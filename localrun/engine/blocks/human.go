package blocks

// The human_interaction block: the run pauses until a person approves or
// rejects, or until timeout_seconds pass. The interpreter renders the
// block's texts and hands the question to the run's HumanAsker (the
// daemon's pauses the run and takes the answer from its API); when the
// engine has an SMTP server (Env.SMTP) and the block has recipients, the
// email the block describes goes out once the run is paused, with the
// instructions and how to answer. Approved, the block completes; rejected
// or unanswered, it fails, so that continue_on_failure and the routing of
// the blocks that follow decide what happens next.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun/engine/blocks/mail"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/engine/steplog"
	"github.com/abctl/abctl/localrun/executor"
)

// HumanAsker asks people the questions of human_interaction blocks (see
// Run.Human). It is the executor's interface, which jobs carry: the
// daemon gives each agent run one that pauses the run while it waits.
type HumanAsker = executor.HumanAsker

// The defaults of the block's fields, as the hosted service has them
// (except the sender: the service's own address is not one a local SMTP
// server may send as).
const (
	DefaultHumanTimeout      = 7200 * time.Second
	defaultHumanSubject      = "Human interaction required for workflow run"
	defaultHumanBody         = "Your interaction is required for a workflow run!"
	defaultHumanPositive     = "Approve"
	defaultHumanNegative     = "Reject"
	defaultHumanSender       = "abctl@localhost"
	defaultHumanInstructions = "Please review and approve or reject to continue the workflow."
)

// errNoAnswer ends the wait of a block whose timeout passed.
var errNoAnswer = errors.New("no answer in time")

func checkHumanInteraction(b *client.HumanInteractionBlock) error {
	if b.TimeoutSeconds < 0 {
		return fmt.Errorf("block %q (%s): timeout_seconds %d is negative (leave it out for the default of %d s)",
			b.Label, b.BlockType(), b.TimeoutSeconds, int(DefaultHumanTimeout/time.Second))
	}
	return nil
}

// humanTexts are a block's texts, rendered, with the service's defaults.
type humanTexts struct {
	instructions, positive, negative string
	sender, subject, body            string
	recipients                       []string
}

func (sc *scope) humanTexts(b *client.HumanInteractionBlock) (humanTexts, error) {
	t := humanTexts{
		instructions: humanDefault(b.Instructions, defaultHumanInstructions),
		positive:     humanDefault(b.PositiveDescriptor, defaultHumanPositive),
		negative:     humanDefault(b.NegativeDescriptor, defaultHumanNegative),
		sender:       b.Sender,
		subject:      humanDefault(b.Subject, defaultHumanSubject),
		body:         humanDefault(b.Body, defaultHumanBody),
	}
	if err := sc.renderAll(&t.instructions, &t.positive, &t.negative, &t.sender, &t.subject, &t.body); err != nil {
		return t, err
	}
	for _, r := range b.Recipients {
		v, err := sc.render(r)
		if err != nil {
			return t, err
		}
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				t.recipients = append(t.recipients, a)
			}
		}
	}
	return t, nil
}

// humanDefault is s, or def when s is blank.
func humanDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func (in peopleBlocks) humanInteraction(ctx context.Context, b *client.HumanInteractionBlock, sc *scope) (any, error) {
	if in.human == nil {
		return nil, errors.New("there is nobody to ask: human_interaction blocks run only in agent runs of the daemon (abctl daemon), which pauses the run until a person answers")
	}
	t, err := sc.humanTexts(b)
	if err != nil {
		return nil, err
	}
	timeout := DefaultHumanTimeout
	if b.TimeoutSeconds > 0 {
		timeout = time.Duration(b.TimeoutSeconds) * time.Second
	}
	q := executor.HumanQuestion{Block: b.Label, Instructions: t.instructions, PositiveDescriptor: t.positive,
		NegativeDescriptor: t.negative, Recipients: t.recipients, Timeout: timeout}
	rec, err := in.steps.Start(b.Label, steplog.Action{Type: "human_interaction", Text: t.instructions})
	if err != nil {
		return nil, err
	}
	wait, cancel := context.WithTimeoutCause(ctx, timeout, errNoAnswer)
	defer cancel()
	ans, err := in.human.Ask(wait, q, func(howToAnswer string) error {
		return in.mailHumans(wait, t, howToAnswer)
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		err = ctx.Err() // the run was canceled or cut short
	case errors.Is(context.Cause(wait), errNoAnswer):
		err = fmt.Errorf("nobody answered within %s (timeout_seconds)", humanSeconds(timeout))
	}
	if err != nil {
		in.steps.End(rec, "", "", err)
		return nil, err
	}
	decision := "approved"
	if !ans.Approved {
		decision = "rejected"
	}
	out := map[string]any{"approved": ans.Approved, "decision": decision, "comment": ans.Comment}
	if !ans.At.IsZero() {
		out["answered_at"] = ans.At.UTC().Format(time.RFC3339)
	}
	if !ans.Approved {
		err = fmt.Errorf("a person rejected it (%q)", t.negative)
		if c := strings.TrimSpace(ans.Comment); c != "" {
			err = fmt.Errorf("a person rejected it (%q): %s", t.negative, c)
		}
	}
	in.steps.End(rec, "", decision, err)
	return out, err
}

// humanSeconds writes d as the block's timeout_seconds reads: "90 s".
func humanSeconds(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Second), 10) + " s"
}

// mailHumans sends the block's email to its recipients through the
// engine's SMTP server, once the run is paused. Without a server or
// recipients there is nothing to send, and that is no failure: people see
// the paused run in the CLI and the API.
func (in peopleBlocks) mailHumans(ctx context.Context, t humanTexts, howToAnswer string) error {
	// Only the operator's server (Env.SMTP, the daemon's flags): trusted,
	// so not dialed through the run's egress guard (see smtpOf).
	server := in.smtp
	if server.Host == "" || len(t.recipients) == 0 {
		return nil
	}
	if server.Port == 0 {
		server.Port = 587
	}
	sender := t.sender
	if strings.TrimSpace(sender) == "" {
		sender = defaultHumanSender
		if strings.Contains(server.Username, "@") {
			sender = server.Username
		}
	}
	var body strings.Builder
	body.WriteString(t.body)
	body.WriteString("\n\n")
	body.WriteString(t.instructions)
	fmt.Fprintf(&body, "\n\nAnswer %q or %q:\n\n", t.positive, t.negative)
	body.WriteString(howToAnswer)
	body.WriteString("\n")
	data := mail.Compose(sender, t.recipients, t.subject, body.String(), nil, time.Now())
	addr := net.JoinHostPort(server.Host, strconv.Itoa(server.Port))
	var auth smtp.Auth
	if server.Username != "" {
		auth = smtp.PlainAuth("", server.Username, server.Password, server.Host)
	}
	done := make(chan error, 1)
	go func() { done <- smtp.SendMail(addr, auth, sender, t.recipients, data) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err != nil {
		// The server's answer, never the password.
		msg := strings.ReplaceAll(err.Error(), server.Password, secrets.Mask)
		if server.Password == "" {
			msg = err.Error()
		}
		return fmt.Errorf("the email to %s could not be sent through the SMTP server %s: %s", strings.Join(t.recipients, ", "), addr, msg)
	}
	in.logger.Info("human interaction email sent", "recipients", len(t.recipients), "smtp_server", addr)
	return nil
}
