package pgstore

// Private copies of pure helpers and stored record types of package
// daemon/store (credentials.go, customllms.go, profiles.go, schedules.go,
// scripts.go, store.go) that are unexported there. The JSON of these types
// is what both backends store, so they must stay identical to the bbolt
// store's: the seam will export them and the merge replace this file.

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// validID reports whether id can be a key: ids the store makes are
// printable ASCII; a NUL byte cannot be a PostgreSQL text parameter.
// (store.validID)
func validID(id string) bool {
	if id == "" || len(id) > 512 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] == 0 {
			return false
		}
	}
	return true
}

// credentialRecord is the stored form of a credential (store's).
type credentialRecord struct {
	ID         string                `json:"credential_id"`
	Name       string                `json:"name"`
	Type       client.CredentialType `json:"credential_type"`
	Info       credentialInfo        `json:"info"`
	CreatedAt  client.Time           `json:"created_at"`
	ModifiedAt client.Time           `json:"modified_at"`
	Sealed     []byte                `json:"sealed"`
}

// credentialInfo is client.CredentialInfo with plain JSON (store's).
type credentialInfo struct {
	Username       string          `json:"username,omitempty"`
	TOTPType       client.TOTPType `json:"totp_type,omitempty"`
	TOTPIdentifier *string         `json:"totp_identifier,omitempty"`
	LastFour       string          `json:"last_four,omitempty"`
	Brand          string          `json:"brand,omitempty"`
	SecretLabel    *string         `json:"secret_label,omitempty"`
}

func (rec *credentialRecord) result() *client.Credential {
	vault := client.CredentialVaultSkyvern
	return &client.Credential{
		CredentialID:   rec.ID,
		Name:           rec.Name,
		CredentialType: rec.Type,
		VaultType:      &vault,
		Credential:     client.CredentialInfo(rec.Info),
	}
}

// admits reports whether a code may go to the run f describes: one tied to
// another run, task or agent may not. (store.admits)
func admits(f executor.CodeFilter, code *client.TOTPCode) bool {
	other := func(tied *string, own string) bool { return tied != nil && *tied != "" && *tied != own }
	return !other(code.WorkflowRunID, f.RunID) && !other(code.TaskID, f.RunID) && !other(code.WorkflowID, f.AgentID)
}

// customLLMRecord is the stored form of a custom model (store's).
type customLLMRecord struct {
	ID         string                 `json:"id"`
	Config     client.CustomLLMConfig `json:"config"`
	CreatedAt  client.Time            `json:"created_at"`
	ModifiedAt client.Time            `json:"modified_at"`
	Valid      bool                   `json:"valid"`
	SealedKey  []byte                 `json:"sealed_key,omitempty"`
}

func (rec *customLLMRecord) result(orgID string) *client.CustomLLM {
	cfg := rec.Config
	cfg.APIKey = nil
	return &client.CustomLLM{ID: rec.ID, OrganizationID: orgID, Config: cfg,
		CreatedAt: rec.CreatedAt, ModifiedAt: rec.ModifiedAt, Valid: rec.Valid}
}

// profileRecord is the stored form of a profile (store's).
type profileRecord struct {
	client.BrowserProfile
	Sealed []byte `json:"sealed,omitempty"` // nil: an empty profile
}

// stateKey is the key of a kept browser state: kind 0x00 id (store's).
func stateKey(kind byte, id string) []byte { return append([]byte{kind, 0}, id...) }

// stateAD is the BrowserStateAD of the state kept under key (a stateKey).
func stateAD(orgID string, key []byte) []byte {
	return store.BrowserStateAD(orgID, key[0], string(key[2:]))
}

// due reports whether fire time at is still to be handled for rec; when
// it is not, the outcome says why. (store.ScheduleRecord.due)
func scheduleDue(rec *store.ScheduleRecord, at time.Time) (store.FireOutcome, bool) {
	switch {
	case !rec.Enabled:
		return store.FireDisabled, false
	case !rec.HandledThrough.Before(at):
		return store.FireAlreadyHandled, false
	}
	return 0, true
}

// addMissed counts missed on rec. (store.ScheduleRecord.addMissed)
func addMissed(rec *store.ScheduleRecord, missed store.Missed) {
	if missed.Count <= 0 {
		return
	}
	rec.MissedFires += missed.Count
	latest := missed.Latest.UTC()
	rec.LastMissedAt = &latest
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// schedulePrefix is the prefix of schedule ids (store's).
const schedulePrefix = "wfs"

// scriptRecord is the stored form of a script, across its versions
// (store's).
type scriptRecord struct {
	ID         string       `json:"id"`
	AgentID    string       `json:"workflow_permanent_id"`
	CacheKey   string       `json:"cache_key"`
	CreatedAt  client.Time  `json:"created_at"`
	ModifiedAt client.Time  `json:"modified_at"`
	Latest     int          `json:"latest"`
	DeletedAt  *client.Time `json:"deleted_at,omitempty"`
}

// scriptVersionRecord is the stored form of one version of a script
// (store's); here Content is always kept apart, in its own column.
type scriptVersionRecord struct {
	RevisionID string      `json:"revision_id"`
	Version    int         `json:"version"`
	RunID      string      `json:"run_id,omitempty"`
	CreatedAt  client.Time `json:"created_at"`
	Content    []byte      `json:"content,omitempty"`
	SHA256     string      `json:"sha256"`
}

func (rec *scriptRecord) revision(orgID string, v *scriptVersionRecord) *store.ScriptRevision {
	return &store.ScriptRevision{
		ScriptID: rec.ID, RevisionID: v.RevisionID, OrgID: orgID,
		WorkflowPermanentID: rec.AgentID, CacheKey: rec.CacheKey, RunID: v.RunID,
		Version: v.Version, Content: v.Content, SHA256: v.SHA256,
		CreatedAt: v.CreatedAt, ModifiedAt: rec.ModifiedAt,
	}
}

func scriptDigest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

func checkScriptContent(content []byte) error {
	if len(content) == 0 {
		return store.Errorf(store.ErrInvalid, "a script needs the content of its file, and it is empty")
	}
	return nil
}
