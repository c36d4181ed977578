package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/agentfile"
	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// In the tools' arguments and answers, "workflow_id" is the agent's
// permanent id (wpid_...), as in the hosted service's MCP tools; the id of
// one version (w_...) is "version_id".

// WorkflowListInput is the input of skyvern_workflow_list.
type WorkflowListInput struct {
	Search        string   `json:"search,omitempty" jsonschema:"words to look for in titles, folder names, ids and parameters (case-insensitive)"`
	Query         string   `json:"query,omitempty" jsonschema:"the same as search, which wins when both are given"`
	FolderID      string   `json:"folder_id,omitempty" jsonschema:"only agents in this folder (fld_...)"`
	Tags          []string `json:"tags,omitempty" jsonschema:"only agents carrying all these tags: label, key:value or key:* (any value of the key)"`
	Status        []string `json:"status,omitempty" jsonschema:"only agents with these statuses (published, draft, auto_generated, importing, import_failed); published and draft when left out"`
	OnlyWorkflows bool     `json:"only_workflows,omitempty" jsonschema:"leave out saved tasks"`
	PageArgs
}

// WorkflowList is the answer of skyvern_workflow_list.
type WorkflowList struct {
	Workflows []AgentSummary `json:"workflows" jsonschema:"the agents, most recently changed first"`
	PageInfo
}

// AgentSummary describes an agent.
type AgentSummary struct {
	WorkflowID  string          `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...), which the other tools take"`
	VersionID   string          `json:"version_id" jsonschema:"id of this version (w_...)"`
	Version     int             `json:"version" jsonschema:"1 for a new agent, one more on every update"`
	Title       string          `json:"title"`
	Description string          `json:"description,omitempty"`
	Status      string          `json:"status" jsonschema:"published, draft, auto_generated, importing or import_failed"`
	FolderID    string          `json:"folder_id,omitempty"`
	Parameters  []ParameterInfo `json:"parameters,omitempty" jsonschema:"what skyvern_workflow_run takes in parameters"`
	CreatedAt   string          `json:"created_at,omitempty"`
	ModifiedAt  string          `json:"modified_at,omitempty"`
}

// ParameterInfo is one parameter a run of the agent takes.
type ParameterInfo struct {
	Key         string `json:"key"`
	Type        string `json:"type" jsonschema:"string, integer, float, boolean, json, file_url or credential_id; or the kind of a secret parameter"`
	Description string `json:"description,omitempty"`
	Default     any    `json:"default,omitempty"`
	Required    bool   `json:"required" jsonschema:"true when a run must give a value (there is no default)"`
}

// AgentDetail is an agent with its definition.
type AgentDetail struct {
	AgentSummary
	Blocks []BlockInfo `json:"blocks,omitempty" jsonschema:"the agent's blocks in order"`
	// Definition is the request-shaped definition: sent back (as JSON text)
	// to skyvern_workflow_update, it stores an equal agent.
	Definition     any    `json:"definition,omitempty" jsonschema:"the definition as JSON, in the shape skyvern_workflow_create and skyvern_workflow_update take"`
	DefinitionYAML string `json:"definition_yaml,omitempty" jsonschema:"the same definition as YAML text (format yaml)"`
}

// BlockInfo names one block.
type BlockInfo struct {
	Label     string `json:"label"`
	BlockType string `json:"block_type"`
}

// WorkflowGetInput is the input of skyvern_workflow_get.
type WorkflowGetInput struct {
	WorkflowID string `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...)"`
	Version    int    `json:"version,omitempty" jsonschema:"a past version; the latest when left out"`
	Format     string `json:"format,omitempty" jsonschema:"how to return the definition: json (default) or yaml"`
}

// WorkflowCreateInput is the input of skyvern_workflow_create.
type WorkflowCreateInput struct {
	Definition string `json:"definition" jsonschema:"the agent definition as YAML or JSON text: title, optional description, and workflow_definition with parameters and blocks"`
	Format     string `json:"format,omitempty" jsonschema:"the definition's format; auto (default) reads JSON when the text starts with {, YAML otherwise"`
	FolderID   string `json:"folder_id,omitempty" jsonschema:"put the new agent in this folder (fld_...)"`
}

// WorkflowUpdateInput is the input of skyvern_workflow_update.
type WorkflowUpdateInput struct {
	WorkflowID string `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...)"`
	Definition string `json:"definition" jsonschema:"the whole new definition as YAML or JSON text (not a patch)"`
	Format     string `json:"format,omitempty" jsonschema:"the definition's format; auto (default) reads JSON when the text starts with {, YAML otherwise"`
}

// WorkflowFolderInput is the input of skyvern_workflow_update_folder.
type WorkflowFolderInput struct {
	WorkflowID string `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...)"`
	FolderID   string `json:"folder_id,omitempty" jsonschema:"the folder to move it to (fld_...); empty takes it out of any folder"`
}

// WorkflowIDInput names one agent.
type WorkflowIDInput struct {
	WorkflowID string `json:"workflow_id" jsonschema:"the agent's permanent id (wpid_...)"`
}

// DeleteResult reports a deletion.
type DeleteResult struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

var definitionFormats = []string{"auto", "json", "yaml"}

// agentPager pages skyvern_workflow_list.
var agentPager = pager{items: "agents", defaultSize: 10, maxSize: 100}

// agentTools list, show, create, change, move and delete agents.
type agentTools struct {
	agents *client.AgentsService
}

func (t *agentTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_workflow_list",
		title: "List or search agents",
		description: "List the saved agents (workflows), most recently changed first, or search them by words, folder, tags or status. " +
			"Each comes with its id (wpid_...) and the parameters a run takes.",
		annotations: readOnly(),
		refine: func(p map[string]*jsonschema.Schema) {
			agentPager.refineArgs(p)
			p["tags"].MaxItems = new(20)
		},
		refineAnswer: agentPager.refineAnswer,
	}, t.workflowList)

	addTool(s, spec{
		name:  "skyvern_workflow_get",
		title: "Get an agent",
		description: "Get a saved agent: its parameters, its blocks and its whole definition (as JSON, or YAML with format yaml), " +
			"for example to explain it or to change it with skyvern_workflow_update.",
		annotations: readOnly(),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "workflow_id")
			bounds(p["version"], 1, 0)
			enum(p["format"], "json", "yaml")
			withDefault(p["format"], `"json"`)
		},
	}, t.workflowGet)

	addTool(s, spec{
		name:  "skyvern_workflow_create",
		title: "Create an agent",
		description: "Save a new agent from a definition written as YAML or JSON text: a title, and a workflow_definition with parameters " +
			"(key, parameter_type workflow, workflow_parameter_type) and blocks (block_type such as navigation, extraction, task, " +
			"for_loop, validation, with a unique label each). Returns the new agent's id (wpid_...), which skyvern_workflow_run takes.",
		annotations: writes(false),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "definition")
			enum(p["format"], definitionFormats...)
			withDefault(p["format"], `"auto"`)
		},
	}, t.workflowCreate)

	addTool(s, spec{
		name:  "skyvern_workflow_update",
		title: "Update an agent",
		description: "Replace an agent's definition with a new one (YAML or JSON text), which becomes its next version; " +
			"the id, the folder and the past versions stay. Start from the definition skyvern_workflow_get returns.",
		annotations: writes(false),
		refine: func(p map[string]*jsonschema.Schema) {
			nonEmpty(p, "workflow_id", "definition")
			enum(p["format"], definitionFormats...)
			withDefault(p["format"], `"auto"`)
		},
	}, t.workflowUpdate)

	addTool(s, spec{
		name:        "skyvern_workflow_update_folder",
		title:       "Move an agent to a folder",
		description: "Move an agent into a folder, or out of any folder with an empty folder_id.",
		annotations: writes(true),
		refine:      nonEmptyArgs("workflow_id"),
	}, t.workflowUpdateFolder)

	addTool(s, spec{
		name:        "skyvern_workflow_delete",
		title:       "Delete an agent",
		description: "Delete a saved agent with all its versions. Its past runs stay readable. Deleting an unknown agent is not an error.",
		annotations: destroys(true),
		refine:      nonEmptyArgs("workflow_id"),
	}, t.workflowDelete)
}

func (t *agentTools) workflowList(ctx context.Context, in WorkflowListInput) (*WorkflowList, error) {
	o := &client.ListAgentsOptions{SearchKey: in.Search, FolderID: in.FolderID, Tags: in.Tags, OnlyWorkflows: in.OnlyWorkflows}
	if o.SearchKey == "" {
		o.SearchKey = in.Query
	}
	for _, st := range in.Status {
		o.Status = append(o.Status, client.AgentStatus(st))
	}
	agents, page, err := listPage(ctx, agentPager, in.PageArgs, func(ctx context.Context, page, size int) ([]*client.Agent, error) {
		o.Page, o.PageSize = page, size
		return t.agents.List(ctx, o)
	}, agentSummary)
	if err != nil {
		return nil, err
	}
	return &WorkflowList{Workflows: agents, PageInfo: page}, nil
}

func (t *agentTools) workflowGet(ctx context.Context, in WorkflowGetInput) (*AgentDetail, error) {
	var o *client.GetAgentOptions
	if in.Version > 0 {
		o = &client.GetAgentOptions{Version: in.Version}
	}
	a, err := t.agents.Get(ctx, in.WorkflowID, o)
	if err != nil {
		return nil, err
	}
	return agentDetail(a, in.Format == "yaml")
}

func (t *agentTools) workflowCreate(ctx context.Context, in WorkflowCreateInput) (*AgentDetail, error) {
	def, yamlText, err := parseDefinition(in.Definition, in.Format)
	if err != nil {
		return nil, err
	}
	var o *client.CreateAgentOptions
	if in.FolderID != "" {
		o = &client.CreateAgentOptions{FolderID: in.FolderID}
	}
	var a *client.Agent
	if def != nil {
		a, err = t.agents.Create(ctx, def, o)
	} else {
		a, err = t.agents.CreateYAML(ctx, yamlText, o)
	}
	if err != nil {
		return nil, err
	}
	return agentDetail(a, false)
}

func (t *agentTools) workflowUpdate(ctx context.Context, in WorkflowUpdateInput) (*AgentDetail, error) {
	def, yamlText, err := parseDefinition(in.Definition, in.Format)
	if err != nil {
		return nil, err
	}
	var a *client.Agent
	if def != nil {
		a, err = t.agents.Update(ctx, in.WorkflowID, def)
	} else {
		a, err = t.agents.UpdateYAML(ctx, in.WorkflowID, yamlText)
	}
	if err != nil {
		return nil, err
	}
	return agentDetail(a, false)
}

func (t *agentTools) workflowUpdateFolder(ctx context.Context, in WorkflowFolderInput) (*AgentSummary, error) {
	return answerWith(agentSummary)(t.agents.SetFolder(ctx, in.WorkflowID, in.FolderID))
}

func (t *agentTools) workflowDelete(ctx context.Context, in WorkflowIDInput) (*DeleteResult, error) {
	return deleted(t.agents.Delete(ctx, in.WorkflowID), &DeleteResult{ID: in.WorkflowID, Deleted: true})
}

// parseDefinition reads a definition argument. JSON is decoded here, so
// that a misspelt field is reported by name instead of being dropped; YAML
// is passed to the service as text, which parses it (and fixes invalid
// labels and keys, as it does for YAML only). The wrapped request body
// ({"json_definition": ...} or {"yaml_definition": "..."}) is accepted too.
func parseDefinition(text, format string) (def *client.AgentDefinition, yamlText string, err error) {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil, "", argError("definition", "empty")
	}
	switch format {
	case "", "auto":
		if trimmed[0] == '{' {
			format = "json"
		} else {
			format = "yaml"
		}
	case "json", "yaml":
	default:
		return nil, "", argError("format", "want auto, json or yaml, got %q", format)
	}
	if format == "yaml" {
		return nil, text, nil
	}

	var wrapper struct {
		JSONDefinition json.RawMessage `json:"json_definition"`
		YAMLDefinition *string         `json:"yaml_definition"`
	}
	raw := []byte(trimmed)
	if json.Unmarshal(raw, &wrapper) == nil {
		switch {
		case wrapper.YAMLDefinition != nil:
			return nil, *wrapper.YAMLDefinition, nil
		case len(wrapper.JSONDefinition) > 0:
			raw = wrapper.JSONDefinition
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	def = new(client.AgentDefinition)
	if err := dec.Decode(def); err != nil {
		return nil, "", argError("definition", "not a valid JSON agent definition: %v", err)
	}
	if dec.More() {
		return nil, "", argError("definition", "more than one JSON value")
	}
	return def, "", nil
}

func agentSummary(a *client.Agent) AgentSummary {
	s := AgentSummary{
		WorkflowID: a.WorkflowPermanentID, VersionID: a.WorkflowID, Version: a.Version, Title: a.Title,
		Description: ptr.Value(a.Description), Status: string(a.Status), FolderID: ptr.Value(a.FolderID),
		CreatedAt: timeText(&a.CreatedAt), ModifiedAt: timeText(&a.ModifiedAt),
	}
	for _, p := range a.WorkflowDefinition.Parameters {
		if p.ParameterType == client.ParameterTypeOutput {
			continue // made by the service for each block; not an input
		}
		info := ParameterInfo{Key: p.Key, Type: string(p.ParameterType), Description: p.Description}
		if p.ParameterType == client.ParameterTypeWorkflow {
			info.Type = string(p.WorkflowParameterType)
			info.Default = rawValue(p.DefaultValue)
			info.Required = info.Default == nil
		}
		s.Parameters = append(s.Parameters, info)
	}
	return s
}

func agentDetail(a *client.Agent, asYAML bool) (*AgentDetail, error) {
	d := &AgentDetail{AgentSummary: agentSummary(a)}
	for _, b := range a.WorkflowDefinition.Blocks {
		if b == nil {
			continue
		}
		d.Blocks = append(d.Blocks, BlockInfo{Label: b.Base().Label, BlockType: string(b.BlockType())})
	}
	def, err := json.Marshal(a.Definition())
	if err != nil {
		return nil, fmt.Errorf("encode the definition of %s: %w", a.WorkflowPermanentID, err)
	}
	if !asYAML {
		d.Definition = json.RawMessage(def)
		return d, nil
	}
	// The YAML of `abctl get -o yaml`: the normalized definition, which
	// skyvern_workflow_update takes back unchanged.
	y, err := agentfile.RenderDefinition(a, "yaml")
	if err != nil {
		return nil, fmt.Errorf("render the definition of %s as YAML: %w", a.WorkflowPermanentID, err)
	}
	d.DefinitionYAML = string(y)
	return d, nil
}
