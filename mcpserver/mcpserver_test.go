package mcpserver_test

// The tools, called with the SDK's own client over both transports against
// a real daemon; every effect is checked through the Go client.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/client/webhook"
	"github.com/abctl/abctl/internal/ptr"
	"github.com/abctl/abctl/mcpserver"
)

var wantTools = []string{
	"skyvern_browser_fleet",
	"skyvern_browser_profile_create", "skyvern_browser_profile_delete", "skyvern_browser_profile_get", "skyvern_browser_profile_list",
	"skyvern_browser_session_close", "skyvern_browser_session_create", "skyvern_browser_session_get", "skyvern_browser_session_list",
	"skyvern_credential_delete", "skyvern_credential_get", "skyvern_credential_list",
	"skyvern_custom_model_list",
	"skyvern_folder_create", "skyvern_folder_delete", "skyvern_folder_get", "skyvern_folder_list", "skyvern_folder_update",
	"skyvern_login",
	"skyvern_run_action", "skyvern_run_approve", "skyvern_run_bulk_cancel", "skyvern_run_frame", "skyvern_run_question", "skyvern_run_reject",
	"skyvern_run_task", "skyvern_run_webhook_retry",
	"skyvern_schedule_create", "skyvern_schedule_delete", "skyvern_schedule_disable", "skyvern_schedule_enable", "skyvern_schedule_list",
	"skyvern_script_deploy", "skyvern_script_get", "skyvern_script_list", "skyvern_script_run",
	"skyvern_tag_key_list", "skyvern_tag_value_list",
	"skyvern_web_ui_link",
	"skyvern_workflow_cancel", "skyvern_workflow_create", "skyvern_workflow_delete", "skyvern_workflow_get",
	"skyvern_workflow_list", "skyvern_workflow_run", "skyvern_workflow_run_retry", "skyvern_workflow_runs", "skyvern_workflow_status",
	"skyvern_workflow_tag_delete", "skyvern_workflow_tags_get", "skyvern_workflow_tags_set",
	"skyvern_workflow_update", "skyvern_workflow_update_folder",
}

func TestListTools(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		res, err := s.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*mcp.Tool{}
		var names []string
		for _, tool := range res.Tools {
			byName[tool.Name] = tool
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, wantTools) {
			t.Fatalf("tools = %v\nwant %v", names, wantTools)
		}
		for _, tool := range res.Tools {
			in := schemaMap(t, tool.InputSchema)
			noArgs := tool.Name == "skyvern_tag_key_list" || tool.Name == "skyvern_browser_session_list"
			if in["type"] != "object" || in["properties"] == nil && !noArgs {
				t.Errorf("%s: input schema %v is not an object schema with properties", tool.Name, in)
			}
			if out := schemaMap(t, tool.OutputSchema); out["type"] != "object" {
				t.Errorf("%s: output schema %v, want an object schema", tool.Name, out)
			}
			if len(tool.Description) < 40 || tool.Title == "" || tool.Annotations == nil {
				t.Errorf("%s: description %q, title %q, annotations %v: want all three", tool.Name, tool.Description, tool.Title, tool.Annotations)
			}
			own := strings.Contains(tool.Description, "abctl's own tool")
			hosted := !strings.Contains(tool.Name, "tag") && !strings.Contains(tool.Name, "bulk") && !strings.Contains(tool.Name, "script") &&
				!strings.Contains(tool.Name, "webhook") && tool.Name != "skyvern_run_action" &&
				tool.Name != "skyvern_workflow_runs" && tool.Name != "skyvern_workflow_run_retry" && tool.Name != "skyvern_custom_model_list" && tool.Name != "skyvern_browser_fleet" && tool.Name != "skyvern_web_ui_link" &&
				!slices.Contains([]string{"skyvern_run_question", "skyvern_run_approve", "skyvern_run_reject", "skyvern_run_frame"}, tool.Name)
			if own == hosted {
				t.Errorf("%s: description says own tool = %v; the hosted service has it = %v", tool.Name, own, hosted)
			}
		}

		// The hosted service's arguments, with their schema details.
		task := schemaMap(t, byName["skyvern_run_task"].InputSchema)
		props := task["properties"].(map[string]any)
		for _, arg := range []string{"prompt", "url", "data_extraction_schema", "max_steps", "timeout_seconds"} {
			p, ok := props[arg].(map[string]any)
			if !ok || p["description"] == nil {
				t.Errorf("skyvern_run_task: argument %s missing or undescribed: %v", arg, props[arg])
			}
		}
		if req := task["required"].([]any); len(req) != 1 || req[0] != "prompt" {
			t.Errorf("skyvern_run_task requires %v, want [prompt]", req)
		}
		if d := props["timeout_seconds"].(map[string]any)["default"]; d != float64(180) {
			t.Errorf("skyvern_run_task timeout_seconds default %v, want 180", d)
		}
		create := schemaMap(t, byName["skyvern_workflow_create"].InputSchema)["properties"].(map[string]any)
		if got := fmt.Sprint(create["format"].(map[string]any)["enum"]); got != "[auto json yaml]" {
			t.Errorf("skyvern_workflow_create format enum %s, want [auto json yaml]", got)
		}
		run := schemaMap(t, byName["skyvern_workflow_run"].InputSchema)["properties"].(map[string]any)
		if d := run["timeout_seconds"].(map[string]any)["default"]; d != float64(300) {
			t.Errorf("skyvern_workflow_run timeout_seconds default %v, want 300", d)
		}
		if a := byName["skyvern_workflow_delete"].Annotations; a.DestructiveHint == nil || !*a.DestructiveHint {
			t.Errorf("skyvern_workflow_delete annotations %+v, want destructive", a)
		}
		if a := byName["skyvern_workflow_list"].Annotations; !a.ReadOnlyHint {
			t.Errorf("skyvern_workflow_list annotations %+v, want read-only", a)
		}
	})
}

func schemaMap(t *testing.T, schema any) map[string]any {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// agentYAML declares the scripted executor's script as a parameter (with a
// default) and a required parameter.
const agentYAML = `title: MCP test agent
description: made by the MCP tests
workflow_definition:
  parameters:
    - key: script
      parameter_type: workflow
      workflow_parameter_type: string
      default_value: "steps=1"
    - key: topic
      parameter_type: workflow
      workflow_parameter_type: string
      description: what to look for
  blocks:
    - block_type: navigation
      label: open_site
      url: https://example.com
      navigation_goal: |
        Find the page about {{ topic }}.
        Stop there.
`

func TestAgentsAndFolders(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		ctx := t.Context()

		// Folders.
		folder := call[mcpserver.FolderInfo](t, s, "skyvern_folder_create", map[string]any{"title": "Reports", "description": "monthly"})
		if got, err := e.c.Folders.Get(ctx, folder.FolderID); err != nil || got.Title != "Reports" || ptr.Value(got.Description) != "monthly" {
			t.Fatalf("folder_create made %+v (%v)", got, err)
		}
		renamed := call[mcpserver.FolderInfo](t, s, "skyvern_folder_update", map[string]any{"folder_id": folder.FolderID, "title": "Monthly reports"})
		if got, _ := e.c.Folders.Get(ctx, folder.FolderID); renamed.Title != "Monthly reports" || got.Title != "Monthly reports" || ptr.Value(got.Description) != "monthly" {
			t.Errorf("folder_update answered %+v; the folder is %+v", renamed, got)
		}
		if got := call[mcpserver.FolderInfo](t, s, "skyvern_folder_get", map[string]any{"folder_id": folder.FolderID}); got.Title != "Monthly reports" {
			t.Errorf("folder_get = %+v", got)
		}
		list := call[mcpserver.FolderList](t, s, "skyvern_folder_list", map[string]any{"search": "monthly"})
		if len(list.Folders) != 1 || list.Folders[0].FolderID != folder.FolderID || list.PageSize != 50 || list.HasMore {
			t.Errorf("folder_list = %+v", list)
		}

		// Create from YAML, into the folder.
		created := call[mcpserver.AgentDetail](t, s, "skyvern_workflow_create", map[string]any{"definition": agentYAML, "folder_id": folder.FolderID})
		agent, err := e.c.Agents.Get(ctx, created.WorkflowID, nil)
		if err != nil || agent.Title != "MCP test agent" || ptr.Value(agent.FolderID) != folder.FolderID || agent.Version != 1 {
			t.Fatalf("workflow_create answered %+v; the agent is %+v (%v)", created, agent, err)
		}
		if created.VersionID != agent.WorkflowID || created.Status != "published" ||
			!slices.Equal(created.Blocks, []mcpserver.BlockInfo{{Label: "open_site", BlockType: "navigation"}}) {
			t.Errorf("workflow_create answered %+v", created)
		}
		wantParams := []mcpserver.ParameterInfo{
			{Key: "script", Type: "string", Default: "steps=1"},
			{Key: "topic", Type: "string", Description: "what to look for", Required: true},
		}
		if !slices.Equal(created.Parameters, wantParams) {
			t.Errorf("parameters = %+v\nwant %+v", created.Parameters, wantParams)
		}

		// Get as YAML (the agent file form), which an update takes back.
		asYAML := call[mcpserver.AgentDetail](t, s, "skyvern_workflow_get", map[string]any{"workflow_id": created.WorkflowID, "format": "yaml"})
		if !strings.HasPrefix(asYAML.DefinitionYAML, "title: MCP test agent\n") || asYAML.Definition != nil ||
			!strings.Contains(asYAML.DefinitionYAML, "navigation_goal: |\n") || !strings.Contains(asYAML.DefinitionYAML, "default_value: steps=1\n") {
			t.Errorf("workflow_get yaml:\n%s", asYAML.DefinitionYAML)
		}
		edited := strings.Replace(asYAML.DefinitionYAML, "Stop there.", "Stop there, please.", 1)
		call[mcpserver.AgentDetail](t, s, "skyvern_workflow_update", map[string]any{"workflow_id": created.WorkflowID, "definition": edited})
		agent, err = e.c.Agents.Get(ctx, created.WorkflowID, nil)
		if nav, ok := agent.WorkflowDefinition.Blocks[0].(*client.NavigationBlock); err != nil || agent.Version != 2 || !ok ||
			nav.NavigationGoal != "Find the page about {{ topic }}.\nStop there, please.\n" {
			t.Fatalf("after the YAML update the agent is %+v (%v)", agent, err)
		}

		// Update from the JSON definition workflow_get returns.
		asJSON := call[mcpserver.AgentDetail](t, s, "skyvern_workflow_get", map[string]any{"workflow_id": created.WorkflowID})
		def, _ := asJSON.Definition.(map[string]any)
		if def["title"] != "MCP test agent" {
			t.Fatalf("workflow_get definition = %v", asJSON.Definition)
		}
		def["title"] = "MCP test agent, renamed"
		defJSON, _ := json.Marshal(def)
		updated := call[mcpserver.AgentDetail](t, s, "skyvern_workflow_update", map[string]any{"workflow_id": created.WorkflowID, "definition": string(defJSON)})
		agent, err = e.c.Agents.Get(ctx, created.WorkflowID, nil)
		if err != nil || agent.Version != 3 || agent.Title != "MCP test agent, renamed" || updated.Version != 3 || ptr.Value(agent.FolderID) != folder.FolderID {
			t.Fatalf("workflow_update answered %+v; the agent is %+v (%v)", updated.AgentSummary, agent, err)
		}
		if v1 := call[mcpserver.AgentDetail](t, s, "skyvern_workflow_get", map[string]any{"workflow_id": created.WorkflowID, "version": 1}); v1.Title != "MCP test agent" || v1.Version != 1 {
			t.Errorf("workflow_get version 1 = %+v", v1.AgentSummary)
		}

		// A misspelt field is named, not dropped; the session goes on.
		msg := callError(t, s, "skyvern_workflow_create", map[string]any{"definition": `{"title": "x", "workflow_defintion": {}}`})
		if !strings.Contains(msg, `unknown field "workflow_defintion"`) {
			t.Errorf("misspelt field: %s", msg)
		}

		// List and search.
		found := call[mcpserver.WorkflowList](t, s, "skyvern_workflow_list", map[string]any{"search": "renamed"})
		if len(found.Workflows) != 1 || found.Workflows[0].WorkflowID != created.WorkflowID || found.Page != 1 || found.PageSize != 10 {
			t.Errorf("workflow_list search = %+v", found)
		}
		if none := call[mcpserver.WorkflowList](t, s, "skyvern_workflow_list", map[string]any{"query": "no such agent"}); len(none.Workflows) != 0 {
			t.Errorf("workflow_list query for nothing = %+v", none)
		}

		// Tags.
		tagged := call[mcpserver.AgentTagsResult](t, s, "skyvern_workflow_tags_set", map[string]any{
			"workflow_id": created.WorkflowID, "tags": []string{"env:prod", "urgent"}, "colors": map[string]string{"env": "green"},
		})
		if got := tagTexts(tagged.Tags); !slices.Equal(got, []string{"urgent", "env:prod"}) {
			t.Errorf("workflow_tags_set answered %v", got)
		}
		if got, err := e.c.Agents.GetTags(ctx, created.WorkflowID); err != nil || len(got.Tags) != 2 {
			t.Errorf("the agent's tags are %+v (%v)", got, err)
		}
		if got := call[mcpserver.AgentTagsResult](t, s, "skyvern_workflow_tags_get", map[string]any{"workflow_id": created.WorkflowID}); !slices.Equal(tagTexts(got.Tags), []string{"urgent", "env:prod"}) {
			t.Errorf("workflow_tags_get = %+v", got)
		}
		keys := call[mcpserver.TagKeyList](t, s, "skyvern_tag_key_list", nil)
		if len(keys.TagKeys) != 1 || keys.TagKeys[0].Key != "env" || keys.TagKeys[0].WorkflowCount != 1 {
			t.Errorf("tag_key_list = %+v", keys)
		}
		values := call[mcpserver.TagValueList](t, s, "skyvern_tag_value_list", map[string]any{"key": "env"})
		if len(values.TagValues) != 1 || values.TagValues[0].Tag != "env:prod" || values.TagValues[0].Color != "green" {
			t.Errorf("tag_value_list = %+v", values)
		}
		if byTag := call[mcpserver.WorkflowList](t, s, "skyvern_workflow_list", map[string]any{"tags": []string{"env:prod"}}); len(byTag.Workflows) != 1 {
			t.Errorf("workflow_list by tag = %+v", byTag)
		}
		call[mcpserver.AgentTagsResult](t, s, "skyvern_workflow_tag_delete", map[string]any{"workflow_id": created.WorkflowID, "key": "env"})
		left := call[mcpserver.AgentTagsResult](t, s, "skyvern_workflow_tag_delete", map[string]any{"workflow_id": created.WorkflowID, "label": "urgent"})
		if got, err := e.c.Agents.GetTags(ctx, created.WorkflowID); err != nil || len(got.Tags) != 0 || len(left.Tags) != 0 {
			t.Errorf("after tag_delete the agent's tags are %+v (%v), the tool said %+v", got, err, left)
		}
		if msg := callError(t, s, "skyvern_workflow_tag_delete", map[string]any{"workflow_id": created.WorkflowID}); !strings.Contains(msg, "either key") {
			t.Errorf("tag_delete without key or label: %s", msg)
		}

		// Out of the folder, then delete both.
		moved := call[mcpserver.AgentSummary](t, s, "skyvern_workflow_update_folder", map[string]any{"workflow_id": created.WorkflowID, "folder_id": ""})
		if got, _ := e.c.Agents.Get(ctx, created.WorkflowID, nil); moved.FolderID != "" || got.FolderID != nil {
			t.Errorf("workflow_update_folder answered %+v; the agent's folder is %v", moved, ptr.Value(got.FolderID))
		}
		if del := call[mcpserver.DeleteResult](t, s, "skyvern_workflow_delete", map[string]any{"workflow_id": created.WorkflowID}); !del.Deleted {
			t.Errorf("workflow_delete = %+v", del)
		}
		if _, err := e.c.Agents.Get(ctx, created.WorkflowID, nil); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("the deleted agent reads as %v, want 404", err)
		}
		if del := call[mcpserver.FolderDeleteResult](t, s, "skyvern_folder_delete", map[string]any{"folder_id": folder.FolderID}); !del.Deleted || del.WorkflowsDeleted {
			t.Errorf("folder_delete = %+v", del)
		}
		if _, err := e.c.Folders.Get(ctx, folder.FolderID); !errors.Is(err, client.ErrNotFound) {
			t.Errorf("the deleted folder reads as %v, want 404", err)
		}
	})
}

func tagTexts(tags []mcpserver.TagInfo) []string {
	var out []string
	for _, t := range tags {
		out = append(out, t.Tag)
	}
	return out
}

func TestRuns(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		ctx := t.Context()

		// A task, waited for (the default), with a webhook.
		task := call[mcpserver.RunResult](t, s, "skyvern_run_task", map[string]any{
			"prompt":                 `script: steps=2;output={"title":"Example"}`,
			"url":                    "https://example.com",
			"data_extraction_schema": `{"type":"object","properties":{"title":{"type":"string"}}}`,
			"webhook_url":            e.hooks.url(),
		})
		if task.Status != "completed" || !task.Finished || task.StepCount != 2 || fmt.Sprint(task.Output) != "map[title:Example]" || task.StillRunning {
			t.Fatalf("run_task = %+v", task)
		}
		run, err := e.c.Runs.Get(ctx, task.RunID)
		if err != nil || run.Status != client.RunStatusCompleted || string(run.Output) != `{"title":"Example"}` {
			t.Fatalf("the task run is %+v (%v)", run, err)
		}
		if echo, _ := run.TaskRequest(); echo == nil || strings.TrimSuffix(echo.URL, "/") != "https://example.com" || !strings.Contains(string(echo.DataExtractionSchema), `"title"`) {
			t.Errorf("the run's request echo is %+v", echo)
		}
		eventually(t, "the task's webhook", func() bool { return len(e.hooks.deliveries()) == 1 })

		// Its webhook, re-sent: signed with the key the tools were given.
		replay := call[mcpserver.WebhookRetryResult](t, s, "skyvern_run_webhook_retry", map[string]any{"run_id": task.RunID})
		if replay.TargetWebhookURL != e.hooks.url() || !replay.Queued && (replay.StatusCode != 200 || replay.ResponseBody != "thanks") {
			t.Errorf("run_webhook_retry = %+v", replay)
		}
		eventually(t, "the re-sent webhook", func() bool { return len(e.hooks.deliveries()) == 2 })
		got := e.hooks.deliveries()
		if len(got) != 2 {
			t.Fatalf("the receiver got %d deliveries, want 2", len(got))
		}
		if err := webhook.Verify(testKey, got[1].body, got[1].signature); err != nil || !strings.Contains(string(got[1].body), task.RunID) {
			t.Errorf("the re-sent webhook %s: %v", got[1].body, err)
		}

		// verbosity full adds the wire object.
		full := call[mcpserver.RunResult](t, s, "skyvern_workflow_status", map[string]any{"run_id": task.RunID, "verbosity": "full"})
		if wire, _ := full.Run.(map[string]any); wire["run_id"] != task.RunID || wire["run_request"] == nil {
			t.Errorf("workflow_status full run = %v", full.Run)
		}

		// An agent run with parameters given as JSON text, waited for.
		created := call[mcpserver.AgentDetail](t, s, "skyvern_workflow_create", map[string]any{"definition": agentYAML, "format": "yaml"})
		done := call[mcpserver.RunResult](t, s, "skyvern_workflow_run", map[string]any{
			"workflow_id": created.WorkflowID,
			"parameters":  `{"topic": "pricing", "script": "steps=3;output={\"answer\":42}"}`,
			"wait":        true,
		})
		if done.Status != "completed" || done.RunType != "workflow_run" || done.StepCount != 3 || fmt.Sprint(done.Output) != "map[answer:42]" {
			t.Fatalf("workflow_run with wait = %+v", done)
		}
		agentRun, err := e.c.Runs.Get(ctx, done.RunID)
		if err != nil {
			t.Fatal(err)
		}
		if echo, _ := agentRun.AgentRequest(); echo == nil || echo.AgentID != created.WorkflowID || echo.Parameters["topic"] != "pricing" {
			t.Errorf("the agent run's request echo is %+v", echo)
		}
		if job, ok := e.exec.Job(done.RunID); !ok || string(job.Parameters["topic"]) != `"pricing"` {
			t.Errorf("the executor got parameters %v", job.Parameters)
		}

		// Without wait: the run id at once, then its status.
		started := call[mcpserver.RunResult](t, s, "skyvern_workflow_run", map[string]any{
			"workflow_id": created.WorkflowID, "parameters": map[string]any{"topic": "jobs"},
		})
		if started.RunID == "" || !strings.Contains(started.Note, "skyvern_workflow_status") && !started.Finished {
			t.Errorf("workflow_run without wait = %+v", started)
		}
		if _, err := e.c.Runs.Wait(ctx, started.RunID, fastPoll); err != nil {
			t.Fatal(err)
		}
		if status := call[mcpserver.RunResult](t, s, "skyvern_workflow_status", map[string]any{"run_id": started.RunID}); status.Status != "completed" || !status.Finished || status.Run != nil {
			t.Errorf("workflow_status = %+v", status)
		}

		// run_with code and ai_fallback reach the run: the executor is
		// asked to record a script, without fallback.
		coded := call[mcpserver.RunResult](t, s, "skyvern_workflow_run", map[string]any{
			"workflow_id": created.WorkflowID, "parameters": map[string]any{"topic": "code"}, "run_with": "code", "ai_fallback": false, "wait": true,
		})
		if job, ok := e.exec.Job(coded.RunID); !ok || job.Script == nil || !job.Script.Record || job.Script.AIFallback {
			t.Errorf("workflow_run with run_with code and ai_fallback false: the executor got %+v", job.Script)
		}

		// A required parameter left out: the service's 400 detail.
		msg := callError(t, s, "skyvern_workflow_run", map[string]any{"workflow_id": created.WorkflowID})
		if !strings.Contains(msg, "400") || !strings.Contains(msg, "topic") {
			t.Errorf("workflow_run without a required parameter: %s", msg)
		}

		// A wait that ends first reports the run as it stands; cancel it.
		blocked := call[mcpserver.RunResult](t, s, "skyvern_run_task", map[string]any{
			"prompt": "script: block=mcp-gate", "timeout_seconds": 1,
		})
		if !blocked.StillRunning || blocked.Finished || !strings.Contains(blocked.Note, blocked.RunID) {
			t.Fatalf("run_task past its timeout = %+v", blocked)
		}
		if run, _ := e.c.Runs.Get(ctx, blocked.RunID); run.Status.IsTerminal() {
			t.Fatalf("the blocked run is %s", run.Status)
		}
		cancelled := call[mcpserver.CancelResult](t, s, "skyvern_workflow_cancel", map[string]any{"run_id": blocked.RunID})
		final, err := e.c.Runs.Wait(ctx, blocked.RunID, fastPoll)
		if err != nil || final.Status != client.RunStatusCanceled || cancelled.RunID != blocked.RunID {
			t.Errorf("after workflow_cancel (%+v) the run is %v (%v)", cancelled, final.Status, err)
		}

		// Bulk cancel: two blocked runs and an unknown id.
		var ids []string
		for range 2 {
			r, err := e.c.Runs.StartTask(ctx, &client.TaskRunRequest{Prompt: "script: block=bulk-gate"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.RunID)
		}
		bulk := call[mcpserver.BulkCancelResult](t, s, "skyvern_run_bulk_cancel", map[string]any{"run_ids": append(ids, "tsk_404")})
		if slices.Sort(bulk.Cancelled); !slices.Equal(bulk.Cancelled, sorted(ids)) || !slices.Equal(bulk.Failed, []string{"tsk_404"}) {
			t.Errorf("run_bulk_cancel = %+v, want %v cancelled and tsk_404 failed", bulk, ids)
		}
		for _, id := range ids {
			if r, err := e.c.Runs.Wait(ctx, id, fastPoll); err != nil || r.Status != client.RunStatusCanceled {
				t.Errorf("run %s after bulk cancel: %v (%v)", id, r.Status, err)
			}
		}
	})
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestErrors: invalid arguments and service errors are tool errors with
// what to fix, and the session stays usable after each.
func TestErrors(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		for _, tc := range []struct {
			tool string
			args map[string]any
			want []string
		}{
			// Refused by the schema, before the service.
			{"skyvern_workflow_status", map[string]any{}, []string{"run_id"}},
			{"skyvern_workflow_status", map[string]any{"run_id": 42}, []string{"run_id"}},
			{"skyvern_workflow_status", map[string]any{"run_id": "tsk_1", "verbose": true}, []string{"verbose"}},
			{"skyvern_workflow_status", map[string]any{"run_id": "tsk_1", "verbosity": "loud"}, []string{"verbosity"}},
			{"skyvern_run_task", map[string]any{"prompt": "x", "timeout_seconds": 0}, []string{"timeout_seconds"}},
			{"skyvern_run_bulk_cancel", map[string]any{"run_ids": []string{}}, []string{"run_ids"}},
			// Refused by the tool.
			{"skyvern_workflow_run", map[string]any{"workflow_id": "wpid_1", "parameters": "not json"}, []string{`"parameters"`, "JSON object"}},
			{"skyvern_workflow_create", map[string]any{"definition": "{\"title\": "}, []string{`"definition"`, "JSON"}},
			{"skyvern_workflow_tags_set", map[string]any{"workflow_id": "wpid_1", "tags": []string{"env:"}}, []string{`"tags"`, "env:"}},
			{"skyvern_folder_update", map[string]any{"folder_id": "fld_1"}, []string{"title"}},
			// Refused by the service: its status and detail.
			{"skyvern_workflow_get", map[string]any{"workflow_id": "wpid_404"}, []string{"404", "Workflow not found. workflow_permanent_id=wpid_404"}},
			{"skyvern_workflow_status", map[string]any{"run_id": "tsk_404"}, []string{"404", "tsk_404"}},
			{"skyvern_folder_get", map[string]any{"folder_id": "fld_404"}, []string{"404", "Folder fld_404 not found"}},
			{"skyvern_workflow_create", map[string]any{"definition": "title: no definition\n"}, []string{"422", "workflow_definition"}},
			{"skyvern_run_webhook_retry", map[string]any{"run_id": "tsk_404"}, []string{"404"}},
			{"skyvern_run_question", map[string]any{"run_id": "wr_404"}, []string{"404", "wr_404"}},
			{"skyvern_run_approve", map[string]any{"run_id": "wr_404", "comment": "ok"}, []string{"404", "wr_404"}},
			{"skyvern_run_reject", map[string]any{}, []string{"run_id"}},
		} {
			msg := callError(t, s, tc.tool, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s(%v): error %q does not mention %q", tc.tool, tc.args, msg, w)
				}
			}
			// The session is still usable.
			if l := call[mcpserver.FolderList](t, s, "skyvern_folder_list", nil); l.Folders == nil {
				t.Errorf("folder_list after an error = %+v", l)
			}
		}
	})
}

// TestRunAction: one click in a real Chromium, then a second action on the
// same page through the returned workflow_run_id.
func TestRunAction(t *testing.T) {
	faces(t, true, func(t *testing.T, e *env, s *mcp.ClientSession) {
		res := call[mcpserver.RunActionResult](t, s, "skyvern_run_action", map[string]any{
			"url": e.site.srv.URL + "/", "selector": "#go", "intention": "the Next link",
		})
		if !strings.HasPrefix(res.WorkflowRunID, "wr_") {
			t.Fatalf("run_action = %+v", res)
		}
		eventually(t, "the click's navigation", func() bool { return e.site.nextVisits() == 1 })
		run, err := e.c.Runs.Get(t.Context(), res.WorkflowRunID)
		if err != nil || run.RunType != client.RunTypeWorkflowRun {
			t.Fatalf("the action's run is %+v (%v)", run, err)
		}
		// The second action runs on the page the first one opened.
		call[mcpserver.RunActionResult](t, s, "skyvern_run_action", map[string]any{
			"url": e.site.srv.URL + "/next", "selector": "#done", "workflow_run_id": res.WorkflowRunID, "timeout": 5000,
		})
		// A selector that matches nothing: the engine's 422 detail.
		msg := callError(t, s, "skyvern_run_action", map[string]any{
			"url": e.site.srv.URL + "/next", "selector": "#missing", "workflow_run_id": res.WorkflowRunID, "timeout": 300,
		})
		if !strings.Contains(msg, "422") {
			t.Errorf("run_action on a missing element: %s", msg)
		}
	})
}

// TestAgentRuns: skyvern_workflow_runs lists an agent's runs with the
// service's filters, and skyvern_workflow_run_retry runs one again with
// its parameters.
func TestAgentRuns(t *testing.T) {
	faces(t, false, func(t *testing.T, e *env, s *mcp.ClientSession) {
		ctx := t.Context()
		def := &client.AgentDefinition{Title: "Invoices", WorkflowDefinition: client.WorkflowDefinition{
			Parameters: []client.Parameter{{Key: "script", ParameterType: client.ParameterTypeWorkflow, WorkflowParameterType: client.WorkflowParameterString}},
			Blocks:     client.Blocks{&client.WaitBlock{BlockBase: client.BlockBase{Label: "pause"}}},
		}}
		agent, err := e.c.Agents.Create(ctx, def, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, script := range []string{"steps=1", `steps=1;status=failed;reason=login refused;errors=[{"error_code":"LOGIN_FAILED"}]`} {
			run, err := e.c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID, Parameters: map[string]any{"script": script}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.c.Runs.Wait(ctx, run.RunID, fastPoll); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, run.RunID)
		}
		all := call[mcpserver.AgentRunsResult](t, s, "skyvern_workflow_runs", map[string]any{"workflow_id": agent.WorkflowPermanentID})
		if len(all.Runs) != 2 || all.Runs[0].RunID != ids[1] || all.Runs[1].RunID != ids[0] || all.Runs[0].Status != "failed" ||
			all.Runs[0].FailureReason != "login refused" || all.Runs[0].Title != "Invoices" || all.Runs[0].FinishedAt == "" {
			t.Errorf("workflow_runs = %+v", all)
		}
		coded := call[mcpserver.AgentRunsResult](t, s, "skyvern_workflow_runs", map[string]any{"error_code": "LOGIN_FAILED", "status": []string{"failed"}})
		if len(coded.Runs) != 1 || coded.Runs[0].RunID != ids[1] {
			t.Errorf("workflow_runs by error code = %+v", coded)
		}
		retried := call[mcpserver.RunResult](t, s, "skyvern_workflow_run_retry", map[string]any{"run_id": ids[0]})
		if retried.RunID == "" || retried.RunID == ids[0] {
			t.Fatalf("workflow_run_retry = %+v", retried)
		}
		done, err := e.c.Runs.Wait(ctx, retried.RunID, fastPoll)
		if err != nil || done.Status != client.RunStatusCompleted {
			t.Errorf("the retry ended %v (%v)", done, err)
		}
		if msg := callError(t, s, "skyvern_workflow_run_retry", map[string]any{"run_id": "wr_404"}); !strings.Contains(msg, "404") && !strings.Contains(strings.ToLower(msg), "not found") {
			t.Errorf("retrying an unknown run: %q", msg)
		}
	})
}
