package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/ptr"
)

// The credential tools read and delete credentials; none creates or
// replaces one. Creating a credential means handing over its secret (a
// password, a card number, an authenticator key), and an assistant must
// never handle a secret: it would sit in the conversation, in the model
// provider's logs and in the assistant's memory. The user stores secrets
// themselves, with `abctl credentials create` (which reads them without
// echo or from stdin) or the SDK, and the assistant refers to them by id.
// Answers carry what the service shows of a credential, never its secret.

// credentialsHowToCreate ends the descriptions that a model might read
// while looking for a way to store a credential.
const credentialsHowToCreate = " No tool creates or changes a credential: its secret must not pass through an assistant. " +
	"To add one, the user runs 'abctl credentials create NAME --type password|credit_card|secret' themselves."

// CredentialListInput is the input of skyvern_credential_list.
type CredentialListInput struct {
	PageArgs
}

// CredentialList is the answer of skyvern_credential_list.
type CredentialList struct {
	Credentials []CredentialInfo `json:"credentials" jsonschema:"the credentials, newest first"`
	PageInfo
}

// CredentialInfo describes a credential without its secret.
type CredentialInfo struct {
	CredentialID   string `json:"credential_id" jsonschema:"the credential's id (cred_...), by which agents refer to it"`
	Name           string `json:"name"`
	CredentialType string `json:"credential_type" jsonschema:"password (a login), credit_card or secret"`
	VaultType      string `json:"vault_type,omitempty" jsonschema:"where the credential is kept"`
	Username       string `json:"username,omitempty" jsonschema:"a login's username"`
	TOTPType       string `json:"totp_type,omitempty" jsonschema:"a login's second factor: authenticator (codes made from a stored key), email or text (codes pushed to the service), passkey or none"`
	TOTPIdentifier string `json:"totp_identifier,omitempty" jsonschema:"the e-mail address or phone number that a login's email or text codes are sent to"`
	LastFour       string `json:"last_four,omitempty" jsonschema:"a card's last four digits"`
	Brand          string `json:"brand,omitempty" jsonschema:"a card's brand"`
	SecretLabel    string `json:"secret_label,omitempty" jsonschema:"a secret's label"`
}

// CredentialIDInput names one credential.
type CredentialIDInput struct {
	CredentialID string `json:"credential_id" jsonschema:"the credential's id (cred_...)"`
}

// CredentialDeleteResult reports a credential deletion.
type CredentialDeleteResult struct {
	CredentialID string `json:"credential_id"`
	Deleted      bool   `json:"deleted"`
}

// credentialPager pages skyvern_credential_list.
var credentialPager = pager{items: "credentials", defaultSize: 10, maxSize: 100}

// credentialTools list, show and delete credentials.
type credentialTools struct {
	credentials *client.CredentialsService
}

func (t *credentialTools) register(s *mcp.Server) {
	addTool(s, spec{
		name:  "skyvern_credential_list",
		title: "List credentials",
		description: "List the stored credentials (logins, payment cards, secrets), newest first, with what identifies each: " +
			"a login's username and second factor, a card's last four digits and brand, a secret's label. Secrets are never shown." +
			credentialsHowToCreate,
		annotations:  readOnly(),
		refine:       credentialPager.refineArgs,
		refineAnswer: credentialPager.refineAnswer,
	}, t.credentialList)

	addTool(s, spec{
		name:  "skyvern_credential_get",
		title: "Get a credential",
		description: "Get one credential by id: its name, kind, and a login's username and second factor, a card's last four " +
			"digits and brand, or a secret's label. The secret itself is never shown." + credentialsHowToCreate,
		annotations: readOnly(),
		refine:      nonEmptyArgs("credential_id"),
	}, t.credentialGet)

	addTool(s, spec{
		name:  "skyvern_credential_delete",
		title: "Delete a credential",
		description: "Delete a credential and its secret for good. Agents that use it fail when they next need it. " +
			"Confirm with the user first: it cannot be undone, and only the user can store the secret again.",
		annotations: destroys(false),
		refine:      nonEmptyArgs("credential_id"),
	}, t.credentialDelete)
}

func (t *credentialTools) credentialList(ctx context.Context, in CredentialListInput) (*CredentialList, error) {
	creds, page, err := listPage(ctx, credentialPager, in.PageArgs, func(ctx context.Context, page, size int) ([]*client.Credential, error) {
		return t.credentials.List(ctx, &client.ListCredentialsOptions{Page: page, PageSize: size})
	}, credentialInfo)
	if err != nil {
		return nil, err
	}
	return &CredentialList{Credentials: creds, PageInfo: page}, nil
}

func (t *credentialTools) credentialGet(ctx context.Context, in CredentialIDInput) (*CredentialInfo, error) {
	return answerWith(credentialInfo)(t.credentials.Get(ctx, in.CredentialID))
}

func (t *credentialTools) credentialDelete(ctx context.Context, in CredentialIDInput) (*CredentialDeleteResult, error) {
	return deleted(t.credentials.Delete(ctx, in.CredentialID), &CredentialDeleteResult{CredentialID: in.CredentialID, Deleted: true})
}

// credentialInfo copies what the service shows of a credential; the
// client's type holds no secret to begin with.
func credentialInfo(c *client.Credential) CredentialInfo {
	info := CredentialInfo{
		CredentialID: c.CredentialID, Name: c.Name, CredentialType: string(c.CredentialType),
		Username: c.Credential.Username, TOTPIdentifier: ptr.Value(c.Credential.TOTPIdentifier),
		LastFour: c.Credential.LastFour, Brand: c.Credential.Brand, SecretLabel: ptr.Value(c.Credential.SecretLabel),
	}
	if c.VaultType != nil {
		info.VaultType = string(*c.VaultType)
	}
	if c.CredentialType == client.CredentialTypePassword || c.Credential.Username != "" {
		info.TOTPType = string(c.Credential.TOTPType)
	}
	return info
}
