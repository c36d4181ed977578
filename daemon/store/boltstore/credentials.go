package boltstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/localrun/executor"
)

// Credentials are the organizations' credentials and the one-time codes
// pushed for their runs. Get it with Store.Credentials.
//
// A credential's secret (the password and TOTP secret, the card's number,
// CVV and expiry, the secret value) is stored sealed with AES-256-GCM
// under a key derived from Options.Secret, bound to the organization and
// the credential id, so that a sealed value copied to another record does
// not open. Only Secret unseals it, for the engine that types it into a
// page; everything else the store answers is what the API shows.
type Credentials struct{ s *Store }

// credentialRecord is the stored form of a credential (records.Credential).
type credentialRecord = records.Credential

func getCredential(o *orgTx, id string) (*credentialRecord, error) {
	return getJSON[credentialRecord](o.credentials(), store.RecordCredential, id)
}

func (c *Credentials) seal(orgID, id string, secret []byte) ([]byte, error) {
	return records.SealCredential(c.s.sealer, orgID, id, secret)
}

// Create stores a new credential.
func (c *Credentials) Create(ctx context.Context, orgID string, in *store.CredentialInput) (*client.Credential, error) {
	id := c.s.ids.Next(ids.PrefixCredential)
	sealed, err := c.seal(orgID, id, in.Secret)
	if err != nil {
		return nil, err
	}
	now := c.s.clock()
	rec := records.NewCredential(id, in, sealed, now)
	err = c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		return putJSON(o.credentials(), []byte(id), rec)
	})
	if err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// Update replaces a credential's name and data, keeping its id. Its type
// may not change (ErrInvalid).
func (c *Credentials) Update(ctx context.Context, orgID, id string, in *store.CredentialInput) (*client.Credential, error) {
	sealed, err := c.seal(orgID, id, in.Secret)
	if err != nil {
		return nil, err
	}
	var rec *credentialRecord
	err = c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		if rec, err = getCredential(o, id); err != nil {
			return err
		}
		if err := rec.Update(in, sealed, c.s.clock()); err != nil {
			return err
		}
		return putJSON(o.credentials(), []byte(id), rec)
	})
	if err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// Get returns a credential as answers show it.
func (c *Credentials) Get(ctx context.Context, orgID, id string) (*client.Credential, error) {
	var out *client.Credential
	err := c.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		rec, err := getCredential(o, id)
		if err == nil {
			out = rec.Result()
		}
		return err
	})
	return out, err
}

// Secret returns a credential's type and its unsealed data (the JSON the
// API received), for the engine to type into a page. Nothing else may see
// it.
func (c *Credentials) Secret(ctx context.Context, orgID, id string) (client.CredentialType, []byte, error) {
	var rec *credentialRecord
	err := c.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		var err error
		rec, err = getCredential(o, id)
		return err
	})
	if err != nil {
		return "", nil, err
	}
	plain, err := records.OpenCredential(c.s.sealer, orgID, rec)
	if err != nil {
		return "", nil, err
	}
	return rec.Type, plain, nil
}

// List returns a page of credentials, newest first.
func (c *Credentials) List(ctx context.Context, orgID string, q store.CredentialQuery) ([]*client.Credential, error) {
	var recs []*credentialRecord
	term := strings.ToLower(q.Search)
	err := c.s.viewOrg(ctx, orgID, func(o *orgTx) error {
		return o.credentials().ForEach(func(k, v []byte) error {
			rec := new(credentialRecord)
			if err := json.Unmarshal(v, rec); err != nil {
				return fmt.Errorf("store: credential %s: %w", k, err)
			}
			if q.Type != "" && rec.Type != q.Type {
				return nil
			}
			if term != "" && !strings.Contains(strings.ToLower(rec.Name), term) && !strings.Contains(strings.ToLower(rec.Info.Username), term) {
				return nil
			}
			rec.Sealed = nil
			recs = append(recs, rec)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, func(a, b *credentialRecord) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt.Time), strings.Compare(b.ID, a.ID))
	})
	start, end := records.Window(len(recs), q.Page, q.PageSize)
	out := make([]*client.Credential, 0, end-start)
	for _, rec := range recs[start:end] {
		out = append(out, rec.Result())
	}
	return out, nil
}

// Delete deletes a credential; its sealed secret goes with it.
func (c *Credentials) Delete(ctx context.Context, orgID, id string) error {
	return c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if _, err := getCredential(o, id); err != nil {
			return err
		}
		return o.credentials().Delete([]byte(id))
	})
}

// totpKey is identifier 0x00 created_at (unix nanoseconds, sign bit
// flipped) code id.
func totpKey(identifier string, created time.Time, id string) []byte {
	k := append([]byte(identifier), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(created.UnixNano())^(1<<63))
	return append(k, id...)
}

// PutTOTPCode stores a pushed one-time code (its TOTPCodeID, Code,
// CreatedAt and ExpiredAt set by the caller), and drops the identifier's
// expired codes.
func (c *Credentials) PutTOTPCode(ctx context.Context, orgID string, code *client.TOTPCode) error {
	if strings.IndexByte(code.TOTPIdentifier, 0) >= 0 || code.TOTPIdentifier == "" {
		return store.Errorf(store.ErrInvalid, "a TOTP identifier must be non-empty text without NUL bytes")
	}
	now := c.s.now()
	return c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		if err := dropExpired(o.totpCodes(), code.TOTPIdentifier, now); err != nil {
			return err
		}
		return putJSON(o.totpCodes(), totpKey(code.TOTPIdentifier, code.CreatedAt.Time, code.TOTPCodeID), code)
	})
}

// TakeTOTPCode returns the newest code pushed for identifier that f
// admits and that has not expired, and deletes it: a code is used once. It
// returns nil when there is none.
func (c *Credentials) TakeTOTPCode(ctx context.Context, orgID, identifier string, f executor.CodeFilter) (*client.TOTPCode, error) {
	if identifier == "" || strings.IndexByte(identifier, 0) >= 0 {
		return nil, nil
	}
	now := c.s.now()
	var out *client.TOTPCode
	err := c.s.updateOrg(ctx, orgID, func(o *orgTx) error {
		out = nil
		b := o.totpCodes()
		if err := dropExpired(b, identifier, now); err != nil {
			return err
		}
		prefix := append([]byte(identifier), 0)
		cur := b.Cursor()
		// The newest is the last key of the identifier: seek past them.
		cur.Seek(append([]byte(identifier), 1))
		for k, v := cur.Prev(); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Prev() {
			code := new(client.TOTPCode)
			if err := json.Unmarshal(v, code); err != nil {
				return fmt.Errorf("store: one-time code: %w", err)
			}
			if code.CreatedAt.Before(f.Since) {
				return nil
			}
			if !records.Admits(f, code) {
				continue
			}
			out = code
			return b.Delete(k)
		}
		return nil
	})
	return out, err
}

// dropExpired deletes the identifier's codes whose ExpiredAt has passed.
func dropExpired(b *bolt.Bucket, identifier string, now time.Time) error {
	prefix := append([]byte(identifier), 0)
	var gone [][]byte
	cur := b.Cursor()
	for k, v := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		var code struct {
			ExpiredAt *client.Time `json:"expired_at"`
		}
		if err := json.Unmarshal(v, &code); err != nil || code.ExpiredAt == nil || !code.ExpiredAt.After(now) {
			gone = append(gone, bytes.Clone(k))
		}
	}
	for _, k := range gone {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}
