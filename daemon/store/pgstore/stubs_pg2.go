package pgstore

// Functions pg1 provides (agents, folders, tags), declared here until the
// merge, which deletes this file.

import (
	"context"
	"errors"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/tagquery"
)

// subjectsMatching returns the subjects of one kind whose current tags satisfy q.
func (s *Store) subjectsMatching(ctx context.Context, q querier, orgID string, query *tagquery.Query, kind store.SubjectKind) (map[string]bool, error) {
	return nil, errors.New("stub: provided by pg1")
}

// agentsDeleted says, for each wpid, whether the agent is deleted or unknown.
func (s *Store) agentsDeleted(ctx context.Context, q querier, orgID string, wpids []string) (map[string]bool, error) {
	return nil, errors.New("stub: provided by pg1")
}
