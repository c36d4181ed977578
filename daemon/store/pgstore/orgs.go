package pgstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// CreateOrganization creates an organization and a first API key for it,
// which is returned once: the store keeps only its hash.
func (s *Store) CreateOrganization(ctx context.Context, name string) (store.Organization, string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return store.Organization{}, "", fmt.Errorf("store: make an API key: %w", err)
	}
	key := store.APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	org := store.Organization{ID: s.ids.Next(ids.PrefixOrganization), Name: name, CreatedAt: s.clock()}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)`,
			org.ID, org.Name, org.CreatedAt.Time); err != nil {
			return fmt.Errorf("store: organization %s: %w", org.ID, err)
		}
		return s.addKey(ctx, tx, org.ID, key, org.CreatedAt)
	})
	if err != nil {
		return store.Organization{}, "", err
	}
	s.orgCount.Lock()
	s.orgCount.read = time.Time{} // count again at the next ask
	s.orgCount.Unlock()
	return org, key, nil
}

// orgCountTTL is how long OrganizationCount trusts its last count.
const orgCountTTL = time.Second

// OrganizationCount is how many organizations the database holds. The
// egress policy asks it for every connection a run makes (one organization
// reaches loopback and private networks, several do not), so the count is
// kept for orgCountTTL; another daemon's new organization is seen within
// that time. Organizations are never deleted. A count that cannot be read
// is reported as 2, so that the policy errs on the side of "shared".
func (s *Store) OrganizationCount() int {
	s.orgCount.Lock()
	defer s.orgCount.Unlock()
	if time.Since(s.orgCount.read) < orgCountTTL {
		return s.orgCount.n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM organizations`).Scan(&n); err != nil {
		return max(s.orgCount.n, 2)
	}
	s.orgCount.n, s.orgCount.read = n, time.Now()
	return n
}

// AddAPIKey registers key as an API key of the organization. Adding a key
// the organization already has does nothing; a key of another
// organization is ErrConflict.
func (s *Store) AddAPIKey(ctx context.Context, orgID, key string) error {
	if key == "" {
		return fmt.Errorf("store: empty API key")
	}
	return s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := getOrg(ctx, tx, orgID); err != nil {
			return err
		}
		return s.addKey(ctx, tx, orgID, key, s.clock())
	})
}

func (s *Store) addKey(ctx context.Context, tx pgx.Tx, orgID, key string, now client.Time) error {
	sum := sha256.Sum256([]byte(key))
	var sealed []byte
	if s.sealer != nil {
		var err error
		if sealed, err = s.sealer.SealAPIKey(key, sum[:]); err != nil {
			return err
		}
	}
	// Insert, or find whose the key is: ON CONFLICT keeps the first owner.
	var owner string
	err := tx.QueryRow(ctx, `
		INSERT INTO api_keys (sha256, org_id, created_at, sealed) VALUES ($1, $2, $3, $4)
		ON CONFLICT (sha256) DO UPDATE SET sha256 = excluded.sha256
		RETURNING org_id`, sum[:], orgID, now.Time, sealed).Scan(&owner)
	if err != nil {
		return fmt.Errorf("store: register an API key: %w", err)
	}
	if owner != orgID {
		return store.Errorf(store.ErrConflict, "API key already belongs to another organization (not %s)", orgID)
	}
	return nil
}

// Authenticate returns the organization an API key belongs to, or
// ErrNotFound for a key the store does not know. A key registered before
// the store had a secret gets its sealed copy now, since this is when the
// store sees the key itself.
func (s *Store) Authenticate(ctx context.Context, key string) (store.Organization, error) {
	sum := sha256.Sum256([]byte(key))
	// Keys and organizations are never removed or changed once made, so a
	// key that authenticated once always names the same organization, on
	// every daemon: the cache spares each request a query. (A future key
	// revocation must reach every daemon's cache.)
	if org, ok := s.authCache.Load(sum); ok {
		return org.(store.Organization), nil
	}
	var org store.Organization
	var unsealed bool
	err := s.pool.QueryRow(ctx, `
		SELECT o.id, o.name, o.created_at, k.sealed IS NULL
		FROM api_keys k JOIN organizations o ON o.id = k.org_id
		WHERE k.sha256 = $1`, sum[:]).Scan(&org.ID, &org.Name, &org.CreatedAt.Time, &unsealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Organization{}, store.Errorf(store.ErrNotFound, "API key not found")
	}
	if err != nil {
		return store.Organization{}, fmt.Errorf("store: look up an API key: %w", err)
	}
	org.CreatedAt = client.NewTime(org.CreatedAt.Time)
	if unsealed && s.sealer != nil {
		sealed, err := s.sealer.SealAPIKey(key, sum[:])
		if err != nil {
			return store.Organization{}, err
		}
		if _, err := s.pool.Exec(ctx, `UPDATE api_keys SET sealed = $2 WHERE sha256 = $1 AND sealed IS NULL`, sum[:], sealed); err != nil {
			return store.Organization{}, fmt.Errorf("store: seal an API key: %w", err)
		}
	}
	s.authCache.Store(sum, org)
	return org, nil
}

// SigningKey returns the API key whose SHA-256 is hash, for signing the
// webhooks of the runs it started. ErrNotFound when the store does not know
// the key, or keeps no sealed copy of it (the store has no secret).
func (s *Store) SigningKey(ctx context.Context, hash []byte) (string, error) {
	if s.sealer == nil {
		return "", store.Errorf(store.ErrNotFound, "the daemon keeps no copy of its API keys to sign webhooks with")
	}
	var sealed []byte
	err := s.pool.QueryRow(ctx, `SELECT sealed FROM api_keys WHERE sha256 = $1`, hash).Scan(&sealed)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", store.Errorf(store.ErrNotFound, "the API key that started the run is no longer registered")
	}
	if err != nil {
		return "", fmt.Errorf("store: look up an API key: %w", err)
	}
	if sealed == nil {
		return "", store.Errorf(store.ErrNotFound, "no sealed copy of the API key that started the run; it is made the next time the key is used")
	}
	return s.sealer.OpenAPIKey(sealed, hash)
}

// querier is what both the pool and a transaction can do: the helpers
// that read or write within a caller's transaction take one.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func getOrg(ctx context.Context, q querier, orgID string) (store.Organization, error) {
	org := store.Organization{ID: orgID}
	err := q.QueryRow(ctx, `SELECT name, created_at FROM organizations WHERE id = $1`, orgID).Scan(&org.Name, &org.CreatedAt.Time)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Organization{}, &store.NotFoundError{Record: store.RecordOrganization, ID: orgID}
	}
	if err != nil {
		return store.Organization{}, fmt.Errorf("store: organization %s: %w", orgID, err)
	}
	org.CreatedAt = client.NewTime(org.CreatedAt.Time)
	return org, nil
}

// Organization returns one organization.
func (s *Store) Organization(ctx context.Context, orgID string) (store.Organization, error) {
	return getOrg(ctx, s.pool, orgID)
}

// Organizations returns every organization, oldest first (ids, which are
// numbers of the same prefix, break ties).
func (s *Store) Organizations(ctx context.Context) ([]store.Organization, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, created_at FROM organizations ORDER BY created_at, length(id), id`)
	if err != nil {
		return nil, fmt.Errorf("store: list the organizations: %w", err)
	}
	orgs := []store.Organization{}
	for rows.Next() {
		var o store.Organization
		if err := rows.Scan(&o.ID, &o.Name, &o.CreatedAt.Time); err != nil {
			return nil, fmt.Errorf("store: list the organizations: %w", err)
		}
		o.CreatedAt = client.NewTime(o.CreatedAt.Time)
		orgs = append(orgs, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list the organizations: %w", err)
	}
	return orgs, nil
}

// DefaultOrganization returns the oldest organization, the one a fresh
// daemon creates; ErrNotFound when there is none.
func (s *Store) DefaultOrganization(ctx context.Context) (store.Organization, error) {
	orgs, err := s.Organizations(ctx)
	if err != nil {
		return store.Organization{}, err
	}
	return records.DefaultOrganization(orgs)
}
