package store

import "github.com/abctl/abctl/client"

// RecordScript names scripts in the store's errors.
const RecordScript Record = "script"

// DefaultCacheKey is the cache key of a script whose agent sets none.
const DefaultCacheKey = "default"

// ScriptInput is a new script.
type ScriptInput struct {
	// WorkflowPermanentID is the agent the script belongs to: its
	// workflow_permanent_id, or the workflow_id of one of its versions;
	// "" for a script of no agent.
	WorkflowPermanentID string
	// CacheKey is the value of the agent's cache key the script is for;
	// "" means DefaultCacheKey.
	CacheKey string
	// RunID is the run the script was recorded from, if any.
	RunID string
	// Content is the file script.yaml.
	Content []byte
}

// ScriptRevision is one version of a script, with what the script says of
// itself.
type ScriptRevision struct {
	ScriptID   string
	RevisionID string
	OrgID      string
	// WorkflowPermanentID is the script's agent ("" for none); CacheKey
	// the agent's cache key value it is for.
	WorkflowPermanentID string
	CacheKey            string
	// RunID is the run this version was recorded from ("" when it was
	// created or deployed by hand).
	RunID   string
	Version int
	// Content is the file script.yaml of this version; SHA256 its hex
	// digest.
	Content []byte
	SHA256  string
	// CreatedAt is when this version was made; ModifiedAt when the script
	// last changed (its latest version was made).
	CreatedAt  client.Time
	ModifiedAt client.Time
}
