package run

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
)

// runWithValues are the values of --with: the run_with of a run request.
var runWithValues = []string{"code", "agent"}

// addRunWithFlags adds --with and --ai-fallback to `abctl run`: how an
// agent's run goes, over the agent's own run_with and ai_fallback.
func addRunWithFlags(cmd *cobra.Command, opts *RunOptions) {
	fl := cmd.Flags()
	fl.StringVar(&opts.With, "with", "", "code: replay the agent's recorded script without the model (recording one when there is none); "+
		"agent: the model drives every step (default: the agent's run_with; see 'abctl scripts')")
	_ = cmd.RegisterFlagCompletionFunc("with", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return runWithValues, cobra.ShellCompDirectiveNoFileComp
	})
	fl.Var(&optionalBool{&opts.AIFallback}, "ai-fallback", "when the run replays a script, whether the model takes over a step the script cannot replay "+
		"(true or false; default: the agent's ai_fallback)")
	fl.Lookup("ai-fallback").NoOptDefVal = "true"
}

// validateRunWith checks --with and --ai-fallback: known values, and only
// for agents, which scripts are recorded from.
func (o *RunOptions) validateRunWith(taskMode bool) error {
	switch {
	case o.With != "" && o.With != "code" && o.With != "agent":
		return cmdutil.UsageErrorf("--with %q: use code (replay the agent's script) or agent (the model drives every step)", o.With)
	case taskMode && (o.With != "" || o.AIFallback != nil):
		return cmdutil.UsageErrorf("--with and --ai-fallback are for agents, whose runs are recorded as scripts; a task (--prompt) always runs with the model")
	}
	return nil
}

// optionalBool is a boolean flag that tells "not given" (nil) from false.
type optionalBool struct{ v **bool }

func (b *optionalBool) String() string {
	if *b.v == nil {
		return ""
	}
	return strconv.FormatBool(**b.v)
}

func (b *optionalBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.v = &v
	return nil
}

func (b *optionalBool) Type() string { return "bool" }
