// Package pgstore keeps the daemon's records in PostgreSQL, so that several
// daemons on several machines can share one organization's agents, runs and
// queue. It implements the interfaces of package daemon/store and answers
// exactly as the embedded bbolt store (package daemon/store/boltstore) does:
// the same JSON bytes, the same order, the same errors; the conformance
// suite (package daemon/store/storetest) runs against both.
//
// # Tables
//
// Every record of an organization carries its org_id, and every query of
// an organization's records filters on it. JSON documents are kept as the
// bytes the bbolt store keeps (bytea), since they are answered as they are;
// columns beside them hold only what is filtered, ordered or joined on.
// Times are timestamptz (the store's times have microseconds, as
// PostgreSQL's do).
//
//	schema_migrations  (version, name, applied_at): the steps applied
//	meta               (key, value): secret_check, run_view_format
//	worker_numbers     a sequence: each Open takes the next worker number
//	                   for its snowflake ids, so that daemons never make the
//	                   same id
//	organizations      (id, name, created_at)
//	api_keys           (sha256, org_id, created_at, sealed): keys by their
//	                   hash; sealed is the key under the store's secret
//
// The tables of each kind of record are drawn in its schema file
// (schema/v1/*.sql).
//
// # Migrations
//
// The schema's steps (migrations) are applied in order, each once, by
// whichever daemon opens the database first: Open takes a transaction-level
// advisory lock, applies the steps the database lacks in that transaction
// and records them in schema_migrations; a daemon that opens at the same
// time waits for the lock and then finds them applied. A database migrated
// by a newer abctl is refused (ErrSchemaTooNew), as the bbolt store does.
package pgstore

import (
	"context"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// Store is the daemon's database in PostgreSQL. It is safe for concurrent
// use, also by several processes on one database.
type Store struct {
	url    string // as given to Open
	pool   *pgxpool.Pool
	now    func() time.Time
	ids    *ids.Generator
	sealer *store.Sealer
	views  store.RunViews // nil: runs are stored without views

	// authCache maps the SHA-256 of API keys that authenticated to their
	// Organization (see Authenticate).
	authCache sync.Map
	// orgsSeen holds the ids of the organizations this handle has seen
	// exist (see Store.needOrg): organizations are never removed, so one
	// that existed once need not be looked up again.
	orgsSeen sync.Map
	// orgCount caches OrganizationCount (see there).
	orgCount struct {
		sync.Mutex
		n    int
		read time.Time
	}
}

// The store's interfaces, all implemented.
var (
	_ store.Store           = (*Store)(nil)
	_ store.Agents          = (*Agents)(nil)
	_ store.Folders         = (*Folders)(nil)
	_ store.Runs            = (*Runs)(nil)
	_ store.Tags            = (*Tags)(nil)
	_ store.Credentials     = (*Credentials)(nil)
	_ store.Profiles        = (*Profiles)(nil)
	_ store.BrowserSessions = (*BrowserSessions)(nil)
	_ store.Schedules       = (*Schedules)(nil)
	_ store.CustomLLMs      = (*CustomLLMs)(nil)
	_ store.Uploads         = (*Uploads)(nil)
	_ store.Scripts         = (*Scripts)(nil)
)

// Open connects to the PostgreSQL database at url (a postgres:// URL or a
// libpq key=value string) and brings its schema up to date. The database
// must exist; its tables are created by the first Open. opts.LockTimeout
// bounds the connection and the wait for another daemon's migration (0
// means 30 s).
func Open(ctx context.Context, databaseURL string, opts store.Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sl, err := store.NewSealer(opts.Secret)
	if err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("store: the PostgreSQL URL %s does not parse: %w", Redact(databaseURL), err)
	}
	cfg.ConnConfig.ConnectTimeout = opts.LockTimeout
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect to PostgreSQL at %s: %w", Redact(databaseURL), err)
	}
	s := &Store{url: databaseURL, pool: pool, now: opts.Now, sealer: sl, views: opts.RunViews}
	fail := func(err error) (*Store, error) {
		pool.Close()
		return nil, fmt.Errorf("%w (PostgreSQL at %s)", err, Redact(databaseURL))
	}
	octx, cancel := context.WithTimeout(ctx, opts.LockTimeout)
	defer cancel()
	if err := pool.Ping(octx); err != nil {
		return fail(fmt.Errorf("store: connect: %w", err))
	}
	if err := migrate(octx, pool, migrations); err != nil {
		return fail(err)
	}
	if err := s.checkSecret(octx); err != nil {
		return fail(err)
	}
	if err := s.refreshRunViews(ctx); err != nil { // runview.go
		return fail(err)
	}
	if opts.IDs == nil {
		// A worker number of the database's own, so that the ids of
		// daemons sharing it never collide.
		var n int64
		if err := pool.QueryRow(octx, `SELECT nextval('worker_numbers')`).Scan(&n); err != nil {
			return fail(fmt.Errorf("store: take a worker number: %w", err))
		}
		opts.IDs = ids.New(uint32(n))
	}
	s.ids = opts.IDs
	return s, nil
}

// IDs returns the generator of the store's ids: Options.IDs, or one of a
// worker number the database gave this handle (see Open), which a daemon
// uses for the ids it makes itself, so that daemons sharing the database
// never make the same id.
func (s *Store) IDs() *ids.Generator { return s.ids }

// Close closes the connections.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// URL is the database's URL, as given to Open (with its password: never
// print it; Redact makes it printable).
func (s *Store) URL() string { return s.url }

// Pool is the connection pool, for the parts of the daemon that coordinate
// daemons through the database (the run queue's notifications).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// clock is the time of created_at and modified_at.
func (s *Store) clock() client.Time { return client.NewTime(s.now()) }

// Redact returns the database URL without its password, for messages.
func Redact(databaseURL string) string {
	u, err := url.Parse(databaseURL)
	if err != nil || u.Scheme == "" {
		return "(a connection string)"
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// tx runs fn in a transaction and commits it; fn's error rolls it back. A
// serialization failure or deadlock (another daemon's transaction touched
// the same rows) retries fn, a bounded number of times: fn must change
// nothing but the transaction and the variables it sets.
func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

// retryable reports whether err is a transaction PostgreSQL aborted for
// a conflict with another, which succeeds when tried again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return true
		}
	}
	return false
}

// isUniqueViolation reports whether err is a unique constraint's.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

//go:embed schema
var schemaFS embed.FS

// migration is one step of the schema. Steps are applied in order, each at
// most once, and never change once released: a new layout is a new step.
type migration struct {
	version int64
	name    string
	sql     []string // statements' files under schema/, applied in order
}

// migrations is the schema's history; the last entry is the version this
// binary writes.
var migrations = []migration{
	{version: 1, name: "create the tables", sql: sqlFiles("schema/v1")},
}

// sqlFiles lists the .sql files of dir in name order.
func sqlFiles(dir string) []string {
	entries, err := fs.ReadDir(schemaFS, dir)
	if err != nil {
		panic(err)
	}
	var files []string
	for _, e := range entries {
		files = append(files, dir+"/"+e.Name())
	}
	slices.Sort(files)
	return files
}

// migrationLock is the advisory lock daemons take to migrate one at a time:
// the first eight bytes of "abctl migrate" read as a number.
var migrationLock = int64(binary.BigEndian.Uint64([]byte("abctl mi")))

// migrate applies the steps the database lacks, in one transaction under
// the advisory lock.
func migrate(ctx context.Context, pool *pgxpool.Pool, steps []migration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("store: wait for another daemon's migration: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    bigint PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("store: create schema_migrations: %w", err)
		}
		var have int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
			return fmt.Errorf("store: read the schema's version: %w", err)
		}
		last := steps[len(steps)-1].version
		if have > last {
			return store.Errorf(store.ErrSchemaTooNew,
				"store: the database's schema is at version %d, newer than this abctl's %d: a newer abctl migrated it; run that version (or newer)", have, last)
		}
		for _, m := range steps {
			if m.version <= have {
				continue
			}
			for _, f := range m.sql {
				stmts, err := schemaFS.ReadFile(f)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(ctx, string(stmts)); err != nil {
					return fmt.Errorf("store: migration %d (%s), %s: %w", m.version, m.name, f, err)
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return fmt.Errorf("store: record migration %d: %w", m.version, err)
			}
		}
		return nil
	})
}

var secretCheckKey = "secret_check"

// checkSecret makes sure the store's secret is the one its sealed values
// were sealed with (see store.Sealer.SecretCheck): the first Open with a
// secret records the check, every later one must open it.
func (s *Store) checkSecret(ctx context.Context) error {
	if s.sealer == nil {
		return nil
	}
	check, err := s.sealer.SecretCheck()
	if err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, secretCheckKey, check); err != nil {
		return fmt.Errorf("store: record the secret check: %w", err)
	}
	var sealed []byte
	if err := s.pool.QueryRow(ctx, `SELECT value FROM meta WHERE key = $1`, secretCheckKey).Scan(&sealed); err != nil {
		return fmt.Errorf("store: read the secret check: %w", err)
	}
	return s.sealer.VerifySecretCheck(sealed)
}
