package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
)

// operation is one API operation: the route the server answers, the call
// the client makes, what the request must carry, and checks on the decoded
// reply.
type operation struct {
	name  string
	route string // ServeMux pattern, relative to the base path
	reply string // 200 body
	call  func(ctx context.Context, c *client.Client) (any, error)

	wantPath   string              // escaped request path
	wantQuery  map[string][]string // nil means none
	wantHeader map[string]string
	wantBody   string // JSON; "" means no body
	check      func(t *testing.T, got any)
}

const sampleDefinitionJSON = `{
  "title": "Contact Forms",
  "webhook_callback_url": "https://example.com/webhook",
  "workflow_definition": {
    "parameters": [{"key": "website_url", "parameter_type": "workflow", "workflow_parameter_type": "string"}],
    "blocks": [{"block_type": "navigation", "label": "fill", "url": "{{website_url}}", "navigation_goal": "Fill the form"}]
  }
}`

const sampleDefinitionYAML = "title: Contact Forms\nworkflow_definition:\n  parameters: []\n  blocks:\n    - block_type: goto_url\n      label: open\n      url: https://example.com/\n"

func sampleDefinition(t *testing.T) *client.AgentDefinition {
	t.Helper()
	var def client.AgentDefinition
	if err := json.Unmarshal([]byte(sampleDefinitionJSON), &def); err != nil {
		t.Fatalf("decode sample definition: %v", err)
	}
	return &def
}

const tagsReply = `{"workflow_run_id":"wr_1","tags":[{"key":null,"value":"urgent","source":"manual","set_at":"2026-01-31T15:20:42.160725","set_by":"o_1"},{"key":"env","value":"prod/eu","source":"manual","set_at":"2026-01-31T15:20:42","set_by":"o_1","new_field":1}]}`
const agentTagsReply = `{"workflow_permanent_id":"wpid_1","tags":[{"key":"env","value":"prod","source":"manual","set_at":"2026-01-31T15:20:42","set_by":"o_1"}]}`
const historyReply = `{"workflow_run_id":"wr_1","events":[{"tag_event_id":"rtge_2","key":"env","value":null,"event_type":"delete","source":"manual","set_at":"2026-01-31T15:21:00","set_by":"o_1","superseded_at":null},{"tag_event_id":"rtge_1","key":"env","value":"prod","event_type":"set","source":"manual","set_at":"2026-01-31T15:20:00","set_by":"o_1","superseded_at":"2026-01-31T15:21:00"}]}`
const folderReply = `{"title":"Billing","description":null,"folder_id":"fld_1","organization_id":"o_1","workflow_count":3,"created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:43.5","color":"blue"}`

func operations(t *testing.T) []operation {
	runWorkflow := fixture(t, "run_workflow.json")
	runTask := fixture(t, "run_task.json")
	agent := fixture(t, "agent_response.json")
	since := client.NewTime(time.Date(2026, 1, 31, 15, 0, 0, 0, time.UTC))

	return []operation{
		{
			name: "1 run task", route: "POST /v1/run/tasks", reply: runTask,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.StartTask(ctx, &client.TaskRunRequest{
					Prompt: "Find the cheapest flight", URL: "https://flights.example.com",
					Engine: client.EngineSkyvernV2, MaxSteps: client.Ptr(12),
					DataExtractionSchema: json.RawMessage(`{"type":"object"}`),
					ErrorCodeMapping:     map[string]string{"no_flights": "no flights shown"},
					WebhookURL:           "http://127.0.0.1:9/hook",
					ProxyLocation:        &client.ProxyLocation{Country: "US", Subdivision: "CA"},
					UserAgent:            "skyvern-mcp",
				})
			},
			wantPath:   "/v1/run/tasks",
			wantHeader: map[string]string{"X-User-Agent": "skyvern-mcp"},
			wantBody: `{"prompt":"Find the cheapest flight","url":"https://flights.example.com","engine":"skyvern-2.0",
				"proxy_location":{"country":"US","subdivision":"CA"},"data_extraction_schema":{"type":"object"},
				"error_code_mapping":{"no_flights":"no flights shown"},"max_steps":12,"webhook_url":"http://127.0.0.1:9/hook"}`,
			check: func(t *testing.T, got any) {
				run := got.(*client.Run)
				if run.Status != "quantum_superposition" || run.IsTerminal() || run.Status.IsKnown() {
					t.Errorf("unknown status: got %q terminal=%v known=%v, want it kept and not terminal", run.Status, run.IsTerminal(), run.Status.IsKnown())
				}
				if run.RunType != client.RunTypeTaskV2 || run.RunType.IsWorkflow() {
					t.Errorf("run type %q", run.RunType)
				}
				if want := time.Date(2026, 1, 31, 15, 20, 42, 500_000_000, time.UTC); !run.ModifiedAt.Equal(want) {
					t.Errorf("modified_at with offset: got %v want %v", run.ModifiedAt, want)
				}
				if run.StepCount != nil || run.FinishedAt != nil || run.GetFailureReason() != "" {
					t.Errorf("nulls decoded as values: %+v", run)
				}
				req, err := run.TaskRequest()
				if err != nil || req.Prompt != "Find the cheapest flight to Lisbon" || req.Model.Name() != "gpt-4.1" ||
					req.ProxyLocation == nil || req.ProxyLocation.String() != "US/CA" || *req.MaxSteps != 12 {
					t.Errorf("run_request echo: %+v, %v", req, err)
				}
				if _, err := run.AgentRequest(); err == nil {
					t.Error("AgentRequest on a task run: want an error")
				}
			},
		},
		{
			name: "2 run agent", route: "POST /v1/run/agents", reply: runWorkflow,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.StartAgent(ctx, &client.AgentRunRequest{
					AgentID: "wpid_490440779503357777", Parameters: map[string]any{"email": "me@example.com", "retries": 3},
					WebhookURL: "http://127.0.0.1:9/hook", Template: true, MaxStepsOverride: client.Ptr(25), UserAgent: "ci-bot",
				})
			},
			wantPath:   "/v1/run/agents",
			wantQuery:  map[string][]string{"template": {"true"}},
			wantHeader: map[string]string{"X-Max-Steps-Override": "25", "X-User-Agent": "ci-bot"},
			wantBody:   `{"workflow_id":"wpid_490440779503357777","parameters":{"email":"me@example.com","retries":3},"webhook_url":"http://127.0.0.1:9/hook"}`,
			check: func(t *testing.T, got any) {
				run := got.(*client.Run)
				checkWorkflowRun(t, run)
				req, err := run.AgentRequest()
				if err != nil || req.AgentID != "wpid_490440779503357777" || req.Parameters["retries"] != float64(3) {
					t.Errorf("run_request echo: %+v, %v", req, err)
				}
			},
		},
		{
			name: "3 get run", route: "GET /v1/runs/{id}", reply: runWorkflow,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.Get(ctx, "wr_490440779503358000")
			},
			wantPath: "/v1/runs/wr_490440779503358000",
			check:    func(t *testing.T, got any) { checkWorkflowRun(t, got.(*client.Run)) },
		},
		{
			name: "4 cancel run", route: "POST /v1/runs/{id}/cancel", reply: "null",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.Runs.Cancel(ctx, "tsk_1")
			},
			wantPath: "/v1/runs/tsk_1/cancel",
		},
		{
			name: "5 bulk cancel", route: "POST /v1/runs/cancel", reply: `{"cancelled":["wr_1"],"failed":["tsk_2"],"extra":1}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.CancelMany(ctx, []string{"wr_1", "tsk_2"})
			},
			wantPath: "/v1/runs/cancel",
			wantBody: `{"run_ids":["wr_1","tsk_2"]}`,
			check: func(t *testing.T, got any) {
				r := got.(*client.BulkCancelResponse)
				if !reflect.DeepEqual(r.Cancelled, []string{"wr_1"}) || !reflect.DeepEqual(r.Failed, []string{"tsk_2"}) {
					t.Errorf("bulk cancel: %+v", r)
				}
			},
		},
		{
			name: "retry webhook with replay", route: "POST /v1/runs/{id}/retry_webhook",
			reply: `{"run_id":"wr_1","run_type":"workflow_run","default_webhook_url":"https://a.example/hook","target_webhook_url":"https://b.example/hook","payload":"{\"run_id\":\"wr_1\"}","headers":{"x-skyvern-signature":"ab12","x-skyvern-timestamp":"1769872842","Content-Type":"application/json"},"status_code":200,"latency_ms":41,"response_body":"ok","error":null}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.RetryWebhook(ctx, "wr_1", &client.RetryWebhookRequest{WebhookURL: "https://b.example/hook"})
			},
			wantPath: "/v1/runs/wr_1/retry_webhook",
			wantBody: `{"webhook_url":"https://b.example/hook"}`,
			check: func(t *testing.T, got any) {
				r := got.(*client.WebhookReplay)
				if r == nil || r.Payload != `{"run_id":"wr_1"}` || *r.StatusCode != 200 || r.LatencyMS != 41 || r.Headers["x-skyvern-signature"] != "ab12" {
					t.Errorf("replay: %+v", r)
				}
			},
		},
		{
			name: "retry webhook with empty reply", route: "POST /v1/runs/{id}/retry_webhook", reply: "",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.RetryWebhook(ctx, "wr_1", nil)
			},
			wantPath: "/v1/runs/wr_1/retry_webhook",
			wantBody: `{}`,
			check: func(t *testing.T, got any) {
				if r := got.(*client.WebhookReplay); r != nil {
					t.Errorf("empty reply: got %+v, want nil", r)
				}
			},
		},
		{
			name: "run artifacts", route: "GET /v1/runs/{id}/artifacts",
			reply: `[{"artifact_id":"a_1","artifact_type":"screenshot_action","uri":"file:///data/a_1.png","bundle_key":null,"checksum":"abc","file_size":1024,"task_id":null,"step_id":"stp_1","workflow_run_id":"wr_1","workflow_run_block_id":null,"run_id":"wr_1","browser_session_id":null,"observer_cruise_id":null,"observer_thought_id":null,"ai_suggestion_id":null,"signed_url":"http://127.0.0.1:8780/x","archived":false,"organization_id":"o_1","created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:42","unknown":[1]}]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.ListArtifacts(ctx, "wr_1", &client.ListArtifactsOptions{Types: []client.ArtifactType{client.ArtifactScreenshotAction, client.ArtifactRecording}})
			},
			wantPath:  "/v1/runs/wr_1/artifacts",
			wantQuery: map[string][]string{"artifact_type": {"screenshot_action", "recording"}},
			check: func(t *testing.T, got any) {
				a := got.([]*client.Artifact)
				if len(a) != 1 || a[0].ArtifactType != client.ArtifactScreenshotAction || *a[0].FileSize != 1024 || *a[0].SignedURL != "http://127.0.0.1:8780/x" {
					t.Errorf("artifacts: %+v", a)
				}
			},
		},
		{
			name: "list runs", route: "GET /v1/runs",
			reply: `[{"task_run_id":"tr_1","run_id":"wr_1","task_run_type":"workflow_run","status":"completed","title":"Contact","started_at":"2026-01-31T15:20:42","finished_at":"2026-01-31T15:21:00.5","created_at":"2026-01-31T15:20:41","workflow_permanent_id":"wpid_1","workflow_deleted":false,"script_run":false,"trigger_type":"api","extra":true},
				{"task_run_id":"tr_2","run_id":"tsk_v2_2","task_run_type":"task_v2","status":"paused","title":null,"started_at":null,"finished_at":null,"created_at":"2026-01-31T15:20:40","workflow_permanent_id":null,"trigger_type":null}]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.List(ctx, &client.ListRunsOptions{Page: 2, PageSize: 50, Status: []client.RunStatus{client.RunStatusCompleted, client.RunStatusFailed},
					RunType: []client.RunType{client.RunTypeWorkflowRun}, SearchKey: "contact", WorkflowPermanentID: []string{"wpid_1", "wpid_2"},
					Tags: []string{"env:prod", "urgent"}})
			},
			wantPath: "/v1/runs",
			wantQuery: map[string][]string{"page": {"2"}, "page_size": {"50"}, "status": {"completed", "failed"}, "run_type": {"workflow_run"},
				"search_key": {"contact"}, "workflow_permanent_id": {"wpid_1", "wpid_2"}, "tags": {"env:prod", "urgent"}},
			check: func(t *testing.T, got any) {
				runs := got.([]*client.RunListItem)
				if len(runs) != 2 || runs[0].RunID != "wr_1" || runs[0].RunType != client.RunTypeWorkflowRun || *runs[0].WorkflowPermanentID != "wpid_1" ||
					runs[0].FinishedAt == nil || *runs[0].TriggerType != "api" || runs[1].Status != "paused" || runs[1].Title != nil || runs[1].StartedAt != nil {
					t.Errorf("runs: %+v", runs)
				}
			},
		},
		{
			// The hosted service's shape: a loop block with an inner block
			// and a thought under it, members the client does not decode
			// (actions) beside them.
			name: "run timeline", route: "GET /v1/runs/{id}/timeline",
			reply: `[{"type":"block","block":{"workflow_run_block_id":"wrb_2","workflow_run_id":"wr_1","organization_id":"o_1","block_type":"for_loop","label":"each_invoice","status":"completed","output":[{"a":1}],"loop_values":["x","y"],"actions":[],"duration":2.5,"created_at":"2026-01-31T15:20:41","modified_at":"2026-01-31T15:20:44"},
				"children":[{"type":"block","block":{"workflow_run_block_id":"wrb_3","parent_workflow_run_block_id":"wrb_2","workflow_run_id":"wr_1","organization_id":"o_1","block_type":"navigation","label":"open","status":"failed","failure_reason":"no such page","current_value":"y","current_index":1,"created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:43"},
				"children":[{"type":"thought","thought":{"thought_id":"ot_1","task_id":"tsk_1","organization_id":"o_1","workflow_run_block_id":"wrb_3","thought":"Open the invoice.","answer":"click [e5]","input_token_count":1234,"created_at":"2026-01-31T15:20:42.5","modified_at":"2026-01-31T15:20:42.5"},"children":[],"created_at":"2026-01-31T15:20:42.5","modified_at":"2026-01-31T15:20:42.5"}],
				"created_at":"2026-01-31T15:20:42","modified_at":"2026-01-31T15:20:43"}],
				"created_at":"2026-01-31T15:20:41","modified_at":"2026-01-31T15:20:44"}]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.Timeline(ctx, "wr_1")
			},
			wantPath: "/v1/runs/wr_1/timeline",
			check: func(t *testing.T, got any) {
				tl := got.([]*client.TimelineEntry)
				if len(tl) != 1 || tl[0].Type != client.TimelineBlockEntry || tl[0].Block == nil {
					t.Fatalf("entries: %+v", tl)
				}
				loop := tl[0].Block
				if loop.WorkflowRunBlockID != "wrb_2" || loop.BlockType != client.BlockTypeForLoop || *loop.Label != "each_invoice" ||
					*loop.Status != "completed" || string(loop.Output) != `[{"a":1}]` || len(loop.LoopValues) != 2 || *loop.Duration != 2.5 ||
					tl[0].CreatedAt.String() != "2026-01-31T15:20:41" {
					t.Errorf("the loop block: %+v", loop)
				}
				if len(tl[0].Children) != 1 || tl[0].Children[0].Block == nil {
					t.Fatalf("the loop's children: %+v", tl[0].Children)
				}
				inner := tl[0].Children[0]
				if b := inner.Block; *b.ParentWorkflowRunBlockID != "wrb_2" || *b.CurrentValue != "y" || *b.CurrentIndex != 1 || *b.FailureReason != "no such page" {
					t.Errorf("the inner block: %+v", b)
				}
				if len(inner.Children) != 1 || inner.Children[0].Type != client.TimelineThoughtEntry {
					t.Fatalf("the inner block's children: %+v", inner.Children)
				}
				th := inner.Children[0].Thought
				if th == nil || th.ThoughtID != "ot_1" || *th.Thought != "Open the invoice." || *th.Answer != "click [e5]" || *th.InputTokenCount != 1234 {
					t.Errorf("the thought: %+v", th)
				}
			},
		},
		{
			name: "run steps", route: "GET /v1/runs/{id}/steps",
			reply: `[{"number":2,"block_label":"login","workflow_run_block_id":"wrb_1","url":"http://127.0.0.1:8000/account","thought":"Signed in.","actions":["click [e5] button \"Sign in\": ok, loaded /account.html","type [e2] \"me\": ok"],"decision":"complete","timings_ms":{"settle":12.5,"observe":30,"model":812.25,"act":95},"tokens":{"input":1234,"output":56},"created_at":"2026-01-31T15:20:44"},
				{"number":1,"block_label":null,"url":"http://127.0.0.1:8000/","thought":"","actions":[],"decision":"unusable answer","timings_ms":{"settle":0,"observe":1,"model":2,"act":0},"tokens":{"input":1,"output":2},"created_at":"2026-01-31T15:20:43.5"}]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.Steps(ctx, "wr_1")
			},
			wantPath: "/v1/runs/wr_1/steps",
			check: func(t *testing.T, got any) {
				steps := got.([]*client.RunStep)
				if len(steps) != 2 {
					t.Fatalf("%d steps", len(steps))
				}
				s := steps[0]
				if s.Number != 2 || *s.BlockLabel != "login" || s.WorkflowRunBlockID != "wrb_1" || len(s.Actions) != 2 ||
					s.TimingsMS.Model != 812.25 || s.Tokens.Input != 1234 || s.CreatedAt.String() != "2026-01-31T15:20:44" {
					t.Errorf("step 2: %+v", s)
				}
				if want := `click [e5] button "Sign in": ok, loaded /account.html (+1 more action) → complete`; s.Summary() != want {
					t.Errorf("summary %q, want %q", s.Summary(), want)
				}
				if steps[1].BlockLabel != nil || steps[1].Summary() != "unusable answer" {
					t.Errorf("step 1: %+v, summary %q", steps[1], steps[1].Summary())
				}
				if latest := client.LatestStep(steps); latest != s {
					t.Errorf("LatestStep = %+v, want step 2", latest)
				}
			},
		},
		{
			name: "7 list agents", route: "GET /v1/agents", reply: "[" + agent + "]",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.List(ctx, &client.ListAgentsOptions{
					Page: 2, PageSize: 25, SearchKey: "login", Title: "old", FolderID: "fld_1",
					Status: []client.AgentStatus{client.AgentStatusPublished, client.AgentStatusAutoGenerated},
					Tags:   []string{"env:prod", "team:*"}, OnlySavedTasks: true, OnlyWorkflows: true, OnlyTemplates: true, Template: true,
				})
			},
			wantPath: "/v1/agents",
			wantQuery: map[string][]string{
				"page": {"2"}, "page_size": {"25"}, "search_key": {"login"}, "title": {"old"}, "folder_id": {"fld_1"},
				"status": {"published", "auto_generated"}, "tags": {"env:prod", "team:*"},
				"only_saved_tasks": {"true"}, "only_workflows": {"true"}, "only_templates": {"true"}, "template": {"true"},
			},
			check: func(t *testing.T, got any) {
				agents := got.([]*client.Agent)
				if len(agents) != 1 || !strings.HasPrefix(agents[0].WorkflowPermanentID, "wpid_") || len(agents[0].WorkflowDefinition.Blocks) == 0 {
					t.Errorf("agents: %+v", agents)
				}
			},
		},
		{
			name: "8 create agent", route: "POST /v1/agents", reply: agent,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.Create(ctx, sampleDefinition(t), &client.CreateAgentOptions{FolderID: "fld_1"}, client.WithIdempotencyKey("agents/contact-form.yaml"))
			},
			wantPath:   "/v1/agents",
			wantQuery:  map[string][]string{"folder_id": {"fld_1"}},
			wantHeader: map[string]string{"Idempotency-Key": "agents/contact-form.yaml"},
			wantBody:   `{"json_definition":` + sampleDefinitionJSON + `}`,
			check:      checkAgent,
		},
		{
			name: "8 create agent from YAML", route: "POST /v1/agents", reply: agent,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.CreateYAML(ctx, sampleDefinitionYAML, nil)
			},
			wantPath: "/v1/agents",
			wantBody: mustJSON(map[string]string{"yaml_definition": sampleDefinitionYAML}),
			check:    checkAgent,
		},
		{
			name: "9 update agent", route: "POST /v1/agents/{id}", reply: agent,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.Update(ctx, "wpid_1", sampleDefinition(t))
			},
			wantPath: "/v1/agents/wpid_1",
			wantBody: `{"json_definition":` + sampleDefinitionJSON + `}`,
			check:    checkAgent,
		},
		{
			name: "9 update agent from YAML", route: "POST /v1/agents/{id}", reply: agent,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.UpdateYAML(ctx, "wpid_1", sampleDefinitionYAML)
			},
			wantPath: "/v1/agents/wpid_1",
			wantBody: mustJSON(map[string]string{"yaml_definition": sampleDefinitionYAML}),
			check:    checkAgent,
		},
		{
			name: "10 delete agent", route: "POST /v1/agents/{id}/delete", reply: "null",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return nil, c.Agents.Delete(ctx, "wpid_1")
			},
			wantPath: "/v1/agents/wpid_1/delete",
		},
		{
			name: "get agent version", route: "GET /v1/agents/{id}", reply: agent,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.Get(ctx, "wpid_1", &client.GetAgentOptions{Version: 3})
			},
			wantPath:  "/v1/agents/wpid_1",
			wantQuery: map[string][]string{"version": {"3"}},
			check:     checkAgent,
		},
		{
			name: "agent versions", route: "GET /v1/agents/{id}/versions", reply: "[" + agent + "," + agent + "]",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.Versions(ctx, "wpid_1")
			},
			wantPath: "/v1/agents/wpid_1/versions",
			check: func(t *testing.T, got any) {
				if n := len(got.([]*client.Agent)); n != 2 {
					t.Errorf("versions: %d", n)
				}
			},
		},
		{
			name: "agent folder set", route: "PUT /v1/agents/{id}/folder", reply: agent,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.SetFolder(ctx, "wpid_1", "fld_2")
			},
			wantPath: "/v1/agents/wpid_1/folder",
			wantBody: `{"folder_id":"fld_2"}`,
			check:    checkAgent,
		},
		{
			name: "agent folder cleared", route: "PUT /v1/agents/{id}/folder", reply: agent,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.SetFolder(ctx, "wpid_1", "")
			},
			wantPath: "/v1/agents/wpid_1/folder",
			wantBody: `{"folder_id":null}`,
			check:    checkAgent,
		},
		{
			name: "agent tags apply", route: "POST /v1/agents/{id}/tags", reply: agentTagsReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.ApplyTags(ctx, "wpid_1", &client.TagApplyRequest{
					Tags:         []client.TagInput{{Key: "env", Value: "prod"}, {Value: "urgent"}},
					TagsToDelete: []client.TagDeleteInput{{Key: "team"}, {Value: "stale"}},
					Colors:       map[string]client.TagColor{"env": client.TagColorGreen},
				})
			},
			wantPath: "/v1/agents/wpid_1/tags",
			wantBody: `{"tags":[{"key":"env","value":"prod"},{"value":"urgent"}],"tags_to_delete":[{"key":"team"},{"value":"stale"}],"colors":{"env":"green"}}`,
			check:    checkAgentTags,
		},
		{
			name: "agent tags get", route: "GET /v1/agents/{id}/tags", reply: agentTagsReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.GetTags(ctx, "wpid_1")
			},
			wantPath: "/v1/agents/wpid_1/tags",
			check:    checkAgentTags,
		},
		{
			name: "agent tag delete", route: "DELETE /v1/agents/{id}/tags/{key}", reply: agentTagsReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.DeleteTag(ctx, "wpid_1", "team.owner")
			},
			wantPath: "/v1/agents/wpid_1/tags/team.owner",
			check:    checkAgentTags,
		},
		{
			name: "agent tag history", route: "GET /v1/agents/{id}/tags/history",
			reply: `{"workflow_permanent_id":"wpid_1","events":[{"tag_event_id":"tge_1","key":"env","value":"prod","event_type":"set","source":"manual","set_at":"2026-01-31T15:20:00","set_by":"o_1","superseded_at":null}]}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.TagHistory(ctx, "wpid_1", &client.TagHistoryOptions{Limit: 50, Since: &since, Key: "env"})
			},
			wantPath:  "/v1/agents/wpid_1/tags/history",
			wantQuery: map[string][]string{"limit": {"50"}, "since": {"2026-01-31T15:00:00"}, "key": {"env"}},
			check: func(t *testing.T, got any) {
				h := got.(*client.AgentTagHistory)
				if h.WorkflowPermanentID != "wpid_1" || len(h.Events) != 1 || h.Events[0].EventType != client.TagEventSet || h.Events[0].TagEventID != "tge_1" {
					t.Errorf("history: %+v", h)
				}
			},
		},
		{
			name: "28 batch agent tags", route: "GET /v1/workflow-tags",
			reply: `{"workflow_tags":{"wpid_1":[{"key":null,"value":"urgent"},{"key":"env","value":"prod"}],"wpid_2":[]}}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Agents.BatchGetTags(ctx, []string{"wpid_1", "wpid_2"})
			},
			wantPath:  "/v1/workflow-tags",
			wantQuery: map[string][]string{"workflow_permanent_ids": {"wpid_1,wpid_2"}},
			check: func(t *testing.T, got any) {
				m := got.(map[string][]client.TagItem)
				if len(m) != 2 || len(m["wpid_1"]) != 2 || m["wpid_1"][0].Key != nil || *m["wpid_1"][1].Key != "env" || m["wpid_2"] == nil {
					t.Errorf("batch: %+v", m)
				}
			},
		},
		{
			name: "batch run tags", route: "GET /v1/run-tags",
			reply: `{"run_tags":{"wr_1":[{"key":"env","value":"prod"}]}}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.BatchGetTags(ctx, []string{"wr_1"})
			},
			wantPath:  "/v1/run-tags",
			wantQuery: map[string][]string{"workflow_run_ids": {"wr_1"}},
			check: func(t *testing.T, got any) {
				m := got.(map[string][]client.TagItem)
				if len(m["wr_1"]) != 1 || m["wr_1"][0].Value != "prod" {
					t.Errorf("batch: %+v", m)
				}
			},
		},
		{
			name: "11 create folder", route: "POST /v1/folders", reply: folderReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Folders.Create(ctx, &client.FolderCreateRequest{Title: "Billing", Description: "Invoices"})
			},
			wantPath: "/v1/folders",
			wantBody: `{"title":"Billing","description":"Invoices"}`,
			check:    checkFolder,
		},
		{
			name: "12 list folders", route: "GET /v1/folders", reply: "[" + folderReply + "]",
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Folders.List(ctx, &client.ListFoldersOptions{Page: 3, PageSize: 500, Search: "bill"})
			},
			wantPath:  "/v1/folders",
			wantQuery: map[string][]string{"page": {"3"}, "page_size": {"500"}, "search": {"bill"}},
			check: func(t *testing.T, got any) {
				f := got.([]*client.Folder)
				if len(f) != 1 {
					t.Fatalf("folders: %d", len(f))
				}
				checkFolder(t, f[0])
			},
		},
		{
			name: "13 get folder", route: "GET /v1/folders/{id}", reply: folderReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Folders.Get(ctx, "fld_1")
			},
			wantPath: "/v1/folders/fld_1",
			check:    checkFolder,
		},
		{
			name: "14 update folder", route: "PUT /v1/folders/{id}", reply: folderReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Folders.Update(ctx, "fld_1", &client.FolderUpdateRequest{Title: client.Ptr("Billing")})
			},
			wantPath: "/v1/folders/fld_1",
			wantBody: `{"title":"Billing"}`,
			check:    checkFolder,
		},
		{
			name: "15 delete folder", route: "DELETE /v1/folders/{id}", reply: `{"status":"deleted","folder_id":"fld_1","workflows_deleted":true}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Folders.Delete(ctx, "fld_1", &client.DeleteFolderOptions{DeleteAgents: true})
			},
			wantPath:  "/v1/folders/fld_1",
			wantQuery: map[string][]string{"delete_workflows": {"true"}},
			check: func(t *testing.T, got any) {
				r := got.(*client.FolderDeleteResponse)
				if r.Status != "deleted" || r.FolderID != "fld_1" || !r.WorkflowsDeleted {
					t.Errorf("delete: %+v", r)
				}
			},
		},
		{
			name: "16 apply run tags", route: "POST /v1/runs/{id}/tags", reply: tagsReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.ApplyTags(ctx, "wr_1", &client.TagApplyRequest{Tags: []client.TagInput{{Key: "env", Value: "prod/eu"}}})
			},
			wantPath: "/v1/runs/wr_1/tags",
			wantBody: `{"tags":[{"key":"env","value":"prod/eu"}]}`,
			check:    checkRunTags,
		},
		{
			name: "17 get run tags", route: "GET /v1/runs/{id}/tags", reply: tagsReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.GetTags(ctx, "wr_1")
			},
			wantPath: "/v1/runs/wr_1/tags",
			check:    checkRunTags,
		},
		{
			name: "18 delete run tag", route: "DELETE /v1/runs/{id}/tags/{key}", reply: tagsReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.DeleteTag(ctx, "wr_1", "env")
			},
			wantPath: "/v1/runs/wr_1/tags/env",
			check:    checkRunTags,
		},
		{
			name: "19 run tag history", route: "GET /v1/runs/{id}/tags/history", reply: historyReply,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Runs.TagHistory(ctx, "wr_1", &client.TagHistoryOptions{Limit: 500})
			},
			wantPath:  "/v1/runs/wr_1/tags/history",
			wantQuery: map[string][]string{"limit": {"500"}},
			check: func(t *testing.T, got any) {
				h := got.(*client.RunTagHistory)
				if len(h.Events) != 2 || h.Events[0].EventType != client.TagEventDelete || h.Events[0].Value != nil ||
					h.Events[1].SupersededAt == nil || !h.Events[1].SupersededAt.Equal(time.Date(2026, 1, 31, 15, 21, 0, 0, time.UTC)) {
					t.Errorf("history: %+v", h)
				}
			},
		},
		{
			name: "20 list tag keys", route: "GET /v1/tag-keys",
			reply: `[{"key":"env","description":"Deployment environment","workflow_count":4},{"key":"team","description":null,"workflow_count":0}]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.ListKeys(ctx)
			},
			wantPath: "/v1/tag-keys",
			check: func(t *testing.T, got any) {
				k := got.([]*client.TagKey)
				if len(k) != 2 || *k[0].Description != "Deployment environment" || k[0].WorkflowCount != 4 || k[1].Description != nil {
					t.Errorf("keys: %+v", k)
				}
			},
		},
		{
			name: "21 update tag key", route: "PATCH /v1/tag-keys/{key}", reply: `{"key":"env","description":"Where it runs","workflow_count":4}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.UpdateKey(ctx, "env", "Where it runs")
			},
			wantPath: "/v1/tag-keys/env",
			wantBody: `{"description":"Where it runs"}`,
			check: func(t *testing.T, got any) {
				if k := got.(*client.TagKey); *k.Description != "Where it runs" {
					t.Errorf("key: %+v", k)
				}
			},
		},
		{
			name: "21 clear tag key description", route: "PATCH /v1/tag-keys/{key}", reply: `{"key":"env","description":null,"workflow_count":4}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.UpdateKey(ctx, "env", "")
			},
			wantPath: "/v1/tag-keys/env",
			wantBody: `{"description":null}`,
		},
		{
			name: "22 delete tag key", route: "DELETE /v1/tag-keys/{key}", reply: `{"key":"env","removed_from_workflow_count":4,"removed_from_run_count":2,"removed_count":6}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.DeleteKey(ctx, "env")
			},
			wantPath: "/v1/tag-keys/env",
			check: func(t *testing.T, got any) {
				r := got.(*client.TagKeyDeleteResponse)
				if r.RemovedFromWorkflowCount != 4 || r.RemovedFromRunCount != 2 || r.RemovedCount != 6 {
					t.Errorf("delete key: %+v", r)
				}
			},
		},
		{
			name: "23 list tag values", route: "GET /v1/tag-values", reply: `[{"key":"env","value":"prod","color":"green","workflow_count":2},{"key":"env","value":"dev","color":"chartreuse","workflow_count":0}]`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.ListValues(ctx, "env")
			},
			wantPath:  "/v1/tag-values",
			wantQuery: map[string][]string{"key": {"env"}},
			check: func(t *testing.T, got any) {
				v := got.([]*client.TagValue)
				if len(v) != 2 || v[0].Color != client.TagColorGreen || v[1].Color.IsKnown() {
					t.Errorf("values: %+v", v)
				}
			},
		},
		{
			name: "24 create tag value", route: "POST /v1/tag-values", reply: `{"key":"env","value":"prod","color":"green","workflow_count":0}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.CreateValue(ctx, &client.TagValueCreateRequest{Key: "env", Value: "prod", Color: client.TagColorGreen})
			},
			wantPath: "/v1/tag-values",
			wantBody: `{"key":"env","value":"prod","color":"green"}`,
		},
		{
			name: "25 recolour tag value", route: "PATCH /v1/tag-values/{key}", reply: `{"key":"env","value":"prod/eu","color":"teal","workflow_count":2}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.UpdateValue(ctx, "env", "prod/eu", client.TagColorTeal)
			},
			wantPath: "/v1/tag-values/env",
			wantBody: `{"value":"prod/eu","color":"teal"}`,
			check: func(t *testing.T, got any) {
				if v := got.(*client.TagValue); v.Value != "prod/eu" || v.Color != client.TagColorTeal {
					t.Errorf("value: %+v", v)
				}
			},
		},
		{
			name: "26 delete tag value", route: "DELETE /v1/tag-values/{key}", reply: `{"key":"env","value":"prod","removed_from_workflow_count":2,"removed_from_run_count":0,"removed_count":2}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.DeleteValue(ctx, "env", "prod")
			},
			wantPath: "/v1/tag-values/env",
			wantBody: `{"value":"prod"}`,
			check: func(t *testing.T, got any) {
				if r := got.(*client.TagValueDeleteResponse); r.RemovedFromWorkflowCount != 2 || r.Value != "prod" {
					t.Errorf("delete value: %+v", r)
				}
			},
		},
		{
			name: "27 rename tag value", route: "PATCH /v1/tag-values/{key}/rename", reply: `{"key":"env","value":"production","color":"green","renamed_workflow_count":2}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Tags.RenameValue(ctx, "env", "prod", "production")
			},
			wantPath: "/v1/tag-values/env/rename",
			wantBody: `{"value":"prod","new_value":"production"}`,
			check: func(t *testing.T, got any) {
				if r := got.(*client.TagValueRenameResponse); r.Value != "production" || r.RenamedWorkflowCount != 2 || r.Color != client.TagColorGreen {
					t.Errorf("rename: %+v", r)
				}
			},
		},
		{
			name: "29 run action", route: "POST /v1/sdk/run_action", reply: `{"workflow_run_id":"wr_9","result":{"clicked":true}}`,
			call: func(ctx context.Context, c *client.Client) (any, error) {
				return c.Actions.Run(ctx, &client.RunActionRequest{
					URL:    "http://127.0.0.1:8000/form",
					Action: client.Action{Type: client.ActionClick, Selector: "xpath=//button[1]", Intention: "Submit the form", Timeout: client.Ptr(2500.0)},
				})
			},
			wantPath: "/v1/sdk/run_action",
			wantBody: `{"url":"http://127.0.0.1:8000/form","action":{"type":"ai_click","selector":"xpath=//button[1]","intention":"Submit the form","timeout":2500}}`,
			check: func(t *testing.T, got any) {
				r := got.(*client.RunActionResponse)
				if r.WorkflowRunID != "wr_9" || string(r.Result) != `{"clicked":true}` {
					t.Errorf("action: %+v", r)
				}
			},
		},
	}
}

func TestOperations(t *testing.T) {
	for _, op := range operations(t) {
		t.Run(op.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.reply(op.route, http.StatusOK, op.reply)
			got, err := op.call(t.Context(), ts.client)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			req := ts.only()
			wantMethod := strings.Fields(op.route)[0]
			if req.Method != wantMethod {
				t.Errorf("method %s, want %s", req.Method, wantMethod)
			}
			if req.Path != op.wantPath {
				t.Errorf("path %s, want %s", req.Path, op.wantPath)
			}
			wantQuery := op.wantQuery
			if wantQuery == nil {
				wantQuery = map[string][]string{}
			}
			if !reflect.DeepEqual(req.Query, wantQuery) {
				t.Errorf("query %v, want %v", req.Query, wantQuery)
			}
			if k := req.Header.Get("X-Api-Key"); k != testAPIKey {
				t.Errorf("x-api-key %q", k)
			}
			if ua := req.Header.Get("User-Agent"); !strings.Contains(ua, "abctl-go/") {
				t.Errorf("user agent %q", ua)
			}
			for k, v := range op.wantHeader {
				if got := req.Header.Get(k); got != v {
					t.Errorf("header %s: %q, want %q", k, got, v)
				}
			}
			if op.wantBody == "" {
				if len(req.Body) != 0 {
					t.Errorf("unexpected body %s", req.Body)
				}
				if ct := req.Header.Get("Content-Type"); ct != "" {
					t.Errorf("Content-Type %q on a request without body", ct)
				}
			} else {
				if ct := req.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				assertJSONEqual(t, "body", req.Body, op.wantBody)
			}
			if op.check != nil {
				op.check(t, got)
			}
		})
	}
}

func checkWorkflowRun(t *testing.T, run *client.Run) {
	t.Helper()
	if run.RunID != "wr_490440779503358000" || run.Status != client.RunStatusCompleted || !run.IsTerminal() || !run.RunType.IsWorkflow() {
		t.Errorf("run identity: %s %s %s", run.RunID, run.Status, run.RunType)
	}
	if want := time.Date(2026, 1, 31, 15, 20, 42, 160725000, time.UTC); !run.CreatedAt.Equal(want) {
		t.Errorf("created_at %v, want %v", run.CreatedAt, want)
	}
	if run.FinishedAt == nil || run.FinishedAt.String() != "2026-01-31T15:21:02" {
		t.Errorf("finished_at %v", run.FinishedAt)
	}
	var out struct {
		Extract struct {
			Email string  `json:"email"`
			Price float64 `json:"price"`
		} `json:"Extract_Email_output"`
	}
	if err := run.DecodeOutput(&out); err != nil || out.Extract.Email != "sales@example.com" || out.Extract.Price != 19 {
		t.Errorf("output: %+v, %v", out, err)
	}
	if len(run.DownloadedFiles) != 1 || *run.DownloadedFiles[0].Filename != "invoice-2026-01.pdf" || *run.DownloadedFiles[0].FileSize != 48213 {
		t.Errorf("downloaded files: %+v", run.DownloadedFiles)
	}
	if len(run.ScreenshotURLs) != 3 || run.ScreenshotURLs[0] != "http://127.0.0.1:8780/a/3.png" {
		t.Errorf("screenshots: %v", run.ScreenshotURLs)
	}
	if run.GetStepCount() != 7 || run.GetRecordingURL() == "" || *run.BrowserSeedSource != "fresh" || !*run.AIFallback {
		t.Errorf("step count %d, recording %q", run.GetStepCount(), run.GetRecordingURL())
	}
}

func checkAgent(t *testing.T, got any) {
	t.Helper()
	a := got.(*client.Agent)
	if !strings.HasPrefix(a.WorkflowPermanentID, "wpid_") || a.Title == "" || len(a.WorkflowDefinition.Blocks) == 0 {
		t.Errorf("agent: %+v", a)
	}
}

func checkAgentTags(t *testing.T, got any) {
	t.Helper()
	tags := got.(*client.AgentTags)
	if tags.WorkflowPermanentID != "wpid_1" || len(tags.Tags) != 1 || *tags.Tags[0].Key != "env" || tags.Tags[0].Source != client.TagSourceManual {
		t.Errorf("agent tags: %+v", tags)
	}
}

func checkRunTags(t *testing.T, got any) {
	t.Helper()
	tags := got.(*client.RunTags)
	if tags.WorkflowRunID != "wr_1" || len(tags.Tags) != 2 || tags.Tags[0].Key != nil || tags.Tags[0].Value != "urgent" ||
		*tags.Tags[1].Key != "env" || tags.Tags[1].Value != "prod/eu" || tags.Tags[0].SetAt.String() != "2026-01-31T15:20:42.160725" {
		t.Errorf("run tags: %+v", tags)
	}
}

func checkFolder(t *testing.T, got any) {
	t.Helper()
	f := got.(*client.Folder)
	if f.FolderID != "fld_1" || f.Title != "Billing" || f.Description != nil || f.WorkflowCount != 3 ||
		f.ModifiedAt.String() != "2026-01-31T15:20:43.500000" {
		t.Errorf("folder: %+v (modified %s)", f, f.ModifiedAt)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestStepsWithoutTheRoute: a service that does not serve run steps (the
// hosted service: FastAPI's 404 "Not Found" for the path) gives nil steps
// and no error; an unknown run of a service that does is still
// ErrNotFound.
func TestStepsWithoutTheRoute(t *testing.T) {
	ts := newTestServer(t)
	ts.reply("GET /v1/runs/{id}/steps", http.StatusNotFound, `{"detail":"Not Found"}`)
	steps, err := ts.client.Runs.Steps(t.Context(), "tsk_1")
	if err != nil || steps != nil {
		t.Errorf("route missing: %v, %v; want nil, nil", steps, err)
	}

	ts = newTestServer(t)
	ts.reply("GET /v1/runs/{id}/steps", http.StatusNotFound, `{"detail":"Run tsk_1 not found"}`)
	if _, err := ts.client.Runs.Steps(t.Context(), "tsk_1"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}

	ts = newTestServer(t)
	ts.reply("GET /v1/runs/{id}/steps", http.StatusOK, `[]`)
	if steps, err := ts.client.Runs.Steps(t.Context(), "tsk_1"); err != nil || steps == nil || len(steps) != 0 {
		t.Errorf("no steps: %v, %v; want an empty, non-nil list", steps, err)
	}
	if _, err := ts.client.Runs.Steps(t.Context(), " "); err == nil {
		t.Error("an empty run id: want an error")
	}
	ts = newTestServer(t)
	ts.reply("GET /v1/runs/{id}/timeline", http.StatusBadRequest, `{"detail":"Timeline not available for this run type"}`)
	if _, err := ts.client.Runs.Timeline(t.Context(), "tsk_1"); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("a run type without a timeline: %v, want the service's 400", err)
	}
}
