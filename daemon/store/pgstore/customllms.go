package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/localrun/executor"
)

// CustomLLMs are the organizations' own model endpoints (bbolt:
// daemon/store/customllms.go). A model's API key is sealed, bound to the
// organization and the model (store.CustomLLMAD).
type CustomLLMs struct{ s *Store }

// CustomLLMs returns the custom models of the organizations.
func (s *Store) CustomLLMs() store.CustomLLMs { return &CustomLLMs{s} }

func getCustomLLM(ctx context.Context, q querier, orgID, id string, lock bool) (*records.CustomLLM, error) {
	doc, err := getDoc(ctx, q, "custom_llms", orgID, id, lock, store.RecordCustomLLM)
	if err != nil {
		return nil, err
	}
	return decodeDoc[records.CustomLLM](doc, store.RecordCustomLLM, id)
}

// NewID returns an id for a custom model not yet stored.
func (c *CustomLLMs) NewID() string { return c.s.ids.Next(ids.PrefixCustomLLM) }

// Create stores a new custom model under id (from NewID).
func (c *CustomLLMs) Create(ctx context.Context, orgID, id string, in *store.CustomLLMInput) (*client.CustomLLM, error) {
	if !strings.HasPrefix(id, ids.PrefixCustomLLM+"_") || !records.ValidID(id) {
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
	doc, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("store: encode %s: %w", id, err)
	}
	err = c.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO custom_llms (org_id, id, created_at, doc) VALUES ($1, $2, $3, $4)
			ON CONFLICT (org_id, id) DO NOTHING`, orgID, id, now.Time, doc)
		if err != nil {
			return fmt.Errorf("store: custom LLM %s: %w", id, err)
		}
		if tag.RowsAffected() == 0 {
			return &store.ConflictError{Record: store.RecordCustomLLM, ID: id}
		}
		return nil
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
	var rec *records.CustomLLM
	err := c.s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if rec, err = getCustomLLM(ctx, tx, orgID, id, true); err != nil {
			return err
		}
		rec.Update(in, sealed, c.s.clock())
		doc, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("store: encode %s: %w", id, err)
		}
		_, err = tx.Exec(ctx, `UPDATE custom_llms SET doc = $3 WHERE org_id = $1 AND id = $2`, orgID, id, doc)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rec.Result(orgID), nil
}

// Get returns a custom model as answers show it.
func (c *CustomLLMs) Get(ctx context.Context, orgID, id string) (*client.CustomLLM, error) {
	rec, err := getCustomLLM(ctx, c.s.pool, orgID, id, false)
	if err != nil {
		return nil, err
	}
	return rec.Result(orgID), nil
}

// list returns every record of the organization, newest first.
func (c *CustomLLMs) list(ctx context.Context, orgID string) ([]*records.CustomLLM, error) {
	if err := resOrg(ctx, c.s.pool, orgID); err != nil {
		return nil, err
	}
	rows, err := c.s.pool.Query(ctx, `SELECT id, doc FROM custom_llms WHERE org_id = $1
		ORDER BY created_at DESC, id COLLATE "C" DESC`, orgID)
	if err != nil {
		return nil, fmt.Errorf("store: list the custom LLMs: %w", err)
	}
	var recs []*records.CustomLLM
	err = eachDoc(rows, func(id string, doc []byte) error {
		rec, err := decodeDoc[records.CustomLLM](doc, store.RecordCustomLLM, id)
		if err == nil {
			recs = append(recs, rec)
		}
		return err
	})
	return recs, err
}

// List returns the organization's custom models, newest first.
func (c *CustomLLMs) List(ctx context.Context, orgID string) ([]*client.CustomLLM, error) {
	recs, err := c.list(ctx, orgID)
	if err != nil {
		return nil, err
	}
	return records.Results(recs, orgID), nil
}

// Delete deletes a custom model; its sealed key goes with it.
func (c *CustomLLMs) Delete(ctx context.Context, orgID, id string) error {
	return c.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := getCustomLLM(ctx, tx, orgID, id, true); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM custom_llms WHERE org_id = $1 AND id = $2`, orgID, id)
		return err
	})
}

// Model returns one custom model with its key unsealed, for the check of
// an update that keeps the stored key. Nothing may show or log the key.
func (c *CustomLLMs) Model(ctx context.Context, orgID, id string) (executor.CustomModel, error) {
	rec, err := getCustomLLM(ctx, c.s.pool, orgID, id, false)
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
