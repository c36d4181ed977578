package store

import "github.com/abctl/abctl/client"

// CredentialInput is a credential to store: what answers show (Info) and
// the secret, the JSON of the credential's data as the API received it,
// which the store seals.
type CredentialInput struct {
	Name   string
	Type   client.CredentialType
	Info   client.CredentialInfo
	Secret []byte
}

// CredentialQuery filters and pages a credential list.
type CredentialQuery struct {
	Page, PageSize int // 1-based page; PageSize > 0
	Type           client.CredentialType
	Search         string // in the name and the username, case aside
}
