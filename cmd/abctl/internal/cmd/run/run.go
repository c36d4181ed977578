// Package run is `abctl run`: start an agent (from its file or by name) or a
// task, follow it live, and print its output; and `abctl login`, which
// starts a login run with a stored credential and follows it the same way.
package run

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/applier"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/completion"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
	"github.com/abctl/abctl/internal/yamljson"
)

// RunOptions are the inputs of `abctl run`.
type RunOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	// Embedded reports whether Client started the daemon inside this
	// command, which would stop a detached run as abctl exits.
	Embedded func() bool
	// Watch follows the run once started.
	Watch follow.Watcher

	// File is the agent file given as the argument, "" when the agent is
	// named by Agent or a task is given by Prompt.
	File string
	// Agent is an agent that exists, by name or id (--agent); Name picks an
	// agent of File that holds several (--name).
	Agent, Name string
	// Params (--param key=value) and ParamsFile (--params-file) are the
	// agent's parameters.
	Params     []string
	ParamsFile string
	// Prompt, URL, Schema, Engine and ErrorCodes (code=description) make a
	// task.
	Prompt, URL, Schema, Engine string
	ErrorCodes                  []string
	// Title, WebhookURL and MaxSteps go with any run.
	Title, WebhookURL string
	MaxSteps          int
	// BrowserProfile is the browser profile the run starts from
	// (--browser-profile), without the profile/ of -o name; "" for none.
	BrowserProfile string
	// BrowserSession is the open browser session the run executes in
	// (--browser-session), without the session/ of -o name; "" for a
	// browser of the run's own.
	BrowserSession string
	// Detach prints the run id and returns instead of following the run.
	Detach bool
	Follow follow.Flags
	// With is how the agent's run goes (--with): "code" replays the
	// agent's recorded script, "agent" has the model drive every step; ""
	// keeps the agent's own run_with. AIFallback (--ai-fallback), when not
	// nil, says whether the model takes over a step a replay cannot do.
	With       string
	AIFallback *bool
}

// NewCmdRun returns `abctl run`. runF, when not nil, is called with the
// validated options instead of running.
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IO, Client: f.Client, Embedded: f.Embedded, Watch: follow.NewWatcher(f)}
	cmd := &cobra.Command{
		Use:   "run [AGENT_FILE]",
		Short: "Run an agent (from its file or by name) or a task, and follow it",
		Long: "run starts a run and follows it until it ends, then prints its output as JSON on stdout.\n\n" +
			"  abctl run agent.yaml          applies the file (creating or updating the agent only\n" +
			"                                when it changed), then runs the agent\n" +
			"  abctl run --agent NAME_OR_ID  runs an agent that exists\n" +
			"  abctl run --prompt ... --url  runs a task: a goal in words, no agent\n\n" +
			"--param key=value sets an agent parameter; the value is read as the parameter's\n" +
			"declared type (string, integer, float, boolean, json: JSON text such as '[\"a\",\"b\"]').\n" +
			"--params-file reads them from a JSON or YAML object; --param wins over the file. Every\n" +
			"value is checked before anything is applied or started: a wrong one exits 2.\n\n" +
			"On a terminal a live view on stderr shows the status, the elapsed time, the steps and\n" +
			"the newest screenshot; elsewhere (pipes, CI set, --no-tui) one line per change. Ctrl-C\n" +
			"asks whether to cancel the run or leave it running. --detach prints the run id and\n" +
			"returns at once.\n\n" +
			"Exit status: 0 completed; 1 failed, terminated or canceled; 3 timed_out; 8 still\n" +
			"running when --timeout expired or you left it; 2 a wrong command line or agent file.",
		Example: "  abctl run agents/contact-form.yaml --param url=https://example.com/contact --param urgent=true\n" +
			"  abctl run --agent contact-form --params-file params.json --no-tui > output.json\n" +
			"  abctl run --agent monthly-invoices --browser-profile bp_123    # start signed in ('abctl browser-profiles')\n" +
			"  abctl run --agent monthly-invoices --browser-session pbs_123   # in a browser kept open ('abctl browser-sessions')\n" +
			"  abctl run --agent search-extract --with code                   # replay its recorded script, no model call ('abctl scripts')\n" +
			"  abctl run --prompt 'Find the price of the first product' --url https://shop.example.com --schema price.json\n" +
			"  RUN=$(abctl run agent.yaml --detach) && abctl runs watch \"$RUN\"",
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"yaml", "yml", "json"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = ""
			if len(args) == 1 {
				opts.File = args[0]
			}
			return cmdutil.Run(cmd, opts, runF, runRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Agent, "agent", "", "run this existing agent (its name or wpid_...)")
	fl.StringVar(&opts.Name, "name", "", "in a file of several agents, the one to run")
	fl.StringArrayVarP(&opts.Params, "param", "p", nil, "agent parameter as key=value (repeatable)")
	fl.StringVar(&opts.ParamsFile, "params-file", "", "JSON or YAML file of an object of agent parameters")
	fl.StringVar(&opts.Prompt, "prompt", "", "run a task: what to do, in words")
	fl.StringVar(&opts.URL, "url", "", "the task's starting page")
	fl.StringVar(&opts.Schema, "schema", "", "the task's data extraction schema: a JSON Schema, inline or in a file")
	fl.StringVar(&opts.Engine, "engine", "", "the task's engine (skyvern-1.0, skyvern-2.0, ...)")
	fl.StringArrayVar(&opts.ErrorCodes, "error-code", nil, "the task's error code mapping, as code=description (repeatable)")
	fl.IntVar(&opts.MaxSteps, "max-steps", 0, "the run's step limit")
	fl.StringVar(&opts.Title, "title", "", "the run's title")
	fl.StringVar(&opts.WebhookURL, "webhook-url", "", "where the run's result is sent when it ends")
	fl.StringVar(&opts.BrowserProfile, "browser-profile", "", "start the run from this browser profile (bp_..., see 'abctl browser-profiles'); a task with one runs on engine skyvern-2.0")
	fl.StringVar(&opts.BrowserSession, "browser-session", "", "run in this open browser session (pbs_..., see 'abctl browser-sessions'), after the runs already in it")
	fl.BoolVar(&opts.Detach, "detach", false, "print the run id and return without following the run")
	opts.Follow.Add(cmd)
	addRunWithFlags(cmd, opts)
	cmd.MarkFlagsMutuallyExclusive("agent", "prompt")
	cmd.MarkFlagsMutuallyExclusive("detach", "timeout")
	_ = cmd.RegisterFlagCompletionFunc("agent", completion.Agents(f))
	return cmd
}

// Validate checks that the options say one thing to run, and only the
// flags that go with it.
func (o *RunOptions) Validate() error {
	taskMode := o.Prompt != ""
	switch {
	case o.File != "" && (o.Agent != "" || taskMode):
		return cmdutil.UsageErrorf("give an agent file, --agent or --prompt, not several")
	case o.File == "" && o.Agent == "" && !taskMode:
		return cmdutil.UsageErrorf("give an agent file, --agent NAME, or --prompt TEXT (with --url)")
	case taskMode && (len(o.Params) > 0 || o.ParamsFile != ""):
		return cmdutil.UsageErrorf("--param and --params-file are for agents; a task takes --prompt, --url and --schema")
	case !taskMode && (o.URL != "" || o.Schema != "" || o.Engine != "" || len(o.ErrorCodes) > 0):
		return cmdutil.UsageErrorf("--url, --schema, --engine and --error-code are for tasks (--prompt)")
	case o.MaxSteps < 0:
		return cmdutil.UsageErrorf("--max-steps must be positive, not %d", o.MaxSteps)
	}
	if err := o.validateRunWith(taskMode); err != nil {
		return err
	}
	if err := readBrowserFlags(&o.BrowserProfile, &o.BrowserSession); err != nil {
		return err
	}
	if o.BrowserProfile != "" && taskMode && o.Engine != "" && client.RunEngine(o.Engine) != client.EngineSkyvernV2 {
		return cmdutil.UsageErrorf("--browser-profile works with tasks on engine %s, not %s: leave --engine out, or give --engine %s",
			client.EngineSkyvernV2, o.Engine, client.EngineSkyvernV2)
	}
	return nil
}

// readBrowserFlags reads --browser-profile and --browser-session in
// place, as usage errors, and refuses the two together: a run in a
// session uses the session's browser as it is, so a profile would be
// left unused.
func readBrowserFlags(profile, session *string) error {
	if *profile != "" && *session != "" {
		return cmdutil.UsageErrorf("give --browser-profile or --browser-session, not both: a run in a browser session uses the session's browser " +
			"as it is; to start a session from a profile, open it with 'abctl browser-sessions create --browser-profile ID'")
	}
	for _, f := range []struct {
		flag string
		val  *string
		kind resource.Kind
	}{{"--browser-profile", profile, resource.Profile}, {"--browser-session", session, resource.Session}} {
		if *f.val == "" {
			continue
		}
		id, err := f.kind.Flag(f.flag, *f.val)
		if err != nil {
			return cmdutil.UsageErrorf("%v", err)
		}
		*f.val = id
	}
	return nil
}

func runRun(ctx context.Context, opts *RunOptions) error {
	var fa *agentfile.Agent
	var params map[string]any
	var who func() string // the agent, as messages name it
	if opts.File != "" {
		ff := cmdutil.FileFlags{Files: []string{opts.File}}
		agents, err := ff.Load(opts.IO.In, opts.IO.ErrOut)
		if err != nil {
			return err
		}
		fa, err = pick(agents, opts.Name, opts.File)
		if err != nil {
			return err
		}
		// The parameters are checked against the file before anything
		// is applied: a wrong command line changes nothing.
		who = func() string { return fmt.Sprintf("agent %q (%s)", fa.Name, fa.File) }
		if params, err = opts.parameters(who, fa.Definition.WorkflowDefinition.Parameters); err != nil {
			return err
		}
	}
	c, err := cmdutil.DetachableClient(ctx, opts.Client, opts.Embedded, opts.Detach)
	if err != nil {
		return err
	}

	var run *client.Run
	if opts.Prompt != "" {
		req, err := opts.taskRequest()
		if err != nil {
			return err
		}
		run, err = c.Runs.StartTask(ctx, req)
		if err != nil {
			return fmt.Errorf("start the task: %w", err)
		}
	} else {
		var agent *client.Agent
		if fa != nil {
			ap, err := applier.New(ctx, c)
			if err != nil {
				return err
			}
			res := ap.Apply(ctx, fa, false)
			if res.Err != nil {
				return fmt.Errorf("apply agent/%s: %w", fa.Name, res.Err)
			}
			fmt.Fprintf(opts.IO.ErrOut, "agent/%s %s\n", fa.Name, res.Action)
			agent = res.Agent
		} else {
			agent, err = agentref.Get(ctx, c, opts.Agent)
			if err != nil {
				return err
			}
			who = func() string { return describeAgent(ctx, c, opts.Agent, agent) }
			if params, err = opts.parameters(who, agent.WorkflowDefinition.Parameters); err != nil {
				return err
			}
		}
		req := &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: params, Title: opts.Title, WebhookURL: opts.WebhookURL,
			BrowserProfileID: opts.BrowserProfile, BrowserSessionID: opts.BrowserSession}
		if opts.MaxSteps > 0 {
			req.MaxStepsOverride = new(opts.MaxSteps)
		}
		req.RunWith, req.AIFallback = opts.With, opts.AIFallback
		run, err = c.Runs.StartAgent(ctx, req)
		if err != nil {
			return fmt.Errorf("start %s: %w", who(), err)
		}
	}
	return started(ctx, opts.IO, c, run, "Run", opts.Detach, opts.Watch, opts.Follow)
}

// started finishes a command that started run: with detach it prints the
// run id alone on stdout; otherwise it says the run started (what names
// it: "Run", "Login run") and follows it with watch until it ends.
func started(ctx context.Context, ios *iostreams.IOStreams, c *client.Client, run *client.Run, what string,
	detach bool, watch follow.Watcher, fl follow.Flags) error {
	if detach {
		_, err := fmt.Fprintln(ios.Out, run.RunID)
		return err
	}
	fmt.Fprintf(ios.ErrOut, "%s %s started (%s).\n", what, run.RunID, run.Status)
	return watch(ctx, c, run.RunID, fl)
}

// pick chooses the agent to run from a file's agents.
func pick(agents []*agentfile.Agent, name, file string) (*agentfile.Agent, error) {
	if name != "" {
		for _, a := range agents {
			if a.Name == name {
				return a, nil
			}
		}
		return nil, cmdutil.UsageErrorf("%s has no agent named %q (it has: %s)", file, name, names(agents))
	}
	if len(agents) > 1 {
		return nil, cmdutil.UsageErrorf("%s holds %d agents (%s): choose one with --name", file, len(agents), names(agents))
	}
	return agents[0], nil
}

func names(agents []*agentfile.Agent) string {
	n := make([]string, len(agents))
	for i, a := range agents {
		n[i] = a.Name
	}
	return strings.Join(n, ", ")
}

// taskRequest builds the request of a task run; a --schema that cannot be
// read or a malformed --error-code is a usage error.
func (o *RunOptions) taskRequest() (*client.TaskRunRequest, error) {
	req := &client.TaskRunRequest{Prompt: o.Prompt, URL: o.URL, Title: o.Title, WebhookURL: o.WebhookURL, Engine: client.RunEngine(o.Engine),
		BrowserProfileID: o.BrowserProfile, BrowserSessionID: o.BrowserSession}
	if req.BrowserProfileID != "" && req.Engine == "" {
		req.Engine = client.EngineSkyvernV2 // the engine that starts tasks from a profile
	}
	if o.MaxSteps > 0 {
		req.MaxSteps = new(o.MaxSteps)
	}
	if o.Schema != "" {
		raw, err := readJSONArg(o.Schema)
		if err != nil {
			return nil, cmdutil.UsageErrorf("--schema: %v", err)
		}
		req.DataExtractionSchema = raw
	}
	for _, ec := range o.ErrorCodes {
		code, desc, ok := strings.Cut(ec, "=")
		if !ok || code == "" || desc == "" {
			return nil, cmdutil.UsageErrorf("--error-code %q: write code=description", ec)
		}
		if req.ErrorCodeMapping == nil {
			req.ErrorCodeMapping = map[string]string{}
		}
		req.ErrorCodeMapping[code] = desc
	}
	return req, nil
}

// readJSONArg reads inline JSON, or a JSON or YAML file.
func readJSONArg(arg string) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(arg)
	if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
		if !json.Valid([]byte(trimmed)) {
			return nil, fmt.Errorf("not valid JSON")
		}
		return json.RawMessage(trimmed), nil
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return nil, err
	}
	v, err := yamljson.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", arg, err)
	}
	return json.Marshal(v)
}

// describeAgent names an agent found by ref for messages: by the name it
// was applied under (ref itself, or its abctl.name tag), else by its id and
// title.
func describeAgent(ctx context.Context, c *client.Client, ref string, a *client.Agent) string {
	name, _ := resource.Agent.ID(ref) // checked when the agent was found
	if agentref.IsID(name) {
		name = agentref.Name(ctx, c, a.WorkflowPermanentID)
	}
	if name == "" {
		return fmt.Sprintf("agent %s (%q)", a.WorkflowPermanentID, a.Title)
	}
	return fmt.Sprintf("agent %q", name)
}

// parameters builds the run's parameters from --params-file and --param.
// Each value is checked against its parameter's declared type with
// client.ConvertParameterValue, as the daemon checks a run request (a json
// parameter's text must parse), and every parameter without a default
// needs a value. A problem is a usage error naming the parameter and the
// agent (who, called only then).
func (o *RunOptions) parameters(who func() string, params []client.Parameter) (map[string]any, error) {
	declared := map[string]client.Parameter{}
	var keys []string
	for _, p := range params {
		if p.ParameterType == client.ParameterTypeWorkflow {
			declared[p.Key] = p
			keys = append(keys, p.Key)
		}
	}
	sort.Strings(keys)
	describe := func() string {
		if len(keys) == 0 {
			return "it has no parameters"
		}
		var d []string
		for _, k := range keys {
			d = append(d, fmt.Sprintf("%s (%s)", k, declared[k].WorkflowParameterType))
		}
		return "its parameters are: " + strings.Join(d, ", ")
	}
	given := map[string]any{}
	if o.ParamsFile != "" {
		data, err := os.ReadFile(o.ParamsFile)
		if err != nil {
			return nil, cmdutil.UsageErrorf("--params-file: %v", err)
		}
		v, err := yamljson.Decode(data)
		if err != nil {
			return nil, cmdutil.UsageErrorf("--params-file %s: %v", o.ParamsFile, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, cmdutil.UsageErrorf("--params-file %s must hold an object of parameter values", o.ParamsFile)
		}
		for k, val := range m {
			given[k] = val
		}
	}
	for _, kv := range o.Params {
		k, text, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, cmdutil.UsageErrorf("--param %q: write key=value", kv)
		}
		if _, known := declared[k]; !known {
			return nil, cmdutil.UsageErrorf("--param %s: %s has no parameter %q; %s", k, who(), k, describe())
		}
		given[k] = text // read as the parameter's type below
	}
	out := map[string]any{}
	var missing, problems []string
	for _, k := range keys {
		p := declared[k]
		v, ok := given[k]
		if !ok {
			if def := strings.TrimSpace(string(p.DefaultValue)); def == "" || def == "null" {
				missing = append(missing, strconv.Quote(k))
				problems = append(problems, fmt.Sprintf("%s (%s) has no default: give --param %s=...", k, p.WorkflowParameterType, k))
			}
			continue
		}
		raw, err := client.ConvertParameterValue(p.WorkflowParameterType, v)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s (%s): %v", k, p.WorkflowParameterType, err))
			continue
		}
		out[k] = json.RawMessage(raw)
	}
	for k := range given {
		if _, ok := declared[k]; !ok {
			problems = append(problems, fmt.Sprintf("%s: not a parameter of the agent (%s)", k, describe()))
		}
	}
	if len(problems) == 0 {
		return out, nil
	}
	sort.Strings(problems)
	head := "parameters of " + who()
	if len(missing) == len(problems) {
		head = fmt.Sprintf("%s needs parameter %s", who(), strings.Join(missing, ", "))
		if len(missing) > 1 {
			head = fmt.Sprintf("%s needs parameters %s", who(), strings.Join(missing, ", "))
		}
	}
	return nil, cmdutil.UsageErrorf("%s:\n  %s", head, strings.Join(problems, "\n  "))
}
