package records

import (
	"fmt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// Credential is the stored form of a credential. Sealed is its secret
// data, sealed with store.CredentialAD.
type Credential struct {
	ID         string                `json:"credential_id"`
	Name       string                `json:"name"`
	Type       client.CredentialType `json:"credential_type"`
	Info       CredentialInfo        `json:"info"`
	CreatedAt  client.Time           `json:"created_at"`
	ModifiedAt client.Time           `json:"modified_at"`
	Sealed     []byte                `json:"sealed"`
}

// CredentialInfo is client.CredentialInfo with plain JSON.
type CredentialInfo struct {
	Username       string          `json:"username,omitempty"`
	TOTPType       client.TOTPType `json:"totp_type,omitempty"`
	TOTPIdentifier *string         `json:"totp_identifier,omitempty"`
	LastFour       string          `json:"last_four,omitempty"`
	Brand          string          `json:"brand,omitempty"`
	SecretLabel    *string         `json:"secret_label,omitempty"`
}

// NewCredential is a new credential id made at now from in, its secret
// already sealed.
func NewCredential(id string, in *store.CredentialInput, sealed []byte, now client.Time) *Credential {
	return &Credential{ID: id, Name: in.Name, Type: in.Type, Info: CredentialInfo(in.Info), CreatedAt: now, ModifiedAt: now, Sealed: sealed}
}

// Update replaces the credential's name and data with in's at now. Its
// type may not change (ErrInvalid).
func (rec *Credential) Update(in *store.CredentialInput, sealed []byte, now client.Time) error {
	if rec.Type != in.Type {
		return store.Errorf(store.ErrInvalid, "credential %s is a %s credential; its type cannot change to %s (create a new credential instead)", rec.ID, rec.Type, in.Type)
	}
	rec.Name, rec.Info, rec.Sealed, rec.ModifiedAt = in.Name, CredentialInfo(in.Info), sealed, now
	return nil
}

// Result is the credential as answers show it (without its secret).
func (rec *Credential) Result() *client.Credential {
	vault := client.CredentialVaultSkyvern
	return &client.Credential{
		CredentialID:   rec.ID,
		Name:           rec.Name,
		CredentialType: rec.Type,
		VaultType:      &vault,
		Credential:     client.CredentialInfo(rec.Info),
	}
}

// SealCredential seals the secret of credential id of orgID; sl nil (a
// daemon without a secret) is ErrInvalid.
func SealCredential(sl *store.Sealer, orgID, id string, secret []byte) ([]byte, error) {
	if sl == nil {
		return nil, store.Errorf(store.ErrInvalid, "this daemon has no secret to seal credentials with")
	}
	return sl.Seal(secret, store.CredentialAD(orgID, id))
}

// OpenCredential unseals the secret of rec, a credential of orgID. The
// error never holds the secret.
func OpenCredential(sl *store.Sealer, orgID string, rec *Credential) ([]byte, error) {
	if sl == nil {
		return nil, store.Errorf(store.ErrInvalid, "this daemon has no secret to open credentials with")
	}
	plain, err := sl.Open(rec.Sealed, store.CredentialAD(orgID, rec.ID))
	if err != nil {
		return nil, fmt.Errorf("store: credential %s cannot be opened with this daemon's secret", rec.ID)
	}
	return plain, nil
}

// Admits reports whether a code may go to the run f describes: one tied to
// another run, task or agent may not.
func Admits(f executor.CodeFilter, code *client.TOTPCode) bool {
	other := func(tied *string, own string) bool { return tied != nil && *tied != "" && *tied != own }
	return !other(code.WorkflowRunID, f.RunID) && !other(code.TaskID, f.RunID) && !other(code.WorkflowID, f.AgentID)
}
