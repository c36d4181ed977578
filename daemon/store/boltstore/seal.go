package boltstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/daemon/store"
)

// sealMissing adds the sealed copy to the record of key when it lacks one
// (a key registered before the store had a secret). Authenticate calls it,
// since that is when the store sees the key itself.
func (s *Store) sealMissing(ctx context.Context, key string, hash []byte) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAPIKeys)
		v := b.Get(hash)
		if v == nil {
			return nil
		}
		var rec apiKeyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("store: API key record: %w", err)
		}
		if rec.Sealed != nil {
			return nil
		}
		sealed, err := s.sealer.SealAPIKey(key, hash)
		if err != nil {
			return err
		}
		rec.Sealed = sealed
		return putJSON(b, hash, rec)
	})
}

// SigningKey returns the API key whose SHA-256 is hash, for signing the
// webhooks of the runs it started. ErrNotFound when the store does not know
// the key, or keeps no sealed copy of it (the store has no secret).
func (s *Store) SigningKey(ctx context.Context, hash []byte) (string, error) {
	if s.sealer == nil {
		return "", store.Errorf(store.ErrNotFound, "the daemon keeps no copy of its API keys to sign webhooks with")
	}
	var key string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAPIKeys).Get(hash)
		if v == nil {
			return store.Errorf(store.ErrNotFound, "the API key that started the run is no longer registered")
		}
		var rec apiKeyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("store: API key record: %w", err)
		}
		if rec.Sealed == nil {
			return store.Errorf(store.ErrNotFound, "no sealed copy of the API key that started the run; it is made the next time the key is used")
		}
		var err error
		key, err = s.sealer.OpenAPIKey(rec.Sealed, hash)
		return err
	})
	return key, err
}

// keySecretCheck is the key of the sealed known text in meta/ (the
// Sealer's SecretCheck).
var keySecretCheck = []byte("secret_check")

// verifySecret makes sure the store's secret is the one its sealed values
// were sealed with: the first Open with a secret seals a known text into
// meta/secret_check (recordSecret), and every later Open must be able to
// open it. A replaced secret file (or a new one made for a missing one) is
// then an error at start, before anything is written or sealed under the
// wrong key.
func verifySecret(db *bolt.DB, sl *store.Sealer) error {
	var sealed []byte
	if err := db.View(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			sealed = bytes.Clone(meta.Get(keySecretCheck))
		}
		return nil
	}); err != nil {
		return err
	}
	if sealed == nil || sl == nil {
		// Without a secret (the offline organization commands) the store
		// opens, and cannot seal or unseal.
		return nil
	}
	return sl.VerifySecretCheck(sealed)
}

// recordSecret seals the known text under the store's secret, when the
// store has a secret and no check yet.
func recordSecret(db *bolt.DB, sl *store.Sealer) error {
	if sl == nil {
		return nil
	}
	recorded := false
	if err := db.View(func(tx *bolt.Tx) error {
		recorded = tx.Bucket(bucketMeta).Get(keySecretCheck) != nil
		return nil
	}); err != nil || recorded {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta.Get(keySecretCheck) != nil {
			return nil
		}
		check, err := sl.SecretCheck()
		if err != nil {
			return err
		}
		return meta.Put(keySecretCheck, check)
	})
}
