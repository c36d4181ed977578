// Package scripts is `abctl scripts`: the scripts recorded from agent runs,
// which later runs replay without the model (run_with: "code"). list, get
// (a summary of which blocks replay and which call the model, or the
// script.yaml file itself), diff a local script.yaml against the deployed
// one, deploy an edited script.yaml as a new version, and run a script.
//
// A script is one file, script.yaml (format abctl.script/v1; package
// github.com/abctl/abctl/script reads it). deploy and diff check a local
// file with that package before the service is asked anything, so that a
// mistake is reported with its place (blocks[1].steps[0].action: ...).
package scripts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/agentref"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/follow"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// kind is how -o name prints a script: script/ID.
const kind = resource.Kind("script")

// NewCmdScripts returns `abctl scripts`.
func NewCmdScripts(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "scripts",
		Aliases: []string{"script"},
		Short:   "Replay agents without the model: list, show, edit, deploy and run recorded scripts",
		Long: "A script is recorded from a completed run of an agent: per block, the actions that\n" +
			"reached the goal, each element with several locators, the values typed (parameters\n" +
			"kept as references), the pages expected and the fields extracted. A later run with\n" +
			"run_with \"code\" ('abctl run --with code', or the agent's run_with) replays it with no\n" +
			"model call; what cannot be replayed (a captcha, a step the model judges) is recorded as\n" +
			"a model step and says why. A script belongs to an agent and a cache key (the agent's\n" +
			"cache_key, \"default\" by default), and every change is a new version.\n\n" +
			"The script is one readable file, script.yaml: 'abctl scripts get ID -o yaml' prints it,\n" +
			"'abctl scripts diff' compares an edited copy, 'abctl scripts deploy' makes it the latest\n" +
			"version.\n\n" +
			"SCRIPT_ID is an id (s_...) or script/ID, as -o name prints it.",
		Example: "  abctl run --agent search-extract --with code     # records a script, or replays it\n" +
			"  abctl scripts list --agent search-extract\n" +
			"  abctl scripts get s_123                          # which blocks replay, which call the model\n" +
			"  abctl scripts get s_123 -o yaml > script.yaml    # edit it, then:\n" +
			"  abctl scripts diff s_123 script.yaml             # exit status 1: they differ\n" +
			"  abctl scripts deploy s_123 script.yaml\n" +
			"  abctl scripts run s_123 -p query=shoes",
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdDiff(f, nil), NewCmdDeploy(f, nil), NewCmdRun(f, nil))
	return cmd
}

// scriptID reads a SCRIPT_ID argument: an id, or script/ID.
func scriptID(arg string) (string, error) {
	id := strings.TrimSpace(arg)
	if rest, ok := strings.CutPrefix(id, string(kind)+"/"); ok {
		id = rest
	}
	if id == "" || strings.ContainsAny(id, "/ ") {
		return "", cmdutil.UsageErrorf("%q is not a script id: give an id (s_...) or script/ID, as 'abctl scripts list -o name' prints it", arg)
	}
	return id, nil
}

// readScriptID reads the script id arg (an id or script/ID) into *id; a
// wrong one is a usage error, and leaves *id as it was.
func readScriptID(id *string, arg string) error {
	v, err := scriptID(arg)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// readScriptFile reads and checks a local script.yaml ("-": stdin). A file
// that cannot be read, or is not a valid abctl script, is an error of exit
// status 2 naming the file and the place in it, as a bad agent file is.
func readScriptFile(in io.Reader, path string) ([]byte, *script.Script, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, nil, &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: fmt.Errorf("read the script file: %w", err)}
	}
	s, err := script.Parse(data)
	switch {
	case errors.Is(err, script.ErrForeign):
		// The error says it is not an abctl script, and why.
		return nil, nil, &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: fmt.Errorf("%s: %w", displayPath(path), err)}
	case err != nil:
		return nil, nil, &cmdutil.CodeError{Code: cmdutil.ExitUsage, Err: fmt.Errorf("%s: not a valid %s script: %w", displayPath(path), script.Format, err)}
	}
	return data, s, nil
}

func displayPath(path string) string {
	if path == "-" {
		return "<stdin>"
	}
	return path
}

// scriptsListing shows scripts: SCRIPT ID, AGENT, CACHE KEY, VERSION, RUN
// (the run it was recorded from) and CREATED.
func scriptsListing(items []*client.Script) printer.Listing {
	if items == nil {
		items = []*client.Script{}
	}
	l := printer.Listing{Value: items, Headers: []string{"script id", "agent", "cache key", "version", "run", "created"}}
	for _, s := range items {
		l.Names = append(l.Names, kind.Name(s.ScriptID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, s := range items {
			t.AddRow(s.ScriptID, s.WorkflowID, s.CacheKey, strconv.Itoa(s.Version), recordedFrom(s), t.Time(s.CreatedAt.Time))
		}
	}
	return l
}

// recordedFrom is the run a version was recorded from; "" for one
// deployed by hand.
func recordedFrom(s *client.Script) string {
	if s.RunID == nil {
		return ""
	}
	return *s.RunID
}

// ListOptions are the inputs of `abctl scripts list`.
type ListOptions struct {
	listing.ListOptions

	// Agent lists the scripts of one agent (its name or wpid_...); "" lists
	// the organization's.
	Agent string
}

// NewCmdList returns `abctl scripts list`. runF, when not nil, is called
// with the validated options instead of listing.
func NewCmdList(f *cmdutil.Factory, runF func(*ListOptions) error) *cobra.Command {
	opts := &ListOptions{}
	cmd := listing.NewListCmd(f, &opts.ListOptions, "scripts", &cobra.Command{
		Use:   "list [--agent AGENT]",
		Short: "List the scripts, newest first, at their latest versions",
		Long: "list shows each script at its latest version: the agent and cache key it belongs to,\n" +
			"the version, and the run it was recorded from (empty for a version deployed by hand).",
		Example: "  abctl scripts list\n  abctl scripts list --agent search-extract -o json",
	}, func(cmd *cobra.Command, _ []string) error {
		return cmdutil.Run(cmd, opts, runF, runList)
	})
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "only the scripts of this agent (its name or wpid_...)")
	return cmd
}

func runList(ctx context.Context, opts *ListOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	lo := &client.ListScriptsOptions{PageSize: listing.PageSize(opts.Limit)}
	if opts.Agent != "" {
		if lo.AgentID, err = agentref.Resolve(ctx, c, opts.Agent); err != nil {
			return err
		}
	}
	items, err := listing.Collect(c.Scripts.All(ctx, lo), opts.Limit, "scripts")
	if err != nil {
		return err
	}
	if err := opts.Print(scriptsListing(items)); err != nil {
		return err
	}
	if len(items) == 0 && (opts.Format == printer.Table || opts.Format == printer.Wide) {
		// Piped, an empty table is no output at all: say on stderr that
		// the list is empty, and why a script may be missing, so that
		// stdout stays data only.
		_, err = fmt.Fprintln(opts.IO.ErrOut, noScripts(opts.Agent))
	}
	return err
}

// noScripts says that there is no script (of agent, when not ""), and how
// one comes to be.
func noScripts(agent string) string {
	of := ""
	if agent != "" {
		of = " of agent " + agent
	}
	return "No scripts" + of + " yet. A script is recorded when a run of an agent with run_with \"code\" completes\n" +
		"(its first run needs a language model); 'abctl get runs' shows how the runs ended."
}

// GetOptions are the inputs of `abctl scripts get`.
type GetOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	ScriptID string
	// Version is the version to show; 0 is the latest.
	Version int
	Format  printer.Format
}

// NewCmdGet returns `abctl scripts get`. runF, when not nil, is called
// with the validated options instead of reading the script.
func NewCmdGet(f *cmdutil.Factory, runF func(*GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "get SCRIPT_ID [--version N]",
		Short: "Show which blocks of a script replay and which call the model, or print its script.yaml",
		Long: "get prints a script's id, agent, cache key and version, then a line per block: the\n" +
			"block's label and either \"replays\" with the number of recorded actions, or \"calls the\n" +
			"model\" with the reason it could not be recorded for replay.\n\n" +
			"-o yaml prints the script file itself, script.yaml, ready to edit and deploy;\n" +
			"-o json prints the service's answer. --version N shows an earlier version (with\n" +
			"-o yaml or the summary: the service answers the latest version only).",
		Example: "  abctl scripts get s_123\n" +
			"  abctl scripts get s_123 --version 1\n" +
			"  abctl scripts get s_123 -o yaml > script.yaml",
		Args: cmdutil.ExactArgs(1, "a script id (s_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := readScriptID(&opts.ScriptID, args[0]); err != nil {
				return err
			}
			return cmdutil.Run(cmd, opts, runF, runGet)
		},
	}
	cmd.Flags().IntVar(&opts.Version, "version", 0, "show this version (1, 2, ...); default the latest")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML, printer.Name)
	return cmd
}

// Validate checks the version and that the format can show it.
func (o *GetOptions) Validate() error {
	if o.Version < 0 {
		return cmdutil.UsageErrorf("--version must be 1 or more, not %d", o.Version)
	}
	if o.Version > 0 && o.Format == printer.JSON {
		return cmdutil.UsageErrorf("-o json prints the service's answer, which is of the latest version only: with --version use -o yaml (the file) or the summary")
	}
	return nil
}

func runGet(ctx context.Context, opts *GetOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	switch opts.Format {
	case printer.YAML:
		data, err := c.Scripts.File(ctx, opts.ScriptID, opts.Version)
		if err != nil {
			return fmt.Errorf("get the script.yaml of script %s%s: %w", opts.ScriptID, versionText(opts.Version), err)
		}
		_, err = opts.IO.Out.Write(data)
		return err
	case printer.Name:
		if _, err := c.Scripts.Get(ctx, opts.ScriptID); err != nil {
			return fmt.Errorf("get script %s: %w", opts.ScriptID, err)
		}
		_, err := fmt.Fprintln(opts.IO.Out, kind.Name(opts.ScriptID))
		return err
	}
	s, err := c.Scripts.Get(ctx, opts.ScriptID)
	if err != nil {
		return fmt.Errorf("get script %s: %w", opts.ScriptID, err)
	}
	if opts.Format == printer.JSON {
		return printer.WriteJSON(opts.IO.Out, s)
	}
	version, runID, blocks := s.Version, recordedFrom(s), s.Blocks
	if opts.Version > 0 && opts.Version != s.Version {
		// The service describes the latest version: an earlier one is
		// described from its own file.
		data, err := c.Scripts.File(ctx, opts.ScriptID, opts.Version)
		if err != nil {
			return fmt.Errorf("get version %d of script %s: %w", opts.Version, opts.ScriptID, err)
		}
		parsed, err := script.Parse(data)
		if err != nil {
			return fmt.Errorf("version %d of script %s is not a valid %s script: %w", opts.Version, opts.ScriptID, script.Format, err)
		}
		// The file does not say which run recorded it.
		version, runID, blocks = opts.Version, "", nil
		for _, b := range parsed.Summary() {
			blocks = append(blocks, client.ScriptBlockSummary{Label: b.Label, Mode: b.Mode, Reason: b.Reason, Steps: b.Steps, Fields: b.Fields})
		}
	}
	return writeSummary(opts.IO.Out, s, version, runID, blocks)
}

func versionText(v int) string {
	if v == 0 {
		return ""
	}
	return fmt.Sprintf(" (version %d)", v)
}

// writeSummary writes what `abctl scripts get` shows: the script's
// identity, then a line per block saying whether it replays or calls the
// model.
func writeSummary(w io.Writer, s *client.Script, version int, runID string, blocks []client.ScriptBlockSummary) error {
	var b strings.Builder
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%-11s%s\n", name+":", value)
		}
	}
	field("Script", s.ScriptID)
	field("Agent", s.WorkflowID)
	field("Cache key", s.CacheKey)
	field("Version", strconv.Itoa(version))
	field("Recorded", runID)
	replays := 0
	width := 0
	for _, bl := range blocks {
		width = max(width, len(bl.Label))
		if bl.Mode == script.ModeReplay {
			replays++
		}
	}
	fmt.Fprintf(&b, "\nBlocks (%d replay, %d call the model):\n", replays, len(blocks)-replays)
	if len(blocks) == 0 {
		b.WriteString("  (none)\n")
	}
	for _, bl := range blocks {
		var what string
		switch bl.Mode {
		case script.ModeReplay:
			var parts []string
			if bl.Steps > 0 || bl.Fields == 0 {
				parts = append(parts, plural(bl.Steps, "recorded action"))
			}
			if bl.Fields > 0 {
				parts = append(parts, "reads "+plural(bl.Fields, "extracted field")+" from the page")
			}
			what = "replays (" + strings.Join(parts, ", ") + ")"
		case script.ModeModel:
			what = "calls the model"
			if bl.Reason != "" {
				what += ": " + bl.Reason
			}
		default:
			what = bl.Mode
		}
		fmt.Fprintf(&b, "  %-*s  %s\n", width, bl.Label, what)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// DiffOptions are the inputs of `abctl scripts diff`.
type DiffOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	ScriptID string
	// File is the local script.yaml ("-": stdin).
	File string
}

// NewCmdDiff returns `abctl scripts diff`. runF, when not nil, is called
// with the validated options instead of comparing.
func NewCmdDiff(f *cmdutil.Factory, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "diff SCRIPT_ID FILE",
		Short: "Show how a local script.yaml differs from the deployed latest version",
		Long: "diff prints a unified diff of the script's latest deployed script.yaml (first) and the\n" +
			"local FILE (second): what 'abctl scripts deploy' would change. FILE is checked first,\n" +
			"as deploy checks it; a file that is not a valid script is reported with its place.\n\n" +
			"Exit status, as diff(1): 0 no differences, 1 differences, 2 or more an error.",
		Example: "  abctl scripts get s_123 -o yaml > script.yaml\n" +
			"  $EDITOR script.yaml\n" +
			"  abctl scripts diff s_123 script.yaml",
		Args: cmdutil.ExactArgs(2, "a script id (s_...) and a script.yaml file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := readScriptID(&opts.ScriptID, args[0]); err != nil {
				return err
			}
			opts.File = args[1]
			return cmdutil.Run(cmd, opts, runF, runDiff)
		},
	}
	return cmd
}

// runDiff writes the differences. Its errors exit with 2 or more
// (cmdutil.DiffError); differences are Silent(1).
func runDiff(ctx context.Context, opts *DiffOptions) error {
	local, _, err := readScriptFile(opts.IO.In, opts.File)
	if err != nil {
		return cmdutil.DiffError(err)
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return cmdutil.DiffError(err)
	}
	deployed, err := c.Scripts.File(ctx, opts.ScriptID, 0)
	if err != nil {
		return cmdutil.DiffError(fmt.Errorf("get the script.yaml of script %s: %w", opts.ScriptID, err))
	}
	d := agentfile.Diff(fmt.Sprintf("script/%s (deployed)", opts.ScriptID), displayPath(opts.File), deployed, local)
	if _, err := io.WriteString(opts.IO.Out, d); err != nil {
		return cmdutil.DiffError(err)
	}
	if d != "" {
		return cmdutil.Silent(1)
	}
	return nil
}

// DeployOptions are the inputs of `abctl scripts deploy`.
type DeployOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	ScriptID string
	// File is the script.yaml to deploy ("-": stdin).
	File string
	// ValidateOnly checks File and deploys nothing (--validate).
	ValidateOnly bool
	Format       printer.Format
}

// NewCmdDeploy returns `abctl scripts deploy`. runF, when not nil, is
// called with the validated options instead of deploying.
func NewCmdDeploy(f *cmdutil.Factory, runF func(*DeployOptions) error) *cobra.Command {
	opts := &DeployOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "deploy SCRIPT_ID FILE [--validate]",
		Short: "Make a local script.yaml the script's new latest version",
		Long: "deploy checks FILE (a script.yaml, format " + script.Format + ") and sends it as the\n" +
			"script's next version, which the next runs with run_with \"code\" replay; it prints the\n" +
			"new version. The earlier versions stay ('abctl scripts get ID --version N').\n" +
			"--validate only checks the file, without the service.\n\n" +
			"A file that is not a valid script (the hosted service's Python scripts included) is\n" +
			"refused with its place and reason, exit status 2.",
		Example: "  abctl scripts deploy s_123 script.yaml --validate\n" +
			"  abctl scripts deploy s_123 script.yaml",
		Args: cmdutil.ExactArgs(2, "a script id (s_...) and a script.yaml file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := readScriptID(&opts.ScriptID, args[0]); err != nil {
				return err
			}
			opts.File = args[1]
			return cmdutil.Run(cmd, opts, runF, runDeploy)
		},
	}
	cmd.Flags().BoolVar(&opts.ValidateOnly, "validate", false, "only check the file; deploy nothing")
	printer.AddFlag(cmd, &opts.Format, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

func runDeploy(ctx context.Context, opts *DeployOptions) error {
	data, s, err := readScriptFile(opts.IO.In, opts.File)
	if err != nil {
		return err
	}
	if opts.ValidateOnly {
		replays := 0
		summary := s.Summary()
		for _, b := range summary {
			if b.Mode == script.ModeReplay {
				replays++
			}
		}
		_, err := fmt.Fprintf(opts.IO.Out, "%s: a valid %s script of %s (%d replay, %d call the model)\n",
			displayPath(opts.File), script.Format, plural(len(summary), "block"), replays, len(summary)-replays)
		return err
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	res, err := c.Scripts.Deploy(ctx, opts.ScriptID, &client.DeployScriptRequest{
		Files: []client.ScriptFile{client.ScriptFileFromBytes(script.FileName, data)},
	})
	if err != nil {
		return fmt.Errorf("deploy %s to script %s: %w", displayPath(opts.File), opts.ScriptID, err)
	}
	switch opts.Format {
	case printer.JSON:
		return printer.WriteJSON(opts.IO.Out, res)
	case printer.YAML:
		return printer.WriteYAML(opts.IO.Out, res)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s deployed: version %d\n", kind.Name(res.ScriptID), res.Version)
	return err
}

// RunOptions are the inputs of `abctl scripts run`.
type RunOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	// Embedded reports whether Client started the daemon inside this
	// command, which would stop a detached run as abctl exits.
	Embedded func() bool
	// Watch follows the run once started.
	Watch follow.Watcher

	ScriptID string
	Params   []string // key=value
	// Detach prints the run id and returns instead of following the run.
	Detach bool
	Follow follow.Flags
}

// NewCmdRun returns `abctl scripts run`. runF, when not nil, is called
// with the validated options instead of running.
func NewCmdRun(f *cmdutil.Factory, runF func(*RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: f.IO, Client: f.Client, Embedded: f.Embedded, Watch: follow.NewWatcher(f)}
	cmd := &cobra.Command{
		Use:   "run SCRIPT_ID [--param key=value ...]",
		Short: "Run a script's agent, replaying this script, and follow the run",
		Long: "run starts a run of the script's agent with run_with \"code\", replaying this script's\n" +
			"latest version, and follows it as 'abctl run' does: the output as JSON on stdout when\n" +
			"it ends. --param values are read as the agent's parameters are (the service converts\n" +
			"them to their declared types); parameters left out take their defaults.\n\n" +
			"Exit status: 0 completed; 1 failed, terminated or canceled; 3 timed_out; 8 still\n" +
			"running when --timeout expired or you left it; 2 a wrong command line.",
		Example: "  abctl scripts run s_123 -p query=shoes\n" +
			"  RUN=$(abctl scripts run s_123 --detach) && abctl runs watch \"$RUN\"",
		Args: cmdutil.ExactArgs(1, "a script id (s_...)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := readScriptID(&opts.ScriptID, args[0]); err != nil {
				return err
			}
			if _, err := cmdutil.Params(opts.Params); err != nil {
				return err
			}
			return cmdutil.Run(cmd, opts, runF, runRun)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Params, "param", "p", nil, "agent parameter as key=value (repeatable)")
	fl.BoolVar(&opts.Detach, "detach", false, "print the run id and return without following the run")
	opts.Follow.Add(cmd)
	cmd.MarkFlagsMutuallyExclusive("detach", "timeout")
	return cmd
}

func runRun(ctx context.Context, opts *RunOptions) error {
	params, err := cmdutil.Params(opts.Params)
	if err != nil {
		return err
	}
	c, err := cmdutil.DetachableClient(ctx, opts.Client, opts.Embedded, opts.Detach)
	if err != nil {
		return err
	}
	run, err := c.Scripts.Run(ctx, opts.ScriptID, &client.RunScriptRequest{Parameters: params})
	if err != nil {
		return fmt.Errorf("run script %s: %w", opts.ScriptID, err)
	}
	if opts.Detach {
		_, err := fmt.Fprintln(opts.IO.Out, run.RunID)
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "Run %s of script %s started (%s).\n", run.RunID, opts.ScriptID, run.Status)
	return opts.Watch(ctx, c, run.RunID, opts.Follow)
}
