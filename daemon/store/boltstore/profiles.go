package boltstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Profiles are the organizations' browser profiles and the browser states
// their runs and agents kept. Get it with Store.Profiles.
//
// A browser state (the JSON of engine/browser.State: cookies and local
// storage) signs whoever holds it in to the sites it was taken from, so it
// is sealed as credentials are (AES-256-GCM under Options.Secret, bound to
// the organization and the record), and only the executor of a run reads
// it back.
type Profiles struct{ s *Store }

// profileRecord is the stored form of a profile (records.Profile).
type profileRecord = records.Profile

func (p *Profiles) seal(plain, ad []byte) ([]byte, error) {
	return records.SealState(p.s.sealer, plain, ad)
}

func (p *Profiles) open(sealed, ad []byte) ([]byte, error) {
	return records.OpenState(p.s.sealer, sealed, ad)
}

func getProfile(o *orgTx, id string, withDeleted bool) (*profileRecord, error) {
	rec, err := getJSON[profileRecord](o.profiles(), store.RecordProfile, id)
	if err != nil {
		return nil, err
	}
	if rec.DeletedAt != nil && !withDeleted {
		return nil, notFound(store.RecordProfile, id)
	}
	return rec, nil
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
	err := p.s.updateOrg(ctx, orgID, func(o *orgTx) error { return putJSON(o.profiles(), []byte(id), rec) })
	if err != nil {
		return nil, err
	}
	out := rec.BrowserProfile
	return &out, nil
}

// Get returns a profile that is not deleted.
func (p *Profiles) Get(ctx context.Context, orgID, id string) (*client.BrowserProfile, error) {
	var out *client.BrowserProfile
	err := p.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getProfile(o, id, false)
		if err == nil {
			bp := rec.BrowserProfile
			out = &bp
		}
		return err
	})
	return out, err
}

// State returns a profile's browser state, unsealed (nil for an empty
// profile), for a run to start from.
func (p *Profiles) State(ctx context.Context, orgID, id string) ([]byte, error) {
	var rec *profileRecord
	err := p.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		rec, err = getProfile(o, id, false)
		return err
	})
	if err != nil || rec.Sealed == nil {
		return nil, err
	}
	return p.open(rec.Sealed, store.ProfileAD(orgID, id))
}

// List returns a page of profiles, newest first.
func (p *Profiles) List(ctx context.Context, orgID string, q store.ProfileQuery) ([]*client.BrowserProfile, error) {
	var all []*client.BrowserProfile
	term := strings.ToLower(q.Search)
	err := p.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		return o.profiles().ForEach(func(k, v []byte) error {
			rec := new(profileRecord)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("store: browser profile %s: %w", k, err)
			}
			if rec.DeletedAt != nil && !q.IncludeDeleted {
				return nil
			}
			desc := ""
			if rec.Description != nil {
				desc = *rec.Description
			}
			if term != "" && !strings.Contains(strings.ToLower(rec.Name), term) && !strings.Contains(strings.ToLower(desc), term) {
				return nil
			}
			bp := rec.BrowserProfile
			all = append(all, &bp)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b *client.BrowserProfile) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt.Time), strings.Compare(b.BrowserProfileID, a.BrowserProfileID))
	})
	start, end := records.Window(len(all), q.Page, q.PageSize)
	return append([]*client.BrowserProfile{}, all[start:end]...), nil
}

// Update renames a profile or changes its description (nil: unchanged;
// an empty description is stored as null).
func (p *Profiles) Update(ctx context.Context, orgID, id string, name, description *string) (*client.BrowserProfile, error) {
	var out *client.BrowserProfile
	err := p.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getProfile(o, id, false)
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
		return putJSON(o.profiles(), []byte(id), rec)
	})
	return out, err
}

// Delete marks a profile deleted and drops its browser state.
func (p *Profiles) Delete(ctx context.Context, orgID, id string) error {
	return p.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getProfile(o, id, false)
		if err != nil {
			return err
		}
		now := p.s.clock()
		rec.DeletedAt, rec.ModifiedAt, rec.Sealed = &now, now, nil
		return putJSON(o.profiles(), []byte(id), rec)
	})
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
	return p.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if err := o.browserStates().Put(runKey, forRun); err != nil {
			return err
		}
		if agentKey == nil {
			return nil
		}
		return o.browserStates().Put(agentKey, forAgent)
	})
}

func (p *Profiles) kept(ctx context.Context, orgID string, key []byte) ([]byte, error) {
	var sealed []byte
	err := p.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		if v := o.browserStates().Get(key); v != nil {
			sealed = slices.Clone(v)
		}
		return nil
	})
	if err != nil || sealed == nil {
		return nil, err
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
	return p.s.updateOrg(ctx, orgID, func(o *orgTx) error { return o.browserStates().Put(key, sealed) })
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
	return p.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		return o.browserStates().Delete(records.StateKey(store.StateOfAgent, wpid))
	})
}
