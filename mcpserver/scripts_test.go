package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/mcpserver"
)

// scriptFile is a script.yaml of one block, "search", that calls the
// model, or (replay) replays one click.
func scriptFile(wpid string, replay bool) string {
	head := "format: " + script.Format + "\nagent: " + wpid + "\ncache_key: default\nblocks:\n"
	if replay {
		return head + "  - label: search\n    mode: replay\n    steps:\n      - action: click\n        locators:\n          - by: css\n            value: '#go'\n"
	}
	return head + "  - label: search\n    mode: model\n    reason: recorded by hand\n"
}

// TestScripts: the script tools list, show, deploy and run a script
// created through the SDK; every effect is read back through the SDK.
func TestScripts(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		agent, err := e.c.Agents.Create(t.Context(), &client.AgentDefinition{
			Title: "Search",
			WorkflowDefinition: client.WorkflowDefinition{
				Blocks: client.Blocks{&client.GotoURLBlock{BlockBase: client.BlockBase{Label: "search"}, URL: "https://example.com/"}},
			},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wpid := agent.WorkflowPermanentID
		first := scriptFile(wpid, false)
		created, err := e.c.Scripts.Create(t.Context(), &client.CreateScriptRequest{
			WorkflowID: wpid, Files: []client.ScriptFile{client.ScriptFileFromBytes(script.FileName, []byte(first))},
		})
		if err != nil {
			t.Fatal(err)
		}
		id := created.ScriptID

		list := call[mcpserver.ScriptList](t, s, "skyvern_script_list", map[string]any{"workflow_id": wpid})
		if len(list.Scripts) != 1 || list.Scripts[0].ScriptID != id || list.Scripts[0].Version != 1 || list.Scripts[0].WorkflowID != wpid ||
			list.Scripts[0].CacheKey != "default" || len(list.Scripts[0].Blocks) != 1 || list.Scripts[0].Blocks[0].Mode != "model" {
			t.Errorf("list: %+v", list)
		}
		got := call[mcpserver.ScriptDetail](t, s, "skyvern_script_get", map[string]any{"script_id": id})
		if got.File != first || got.Version != 1 || len(got.Blocks) != 1 || got.Blocks[0].Reason != "recorded by hand" {
			t.Errorf("get: %+v", got)
		}

		// A bad file is refused with its place, and nothing is deployed.
		bad := strings.Replace(first, "mode: model", "mode: sometimes", 1)
		if msg := callError(t, s, "skyvern_script_deploy", map[string]any{"script_id": id, "file": bad}); !strings.Contains(msg, `blocks[0] (search).mode: "sometimes" is not a mode`) ||
			!strings.Contains(msg, "nothing was deployed") {
			t.Errorf("deploy of a bad file: %s", msg)
		}
		if msg := callError(t, s, "skyvern_script_deploy", map[string]any{"script_id": id, "file": "import skyvern\n"}); !strings.Contains(msg, "not an abctl script") {
			t.Errorf("deploy of a Python file: %s", msg)
		}
		if cur, err := e.c.Scripts.Get(t.Context(), id); err != nil || cur.Version != 1 {
			t.Fatalf("after the refused deploys: %+v %v, want version 1", cur, err)
		}

		// An edited file becomes version 2; version 1 stays.
		deployed := call[mcpserver.ScriptInfo](t, s, "skyvern_script_deploy", map[string]any{"script_id": id, "file": scriptFile(wpid, true)})
		if deployed.Version != 2 || len(deployed.Blocks) != 1 || deployed.Blocks[0].Mode != "replay" || deployed.Blocks[0].Steps != 1 {
			t.Errorf("deploy: %+v", deployed)
		}
		if file, err := e.c.Scripts.File(t.Context(), id, 0); err != nil || string(file) != scriptFile(wpid, true) {
			t.Errorf("the deployed file: %q %v", file, err)
		}
		old := call[mcpserver.ScriptDetail](t, s, "skyvern_script_get", map[string]any{"script_id": id, "version": 1})
		if old.File != first || old.Version != 1 || len(old.Blocks) != 1 || old.Blocks[0].Mode != "model" {
			t.Errorf("get version 1: %+v", old)
		}

		// run starts a run of the script's agent.
		run := call[mcpserver.RunResult](t, s, "skyvern_script_run", map[string]any{"script_id": id})
		if !strings.HasPrefix(run.RunID, "wr_") {
			t.Fatalf("run: %+v", run)
		}
		if r, err := e.c.Runs.Get(t.Context(), run.RunID); err != nil || r.RunID != run.RunID {
			t.Errorf("the run %s was not started: %v", run.RunID, err)
		}
		if msg := callError(t, s, "skyvern_script_run", map[string]any{"script_id": "s_404"}); !strings.Contains(msg, "404") {
			t.Errorf("run of an unknown script: %s", msg)
		}
	})
}
