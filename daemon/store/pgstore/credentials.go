package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
	"github.com/abctl/abctl/localrun/executor"
)

// Credentials are the organizations' credentials and the one-time codes
// pushed for their runs (bbolt: daemon/store/credentials.go). A
// credential's secret is sealed under the store's secret, bound to the
// organization and the credential (store.CredentialAD).
type Credentials struct{ s *Store }

// Credentials returns the credentials of the organizations.
func (s *Store) Credentials() store.Credentials { return &Credentials{s} }

func (c *Credentials) seal(orgID, id string, secret []byte) ([]byte, error) {
	return records.SealCredential(c.s.sealer, orgID, id, secret)
}

func getCredential(ctx context.Context, q querier, orgID, id string, lock bool) (*records.Credential, error) {
	doc, err := getDoc(ctx, q, "credentials", orgID, id, lock, store.RecordCredential)
	if err != nil {
		return nil, err
	}
	return decodeDoc[records.Credential](doc, store.RecordCredential, id)
}

// putCredential writes rec (insert or replace).
func putCredential(ctx context.Context, q querier, orgID string, rec *records.Credential) error {
	doc, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("store: encode %s: %w", rec.ID, err)
	}
	_, err = q.Exec(ctx, `
		INSERT INTO credentials (org_id, id, created_at, credential_type, name_lower, username_lower, doc)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (org_id, id) DO UPDATE SET credential_type = excluded.credential_type,
			name_lower = excluded.name_lower, username_lower = excluded.username_lower, doc = excluded.doc`,
		orgID, rec.ID, rec.CreatedAt.Time, string(rec.Type), strings.ToLower(rec.Name), strings.ToLower(rec.Info.Username), doc)
	if err != nil {
		return fmt.Errorf("store: credential %s: %w", rec.ID, err)
	}
	return nil
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
	err = c.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		return putCredential(ctx, tx, orgID, rec)
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
	var rec *records.Credential
	err = c.s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if rec, err = getCredential(ctx, tx, orgID, id, true); err != nil {
			return err
		}
		if err := rec.Update(in, sealed, c.s.clock()); err != nil {
			return err
		}
		return putCredential(ctx, tx, orgID, rec)
	})
	if err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// Get returns a credential as answers show it.
func (c *Credentials) Get(ctx context.Context, orgID, id string) (*client.Credential, error) {
	rec, err := getCredential(ctx, c.s.pool, orgID, id, false)
	if err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// Secret returns a credential's type and its unsealed data (the JSON the
// API received), for the engine to type into a page. Nothing else may see
// it.
func (c *Credentials) Secret(ctx context.Context, orgID, id string) (client.CredentialType, []byte, error) {
	rec, err := getCredential(ctx, c.s.pool, orgID, id, false)
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
	if err := resOrg(ctx, c.s.pool, orgID); err != nil {
		return nil, err
	}
	offset, limit, ok := records.Offset(q.Page, q.PageSize)
	if !ok || strings.IndexByte(string(q.Type), 0) >= 0 {
		return []*client.Credential{}, nil
	}
	term := strings.ToLower(q.Search)
	if strings.IndexByte(term, 0) >= 0 {
		return []*client.Credential{}, nil // no stored name holds a NUL
	}
	rows, err := c.s.pool.Query(ctx, `
		SELECT id, doc FROM credentials
		WHERE org_id = $1 AND ($2 = '' OR credential_type = $2)
			AND ($3 = '' OR strpos(name_lower, $3) > 0 OR strpos(username_lower, $3) > 0)
		ORDER BY created_at DESC, id COLLATE "C" DESC
		OFFSET $4 LIMIT $5`, orgID, string(q.Type), term, offset, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list the credentials: %w", err)
	}
	out := []*client.Credential{}
	err = eachDoc(rows, func(id string, doc []byte) error {
		rec, err := decodeDoc[records.Credential](doc, store.RecordCredential, id)
		if err != nil {
			return err
		}
		out = append(out, rec.Result())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Delete deletes a credential; its sealed secret goes with it.
func (c *Credentials) Delete(ctx context.Context, orgID, id string) error {
	return c.s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := getCredential(ctx, tx, orgID, id, true); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM credentials WHERE org_id = $1 AND id = $2`, orgID, id)
		return err
	})
}

// PutTOTPCode stores a pushed one-time code (its TOTPCodeID, Code,
// CreatedAt and ExpiredAt set by the caller), and drops the identifier's
// expired codes.
func (c *Credentials) PutTOTPCode(ctx context.Context, orgID string, code *client.TOTPCode) error {
	if strings.IndexByte(code.TOTPIdentifier, 0) >= 0 || code.TOTPIdentifier == "" {
		return store.Errorf(store.ErrInvalid, "a TOTP identifier must be non-empty text without NUL bytes")
	}
	now := c.s.now()
	doc, err := json.Marshal(code)
	if err != nil {
		return fmt.Errorf("store: encode a one-time code: %w", err)
	}
	return c.s.tx(ctx, func(tx pgx.Tx) error {
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		if _, err := lockTOTPCodes(ctx, tx, orgID, code.TOTPIdentifier, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO totp_codes (org_id, identifier, created_ns, id, doc) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (org_id, identifier, created_ns, id) DO UPDATE SET doc = excluded.doc`,
			orgID, code.TOTPIdentifier, code.CreatedAt.UnixNano(), code.TOTPCodeID, doc)
		if err != nil {
			return fmt.Errorf("store: one-time code: %w", err)
		}
		return nil
	})
}

// storedCode is one row of totp_codes.
type storedCode struct {
	createdNS int64
	id        string
	code      *client.TOTPCode
}

// lockTOTPCodes locks the identifier's codes, deletes those whose
// ExpiredAt has passed (as bbolt's dropExpired) and returns the others,
// newest first (the order of bbolt's keys, read backwards).
func lockTOTPCodes(ctx context.Context, tx pgx.Tx, orgID, identifier string, now time.Time) ([]storedCode, error) {
	rows, err := tx.Query(ctx, `
		SELECT created_ns, id, doc FROM totp_codes WHERE org_id = $1 AND identifier = $2
		ORDER BY created_ns DESC, id DESC FOR UPDATE`, orgID, identifier)
	if err != nil {
		return nil, fmt.Errorf("store: one-time codes: %w", err)
	}
	var live []storedCode
	var goneNS []int64
	var goneIDs []string
	for rows.Next() {
		var sc storedCode
		var doc []byte
		if err := rows.Scan(&sc.createdNS, &sc.id, &doc); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: one-time codes: %w", err)
		}
		var code client.TOTPCode
		if err := json.Unmarshal(doc, &code); err != nil || code.ExpiredAt == nil || !code.ExpiredAt.After(now) {
			goneNS, goneIDs = append(goneNS, sc.createdNS), append(goneIDs, sc.id)
			continue
		}
		sc.code = &code
		live = append(live, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: one-time codes: %w", err)
	}
	if len(goneNS) > 0 {
		if _, err := tx.Exec(ctx, `
			DELETE FROM totp_codes t USING unnest($3::bigint[], $4::text[]) AS g (ns, id)
			WHERE t.org_id = $1 AND t.identifier = $2 AND t.created_ns = g.ns AND t.id = g.id`,
			orgID, identifier, goneNS, goneIDs); err != nil {
			return nil, fmt.Errorf("store: drop expired one-time codes: %w", err)
		}
	}
	return live, nil
}

// TakeTOTPCode returns the newest code pushed for identifier that f
// admits and that has not expired, and deletes it: a code is used once,
// also when several daemons ask at the same time (the identifier's codes
// are locked while one is taken). It returns nil when there is none.
func (c *Credentials) TakeTOTPCode(ctx context.Context, orgID, identifier string, f executor.CodeFilter) (*client.TOTPCode, error) {
	if identifier == "" || strings.IndexByte(identifier, 0) >= 0 {
		return nil, nil
	}
	now := c.s.now()
	var out *client.TOTPCode
	err := c.s.tx(ctx, func(tx pgx.Tx) error {
		out = nil
		if err := resOrg(ctx, tx, orgID); err != nil {
			return err
		}
		live, err := lockTOTPCodes(ctx, tx, orgID, identifier, now)
		if err != nil {
			return err
		}
		for _, sc := range live {
			if sc.code.CreatedAt.Before(f.Since) {
				return nil
			}
			if !records.Admits(f, sc.code) {
				continue
			}
			out = sc.code
			_, err := tx.Exec(ctx, `DELETE FROM totp_codes WHERE org_id = $1 AND identifier = $2 AND created_ns = $3 AND id = $4`,
				orgID, identifier, sc.createdNS, sc.id)
			return err
		}
		return nil
	})
	return out, err
}

// The helpers of the resource stores.

// resOrg returns the organization's NotFoundError unless it exists.
func resOrg(ctx context.Context, q querier, orgID string) error {
	if !records.ValidID(orgID) {
		return &store.NotFoundError{Record: store.RecordOrganization, ID: orgID}
	}
	_, err := getOrg(ctx, q, orgID)
	return err
}

// missing is the error of a record not found: the organization's when
// the organization does not exist (bbolt looks for it first), nf
// otherwise.
func missing(ctx context.Context, q querier, orgID string, nf error) error {
	if err := resOrg(ctx, q, orgID); err != nil {
		return err
	}
	return nf
}

// getDoc reads the JSON document of record id in table (one of this
// package's tables keyed by (org_id, id)), locked FOR UPDATE when lock is
// set. An id that cannot be a key, or names no record, is a NotFoundError
// of kind r (or of the organization, when it is unknown).
func getDoc(ctx context.Context, q querier, table, orgID, id string, lock bool, r store.Record) ([]byte, error) {
	nf := &store.NotFoundError{Record: r, ID: id}
	if !records.ValidID(orgID) || !records.ValidID(id) {
		return nil, missing(ctx, q, orgID, nf)
	}
	sql := `SELECT doc FROM ` + table + ` WHERE org_id = $1 AND id = $2`
	if lock {
		sql += ` FOR UPDATE`
	}
	var doc []byte
	err := q.QueryRow(ctx, sql, orgID, id).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, missing(ctx, q, orgID, nf)
	}
	if err != nil {
		return nil, fmt.Errorf("store: %s %s: %w", r, id, err)
	}
	return doc, nil
}

// decodeDoc decodes a stored JSON document into a new T.
func decodeDoc[T any](doc []byte, r store.Record, id string) (*T, error) {
	return records.Decode[T](doc, r, id)
}

// eachDoc calls fn with the (id, doc) of every row, and closes rows.
func eachDoc(rows pgx.Rows, fn func(id string, doc []byte) error) error {
	defer rows.Close()
	for rows.Next() {
		var id string
		var doc []byte
		if err := rows.Scan(&id, &doc); err != nil {
			return fmt.Errorf("store: read a row: %w", err)
		}
		if err := fn(id, doc); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read the rows: %w", err)
	}
	return nil
}
