package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/abctl/abctl/daemon/artifacts"
	"github.com/abctl/abctl/daemon/datadir"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/runview"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/localrun/engine/blocks"
)

// IsPostgresURL reports whether a Config.Store value names a PostgreSQL
// database (postgres:// or postgresql://).
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// StoreValueError describes a Config.Store value that is neither empty nor a
// PostgreSQL URL: what was given (without its password) and what is
// accepted. The caller names where the value came from.
func StoreValueError(value string) error {
	return fmt.Errorf("%s is not a store abctl knows: give a PostgreSQL URL, postgres://user:password@host:5432/dbname "+
		"(or postgresql://...), or nothing for the embedded store in the data directory", pgstore.Redact(value))
}

// openStore opens the daemon's store: the bbolt file in the data directory
// when cfg.Store is empty, else the PostgreSQL database it names. It
// returns the id generator the rest of the daemon shares with the store:
// with PostgreSQL its worker number is the database's (each daemon on it
// takes its own), so that no two daemons make the same id.
func openStore(ctx context.Context, cfg Config, secret []byte) (store.Store, *ids.Generator, error) {
	if cfg.Store == "" {
		gen, err := newIDs()
		if err != nil {
			return nil, nil, err
		}
		path := filepath.Join(cfg.DataDir, datadir.StoreFileName)
		// The store keeps, with each run, its answer as package runview
		// makes it, and makes them all again when runview makes them
		// differently.
		st, err := boltstore.Open(path, store.Options{Secret: secret, IDs: gen, RunViews: runview.Views{}})
		if err != nil {
			return nil, nil, err
		}
		cfg.Logger.Info("store", "store", path)
		return st, gen, nil
	}
	if !IsPostgresURL(cfg.Store) {
		return nil, nil, fmt.Errorf("daemon: the store %w", StoreValueError(cfg.Store))
	}
	where := pgstore.Redact(cfg.Store)
	cfg.Logger.Info("store", "store", where)
	// Without a generator of the daemon's, the store takes a worker number
	// from the database's sequence (each daemon on it its own), and the
	// daemon makes its ids with that generator too.
	st, err := pgstore.Open(ctx, cfg.Store, store.Options{Secret: secret, RunViews: runview.Views{}})
	if err != nil {
		return nil, nil, openError(err, where, cfg.DataDir)
	}
	return st, st.IDs(), nil
}

// openError explains a PostgreSQL store that did not open. The store's own
// message about a wrong secret speaks of one data directory; with a shared
// database it means that this daemon's secret is not the other daemons'.
func openError(err error, where, dataDir string) error {
	if errors.Is(err, store.ErrWrongSecret) {
		return fmt.Errorf("daemon: this daemon's secret is not the one the PostgreSQL database at %s was first opened with "+
			"(by another daemon, or an earlier start): every daemon sharing a database must have the same secret. "+
			"Give this daemon the others' secret: the same ABCTL_DAEMON_SECRET (Config.Secret), or a copy of the first "+
			"daemon's %s file in place of %s",
			where, datadir.SecretFileName, filepath.Join(dataDir, datadir.SecretFileName))
	}
	return fmt.Errorf("daemon: open the store: %w", err)
}

// organizationLockKey is the PostgreSQL advisory lock that daemons starting
// on one database take around making its default organization.
const organizationLockKey int64 = 0x61626374_6c6f7267 // "abctlorg"

// lockOrganizations keeps other daemons on st's database from making the
// default organization until unlock is called; with a store that one
// daemon owns (bbolt) it does nothing.
func lockOrganizations(ctx context.Context, st store.Store, logger *slog.Logger) (unlock func(), err error) {
	p, ok := st.(interface{ Pool() *pgxpool.Pool })
	if !ok {
		return func() {}, nil
	}
	conn, err := p.Pool().Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("daemon: lock the organizations: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, organizationLockKey); err != nil {
		conn.Release()
		return nil, fmt.Errorf("daemon: lock the organizations: %w", err)
	}
	return func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, organizationLockKey); err != nil {
			// A session lock lives as long as its connection: close
			// this one rather than return it locked to the pool.
			logger.Warn("could not unlock the organizations; closing the connection that holds the lock", "error", err)
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
	}, nil
}

// sharedStore reports whether st is shared by several daemons (it has the
// store's run queue).
func sharedStore(st store.Store) bool {
	_, ok := st.(store.Queue)
	return ok
}

// bucketCheckTimeout bounds the check, at start, that the bucket of the
// runs' files is there.
const bucketCheckTimeout = 30 * time.Second

// ArtifactsValueError describes a Config.ArtifactsDir value written as a
// URL that is not s3://bucket[/prefix], or nil for a directory or a valid
// bucket URL. The caller names where the value came from.
func ArtifactsValueError(value string) error {
	if !artifacts.HasScheme(value) {
		return nil
	}
	// Only the scheme is repeated: the rest of a URL may hold a password.
	if scheme, _, _ := strings.Cut(value, "://"); !strings.EqualFold(scheme, "s3") {
		return fmt.Errorf("%s:// is not a place for the runs' files abctl knows: give a directory, "+
			"or a bucket of an S3-compatible service as s3://bucket or s3://bucket/prefix", scheme)
	}
	_, _, err := artifacts.ParseBucketURL(value)
	return err
}

// openArtifacts opens the store of the runs' files: the directory
// cfg.ArtifactsDir (DataDir/artifacts when empty), or with an s3:// value
// DataDir/artifacts as the runs' working directory and the bucket, which
// must answer, as the place every daemon finds the files.
func openArtifacts(ctx context.Context, cfg Config, gen *ids.Generator) (*artifacts.Store, error) {
	dir := cfg.ArtifactsDir
	if dir == "" || artifacts.HasScheme(dir) {
		dir = filepath.Join(cfg.DataDir, datadir.ArtifactsDirName)
	}
	opts := []artifacts.Option{artifacts.WithIDs(gen)}
	if artifacts.HasScheme(cfg.ArtifactsDir) {
		b, err := openArtifactsBucket(ctx, cfg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, artifacts.WithBucket(b))
		cfg.Logger.Info("run files", "bucket", b.String(), "working_directory", dir)
	}
	return artifacts.NewStore(dir, opts...)
}

// openArtifactsBucket opens the bucket of an s3:// Config.ArtifactsDir,
// with the keys, endpoint and region of the environment, and checks that
// it answers. Its errors never hold the keys.
func openArtifactsBucket(ctx context.Context, cfg Config) (*artifacts.Bucket, error) {
	bucket, prefix, err := artifacts.ParseBucketURL(cfg.ArtifactsDir)
	if err != nil {
		return nil, fmt.Errorf("daemon: the runs' files (--artifacts): %w", err)
	}
	getenv := cfg.ArtifactsEnv
	if getenv == nil {
		getenv = os.Getenv
	}
	env := blocks.S3ConfigFromEnv(getenv)
	if env.AccessKeyID == "" || env.SecretAccessKey == "" {
		return nil, errors.New("daemon: the runs' files go to " + artifacts.BucketScheme + bucket +
			", which needs an access key: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys) " +
			"in the daemon's environment; AWS_ENDPOINT_URL_S3 names an S3-compatible service other than AWS S3, AWS_REGION its region")
	}
	ctx, cancel := context.WithTimeout(ctx, bucketCheckTimeout)
	defer cancel()
	b, err := artifacts.OpenBucket(ctx, artifacts.BucketConfig{
		Endpoint: env.Endpoint, Region: env.Region,
		AccessKeyID: env.AccessKeyID, SecretAccessKey: env.SecretAccessKey, SessionToken: env.SessionToken,
		Bucket: bucket, Prefix: prefix,
	})
	if err != nil {
		return nil, fmt.Errorf("daemon: the bucket of the runs' files (--artifacts): %w", err)
	}
	return b, nil
}
