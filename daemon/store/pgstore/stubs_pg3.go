package pgstore

// Functions of the other PostgreSQL parts that pg3 calls, declared here
// until the merge, which deletes this file.

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// From pg1 (contracts.md).
func (s *Store) applyTags(ctx context.Context, tx pgx.Tx, orgID string, now client.Time, setBy string, subj store.TagSubject, ch store.TagChange) ([]client.Tag, error) {
	return nil, errors.New("stub: provided by pg1")
}

// From pg1: not in contracts.md. agentOfVersion returns the wpid of the
// agent one of whose version rows has workflow_id workflowID, "" when none
// has (bbolt: the scan in agentOf, daemon/store/scripts.go). Scripts.Create
// takes a workflow_id for its agent.
func (s *Store) agentOfVersion(ctx context.Context, q querier, orgID, workflowID string) (string, error) {
	return "", errors.New("stub: provided by pg1")
}

// From pg1: the Agents sub-store, with the bbolt signatures; ListAll reads
// the agents' titles with Get, the tests create and delete agents.
type Agents struct{ s *Store }

func (s *Store) Agents() *Agents { return &Agents{s} }

func (a *Agents) Create(ctx context.Context, orgID string, def *client.Agent, idempotencyKey string) (*client.Agent, bool, error) {
	return nil, false, errors.New("stub: provided by pg1")
}

func (a *Agents) Delete(ctx context.Context, orgID, wpid string) error {
	return errors.New("stub: provided by pg1")
}

func (a *Agents) Get(ctx context.Context, orgID, wpid string, version int) (*client.Agent, error) {
	return nil, errors.New("stub: provided by pg1")
}
