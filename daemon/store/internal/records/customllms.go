package records

import (
	"fmt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// CustomLLM is the stored form of a custom model.
type CustomLLM struct {
	ID string `json:"id"`
	// Config is the configuration as answers show it: APIKey is always
	// nil here.
	Config     client.CustomLLMConfig `json:"config"`
	CreatedAt  client.Time            `json:"created_at"`
	ModifiedAt client.Time            `json:"modified_at"`
	Valid      bool                   `json:"valid"`
	// SealedKey is the API key sealed (store.CustomLLMAD); nil when the
	// model has no key.
	SealedKey []byte `json:"sealed_key,omitempty"`
}

// NewCustomLLM is a new custom model id made at now from in, its key
// already sealed (SealCustomLLMKey).
func NewCustomLLM(id string, in *store.CustomLLMInput, sealed []byte, now client.Time) *CustomLLM {
	rec := &CustomLLM{ID: id, Config: in.Config, CreatedAt: now, ModifiedAt: now, Valid: in.Valid, SealedKey: sealed}
	rec.Config.APIKey = nil
	return rec
}

// Update replaces the model's configuration with in's at now, and its key
// with sealed when in gives one.
func (rec *CustomLLM) Update(in *store.CustomLLMInput, sealed []byte, now client.Time) {
	rec.Config, rec.Valid, rec.ModifiedAt = in.Config, in.Valid, now
	rec.Config.APIKey = nil
	if in.Key != nil {
		rec.SealedKey = sealed
	}
}

// Result is the model as answers show it, without its key.
func (rec *CustomLLM) Result(orgID string) *client.CustomLLM {
	cfg := rec.Config
	cfg.APIKey = nil
	return &client.CustomLLM{ID: rec.ID, OrganizationID: orgID, Config: cfg,
		CreatedAt: rec.CreatedAt, ModifiedAt: rec.ModifiedAt, Valid: rec.Valid}
}

// SealCustomLLMKey seals key for the model id of orgID; nil for no key.
func SealCustomLLMKey(sl *store.Sealer, orgID, id, key string) ([]byte, error) {
	if key == "" {
		return nil, nil
	}
	if sl == nil {
		return nil, store.Errorf(store.ErrInvalid, "this daemon has no secret to seal the API keys of custom models with")
	}
	return sl.Seal([]byte(key), store.CustomLLMAD(orgID, id))
}

// Model is the model for the runs of orgID, its key unsealed. Nothing may
// show or log the key; the error never holds it.
func (rec *CustomLLM) Model(sl *store.Sealer, orgID string) (executor.CustomModel, error) {
	m := store.CustomModelOf(rec.ID, rec.Config)
	if rec.SealedKey != nil {
		if sl == nil {
			return executor.CustomModel{}, store.Errorf(store.ErrInvalid, "this daemon has no secret to open the API key of custom LLM %s with", rec.ID)
		}
		key, err := sl.Open(rec.SealedKey, store.CustomLLMAD(orgID, rec.ID))
		if err != nil {
			return executor.CustomModel{}, fmt.Errorf("store: the API key of custom LLM %s cannot be opened with this daemon's secret", rec.ID)
		}
		m.APIKey = string(key)
	}
	return m, nil
}

// Results is recs as answers show them, in their order.
func Results(recs []*CustomLLM, orgID string) []*client.CustomLLM {
	out := make([]*client.CustomLLM, 0, len(recs))
	for _, rec := range recs {
		out = append(out, rec.Result(orgID))
	}
	return out
}

// Models is recs with their keys unsealed, in their order, for the runs
// of orgID.
func Models(sl *store.Sealer, recs []*CustomLLM, orgID string) ([]executor.CustomModel, error) {
	var out []executor.CustomModel
	for _, rec := range recs {
		m, err := rec.Model(sl, orgID)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
