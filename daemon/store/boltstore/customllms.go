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
	"github.com/abctl/abctl/localrun/executor"
)

// CustomLLMs are the organizations' own model endpoints (/v1/custom-llms).
// Get it with Store.CustomLLMs.
//
// A model's API key is stored sealed with AES-256-GCM under the key the
// credentials use, bound to the organization and the model's id (with a
// label of its own, so that a sealed credential copied into a model record
// does not open, nor the reverse). Only Models and Model unseal it, for the
// runs of that organization and the check made when a model is saved;
// everything else answers the configuration without it.
type CustomLLMs struct{ s *Store }

// customLLMRecord is the stored form of a custom model (records.CustomLLM).
type customLLMRecord = records.CustomLLM

func getCustomLLM(o *orgTx, id string) (*customLLMRecord, error) {
	return getJSON[customLLMRecord](o.customLLMs(), store.RecordCustomLLM, id)
}

// NewID returns an id for a custom model not yet stored.
func (c *CustomLLMs) NewID() string { return c.s.ids.Next(ids.PrefixCustomLLM) }

// Create stores a new custom model under id (from NewID).
func (c *CustomLLMs) Create(ctx context.Context, orgID, id string, in *store.CustomLLMInput) (*client.CustomLLM, error) {
	if !strings.HasPrefix(id, ids.PrefixCustomLLM+"_") || !validID(id) {
		return nil, store.Errorf(store.ErrInvalid, "%q is not a custom LLM id made by NewID", id)
	}
	key := ""
	if in.Key != nil {
		key = *in.Key
	}
	sealed, err := records.SealCustomLLMKey(c.s.sealer, orgID, id, key)
	if err != nil {
		return nil, err
	}
	now := c.s.clock()
	rec := records.NewCustomLLM(id, in, sealed, now)
	err = c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if o.customLLMs().Get([]byte(id)) != nil {
			return &store.ConflictError{Record: store.RecordCustomLLM, ID: id}
		}
		return putJSON(o.customLLMs(), []byte(id), rec)
	})
	if err != nil {
		return nil, err
	}
	return rec.Result(orgID), nil
}

// Update replaces a custom model's configuration, keeping its id, and
// its key unless in.Key says otherwise.
func (c *CustomLLMs) Update(ctx context.Context, orgID, id string, in *store.CustomLLMInput) (*client.CustomLLM, error) {
	var sealed []byte
	if in.Key != nil {
		var err error
		if sealed, err = records.SealCustomLLMKey(c.s.sealer, orgID, id, *in.Key); err != nil {
			return nil, err
		}
	}
	var rec *customLLMRecord
	err := c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		if rec, err = getCustomLLM(o, id); err != nil {
			return err
		}
		rec.Update(in, sealed, c.s.clock())
		return putJSON(o.customLLMs(), []byte(id), rec)
	})
	if err != nil {
		return nil, err
	}
	return rec.Result(orgID), nil
}

// Get returns a custom model as answers show it.
func (c *CustomLLMs) Get(ctx context.Context, orgID, id string) (*client.CustomLLM, error) {
	var out *client.CustomLLM
	err := c.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getCustomLLM(o, id)
		if err == nil {
			out = rec.Result(orgID)
		}
		return err
	})
	return out, err
}

// list returns every record of the organization, newest first.
func (c *CustomLLMs) list(ctx context.Context, orgID string) ([]*customLLMRecord, error) {
	var recs []*customLLMRecord
	err := c.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		return o.customLLMs().ForEach(func(k, v []byte) error {
			rec := new(customLLMRecord)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("store: custom LLM %s: %w", k, err)
			}
			recs = append(recs, rec)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, func(a, b *customLLMRecord) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt.Time), strings.Compare(b.ID, a.ID))
	})
	return recs, nil
}

// List returns the organization's custom models, newest first. An
// organization has few (they are configured by hand), so there are no
// pages.
func (c *CustomLLMs) List(ctx context.Context, orgID string) ([]*client.CustomLLM, error) {
	recs, err := c.list(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return records.Results(recs, orgID), nil
}

// Delete deletes a custom model; its sealed key goes with it.
func (c *CustomLLMs) Delete(ctx context.Context, orgID, id string) error {
	return c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if _, err := getCustomLLM(o, id); err != nil {
			return err
		}
		return o.customLLMs().Delete([]byte(id))
	})
}

// Model returns one custom model with its key unsealed, for the check of
// an update that keeps the stored key. Nothing may show or log the key.
func (c *CustomLLMs) Model(ctx context.Context, orgID, id string) (executor.CustomModel, error) {
	var rec *customLLMRecord
	err := c.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		rec, err = getCustomLLM(o, id)
		return err
	})
	if err != nil {
		return executor.CustomModel{}, err
	}
	return rec.Model(c.s.sealer, orgID)
}

// Models returns the organization's custom models with their keys
// unsealed, newest first, for its runs. Nothing may show or log the keys.
func (c *CustomLLMs) Models(ctx context.Context, orgID string) ([]executor.CustomModel, error) {
	recs, err := c.list(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return records.Models(c.s.sealer, recs, orgID)
}

// CustomLLMs returns the custom models of the organizations.
func (s *Store) CustomLLMs() store.CustomLLMs { return &CustomLLMs{s} }
