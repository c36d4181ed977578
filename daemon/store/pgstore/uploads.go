package pgstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// Uploads are the records of the files organizations uploaded (bbolt:
// daemon/store/uploads.go); the bytes are in the artifact directory.
type Uploads struct{ s *Store }

// Uploads returns the organizations' uploaded files.
func (s *Store) Uploads() store.Uploads { return &Uploads{s: s} }

// NewDir returns the id of a new upload directory (upl_<snowflake>).
func (u *Uploads) NewDir() string { return u.s.ids.Next(store.PrefixUploadDir) }

// Create stores the record of an uploaded file, whose bytes the caller has
// already written, stamping its CreatedAt when unset.
func (u *Uploads) Create(ctx context.Context, orgID string, up *store.Upload) error {
	if !records.ValidID(up.ID) {
		return fmt.Errorf("store: upload id %q is not a valid key", up.ID)
	}
	if up.CreatedAt.IsZero() {
		up.CreatedAt = u.s.clock()
	}
	doc, err := json.Marshal(up)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", up.ID, err)
	}
	return u.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO uploads (org_id, id, doc) VALUES ($1, $2, $3)
			ON CONFLICT (org_id, id) DO UPDATE SET doc = excluded.doc`, orgID, up.ID, doc)
		if err != nil {
			return fmt.Errorf("store: upload %s: %w", up.ID, err)
		}
		return nil
	})
}

// Get returns the record of an uploaded file by its artifact id.
func (u *Uploads) Get(ctx context.Context, orgID, id string) (*store.Upload, error) {
	doc, err := getDoc(ctx, u.s.pool, "uploads", orgID, id, false, store.RecordArtifact)
	if err != nil {
		return nil, err
	}
	return decodeDoc[store.Upload](doc, store.RecordArtifact, id)
}
