// Package modelbyhand is `abctl model-by-hand`: the model played by hand of
// package handmodel, served on this machine, so that a person or another
// program answers the agent's model calls through files.
package modelbyhand

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/localrun/llm"
	"github.com/abctl/abctl/localrun/llm/handmodel"
)

// DefaultDir is where the requests and answers go when --dir is not given.
const DefaultDir = "./model-by-hand"

// timeoutMargin is added to the answer timeout in the ABCTL_LLM_TIMEOUT
// printed, so that the server's 504, which names the missing file, comes
// before the client gives up on its own.
const timeoutMargin = time.Minute

// ModelByHandOptions are the inputs of `abctl model-by-hand`.
type ModelByHandOptions struct {
	IO *iostreams.IOStreams

	// Dir is the directory of requests and answers.
	Dir string
	// Listen is the address to listen on, host:port (port 0 picks one).
	Listen string
	// Model is the model name listed and answered with.
	Model string
	// Vision says whether the daemon should send screenshots.
	Vision bool
	// AnswerTimeout is how long a request waits for its answer file.
	AnswerTimeout time.Duration
}

// NewCmdModelByHand returns `abctl model-by-hand`. runF, when not nil, is
// called with the validated options instead of serving.
func NewCmdModelByHand(f *cmdutil.Factory, runF func(context.Context, *ModelByHandOptions) error) *cobra.Command {
	opts := &ModelByHandOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "model-by-hand",
		Short: "Serve a language model played by hand, through files",
		Long: "model-by-hand serves the OpenAI chat-completions API on this machine and plays the\n" +
			"model through files, for machines where no model server can be installed: each\n" +
			"request is written to --dir as NNNN.request.json, NNNN.prompt.txt (for a person)\n" +
			"and NNNN.waiting, and is answered with NNNN.answer.txt once someone writes it\n" +
			"(write a temporary file and rename it). Unanswered requests fail after\n" +
			"--answer-timeout.\n\n" +
			"It prints the base URL, then the settings that point the daemon at it, one a line\n" +
			"(ABCTL_LLM_PROVIDER, ABCTL_LLM_BASE_URL, ABCTL_LLM_MODEL, ABCTL_LLM_VISION,\n" +
			"ABCTL_LLM_TIMEOUT), and logs each request on stderr until Ctrl-C or SIGTERM; requests\n" +
			"still waiting then get 503. docs/model-by-hand.md describes the files.",
		Example: "  abctl model-by-hand --dir /tmp/hand\n" +
			"  abctl model-by-hand --vision --answer-timeout 1h",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.Validate(); err != nil {
				return &cmdutil.UsageError{CmdPath: cmd.CommandPath(), Err: err}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return opts.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", DefaultDir, "directory of the requests and answers (made with mode 0700 when missing)")
	fl.StringVar(&opts.Listen, "listen", "127.0.0.1:0", "address to listen on, host:port (port 0 picks a free one)")
	fl.StringVar(&opts.Model, "model", handmodel.DefaultModel, "model name to list and answer with")
	fl.BoolVar(&opts.Vision, "vision", false, "tell the daemon to send screenshots (printed as ABCTL_LLM_VISION=true)")
	fl.DurationVar(&opts.AnswerTimeout, "answer-timeout", handmodel.DefaultAnswerTimeout, "how long a request waits for its answer file before failing with 504")
	return cmd
}

// Validate checks the flags.
func (o *ModelByHandOptions) Validate() error {
	if strings.TrimSpace(o.Dir) == "" {
		return fmt.Errorf("--dir is empty: name the directory of requests and answers")
	}
	_, port, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: want host:port, such as 127.0.0.1:0 or 127.0.0.1:8089", o.Listen)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("--listen %q: the port is a number from 0 to 65535", o.Listen)
	}
	if o.Model == "" || strings.ContainsFunc(o.Model, func(r rune) bool { return r <= ' ' }) {
		return fmt.Errorf("--model %q: want a name without spaces, such as %s", o.Model, handmodel.DefaultModel)
	}
	if o.AnswerTimeout <= 0 {
		return fmt.Errorf("--answer-timeout %s: want a positive duration, such as 30m", o.AnswerTimeout)
	}
	return nil
}

// Run serves until ctx ends.
func (o *ModelByHandOptions) Run(ctx context.Context) error {
	logger := slog.New(slog.NewTextHandler(o.IO.ErrOut, nil))
	srv, err := handmodel.New(o.Dir, handmodel.WithModel(o.Model), handmodel.WithAnswerTimeout(o.AnswerTimeout), handmodel.WithLogger(logger))
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return cmdutil.ListenError(fmt.Errorf("model-by-hand: listening on %s: %w", o.Listen, err))
	}
	base := BaseURL(l.Addr())
	settings := [][2]string{
		{llm.EnvProvider, string(llm.ProviderOpenAICompatible)},
		{llm.EnvBaseURL, base},
		{llm.EnvModel, o.Model},
		{llm.EnvVision, strconv.FormatBool(o.Vision)},
		{llm.EnvTimeout, (o.AnswerTimeout + timeoutMargin).String()},
	}
	var out strings.Builder
	out.WriteString(base + "\n")
	for _, kv := range settings {
		out.WriteString(kv[0] + "=" + kv[1] + "\n")
	}
	if _, err := fmt.Fprint(o.IO.Out, out.String()); err != nil {
		l.Close()
		return err
	}
	logger.Info("model played by hand: answer each NNNN.waiting request with NNNN.answer.txt", "dir", o.Dir, "base_url", base, "answer_timeout", o.AnswerTimeout)
	err = srv.Serve(ctx, l)
	logger.Info("model played by hand stopped")
	return err
}

// BaseURL is the OpenAI-compatible base URL of a listener's address:
// http://HOST:PORT/v1, with loopback for an address that listens on all
// interfaces.
func BaseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/v1"
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/v1"
}
