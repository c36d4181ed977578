package store

import "github.com/abctl/abctl/client"

// Organization owns agents, folders and runs; API keys authenticate as one.
type Organization struct {
	ID        string
	Name      string
	CreatedAt client.Time
}

// APIKeyPrefix starts every key CreateOrganization makes.
const APIKeyPrefix = "abk_"
