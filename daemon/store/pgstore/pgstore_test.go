package pgstore_test

import (
	"bytes"
	"context"
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
