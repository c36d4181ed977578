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
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// The secret check: a known text sealed with its own associated data,
// which a backend keeps from its first open with a secret (SecretCheck,
// VerifySecretCheck).
var (
	secretCheckAD   = []byte("secret_check")
	secretCheckText = []byte("abctl: the store's secret")
)

// SecretSize is the size of Options.Secret.
const SecretSize = 32

// Sealer seals what the store keeps secret under Options.Secret: the
// copies of API keys that sign webhooks, credentials' secrets, the API keys
// of custom models and browser states. Each use has its own AES-256-GCM key
// derived from the secret, and every sealed value is bound to what it
// belongs to (its associated data: the key's hash, or one of the *AD
// functions below), so that a sealed value copied to another record does
// not open. Every backend seals the same way, so that sealed values can be
// copied from one backend to another as they are.
//
// A nil *Sealer is a store without a secret: callers check for nil and
// refuse to keep secrets.
type Sealer struct {
	keys   cipher.AEAD // API keys
	values cipher.AEAD // credentials, custom models' keys, browser states, the secret check
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

// NewSealer returns the Sealer of secret, which must be SecretSize bytes;
// nil (and no error) for a nil secret.
func NewSealer(secret []byte) (*Sealer, error) {
	if secret == nil {
		return nil, nil
	}
	if len(secret) != SecretSize {
		return nil, fmt.Errorf("store: the secret must be %d bytes, not %d", SecretSize, len(secret))
	}
	// Derive a key per use, so that the same secret can key other things
	// (artifact URLs) without two uses ever sharing a key.
	keys, err := deriveAEAD(secret, "abctl api key sealing v1")
	if err != nil {
		return nil, err
	}
	values, err := deriveAEAD(secret, "abctl credential sealing v1")
	if err != nil {
		return nil, err
	}
	return &Sealer{keys: keys, values: values}, nil
}

// SealAPIKey returns nonce || ciphertext of key, bound to its hash.
func (s *Sealer) SealAPIKey(key string, hash []byte) ([]byte, error) {
	sealed, err := sealWith(s.keys, []byte(key), hash)
	if err != nil {
		return nil, fmt.Errorf("store: seal an API key: %w", err)
	}
	return sealed, nil
}

// OpenAPIKey opens what SealAPIKey sealed with the same hash.
func (s *Sealer) OpenAPIKey(sealed, hash []byte) (string, error) {
	if len(sealed) < s.keys.NonceSize() {
		return "", fmt.Errorf("store: sealed API key too short")
	}
	key, err := openWith(s.keys, sealed, hash)
	if err != nil {
		return "", fmt.Errorf("store: unseal an API key (was the data directory's secret replaced?): %w", err)
	}
	return string(key), nil
}

// Seal returns nonce || the sealed plaintext, bound to ad (one of the *AD
// functions).
func (s *Sealer) Seal(plaintext, ad []byte) ([]byte, error) {
	return sealWith(s.values, plaintext, ad)
}

// Open opens what Seal sealed with the same ad.
func (s *Sealer) Open(sealed, ad []byte) ([]byte, error) {
	return openWith(s.values, sealed, ad)
}

// The associated data that binds each kind of sealed value to its record.

// CredentialAD binds a credential's secret to the credential.
func CredentialAD(orgID, id string) []byte { return []byte(orgID + "\x00" + id) }

// CustomLLMAD binds a custom model's API key to the model.
func CustomLLMAD(orgID, id string) []byte {
	return []byte("custom_llm\x00" + orgID + "\x00" + id)
}

// ProfileAD binds a browser profile's state to the profile.
func ProfileAD(orgID, id string) []byte { return []byte(orgID + "\x00profile\x00" + id) }

// Kinds of kept browser states, for BrowserStateAD.
const (
	StateOfRun     byte = 'r' // the state a run kept, by run id
	StateOfAgent   byte = 'a' // the state an agent with persist_browser_session starts from, by wpid
	StateOfSession byte = 's' // the state a browser session closed with, by session id
)

// BrowserStateAD binds a kept browser state to its owner: kind is one of
// StateOfRun, StateOfAgent, StateOfSession and id the run's, agent's or
// session's id.
func BrowserStateAD(orgID string, kind byte, id string) []byte {
	return append(append([]byte(orgID+"\x00state\x00"), kind, 0), id...)
}

// SecretCheck seals a known text, which VerifySecretCheck opens: a store
// keeps it from the first open with a secret, so that a later open with
// another secret fails at once instead of sealing new values under the
// wrong key.
func (s *Sealer) SecretCheck() ([]byte, error) {
	return sealWith(s.values, secretCheckText, secretCheckAD)
}

// VerifySecretCheck returns an error when sealed (made by SecretCheck) was
// sealed under another secret.
func (s *Sealer) VerifySecretCheck(sealed []byte) error {
	if _, err := openWith(s.values, sealed, secretCheckAD); err != nil {
		return fmt.Errorf("%w: it is not the secret they were sealed with; restore the data directory's original secret file (a new one cannot read them)", ErrWrongSecret)
	}
	return nil
}

// ErrWrongSecret is wrapped by the error of a store opened with a secret
// that is not the one its sealed values were sealed with.
var ErrWrongSecret = errors.New("store: the secret does not open this store's sealed values (credentials, API keys)")

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
