package client

import (
	"context"
	"errors"
	"iter"
	"net/url"
	"strings"
)

// AgentsService manages agents (called workflows in ids and some fields):
// saved definitions made of parameters and blocks, versioned on every
// update, grouped in folders and tagged.
type AgentsService service

func (s *AgentsService) tags() tagResource {
	return tagResource{client: s.client, kind: "agent id", prefix: "/v1/agents/%s"}
}

// ListAgentsOptions filters and pages GET /v1/agents. The zero value lists
// the first page of published and draft agents.
type ListAgentsOptions struct {
	Page     int // 1-based; 0 means 1
	PageSize int // 0 means the server default (10)

	// SearchKey matches, case-insensitively, the agent title, its folder's
	// title, its permanent id, and its parameters' keys, descriptions and
	// default values.
	SearchKey string
	// Title searches titles only; deprecated upstream in favour of
	// SearchKey, and ignored when SearchKey is set.
	Title    string
	FolderID string
	// Status filters by status; empty means published and draft.
	Status []AgentStatus
	// Tags filters by tags, each term "label", "key:*" or "key:value"
	// (at most 20): AND across terms, OR among values of the same key.
	Tags           []string
	OnlySavedTasks bool
	OnlyWorkflows  bool
	OnlyTemplates  bool
	// Template lists the global templates instead of the organization's
	// agents; it cannot be combined with Tags.
	Template bool
}

func (o *ListAgentsOptions) query() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	setInt(q, "page", o.Page)
	setInt(q, "page_size", o.PageSize)
	setString(q, "search_key", o.SearchKey)
	setString(q, "title", o.Title)
	setString(q, "folder_id", o.FolderID)
	addEach(q, "status", o.Status)
	addEach(q, "tags", o.Tags)
	setBool(q, "only_saved_tasks", o.OnlySavedTasks)
	setBool(q, "only_workflows", o.OnlyWorkflows)
	setBool(q, "only_templates", o.OnlyTemplates)
	setBool(q, "template", o.Template)
	return q
}

// List returns one page of agents, the latest version of each, most
// recently created or updated first (GET /v1/agents); o may be nil. Use All
// to walk every page.
func (s *AgentsService) List(ctx context.Context, o *ListAgentsOptions, opts ...Option) ([]*Agent, error) {
	var out []*Agent
	_, err := s.client.do(ctx, request{method: "GET", path: "/v1/agents", query: o.query(), idempotent: true}, &out, opts)
	return out, err
}

// All returns an iterator over every agent matching o, fetching pages as it
// goes, starting at o.Page. o is copied, never modified. On an error the
// iterator yields it once and stops.
//
//	for agent, err := range c.Agents.All(ctx, &client.ListAgentsOptions{SearchKey: "login"}) {
//		if err != nil { return err }
//		fmt.Println(agent.WorkflowPermanentID, agent.Title)
//	}
func (s *AgentsService) All(ctx context.Context, o *ListAgentsOptions, opts ...Option) iter.Seq2[*Agent, error] {
	return paginate(o, func(o *ListAgentsOptions) ([]*Agent, error) { return s.List(ctx, o, opts...) })
}

func (o *ListAgentsOptions) pageFields() (page, pageSize *int) { return &o.Page, &o.PageSize }

// GetAgentOptions selects a version of an agent.
type GetAgentOptions struct {
	Version  int  // 0 means the latest
	Template bool // read a global template
}

// Get returns an agent by its permanent id (wpid_...), its latest version
// unless o.Version is set (GET /v1/agents/{id}); o may be nil.
func (s *AgentsService) Get(ctx context.Context, agentID string, o *GetAgentOptions, opts ...Option) (*Agent, error) {
	if err := requireID("agent id", agentID); err != nil {
		return nil, err
	}
	q := url.Values{}
	if o != nil {
		setInt(q, "version", o.Version)
		setBool(q, "template", o.Template)
	}
	out := new(Agent)
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/agents/%s", agentID), query: q, idempotent: true}, out, opts)
	return nil2(out, err)
}

// Versions returns every version of an agent (GET /v1/agents/{id}/versions).
func (s *AgentsService) Versions(ctx context.Context, agentID string, opts ...Option) ([]*Agent, error) {
	if err := requireID("agent id", agentID); err != nil {
		return nil, err
	}
	var out []*Agent
	_, err := s.client.do(ctx, request{method: "GET", path: pathf("/v1/agents/%s/versions", agentID), idempotent: true}, &out, opts)
	return out, err
}

// CreateAgentOptions are the settings of an agent creation that are not part
// of its definition.
type CreateAgentOptions struct {
	FolderID string // put the new agent in this folder
}

// Create creates an agent from a definition (POST /v1/agents, sent as
// {"json_definition": ...}) and returns version 1; o may be nil.
//
// Pass WithIdempotencyKey to make creation repeatable: the service derives
// the agent's id from the key, so a replay returns the same agent instead of
// a duplicate, and the request becomes safe to retry. Without a key a
// failed create is not retried once it may have reached the service.
func (s *AgentsService) Create(ctx context.Context, def *AgentDefinition, o *CreateAgentOptions, opts ...Option) (*Agent, error) {
	if def == nil {
		return nil, errors.New("client: Agents.Create: nil definition")
	}
	return s.create(ctx, &AgentRequest{JSONDefinition: def}, o, opts)
}

// CreateYAML creates an agent from a YAML definition, sent as
// {"yaml_definition": ...} and parsed by the service (which also fixes up
// invalid labels and parameter keys, as it does for YAML only). The field
// names are those of AgentDefinition.
func (s *AgentsService) CreateYAML(ctx context.Context, yamlDefinition string, o *CreateAgentOptions, opts ...Option) (*Agent, error) {
	if strings.TrimSpace(yamlDefinition) == "" {
		return nil, errors.New("client: Agents.CreateYAML: empty YAML definition")
	}
	return s.create(ctx, &AgentRequest{YAMLDefinition: yamlDefinition}, o, opts)
}

func (s *AgentsService) create(ctx context.Context, body *AgentRequest, o *CreateAgentOptions, opts []Option) (*Agent, error) {
	q := url.Values{}
	if o != nil {
		setString(q, "folder_id", o.FolderID)
	}
	out := new(Agent)
	_, err := s.client.do(ctx, request{method: "POST", path: "/v1/agents", query: q, body: body}, out, opts)
	return nil2(out, err)
}

// Update stores def as a new version of the agent and returns that version
// (POST /v1/agents/{id}). The agent keeps its permanent id and its folder.
func (s *AgentsService) Update(ctx context.Context, agentID string, def *AgentDefinition, opts ...Option) (*Agent, error) {
	if def == nil {
		return nil, errors.New("client: Agents.Update: nil definition")
	}
	return s.update(ctx, agentID, &AgentRequest{JSONDefinition: def}, opts)
}

// UpdateYAML is Update with a YAML definition.
func (s *AgentsService) UpdateYAML(ctx context.Context, agentID, yamlDefinition string, opts ...Option) (*Agent, error) {
	if strings.TrimSpace(yamlDefinition) == "" {
		return nil, errors.New("client: Agents.UpdateYAML: empty YAML definition")
	}
	return s.update(ctx, agentID, &AgentRequest{YAMLDefinition: yamlDefinition}, opts)
}

func (s *AgentsService) update(ctx context.Context, agentID string, body *AgentRequest, opts []Option) (*Agent, error) {
	if err := requireID("agent id", agentID); err != nil {
		return nil, err
	}
	out := new(Agent)
	// Not idempotent: every update creates a version.
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/agents/%s", agentID), body: body}, out, opts)
	return nil2(out, err)
}

// Delete soft-deletes every version of an agent (POST /v1/agents/{id}/delete).
// Deleting an unknown or already deleted agent is not an error.
func (s *AgentsService) Delete(ctx context.Context, agentID string, opts ...Option) error {
	if err := requireID("agent id", agentID); err != nil {
		return err
	}
	_, err := s.client.do(ctx, request{method: "POST", path: pathf("/v1/agents/%s/delete", agentID), idempotent: true}, nil, opts)
	return err
}

// SetFolder moves an agent into a folder, or out of any folder when folderID
// is empty (PUT /v1/agents/{id}/folder).
func (s *AgentsService) SetFolder(ctx context.Context, agentID, folderID string, opts ...Option) (*Agent, error) {
	if err := requireID("agent id", agentID); err != nil {
		return nil, err
	}
	body := struct {
		FolderID *string `json:"folder_id"`
	}{}
	if folderID != "" {
		body.FolderID = &folderID
	}
	out := new(Agent)
	_, err := s.client.do(ctx, request{method: "PUT", path: pathf("/v1/agents/%s/folder", agentID), body: body, idempotent: true}, out, opts)
	return nil2(out, err)
}

// ApplyTags sets and deletes tags of an agent in one transaction
// (POST /v1/agents/{id}/tags) and returns its tags afterwards.
func (s *AgentsService) ApplyTags(ctx context.Context, agentID string, req *TagApplyRequest, opts ...Option) (*AgentTags, error) {
	out := new(AgentTags)
	return nil2(out, s.tags().apply(ctx, agentID, req, out, opts))
}

// GetTags returns the current tags of an agent (GET /v1/agents/{id}/tags).
func (s *AgentsService) GetTags(ctx context.Context, agentID string, opts ...Option) (*AgentTags, error) {
	out := new(AgentTags)
	return nil2(out, s.tags().get(ctx, agentID, out, opts))
}

// DeleteTag removes the grouped tag with this key from an agent
// (DELETE /v1/agents/{id}/tags/{key}) and returns its tags afterwards.
func (s *AgentsService) DeleteTag(ctx context.Context, agentID, key string, opts ...Option) (*AgentTags, error) {
	out := new(AgentTags)
	return nil2(out, s.tags().delete(ctx, agentID, key, out, opts))
}

// TagHistory returns the tag events of an agent, newest first
// (GET /v1/agents/{id}/tags/history); o may be nil.
func (s *AgentsService) TagHistory(ctx context.Context, agentID string, o *TagHistoryOptions, opts ...Option) (*AgentTagHistory, error) {
	out := new(AgentTagHistory)
	return nil2(out, s.tags().history(ctx, agentID, o, out, opts))
}

// BatchGetTags returns the current tags of many agents, by permanent id
// (GET /v1/workflow-tags). Every requested id is in the result; ids the
// organization cannot see map to an empty list.
func (s *AgentsService) BatchGetTags(ctx context.Context, agentIDs []string, opts ...Option) (map[string][]TagItem, error) {
	var out struct {
		WorkflowTags map[string][]TagItem `json:"workflow_tags"`
	}
	err := batchTags(ctx, s.client, "/v1/workflow-tags", "workflow_permanent_ids", agentIDs, &out, opts)
	return out.WorkflowTags, err
}
