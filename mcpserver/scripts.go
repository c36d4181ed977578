package mcpserver

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The script tools list, show, deploy and run the scripts recorded from
// agent runs, which later runs replay without the model. A script is one
// text file, script.yaml (format abctl.script/v1): the tools show it and
// take an edited one as it is, so that an assistant can read which blocks
// replay and fix a locator.

// ScriptListInput is the input of skyvern_script_list.
type ScriptListInput struct {
	WorkflowID string `json:"workflow_id,omitempty" jsonschema:"only the scripts of this agent (wpid_...); empty lists the organization's"`
	PageArgs
}

// ScriptList is the answer of skyvern_script_list.
type ScriptList struct {
	Scripts []ScriptInfo `json:"scripts" jsonschema:"the scripts at their latest versions, newest first"`
}

// ScriptInfo is a script as the tools answer it: its latest version (or
// the version asked for) and how its blocks run.
type ScriptInfo struct {
	ScriptID   string `json:"script_id" jsonschema:"the script's id (s_...)"`
	Version    int    `json:"version" jsonschema:"the version described"`
	WorkflowID string `json:"workflow_id,omitempty" jsonschema:"the agent it replays (wpid_...)"`
	CacheKey   string `json:"cache_key,omitempty" jsonschema:"the agent's cache key value it belongs to ('default' unless the agent sets cache_key)"`
	RunID      string `json:"run_id,omitempty" jsonschema:"the run it was recorded from; empty for a version deployed by hand"`
	CreatedAt  string `json:"created_at,omitempty"`
	// Blocks say which blocks replay and which call the model.
	Blocks []ScriptBlockInfo `json:"blocks,omitempty" jsonschema:"per block: replay (recorded actions, no model call) or model (and why)"`
}

// ScriptBlockInfo says how one block of a script runs. It has the fields
// of client.ScriptBlockSummary and script.BlockSummary, and is converted
// from either.
type ScriptBlockInfo struct {
	Label  string `json:"label"`
	Mode   string `json:"mode" jsonschema:"replay or model"`
	Reason string `json:"reason,omitempty" jsonschema:"why a model block cannot replay"`
	Steps  int    `json:"steps" jsonschema:"the number of recorded actions"`
	Fields int    `json:"fields,omitempty" jsonschema:"the number of extracted fields read from the page without the model"`
}

// ScriptGetInput is the input of skyvern_script_get.
type ScriptGetInput struct {
	ScriptID string `json:"script_id" jsonschema:"the script's id (s_...)"`
	Version  int    `json:"version,omitempty" jsonschema:"the version to show; default the latest"`
}

// ScriptDetail is the answer of skyvern_script_get: the script and its
// file.
type ScriptDetail struct {
	ScriptInfo
	File string `json:"file" jsonschema:"the text of script.yaml, which skyvern_script_deploy takes back once edited"`
}

// ScriptDeployInput is the input of skyvern_script_deploy.
type ScriptDeployInput struct {
	ScriptID string `json:"script_id" jsonschema:"the script's id (s_...)"`
	File     string `json:"file" jsonschema:"the whole text of the new script.yaml (format abctl.script/v1), as skyvern_script_get answers it"`
}

// ScriptRunInput is the input of skyvern_script_run.
type ScriptRunInput struct {
	ScriptID       string `json:"script_id" jsonschema:"the script's id (s_...)"`
	Parameters     any    `json:"parameters,omitempty" jsonschema:"values of the agent's parameters by key, as an object or as JSON text; left out, the defaults"`
	Wait           bool   `json:"wait,omitempty" jsonschema:"wait for the run to end (default false: return at once with the run id)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"with wait, how long to wait for the result; the run goes on after it"`
	Verbosity      string `json:"verbosity,omitempty" jsonschema:"summary (default) or full, which adds the service's whole run object"`
}

// scriptPager pages skyvern_script_list as the service does by default.
var scriptPager = pager{items: "scripts", maxSize: 100}

// scriptTools list, show, deploy and run scripts.
type scriptTools struct {
	scripts  *client.ScriptsService
	follower runFollower
}

func (t *scriptTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_script_list",
		title: "List scripts",
		description: "List the scripts recorded from agent runs, at their latest versions: of one agent (workflow_id) or of the " +
			"organization. A run with run_with \"code\" replays its agent's script without calling the model." + ownTool,
		annotations: readOnly(),
		refine:      scriptPager.refineArgs,
	}, t.scriptList)
	addTool(s, spec{
		name:  "skyvern_script_get",
		title: "Get a script",
		description: "Get a script: which blocks replay recorded actions and which call the model (and why), and the text of its " +
			"file, script.yaml, which skyvern_script_deploy takes back once edited (to fix a locator, say)." + ownTool,
		annotations: readOnly(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "script_id")
			bounds(p["version"], 1, 0)
		},
	}, t.scriptGet)
	addTool(s, spec{
		name:  "skyvern_script_deploy",
		title: "Deploy a script",
		description: "Make an edited script.yaml (format " + script.Format + ") the script's new latest version, which the next " +
			"runs with run_with \"code\" replay. The text is checked first: a mistake is reported with its place " +
			"(blocks[0].steps[1].action: ...), and nothing is deployed. Earlier versions stay." + ownTool,
		annotations: writes(false),
		refine:      nonEmptyArgs("script_id", "file"),
	}, t.scriptDeploy)
	addTool(s, spec{
		name:  "skyvern_script_run",
		title: "Run a script",
		description: "Start a run of the script's agent that replays this script (run_with \"code\"), with values for the " +
			"agent's parameters. Returns the run id at once, or with wait=true waits up to timeout_seconds and returns " +
			"the output; skyvern_workflow_status follows the run." + ownTool,
		annotations: browses(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "script_id")
			refineAgentRunArgs(p)
		},
	}, t.scriptRun)
}

func (t *scriptTools) scriptList(ctx context.Context, in ScriptListInput) (*ScriptList, error) {
	list, err := t.scripts.List(ctx, &client.ListScriptsOptions{AgentID: in.WorkflowID, Page: in.Page, PageSize: in.PageSize})
	if err != nil {
		return nil, err
	}
	return &ScriptList{Scripts: shapeAll(list, scriptInfo)}, nil
}

func (t *scriptTools) scriptGet(ctx context.Context, in ScriptGetInput) (*ScriptDetail, error) {
	s, err := t.scripts.Get(ctx, in.ScriptID)
	if err != nil {
		return nil, err
	}
	file, err := t.scripts.File(ctx, in.ScriptID, in.Version)
	if err != nil {
		return nil, err
	}
	out := &ScriptDetail{ScriptInfo: scriptInfo(s), File: string(file)}
	if in.Version > 0 && in.Version != s.Version {
		// The service describes the latest version; an earlier one is
		// described from its own file, which does not say which run
		// recorded it.
		parsed, err := script.Parse(file)
		if err != nil {
			return nil, fmt.Errorf("version %d of script %s is not a valid script: %w", in.Version, in.ScriptID, err)
		}
		out.Version, out.RunID, out.CreatedAt, out.Blocks = in.Version, "", "", nil
		for _, b := range parsed.Summary() {
			out.Blocks = append(out.Blocks, ScriptBlockInfo(b))
		}
	}
	return out, nil
}

func (t *scriptTools) scriptDeploy(ctx context.Context, in ScriptDeployInput) (*ScriptInfo, error) {
	if _, err := script.Parse([]byte(in.File)); err != nil {
		return nil, argError("file", "not a valid %s script, nothing was deployed: %v", script.Format, err)
	}
	if _, err := t.scripts.Deploy(ctx, in.ScriptID, &client.DeployScriptRequest{
		Files: []client.ScriptFile{client.ScriptFileFromBytes(script.FileName, []byte(in.File))},
	}); err != nil {
		return nil, err
	}
	return answerWith(scriptInfo)(t.scripts.Get(ctx, in.ScriptID))
}

func (t *scriptTools) scriptRun(ctx context.Context, in ScriptRunInput) (*RunResult, error) {
	params, err := objectArg("parameters", in.Parameters)
	if err != nil {
		return nil, err
	}
	run, err := t.scripts.Run(ctx, in.ScriptID, &client.RunScriptRequest{Parameters: params})
	if err != nil {
		return nil, err
	}
	return t.follower.follow(ctx, run, in.Wait, in.TimeoutSeconds, in.Verbosity == "full")
}

func scriptInfo(s *client.Script) ScriptInfo {
	info := ScriptInfo{
		ScriptID: s.ScriptID, Version: s.Version, WorkflowID: s.WorkflowID, CacheKey: s.CacheKey,
		RunID: ptr.Value(s.RunID), CreatedAt: timeText(&s.CreatedAt),
	}
	for _, b := range s.Blocks {
		info.Blocks = append(info.Blocks, ScriptBlockInfo(b))
	}
	return info
}
