package pgstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// newDatabase is an empty database of the test's own on the package's
// server.
func newDatabase(t *testing.T) string {
	t.Helper()
	return pgtest.Shared(t).NewDatabase(t)
}

func open(t *testing.T, url string, opts store.Options) *pgstore.Store {
	t.Helper()
	st, err := pgstore.Open(t.Context(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestOpenMigratesOnce: daemons that open one new database at the same
// time create its tables once, and a daemon that opens it later finds
// them.
func TestOpenMigratesOnce(t *testing.T) {
	url := newDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	stores := make([]*pgstore.Store, 4)
	for i := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = pgstore.Open(t.Context(), url, store.Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	var versions int
	if err := stores[0].Pool().QueryRow(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != 1 {
		t.Errorf("%d migrations recorded, want 1", versions)
	}
	// Daemons on one database take different worker numbers: their ids
	// never collide.
	seen := map[string]bool{}
	for _, st := range stores {
		org, _, err := st.CreateOrganization(t.Context(), "o")
		if err != nil {
			t.Fatal(err)
		}
		if seen[org.ID] {
			t.Errorf("two daemons made the id %s", org.ID)
		}
		seen[org.ID] = true
	}
}

// TestOpenRefusesANewerSchema: a database a newer abctl migrated is
// refused with ErrSchemaTooNew, before anything is written.
func TestOpenRefusesANewerSchema(t *testing.T) {
	url := newDatabase(t)
	st := open(t, url, store.Options{})
	if _, err := st.Pool().Exec(t.Context(), `INSERT INTO schema_migrations (version, name) VALUES (1000, 'from the future')`); err != nil {
		t.Fatal(err)
	}
	_, err := pgstore.Open(t.Context(), url, store.Options{})
	if !errors.Is(err, store.ErrSchemaTooNew) || !strings.Contains(err.Error(), "version 1000") {
		t.Fatalf("opening a newer schema: %v", err)
	}
}

// TestOpenRefusesAnotherSecret: the secret that sealed the database's
// values is the only one that opens it.
func TestOpenRefusesAnotherSecret(t *testing.T) {
	url := newDatabase(t)
	secret := bytes.Repeat([]byte{1}, store.SecretSize)
	open(t, url, store.Options{Secret: secret})
	open(t, url, store.Options{Secret: secret}) // the same secret opens it again
	_, err := pgstore.Open(t.Context(), url, store.Options{Secret: bytes.Repeat([]byte{2}, store.SecretSize)})
	if err == nil || !strings.Contains(err.Error(), "not the secret they were sealed with") {
		t.Fatalf("opening with another secret: %v", err)
	}
}

// TestOpenErrorsHideThePassword: a database that cannot be reached is an
// error naming it, without its password.
func TestOpenErrorsHideThePassword(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := pgstore.Open(ctx, "postgres://abctl:hunter2@127.0.0.1:1/abctl", store.Options{})
	if err == nil {
		t.Fatal("opened an unreachable database")
	}
	if strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("the error: %v", err)
	}
}

// TestOrganizationsAndKeys: organizations, their keys, signing keys and
// the count, as the bbolt store answers them.
func TestOrganizationsAndKeys(t *testing.T) {
	url := newDatabase(t)
	st := open(t, url, store.Options{Secret: bytes.Repeat([]byte{7}, store.SecretSize)})
	ctx := t.Context()
	if _, err := st.DefaultOrganization(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the default organization of an empty store: %v", err)
	}
	a, keyA, err := st.CreateOrganization(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	b, keyB, err := st.CreateOrganization(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(keyA, store.APIKeyPrefix) || keyA == keyB {
		t.Errorf("keys %q %q", keyA, keyB)
	}
	if got, err := st.Authenticate(ctx, keyB); err != nil || got != b {
		t.Errorf("Authenticate(second's key) = %+v, %v; want %+v", got, err, b)
	}
	if _, err := st.Authenticate(ctx, "abk_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown key: %v", err)
	}
	if err := st.AddAPIKey(ctx, a.ID, "extra-key"); err != nil {
		t.Fatal(err)
	}
	if err := st.AddAPIKey(ctx, a.ID, "extra-key"); err != nil {
		t.Errorf("adding a key twice: %v", err)
	}
	if err := st.AddAPIKey(ctx, b.ID, "extra-key"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("another organization's key: %v", err)
	}
	var nf *store.NotFoundError
	if err := st.AddAPIKey(ctx, "o_404", "k"); !errors.As(err, &nf) || nf.Record != store.RecordOrganization {
		t.Errorf("a key for no organization: %v", err)
	}
	if got, err := st.Authenticate(ctx, "extra-key"); err != nil || got.ID != a.ID {
		t.Errorf("the added key authenticates as %+v, %v", got, err)
	}
	orgs, err := st.Organizations(ctx)
	if err != nil || len(orgs) != 2 || orgs[0] != a || orgs[1] != b {
		t.Errorf("Organizations = %+v, %v", orgs, err)
	}
	if def, err := st.DefaultOrganization(ctx); err != nil || def != a {
		t.Errorf("DefaultOrganization = %+v, %v", def, err)
	}
	if got, err := st.Organization(ctx, b.ID); err != nil || got != b {
		t.Errorf("Organization = %+v, %v", got, err)
	}
	if n := st.OrganizationCount(); n != 2 {
		t.Errorf("OrganizationCount = %d", n)
	}
	for _, key := range []string{keyA, "extra-key"} {
		sum := sha256Sum(key)
		if got, err := st.SigningKey(ctx, sum); err != nil || got != key {
			t.Errorf("SigningKey: %v", err)
		}
	}
	if _, err := st.SigningKey(ctx, sha256Sum("never registered")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SigningKey of an unknown key: %v", err)
	}
}

// TestKeysSealedLater: a key registered while the database had no secret
// is sealed when it is next used with one, and then signs webhooks.
func TestKeysSealedLater(t *testing.T) {
	url := newDatabase(t)
	plain := open(t, url, store.Options{})
	_, key, err := plain.CreateOrganization(t.Context(), "o")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.SigningKey(t.Context(), sha256Sum(key)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a store without a secret signs: %v", err)
	}
	sealed := open(t, url, store.Options{Secret: bytes.Repeat([]byte{3}, store.SecretSize)})
	if _, err := sealed.SigningKey(t.Context(), sha256Sum(key)); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "next time the key is used") {
		t.Errorf("before the key is used: %v", err)
	}
	if _, err := sealed.Authenticate(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	if got, err := sealed.SigningKey(t.Context(), sha256Sum(key)); err != nil || got != key {
		t.Errorf("after the key was used: %v", err)
	}
}

func sha256Sum(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
