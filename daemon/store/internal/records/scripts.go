package records

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// Script is the stored form of a script, across its versions.
type Script struct {
	ID         string       `json:"id"`
	AgentID    string       `json:"workflow_permanent_id"`
	CacheKey   string       `json:"cache_key"`
	CreatedAt  client.Time  `json:"created_at"`
	ModifiedAt client.Time  `json:"modified_at"`
	Latest     int          `json:"latest"`
	DeletedAt  *client.Time `json:"deleted_at,omitempty"`
}

// ScriptVersion is the stored form of one version of a script. Both
// backends keep Content apart from the record, as it is; the bbolt store
// has it in the record in versions written before that.
type ScriptVersion struct {
	RevisionID string      `json:"revision_id"`
	Version    int         `json:"version"`
	RunID      string      `json:"run_id,omitempty"`
	CreatedAt  client.Time `json:"created_at"`
	Content    []byte      `json:"content,omitempty"`
	SHA256     string      `json:"sha256"`
}

// NextVersion is version rec.Latest+1 of the script, made now with
// content (copied) by run runID ("" for none).
func (rec *Script) NextVersion(revisionID, runID string, content []byte, now client.Time) *ScriptVersion {
	return &ScriptVersion{RevisionID: revisionID, Version: rec.Latest + 1, RunID: runID, CreatedAt: now,
		Content: bytes.Clone(content), SHA256: ScriptDigest(content)}
}

// WithoutContent is v as its record is stored, its content kept apart.
func (v *ScriptVersion) WithoutContent() *ScriptVersion {
	record := *v
	record.Content = nil
	return &record
}

// Revision is version v of the script as the store answers it.
func (rec *Script) Revision(orgID string, v *ScriptVersion) *store.ScriptRevision {
	return &store.ScriptRevision{
		ScriptID: rec.ID, RevisionID: v.RevisionID, OrgID: orgID,
		WorkflowPermanentID: rec.AgentID, CacheKey: rec.CacheKey, RunID: v.RunID,
		Version: v.Version, Content: v.Content, SHA256: v.SHA256,
		CreatedAt: v.CreatedAt, ModifiedAt: rec.ModifiedAt,
	}
}

// ScriptDigest is the SHA-256 of a script's content, in hex.
func ScriptDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// CheckScriptContent refuses an empty script file (ErrInvalid).
func CheckScriptContent(content []byte) error {
	if len(content) == 0 {
		return store.Errorf(store.ErrInvalid, "a script needs the content of its file, and it is empty")
	}
	return nil
}
