package pgstore

// Private copies of pure helpers of the bbolt store (daemon/store's
// agents.go, folders.go and tags.go) that the PostgreSQL store needs too.
// When the seam exports them, these copies go.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/internal/jsonenc"
)

// validKey reports whether id can name a record: not empty, at most 512
// bytes (store.validID), and a text PostgreSQL can take as a parameter
// (UTF-8 without NUL). Ids that fail it name nothing.
func validKey(id string) bool {
	return id != "" && len(id) <= 512 && storable(id)
}

// storable reports whether every text is one a PostgreSQL text column can
// hold: valid UTF-8 without a NUL byte.
func storable(texts ...string) bool {
	for _, s := range texts {
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// pgText is s as a text column holds it: PostgreSQL's text cannot hold a
// NUL byte nor invalid UTF-8, which become U+FFFD. Used for the caller's
// texts that are only compared (folder ids, statuses, search texts), never
// answered.
func pgText(s string) string {
	if storable(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// agentSummary is what listing needs of an agent, derived from its latest
// version row (store.agentSummary, with the time as a time).
type agentSummary struct {
	Folder    string // folder_id of the latest version, "" for none
	Status    client.AgentStatus
	SavedTask bool
	Deleted   bool
	WPID      string
	Version   int       // the latest version, counting deleted ones
	Created   time.Time // created_at of the latest version
	// Search holds the lowercased texts a search term matches besides the
	// wpid and the folder title: the title, then each parameter's key,
	// description and (workflow parameters) default value.
	Search []string
}

func summaryOf(a *client.Agent) *agentSummary {
	s := &agentSummary{
		Status:    a.Status,
		SavedTask: a.IsSavedTask,
		Deleted:   a.DeletedAt != nil,
		WPID:      a.WorkflowPermanentID,
		Version:   a.Version,
		Created:   a.CreatedAt.Time,
		Search:    []string{},
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
			add(defaultText(p.DefaultValue))
		}
	}
	return s
}

// defaultText is a default value as the hosted service stores it: a
// string's text without quotes, any other JSON value as written, null as
// nothing.
func defaultText(raw json.RawMessage) string {
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

func decodeAgent(raw []byte) (*client.Agent, error) {
	a := new(client.Agent)
	if err := json.Unmarshal(raw, a); err != nil {
		return nil, fmt.Errorf("store: agent: %w", err)
	}
	return a, nil
}

// encodeRow encodes a version row exactly as the API answers it (compact,
// without HTML escaping), so that reads can send the stored bytes as they
// are.
func encodeRow(a *client.Agent) ([]byte, error) {
	b, err := jsonenc.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("store: encode agent %s: %w", a.WorkflowPermanentID, err)
	}
	return b, nil
}

// copyAgent returns a shallow copy of a for stampVersion to fill (see
// store.copyAgent).
func copyAgent(a *client.Agent) *client.Agent {
	c := *a
	return &c
}

func agentNotFound(wpid string) error {
	return &store.NotFoundError{Record: store.RecordAgent, ID: wpid}
}

func agentVersionNotFound(wpid string, version int) error {
	return &store.NotFoundError{Record: store.RecordAgent, ID: wpid, Version: version}
}

// folderRecord is the stored form of a folder. WorkflowCount is not stored
// (it is always 0 in the record): it is counted from the agents.
type folderRecord struct {
	client.Folder
	DeletedAt *client.Time `json:"deleted_at,omitempty"`
}

// Prefixes of tag event ids, as the hosted service makes them.
const (
	prefixAgentTagEvent = "tge"
	prefixRunTagEvent   = "rtge"
)

// strPtr is nil for "", as the API answers an unset key or value.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// subjectOf tells the kind of a subject from its id: the store makes agent
// ids with the wpid_ prefix, and only those.
func subjectOf(id string) store.TagSubject {
	if strings.HasPrefix(id, ids.PrefixAgent+"_") {
		return store.TagSubject{Kind: store.AgentSubject, ID: id}
	}
	return store.TagSubject{Kind: store.RunSubject, ID: id}
}
