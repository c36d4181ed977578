package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Profiles are the organizations' browser profiles and the browser states
// their runs, agents and browser sessions kept (bbolt:
// daemon/store/profiles.go). Browser states sign whoever holds them in, so
// they are sealed: a profile's with store.ProfileAD, a kept state's with
// store.BrowserStateAD.
type Profiles struct{ s *Store }

// Profiles returns the browser profiles of the organizations.
func (s *Store) Profiles() store.Profiles { return &Profiles{s} }

func (p *Profiles) seal(plain, ad []byte) ([]byte, error) {
	return records.SealState(p.s.sealer, plain, ad)
}

func (p *Profiles) open(sealed, ad []byte) ([]byte, error) {
	return records.OpenState(p.s.sealer, sealed, ad)
}

func getProfile(ctx context.Context, q querier, orgID, id string, withDeleted, lock bool) (*records.Profile, error) {
	doc, err := getDoc(ctx, q, "browser_profiles", orgID, id, lock, store.RecordProfile)
	if err != nil {
		return nil, err
	}
	rec, err := decodeDoc[records.Profile](doc, store.RecordProfile, id)
	if err != nil {
		return nil, err
	}
	if rec.DeletedAt != nil && !withDeleted {
		return nil, &store.NotFoundError{Record: store.RecordProfile, ID: id}
	}
	return rec, nil
}

// putProfile writes rec (insert or replace).
func putProfile(ctx context.Context, q querier, orgID string, rec *records.Profile) error {
	doc, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", rec.BrowserProfileID, err)
	}
	desc := ""
	if rec.Description != nil {
		desc = *rec.Description
	}
	_, err = q.Exec(ctx, `
		INSERT INTO browser_profiles (org_id, id, created_at, deleted, name_lower, description_lower, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (org_id, id) DO UPDATE SET deleted = excluded.deleted, name_lower = excluded.name_lower,
			description_lower = excluded.description_lower, doc = excluded.doc`,
		orgID, rec.BrowserProfileID, rec.CreatedAt.Time, rec.DeletedAt != nil, strings.ToLower(rec.Name), strings.ToLower(desc), doc)
	if err != nil {
		return fmt.Errorf("store: browser profile %s: %w", rec.BrowserProfileID, err)
	}
	return nil
}

// Create makes a profile holding state (the JSON of a browser state; nil
// for an empty profile). wpid names the agent whose run it came from, if
// any.
func (p *Profiles) Create(ctx context.Context, orgID, name, description string, state []byte, wpid string) (*client.BrowserProfile, error) {
	id := p.s.ids.Next(ids.PrefixBrowserProfile)
	now := p.s.clock()
	rec := records.NewProfile(id, orgID, name, description, wpid, now)
	if state != nil {
		sealed, err := p.seal(state, store.ProfileAD(orgID, id))
		if err != nil {
			return nil, err
		}
		rec.Sealed = sealed
	}
	err := p.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		return putProfile(ctx, tx, orgID, rec)
	})
	if err != nil {
		return nil, err
	}
	out := rec.BrowserProfile
	return &out, nil
}

// Get returns a profile that is not deleted.
func (p *Profiles) Get(ctx context.Context, orgID, id string) (*client.BrowserProfile, error) {
	rec, err := getProfile(ctx, p.s.pool, orgID, id, false, false)
	if err != nil {
		return nil, err
	}
	bp := rec.BrowserProfile
	return &bp, nil
}

// State returns a profile's browser state, unsealed (nil for an empty
// profile), for a run to start from.
func (p *Profiles) State(ctx context.Context, orgID, id string) ([]byte, error) {
	rec, err := getProfile(ctx, p.s.pool, orgID, id, false, false)
	if err != nil || rec.Sealed == nil {
		return nil, err
	}
	return p.open(rec.Sealed, store.ProfileAD(orgID, id))
}

// List returns a page of profiles, newest first.
func (p *Profiles) List(ctx context.Context, orgID string, q store.ProfileQuery) ([]*client.BrowserProfile, error) {
	if err := resOrg(ctx, p.s.pool, orgID); err != nil {
		return nil, err
	}
	term := strings.ToLower(q.Search)
	offset, limit, ok := records.Offset(q.Page, q.PageSize)
	if !ok || strings.IndexByte(term, 0) >= 0 {
		return []*client.BrowserProfile{}, nil
	}
	rows, err := p.s.pool.Query(ctx, `
		SELECT id, doc FROM browser_profiles
		WHERE org_id = $1 AND ($2 OR NOT deleted)
			AND ($3 = '' OR strpos(name_lower, $3) > 0 OR strpos(description_lower, $3) > 0)
		ORDER BY created_at DESC, id COLLATE "C" DESC
		OFFSET $4 LIMIT $5`, orgID, q.IncludeDeleted, term, offset, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list the browser profiles: %w", err)
	}
	out := []*client.BrowserProfile{}
	err = eachDoc(rows, func(id string, doc []byte) error {
		rec, err := decodeDoc[records.Profile](doc, store.RecordProfile, id)
		if err != nil {
			return err
		}
		bp := rec.BrowserProfile
		out = append(out, &bp)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Update renames a profile or changes its description (nil: unchanged;
// an empty description is stored as null).
func (p *Profiles) Update(ctx context.Context, orgID, id string, name, description *string) (*client.BrowserProfile, error) {
	var out *client.BrowserProfile
	err := p.s.tx(ctx, func(tx pgx.Tx) error {
		rec, err := getProfile(ctx, tx, orgID, id, false, true)
		if err != nil {
			return err
		}
		if name != nil {
			rec.Name = *name
		}
		if description != nil {
			rec.Description = nil
			if *description != "" {
				d := *description
				rec.Description = &d
			}
		}
		rec.ModifiedAt = p.s.clock()
		bp := rec.BrowserProfile
		out = &bp
		return putProfile(ctx, tx, orgID, rec)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete marks a profile deleted and drops its browser state.
func (p *Profiles) Delete(ctx context.Context, orgID, id string) error {
	return p.s.tx(ctx, func(tx pgx.Tx) error {
		rec, err := getProfile(ctx, tx, orgID, id, false, true)
		if err != nil {
			return err
		}
		now := p.s.clock()
		rec.DeletedAt, rec.ModifiedAt, rec.Sealed = &now, now, nil
		return putProfile(ctx, tx, orgID, rec)
	})
}

// putState writes the sealed state kept under key.
func putState(ctx context.Context, q querier, orgID string, key, sealed []byte) error {
	_, err := q.Exec(ctx, `INSERT INTO browser_states (org_id, key, sealed) VALUES ($1, $2, $3)
		ON CONFLICT (org_id, key) DO UPDATE SET sealed = excluded.sealed`, orgID, key, sealed)
	if err != nil {
		return fmt.Errorf("store: keep a browser state: %w", err)
	}
	return nil
}

// KeepRunState stores the browser state a run ended with: as the run's
// (for a profile made from it later) and, when wpid is given, as the state
// the agent's next run starts from.
func (p *Profiles) KeepRunState(ctx context.Context, orgID, runID, wpid string, state []byte) error {
	runKey := records.StateKey(store.StateOfRun, runID)
	forRun, err := p.seal(state, records.StateAD(orgID, runKey))
	if err != nil {
		return err
	}
	var agentKey, forAgent []byte
	if wpid != "" {
		agentKey = records.StateKey(store.StateOfAgent, wpid)
		if forAgent, err = p.seal(state, records.StateAD(orgID, agentKey)); err != nil {
			return err
		}
	}
	return p.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if err := putState(ctx, tx, orgID, runKey, forRun); err != nil {
			return err
		}
		if agentKey == nil {
			return nil
		}
		return putState(ctx, tx, orgID, agentKey, forAgent)
	})
}

func (p *Profiles) kept(ctx context.Context, orgID string, key []byte) ([]byte, error) {
	if err := resOrg(ctx, p.s.pool, orgID); err != nil {
		return nil, err
	}
	var sealed []byte
	err := p.s.pool.QueryRow(ctx, `SELECT sealed FROM browser_states WHERE org_id = $1 AND key = $2`, orgID, key).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read a browser state: %w", err)
	}
	return p.open(sealed, records.StateAD(orgID, key))
}

// KeepSessionState stores the browser state a browser session closed
// with, for a profile made from it.
func (p *Profiles) KeepSessionState(ctx context.Context, orgID, sessionID string, state []byte) error {
	key := records.StateKey(store.StateOfSession, sessionID)
	sealed, err := p.seal(state, records.StateAD(orgID, key))
	if err != nil {
		return err
	}
	return p.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		return putState(ctx, tx, orgID, key, sealed)
	})
}

// SessionState returns the browser state a browser session closed with,
// nil when it kept none.
func (p *Profiles) SessionState(ctx context.Context, orgID, sessionID string) ([]byte, error) {
	return p.kept(ctx, orgID, records.StateKey(store.StateOfSession, sessionID))
}

// RunState returns the browser state a run kept, nil when it kept none.
func (p *Profiles) RunState(ctx context.Context, orgID, runID string) ([]byte, error) {
	return p.kept(ctx, orgID, records.StateKey(store.StateOfRun, runID))
}

// AgentState returns the browser state an agent's next run starts from,
// nil when there is none.
func (p *Profiles) AgentState(ctx context.Context, orgID, wpid string) ([]byte, error) {
	return p.kept(ctx, orgID, records.StateKey(store.StateOfAgent, wpid))
}

// ResetAgentState forgets the browser state of an agent, so that its next
// run starts signed out.
func (p *Profiles) ResetAgentState(ctx context.Context, orgID, wpid string) error {
	return p.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM browser_states WHERE org_id = $1 AND key = $2`, orgID, records.StateKey(store.StateOfAgent, wpid))
		return err
	})
}
