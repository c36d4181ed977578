// Package agentid holds the one rule that turns an idempotency key into an
// agent's permanent id. The daemon gives a new agent that id when its
// create carries an Idempotency-Key header, as the hosted service does, and
// agent files derive the id of a named agent from it without asking the
// service (docs/hosted-service.md, "Agent ids from idempotency keys").
package agentid

import (
	"crypto/sha256"
	"encoding/hex"
)

// Prefix starts the permanent id of every agent ("workflow permanent id").
const Prefix = "wpid"

// FromKey returns the permanent id of the agent that a create with the
// idempotency key makes in the organization orgID: Prefix, "_" and the
// lowercase hex SHA-256 of "create_workflow", a NUL byte, orgID, a NUL byte
// and key. The NUL bytes keep ("ab", "c") and ("a", "bc") apart. Unlike the
// other ids it is not a snowflake: the same organization and key always
// give the same id, so a repeated create finds the first one's agent.
func FromKey(orgID, key string) string {
	h := sha256.New()
	h.Write([]byte("create_workflow\x00"))
	h.Write([]byte(orgID))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return Prefix + "_" + hex.EncodeToString(h.Sum(nil))
}
