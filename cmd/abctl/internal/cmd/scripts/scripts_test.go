package scripts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/localrun/executor/scripted"
)

const testKey = "abk_scripts_cli_test_key"

// daemonFactory starts a real daemon and returns a Factory whose client
// talks to it, and that client.
func daemonFactory(t *testing.T) (*cmdutil.Factory, *cmdtest.Streams, *client.Client) {
	t.Helper()
	exec := &scripted.Executor{}
	addr, _ := daemontest.Start(t, t.TempDir(), daemon.Config{APIKey: testKey, Executor: exec, Workers: 1})
	t.Cleanup(exec.ReleaseAll) // let a run the test started end before the daemon stops
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	f, streams := cmdtest.NewFactory(t, map[string]string{"ABCTL_BASE_URL": "http://" + addr, "ABCTL_API_KEY": testKey, "ABCTL_EMBED": "false"})
	return f, streams, c
}

// recordedByHand is a script of one block that calls the model.
func recordedByHand(wpid string) string {
	return "format: " + script.Format + "\nagent: " + wpid + "\ncache_key: default\nblocks:\n" +
		"  - label: search\n    mode: model\n    reason: recorded by hand\n"
}

// replaying is the same script with the block replaying one click.
func replaying(wpid string) string {
	return "format: " + script.Format + "\nagent: " + wpid + "\ncache_key: default\nblocks:\n" +
		"  - label: search\n    mode: replay\n    steps:\n      - action: click\n        locators:\n          - by: css\n            value: '#go'\n"
}

// newScript creates an agent and a script of it through the SDK, and
// returns the agent's id and the script's.
func newScript(t *testing.T, c *client.Client) (wpid, scriptID string) {
	t.Helper()
	agent, err := c.Agents.Create(t.Context(), &client.AgentDefinition{
		Title: "Search",
		WorkflowDefinition: client.WorkflowDefinition{
			Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "search"}, URL: "https://example.com/"}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wpid = agent.WorkflowPermanentID
	created, err := c.Scripts.Create(t.Context(), &client.CreateScriptRequest{
		WorkflowID: wpid,
		Files:      []client.ScriptFile{client.ScriptFileFromBytes(script.FileName, []byte(recordedByHand(wpid)))},
	})
	if err != nil {
		t.Fatal(err)
	}
	return wpid, created.ScriptID
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), script.FileName)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestScriptsListEmptyThroughAPipe: with no script, list through a pipe
// (no terminal: no header) still says something, on stderr, so that stdout
// stays data only: that the list is empty, and how a script comes to be.
func TestScriptsListEmptyThroughAPipe(t *testing.T) {
	f, streams, _ := daemonFactory(t)
	if err := cmdtest.Exec(NewCmdList(f, nil)); err != nil {
		t.Fatalf("list: %v", err)
	}
	if streams.Out.Len() != 0 {
		t.Errorf("list of no script printed %q on stdout, want nothing (it is data only)", streams.Out)
	}
	for _, want := range []string{"No scripts yet", `run_with "code"`, "language model"} {
		if !strings.Contains(streams.ErrOut.String(), want) {
			t.Errorf("list of no script through a pipe: stderr has no %q:\n%s", want, streams.ErrOut)
		}
	}
	// -o json is data: an empty array and no words on stderr.
	streams.ErrOut.Reset()
	if err := cmdtest.Exec(NewCmdList(f, nil), "-o", "json"); err != nil || strings.TrimSpace(streams.Out.String()) != "[]" || streams.ErrOut.Len() != 0 {
		t.Errorf("list -o json of no script: %v, stdout %q, stderr %q; want [] and nothing on stderr", err, streams.Out, streams.ErrOut)
	}
}

func TestScriptsListAndGet(t *testing.T) {
	f, streams, c := daemonFactory(t)
	wpid, id := newScript(t, c)

	if err := cmdtest.Exec(NewCmdList(f, nil)); err != nil {
		t.Fatalf("list: %v", err)
	}
	out := streams.Out.String()
	for _, want := range []string{id, wpid, "default", "\t1\t"} {
		if !strings.Contains(out, want) {
			t.Errorf("list shows no %q:\n%s", want, out)
		}
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdList(f, nil), "--agent", wpid, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var listed []client.Script
	if err := json.Unmarshal(streams.Out.Bytes(), &listed); err != nil || len(listed) != 1 || listed[0].ScriptID != id || listed[0].Version != 1 {
		t.Errorf("list --agent -o json: %v\n%s", err, streams.Out)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdList(f, nil), "-o", "name"); err != nil || strings.TrimSpace(streams.Out.String()) != "script/"+id {
		t.Errorf("list -o name: %q %v", streams.Out, err)
	}

	// The summary says which blocks replay and which call the model.
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdGet(f, nil), "script/"+id); err != nil {
		t.Fatalf("get: %v", err)
	}
	out = streams.Out.String()
	for _, want := range []string{"Script:    " + id, "Agent:     " + wpid, "Cache key: default", "Version:   1",
		"Blocks (0 replay, 1 call the model):", "search  calls the model: recorded by hand"} {
		if !strings.Contains(out, want) {
			t.Errorf("get shows no %q:\n%s", want, out)
		}
	}
	// -o yaml is the file itself, -o json the service's answer.
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdGet(f, nil), id, "-o", "yaml"); err != nil || streams.Out.String() != recordedByHand(wpid) {
		t.Errorf("get -o yaml: %v\n%s", err, streams.Out)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdGet(f, nil), id, "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var got client.Script
	if err := json.Unmarshal(streams.Out.Bytes(), &got); err != nil || got.ScriptID != id || got.WorkflowID != wpid || len(got.Blocks) != 1 {
		t.Errorf("get -o json: %v\n%s", err, streams.Out)
	}
	if err := cmdtest.Exec(NewCmdGet(f, nil), "s_404"); err == nil || !strings.Contains(err.Error(), "s_404") || !strings.Contains(err.Error(), "404") {
		t.Errorf("get of an unknown script: %v", err)
	}
}

func TestScriptsDiffDeployAndRun(t *testing.T) {
	f, streams, c := daemonFactory(t)
	wpid, id := newScript(t, c)

	// The deployed file against itself: no differences, exit 0.
	same := writeFile(t, recordedByHand(wpid))
	if err := cmdtest.Exec(NewCmdDiff(f, nil), id, same); err != nil || streams.Out.Len() != 0 {
		t.Errorf("diff of the same file: %v (exit %d)\n%s", err, cmdtest.ExitCode(err), streams.Out)
	}
	// An edited file: a unified diff, exit 1.
	edited := writeFile(t, replaying(wpid))
	err := cmdtest.Exec(NewCmdDiff(f, nil), id, edited)
	if cmdtest.ExitCode(err) != 1 {
		t.Errorf("diff of an edited file: %v, exit %d, want 1", err, cmdtest.ExitCode(err))
	}
	out := streams.Out.String()
	for _, want := range []string{"--- script/" + id + " (deployed)", "+++ " + edited, "-    mode: model", "+    mode: replay", "+      - action: click"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff shows no %q:\n%s", want, out)
		}
	}

	// A bad file is refused before the service is asked, with its place,
	// exit 2: by diff (never 1, which means "differences") and by deploy.
	bad := writeFile(t, strings.Replace(recordedByHand(wpid), "mode: model", "mode: sometimes", 1))
	python := writeFile(t, "from skyvern import Skyvern\n\nprint('hi')\n")
	g, _ := cmdtest.NewFactory(t, nil)
	for _, tc := range []struct {
		file, want string
	}{
		{bad, `blocks[0] (search).mode: "sometimes" is not a mode`},
		{python, "not an abctl script"},
	} {
		for name, cmd := range map[string]func() error{
			"diff": func() error {
				return cmdtest.Exec(NewCmdDiff(g, func(o *DiffOptions) error { o.Client = cmdtest.NoClient(t); return runDiff(t.Context(), o) }), id, tc.file)
			},
			"deploy": func() error {
				return cmdtest.Exec(NewCmdDeploy(g, func(o *DeployOptions) error { o.Client = cmdtest.NoClient(t); return runDeploy(t.Context(), o) }), id, tc.file)
			},
			"deploy --validate": func() error { return cmdtest.Exec(NewCmdDeploy(g, nil), id, tc.file, "--validate") },
		} {
			err := cmd()
			if cmdtest.ExitCode(err) != 2 || !strings.Contains(err.Error(), tc.file) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s of %s: %v (exit %d), want exit 2 naming the file and %q", name, tc.file, err, cmdtest.ExitCode(err), tc.want)
			}
		}
	}
	if err := cmdtest.Exec(NewCmdDiff(g, nil), id, filepath.Join(t.TempDir(), "missing.yaml")); cmdtest.ExitCode(err) != 2 {
		t.Errorf("diff of a missing file: %v (exit %d), want 2", err, cmdtest.ExitCode(err))
	}

	// --validate checks and deploys nothing.
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdDeploy(f, nil), id, edited, "--validate"); err != nil ||
		!strings.Contains(streams.Out.String(), "a valid "+script.Format+" script of 1 block (1 replay, 0 call the model)") {
		t.Errorf("deploy --validate: %v\n%s", err, streams.Out)
	}
	if s, err := c.Scripts.Get(t.Context(), id); err != nil || s.Version != 1 {
		t.Fatalf("after --validate: %+v %v, want version 1", s, err)
	}

	// deploy makes version 2, which get shows; version 1 stays.
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdDeploy(f, nil), id, edited); err != nil || streams.Out.String() != "script/"+id+" deployed: version 2\n" {
		t.Fatalf("deploy: %v\n%s", err, streams.Out)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdGet(f, nil), id); err != nil {
		t.Fatal(err)
	}
	if out := streams.Out.String(); !strings.Contains(out, "Version:   2") || !strings.Contains(out, "search  replays (1 recorded action)") {
		t.Errorf("get after deploy:\n%s", out)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdGet(f, nil), id, "--version", "1"); err != nil {
		t.Fatal(err)
	}
	if out := streams.Out.String(); !strings.Contains(out, "Version:   1") || !strings.Contains(out, "search  calls the model: recorded by hand") {
		t.Errorf("get --version 1:\n%s", out)
	}
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdGet(f, nil), id, "--version", "1", "-o", "yaml"); err != nil || streams.Out.String() != recordedByHand(wpid) {
		t.Errorf("get --version 1 -o yaml: %v\n%s", err, streams.Out)
	}
	if err := cmdtest.Exec(NewCmdDiff(f, nil), id, edited); err != nil {
		t.Errorf("diff after deploy: %v (exit %d), want no differences", err, cmdtest.ExitCode(err))
	}

	// run starts a run of the script's agent, replaying the script.
	streams.Out.Reset()
	if err := cmdtest.Exec(NewCmdRun(f, nil), id, "--detach"); err != nil {
		t.Fatalf("run: %v", err)
	}
	runID := strings.TrimSpace(streams.Out.String())
	if !strings.HasPrefix(runID, "wr_") {
		t.Fatalf("run --detach printed %q, want a run id", runID)
	}
	run, err := c.Runs.Get(t.Context(), runID)
	if err != nil || run.RunID != runID {
		t.Errorf("the run started: %+v %v", run, err)
	}
	// Without --detach it follows the run as 'abctl run' does: the run
	// (instant, in this daemon's executor) completes, exit 0.
	streams.ErrOut.Reset()
	if err := cmdtest.Exec(NewCmdRun(f, nil), id, "--no-tui"); err != nil {
		t.Fatalf("run, followed: %v\n%s", err, streams.ErrOut)
	}
	if !strings.Contains(streams.ErrOut.String(), "of script "+id+" started") || !strings.Contains(streams.ErrOut.String(), "completed") {
		t.Errorf("run, followed, said:\n%s", streams.ErrOut)
	}
	if err := cmdtest.Exec(NewCmdRun(f, nil), "s_404", "--detach"); err == nil || !strings.Contains(err.Error(), "run script s_404") {
		t.Errorf("run of an unknown script: %v", err)
	}
}

// TestScriptsCommandsCheckTheirInput: every problem here is found before
// the service is asked.
func TestScriptsCommandsCheckTheirInput(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"get of a bad id", cmdtest.Exec(NewCmdGet(f, nil), "a b"), "not a script id"},
		{"get of an agent", cmdtest.Exec(NewCmdGet(f, nil), "agent/x"), "not a script id"},
		{"get --version -1", cmdtest.Exec(NewCmdGet(f, nil), "s_1", "--version", "-1"), "--version must be 1 or more"},
		{"get --version -o json", cmdtest.Exec(NewCmdGet(f, nil), "s_1", "--version", "1", "-o", "json"), "latest version only"},
		{"get -o wide", cmdtest.Exec(NewCmdGet(f, nil), "s_1", "-o", "wide"), "not a format"},
		{"list --limit -1", cmdtest.Exec(NewCmdList(f, nil), "--limit", "-1"), "--limit"},
		{"diff without a file", cmdtest.Exec(NewCmdDiff(f, nil), "s_1"), "script.yaml"},
		{"deploy -o name", cmdtest.Exec(NewCmdDeploy(f, nil), "s_1", "f.yaml", "-o", "name"), "not a format"},
		{"run -p novalue", cmdtest.Exec(NewCmdRun(f, nil), "s_1", "-p", "novalue"), "write key=value"},
	} {
		if !cmdtest.IsUsage(tc.err) || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want a usage error saying %q", tc.name, tc.err, tc.want)
		}
	}
	// Cobra's own check of the flag group.
	if err := cmdtest.Exec(NewCmdRun(f, nil), "s_1", "--detach", "--timeout", "1m"); err == nil || !strings.Contains(err.Error(), "detach") {
		t.Errorf("run --detach --timeout: %v", err)
	}
	var got *RunOptions
	if err := cmdtest.Exec(NewCmdRun(f, func(o *RunOptions) error { got = o; return nil }), "script/s_1", "-p", "q=shoes", "--param", "n=2", "--no-tui"); err != nil ||
		got.ScriptID != "s_1" || strings.Join(got.Params, ",") != "q=shoes,n=2" || !got.Follow.NoTUI {
		t.Errorf("run options: %+v %v", got, err)
	}
	if params, err := cmdutil.Params(got.Params); err != nil || params["q"] != "shoes" || params["n"] != "2" {
		t.Errorf("run parameters: %v %v", params, err)
	}
}

// TestScriptsIsRegistered: the group has its five commands.
func TestScriptsIsRegistered(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var names []string
	for _, c := range NewCmdScripts(f).Commands() {
		names = append(names, c.Name())
	}
	if strings.Join(names, ",") != "deploy,diff,get,list,run" {
		t.Errorf("subcommands %v", names)
	}
}
