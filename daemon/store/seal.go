package store

// API keys are stored as their SHA-256, which is all authentication needs.
// Webhooks are another matter: the hosted service signs each webhook with
// the API key that started the run (an HMAC keyed with the key itself), and
// receivers written for it verify with that key, so the daemon must be able
// to recover the key, also after a restart (the webhooks of runs that a
// crash interrupted). The store therefore keeps, beside the hash, a copy of
// the key sealed with AES-256-GCM under a secret that lives outside the
// database (Options.Secret; the daemon keeps it in a 0600 file of its data
// directory). A copy of the database alone, a backup say, does not reveal
// the keys.

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// SecretSize is the size of Options.Secret.
const SecretSize = 32

// sealer seals API keys and credentials, each under its own key derived
// from the secret; nil when the store has no secret, and then keys are not
// sealed, webhooks cannot be signed and credentials cannot be stored.
type sealer struct {
	aead  cipher.AEAD // API keys
	creds cipher.AEAD // credentials' secrets and the secret check
}

// deriveAEAD makes an AES-256-GCM keyed with HMAC-SHA256(secret, label).
func deriveAEAD(secret []byte, label string) (cipher.AEAD, error) {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(label))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func newSealer(secret []byte) (*sealer, error) {
	if secret == nil {
		return nil, nil
	}
	if len(secret) != SecretSize {
		return nil, fmt.Errorf("store: the secret must be %d bytes, not %d", SecretSize, len(secret))
	}
	// Derive a key per use, so that the same secret can key other things
	// (artifact URLs) without two uses ever sharing a key.
	aead, err := deriveAEAD(secret, "abctl api key sealing v1")
	if err != nil {
		return nil, err
	}
	creds, err := deriveAEAD(secret, "abctl credential sealing v1")
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead, creds: creds}, nil
}

// seal returns nonce || ciphertext, bound to the key's hash.
func (s *sealer) seal(key string, hash []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("store: seal an API key: %w", err)
	}
	return s.aead.Seal(nonce, nonce, []byte(key), hash), nil
}

func (s *sealer) open(sealed, hash []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", fmt.Errorf("store: sealed API key too short")
	}
	key, err := s.aead.Open(nil, sealed[:n], sealed[n:], hash)
	if err != nil {
		return "", fmt.Errorf("store: unseal an API key (was the data directory's secret replaced?): %w", err)
	}
	return string(key), nil
}

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
		sealed, err := s.sealer.seal(key, hash)
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
		return "", errorf(ErrNotFound, "the daemon keeps no copy of its API keys to sign webhooks with")
	}
	var key string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAPIKeys).Get(hash)
		if v == nil {
			return errorf(ErrNotFound, "the API key that started the run is no longer registered")
		}
		var rec apiKeyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("store: API key record: %w", err)
		}
		if rec.Sealed == nil {
			return errorf(ErrNotFound, "no sealed copy of the API key that started the run; it is made the next time the key is used")
		}
		var err error
		key, err = s.sealer.open(rec.Sealed, hash)
		return err
	})
	return key, err
}

// sealWith returns nonce || the sealed plaintext, bound to ad.
func sealWith(aead cipher.AEAD, plaintext, ad []byte) ([]byte, error) {
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("store: seal: %w", err)
	}
	return aead.Seal(nonce, nonce, plaintext, ad), nil
}

// openWith opens what sealWith sealed with the same ad.
func openWith(aead cipher.AEAD, sealed, ad []byte) ([]byte, error) {
	n := aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("store: sealed value too short")
	}
	return aead.Open(nil, sealed[:n], sealed[n:], ad)
}

var (
	keySecretCheck  = []byte("secret_check")
	secretCheckText = []byte("abctl: the store's secret")
)

// verifySecret makes sure the store's secret is the one its sealed values
// were sealed with: the first Open with a secret seals a known text into
// meta/secret_check (recordSecret), and every later Open must be able to
// open it. A replaced secret file (or a new one made for a missing one) is
// then an error at start, before anything is written or sealed under the
// wrong key.
func verifySecret(db *bolt.DB, sl *sealer) error {
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
	if _, err := openWith(sl.creds, sealed, keySecretCheck); err != nil {
		return errors.New("store: the secret does not open this store's sealed values (credentials, API keys): it is not the secret they were sealed with; restore the data directory's original secret file (a new one cannot read them)")
	}
	return nil
}

// recordSecret seals the known text under the store's secret, when the
// store has a secret and no check yet.
func recordSecret(db *bolt.DB, sl *sealer) error {
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
		check, err := sealWith(sl.creds, secretCheckText, keySecretCheck)
		if err != nil {
			return err
		}
		return meta.Put(keySecretCheck, check)
	})
}
