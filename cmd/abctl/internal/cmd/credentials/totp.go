package credentials

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmdTOTP returns `abctl credentials totp`.
func NewCmdTOTP(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "totp",
		Short: "Push one-time codes (sent by e-mail or text message) to the runs waiting for them",
		Long: "A run that logs in with a password credential whose second factor is email or text\n" +
			"waits for the code the site sends. 'totp send' hands it over: the code itself, or the\n" +
			"whole message, from which the service takes the code (or a sign-in link).\n\n" +
			"An authenticator's codes need nothing of this: they are made from the credential's\n" +
			"TOTP secret.",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdTOTPSend(f, nil))
	return cmd
}

// TOTPSendOptions are the inputs of `abctl credentials totp send`.
type TOTPSendOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// Identifier is the e-mail address or phone number the code was sent
	// to: the credential's --totp-identifier.
	Identifier string
	// Content is the code or the message holding it; "-" reads it from
	// stdin.
	Content string
	// TaskID and WorkflowRunID tie the code to one run, Agent (a name or
	// an id) to the runs of one agent; Source says where it came from
	// (email, sms, ...).
	TaskID, WorkflowRunID, Agent, Source string
	// ExpiresIn is how long the code stays valid; 0 is the service's
	// default (10 minutes).
	ExpiresIn time.Duration
	Format    printer.Format
}

// NewCmdTOTPSend returns `abctl credentials totp send`. runF, when not
// nil, is called with the validated options instead of sending the code.
func NewCmdTOTPSend(f *cmdutil.Factory, runF func(*TOTPSendOptions) error) *cobra.Command {
	opts := &TOTPSendOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "send IDENTIFIER CONTENT",
		Short: "Push a one-time code, or the message that holds it, for IDENTIFIER",
		Long: "send stores a one-time code for the runs waiting on IDENTIFIER, the e-mail address or\n" +
			"phone number it was sent to (a password credential's --totp-identifier). CONTENT is\n" +
			"the code or the whole message; \"-\" reads it from stdin, e.g. from a mail filter.\n" +
			"The code stays valid for 10 minutes unless --expires-in says otherwise.",
		Example: "  abctl credentials totp send ada@example.com 123456\n" +
			"  abctl credentials totp send +14155550123 'Your verification code is 123456' --source sms\n" +
			"  abctl credentials totp send ada@example.com - --run wr_123 < message.txt",
		Args: cmdutil.ExactArgs(2, "IDENTIFIER (the address or number the code was sent to) and CONTENT (the code or message, - for stdin)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Identifier, opts.Content = args[0], args[1]
			return cmdutil.Run(cmd, opts, runF, runTOTPSend)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.WorkflowRunID, "run", "", "only for this agent run (wr_...)")
	fl.StringVar(&opts.TaskID, "task", "", "only for this task run (tsk_...)")
	fl.StringVar(&opts.Agent, "agent", "", "only for runs of this agent (a name or wpid_...)")
	fl.StringVar(&opts.Source, "source", "", "where the code came from: email, sms, app, ...")
	fl.DurationVar(&opts.ExpiresIn, "expires-in", 0, "how long the code stays valid, e.g. 5m (default: the service's, 10 minutes)")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

// Validate checks the identifier, the content and the expiry.
func (o *TOTPSendOptions) Validate() error {
	if strings.TrimSpace(o.Identifier) == "" {
		return cmdutil.UsageErrorf("IDENTIFIER is empty: give the e-mail address or phone number the code was sent to")
	}
	if strings.TrimSpace(o.Content) == "" {
		return cmdutil.UsageErrorf("CONTENT is empty: give the code, the message that holds it, or - to read it from stdin")
	}
	if o.Content == "-" && o.IO.IsStdinTTY() {
		return cmdutil.UsageErrorf("CONTENT - reads the message from stdin, which is a terminal here: pipe the message in, or give the code as CONTENT")
	}
	if o.ExpiresIn < 0 {
		return cmdutil.UsageErrorf("--expires-in must be a positive duration such as 5m, not %s", o.ExpiresIn)
	}
	for _, id := range []*string{&o.WorkflowRunID, &o.TaskID} {
		v, err := resource.Run.ID(*id)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		*id = v
	}
	if strings.HasPrefix(o.WorkflowRunID, "tsk_") {
		return cmdutil.UsageErrorf("--run %s is a task run: give it as --task %s", o.WorkflowRunID, o.WorkflowRunID)
	}
	return nil
}

func runTOTPSend(ctx context.Context, opts *TOTPSendOptions) error {
	content := opts.Content
	if content == "-" {
		b, err := readLimited(opts.IO.In, "stdin")
		if err != nil {
			return err
		}
		if content = strings.TrimSpace(string(b)); content == "" {
			return cmdutil.UsageErrorf("stdin is empty: it should hold the code or the message that holds it")
		}
	}
	req := &client.TOTPCodeRequest{TOTPIdentifier: opts.Identifier, Content: content, TaskID: opts.TaskID,
		WorkflowRunID: opts.WorkflowRunID, Source: opts.Source}
	if opts.ExpiresIn > 0 {
		at := client.NewTime(opts.Now().Add(opts.ExpiresIn).UTC())
		req.ExpiredAt = &at
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	if opts.Agent != "" {
		if req.WorkflowID, err = agentref.Resolve(ctx, c, opts.Agent); err != nil {
			return err
		}
	}
	code, err := c.Credentials.SendTOTPCode(ctx, req)
	if err != nil {
		return fmt.Errorf("send the code for %s: %w", opts.Identifier, err)
	}
	l := printer.Listing{Value: code, Headers: []string{"id", "identifier", "code", "expires"}}
	l.Rows = func(t *printer.TablePrinter) {
		expires := ""
		if code.ExpiredAt != nil {
			expires = code.ExpiredAt.UTC().Format(time.RFC3339)
		}
		t.AddRow(code.TOTPCodeID, code.TOTPIdentifier, code.Code, expires)
	}
	return l.Print(opts.IO, opts.Now(), opts.Format)
}
