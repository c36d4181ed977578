package boltstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/internal/records"
)

// orgRecord is the stored form of an Organization.
type orgRecord struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	CreatedAt client.Time `json:"created_at"`
}

// apiKeyRecord is the stored form of an API key. The key itself is never
// stored, only its SHA-256, which is also the record's bucket key.
type apiKeyRecord struct {
	OrgID     string      `json:"org_id"`
	SHA256    []byte      `json:"sha256"`
	CreatedAt client.Time `json:"created_at"`
	// Sealed is the key sealed under the store's secret (seal.go), for
	// signing webhooks; nil when the store had no secret.
	Sealed []byte `json:"sealed,omitempty"`
}

func (s *Store) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

// update makes fn's writes durable, committed together with the writes
// that arrive at the same time (commit.go): fn may run more than once and
// must change nothing but the transaction and the variables it sets.
func (s *Store) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.commits.write(fn)
}

// CreateOrganization creates an organization and a first API key for it,
// which is returned once: the store keeps only its hash.
func (s *Store) CreateOrganization(ctx context.Context, name string) (store.Organization, string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return store.Organization{}, "", fmt.Errorf("store: make an API key: %w", err)
	}
	key := store.APIKeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	var org store.Organization
	err := s.update(ctx, func(tx *bolt.Tx) error {
		now := s.clock()
		rec := orgRecord{ID: s.ids.Next(ids.PrefixOrganization), Name: name, CreatedAt: now}
		if err := putJSON(tx.Bucket(bucketOrganizations), []byte(rec.ID), rec); err != nil {
			return err
		}
		root, err := tx.Bucket(bucketOrgData).CreateBucket([]byte(rec.ID))
		if err != nil {
			return fmt.Errorf("store: organization %s: %w", rec.ID, err)
		}
		for _, name := range orgBuckets {
			if _, err := root.CreateBucket(name); err != nil {
				return err
			}
		}
		if err := s.addKey(tx, rec.ID, key, now); err != nil {
			return err
		}
		org = store.Organization(rec)
		return nil
	})
	if err != nil {
		return store.Organization{}, "", err
	}
	s.orgs.Add(1)
	return org, key, nil
}

// OrganizationCount is how many organizations the store holds, without a
// transaction: the egress policy asks it for every connection a run makes
// (one organization reaches loopback and private networks, several do
// not). Organizations are never deleted.
func (s *Store) OrganizationCount() int { return int(s.orgs.Load()) }

// AddAPIKey registers key as an API key of the organization. Adding a key
// the organization already has does nothing; a key of another
// organization is ErrConflict.
func (s *Store) AddAPIKey(ctx context.Context, orgID, key string) error {
	if key == "" {
		return fmt.Errorf("store: empty API key")
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		if _, err := getOrg(tx, orgID); err != nil {
			return err
		}
		return s.addKey(tx, orgID, key, s.clock())
	})
}

func (s *Store) addKey(tx *bolt.Tx, orgID, key string, now client.Time) error {
	sum := sha256.Sum256([]byte(key))
	b := tx.Bucket(bucketAPIKeys)
	if v := b.Get(sum[:]); v != nil {
		var rec apiKeyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("store: API key record: %w", err)
		}
		if rec.OrgID == orgID {
			return nil
		}
		return store.Errorf(store.ErrConflict, "API key already belongs to another organization (not %s)", orgID)
	}
	rec := apiKeyRecord{OrgID: orgID, SHA256: sum[:], CreatedAt: now}
	if s.sealer != nil {
		sealed, err := s.sealer.SealAPIKey(key, sum[:])
		if err != nil {
			return err
		}
		rec.Sealed = sealed
	}
	return putJSON(b, sum[:], rec)
}

// Authenticate returns the organization an API key belongs to, or
// ErrNotFound for a key the store does not know.
func (s *Store) Authenticate(ctx context.Context, key string) (store.Organization, error) {
	sum := sha256.Sum256([]byte(key))
	// Keys and organizations are never removed or changed once made, so a
	// key that authenticated once always names the same organization; the
	// cache spares every request a transaction and two decodes. (A future
	// key revocation must remove the key's entry.)
	if org, ok := s.authCache.Load(sum); ok {
		return org.(store.Organization), nil
	}
	var org store.Organization
	var unsealed bool
	err := s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAPIKeys).Get(sum[:])
		if v == nil {
			return store.Errorf(store.ErrNotFound, "API key not found")
		}
		var rec apiKeyRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("store: API key record: %w", err)
		}
		// The bucket key already matched; comparing the stored hash as
		// well guards against a misfiled record, in constant time.
		if subtle.ConstantTimeCompare(rec.SHA256, sum[:]) != 1 {
			return store.Errorf(store.ErrNotFound, "API key not found")
		}
		unsealed = rec.Sealed == nil
		var err error
		org, err = getOrg(tx, rec.OrgID)
		return err
	})
	if err == nil && unsealed && s.sealer != nil {
		err = s.sealMissing(ctx, key, sum[:])
	}
	if err == nil {
		s.authCache.Store(sum, org)
	}
	return org, err
}

func getOrg(tx *bolt.Tx, orgID string) (store.Organization, error) {
	rec, err := getJSON[orgRecord](tx.Bucket(bucketOrganizations), store.RecordOrganization, orgID)
	if err != nil {
		return store.Organization{}, err
	}
	return store.Organization(*rec), nil
}

// Organization returns one organization.
func (s *Store) Organization(ctx context.Context, orgID string) (store.Organization, error) {
	var org store.Organization
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		org, err = getOrg(tx, orgID)
		return err
	})
	return org, err
}

// Organizations returns every organization, oldest first.
func (s *Store) Organizations(ctx context.Context) ([]store.Organization, error) {
	orgs := []store.Organization{}
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOrganizations).ForEach(func(k, v []byte) error {
			var rec orgRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("store: organization %s: %w", k, err)
			}
			orgs = append(orgs, store.Organization(rec))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(orgs, func(a, b store.Organization) int {
		if c := a.CreatedAt.Compare(b.CreatedAt.Time); c != 0 {
			return c
		}
		return compareIDs(a.ID, b.ID)
	})
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

// compareIDs orders snowflake ids of one prefix numerically: a shorter
// decimal is a smaller number.
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
