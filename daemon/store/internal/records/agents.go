package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/agentid"
	"github.com/abctl/abctl/internal/jsonenc"
)

// AgentNotFound is the error of an agent that does not exist (or is
// deleted).
func AgentNotFound(wpid string) error {
	return &store.NotFoundError{Record: store.RecordAgent, ID: wpid}
}

// AgentVersionNotFound is the error of a version an agent does not have.
func AgentVersionNotFound(wpid string, version int) error {
	return &store.NotFoundError{Record: store.RecordAgent, ID: wpid, Version: version}
}

// AgentSummary is what listing needs of an agent, derived from its latest
// version row. The bbolt store keeps it as JSON; the first four fields are
// written first and in this order, which its readHead relies on to filter
// without a full decode. The PostgreSQL store keeps its fields as columns.
type AgentSummary struct {
	Folder    string             `json:"f"` // folder_id of the latest version, "" for none
	Status    client.AgentStatus `json:"s"`
	SavedTask bool               `json:"t"`
	Deleted   bool               `json:"d"`
	WPID      string             `json:"w"`
	Version   int                `json:"v"` // the latest version, counting deleted ones
	Created   int64              `json:"c"` // created_at of the latest version, unix ns: its order key
	// Search holds the lowercased texts a search_key matches besides the
	// wpid and the folder title: the title, then each parameter's key,
	// description and (workflow parameters) default value.
	Search []string `json:"q,omitempty"`
}

// SummaryOf derives the summary of an agent from its latest version row.
func SummaryOf(a *client.Agent) *AgentSummary {
	s := &AgentSummary{
		Status:    a.Status,
		SavedTask: a.IsSavedTask,
		Deleted:   a.DeletedAt != nil,
		WPID:      a.WorkflowPermanentID,
		Version:   a.Version,
		Created:   a.CreatedAt.UnixNano(),
	}
	if a.FolderID != nil {
		s.Folder = *a.FolderID
	}
	add := func(text string) {
		if text != "" {
			s.Search = append(s.Search, strings.ToLower(text))
		}
	}
	add(a.Title)
	for i := range a.WorkflowDefinition.Parameters {
		p := &a.WorkflowDefinition.Parameters[i]
		if p.DeletedAt != nil {
			continue
		}
		add(p.Key)
		add(p.Description)
		if p.ParameterType == client.ParameterTypeWorkflow {
			add(DefaultText(p.DefaultValue))
		}
	}
	return s
}

// DefaultText is a default value as the hosted service stores it: a
// string's text without quotes, any other JSON value as written, null as
// nothing.
func DefaultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// DecodeAgent decodes a stored version row.
func DecodeAgent(raw []byte) (*client.Agent, error) {
	a := new(client.Agent)
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, fmt.Errorf("store: agent: %w", err)
	}
	return a, nil
}

// EncodeRow encodes a version row exactly as the API answers it (compact,
// without HTML escaping), so that reads can send the stored bytes as they
// are.
func EncodeRow(a *client.Agent) ([]byte, error) {
	b, err := jsonenc.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("store: encode agent %s: %w", a.WorkflowPermanentID, err)
	}
	return b, nil
}

// CopyAgent returns a copy of a for StampVersion to fill: StampVersion
// sets top-level fields only, so a shallow copy leaves the caller's agent
// as it was, and the copy shares the caller's definition (which neither
// the store nor its callers change once it is handed over).
func CopyAgent(a *client.Agent) *client.Agent {
	c := *a
	return &c
}

// StampVersion fills what the store owns in a new version row: its place
// (organization, wpid, version) and its state. The version's identity and
// time are the caller's when given (workflow_id, created_at), because the
// definition's parameter records repeat them; the store makes them
// otherwise, from g and clock.
func StampVersion(ag *client.Agent, orgID, wpid string, version int, g *ids.Generator, clock func() client.Time) {
	if ag.WorkflowID == "" {
		ag.WorkflowID = g.Next(ids.PrefixAgentVersion)
	}
	if ag.CreatedAt.IsZero() {
		ag.CreatedAt = clock()
	}
	ag.OrganizationID = orgID
	ag.WorkflowPermanentID = wpid
	ag.AgentID = wpid
	ag.Version = version
	ag.ModifiedAt, ag.DeletedAt = ag.CreatedAt, nil
	if ag.Status == "" {
		ag.Status = client.AgentStatusPublished
	}
}

// NewAgent is version 1 of a new agent made from def (which is not
// modified), as Agents.Create stores it: stamped, encoded as the API
// answers it, and summarised. With an idempotency key the wpid is
// agentid.FromKey(orgID, key); otherwise a new one from g.
func NewAgent(orgID string, def *client.Agent, idempotencyKey string, g *ids.Generator, clock func() client.Time) (ag *client.Agent, row []byte, sum *AgentSummary, err error) {
	if def == nil {
		return nil, nil, nil, fmt.Errorf("store: Agents.Create: nil definition")
	}
	ag = CopyAgent(def)
	var wpid string
	if idempotencyKey != "" {
		wpid = agentid.FromKey(orgID, idempotencyKey)
	} else {
		wpid = g.Next(ids.PrefixAgent)
	}
	StampVersion(ag, orgID, wpid, 1, g, clock)
	if row, err = EncodeRow(ag); err != nil {
		return nil, nil, nil, err
	}
	return ag, row, SummaryOf(ag), nil
}

// DecodeAgents decodes stored version rows, in their order.
func DecodeAgents(rows []json.RawMessage) ([]*client.Agent, error) {
	out := make([]*client.Agent, 0, len(rows))
	for _, raw := range rows {
		ag, err := DecodeAgent(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, ag)
	}
	return out, nil
}
