package artifacts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/localrun/executor"
)

// PrefixArtifact is the prefix of artifact ids (a_…), as the hosted service
// spells it.
const PrefixArtifact = "a"

// Limits on ids and names.
const (
	MaxIDLen = 128 // bytes of an org or run id
)

// Errors of the Store. They are wrapped with the offending value.
var (
	ErrInvalidID   = errors.New("artifacts: invalid id")
	ErrInvalidName = errors.New("artifacts: invalid file name")
	ErrNotRegular  = errors.New("artifacts: not a regular file")
)

// Store keeps the artifact files of all runs under one directory. It is
// safe for concurrent use.
type Store struct {
	dir  string   // absolute path of the root directory
	root *os.Root // every file-system access goes through it
	ids  *ids.Generator
	now  func() time.Time
	// bucket, when set, holds a copy of every recorded or saved file,
	// served when the file is not on this daemon's disk.
	bucket *Bucket
}

// Option configures a Store.
type Option func(*Store)

// WithIDs makes the Store take artifact ids from g, the daemon's generator.
// Without it the Store uses a generator of its own with a random worker.
func WithIDs(g *ids.Generator) Option { return func(s *Store) { s.ids = g } }

// WithClock sets the clock that gives records their CreatedAt.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithBucket makes the Store copy every file it records or saves to b
// before returning its record, serve from b the files that are not in
// its directory (another daemon's), and remove a run's objects with its
// directory.
func WithBucket(b *Bucket) Option { return func(s *Store) { s.bucket = b } }

// NewStore opens (creating it with mode 0700 if needed) the artifact
// directory root, normally <data-dir>/artifacts. Close releases it.
func NewStore(root string, opts ...Option) (*Store, error) {
	dir, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	s := &Store{dir: dir, root: r}
	for _, o := range opts {
		o(s)
	}
	if s.ids == nil {
		var b [4]byte
		_, _ = rand.Read(b[:])
		s.ids = ids.New(binary.LittleEndian.Uint32(b[:]))
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Close releases the Store's handle on its directory.
func (s *Store) Close() error { return s.root.Close() }

// Dir returns the absolute path of the Store's root directory.
func (s *Store) Dir() string { return s.dir }

// RunDir creates (mode 0700) the directory of a run and returns its
// absolute path, <root>/<orgID>/<runID>, for the executor to write into.
func (s *Store) RunDir(orgID, runID string) (string, error) {
	if err := checkIDs(orgID, runID); err != nil {
		return "", err
	}
	rel := orgID + "/" + runID
	if err := s.root.MkdirAll(rel, 0o700); err != nil {
		return "", fmt.Errorf("artifacts: %w", err)
	}
	if err := s.checkDirs(orgID, runID); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, orgID, runID), nil
}

// Record stats and hashes the file name that the executor wrote into the
// run's directory and returns its record. The name must be a single clean
// path element (executor.ValidFileName) and the file a regular file: symbolic links,
// directories, devices and pipes are refused with ErrNotRegular. With a
// bucket (WithBucket), the file is copied to it before the record is
// returned: a file that cannot be copied is not recorded.
func (s *Store) Record(orgID, runID, name string, typ client.ArtifactType) (store.RunFile, error) {
	if err := checkIDs(orgID, runID); err != nil {
		return store.RunFile{}, err
	}
	if !executor.ValidFileName(name) {
		return store.RunFile{}, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if err := s.checkDirs(orgID, runID); err != nil {
		return store.RunFile{}, err
	}
	f, fi, err := s.openRegular(orgID, runID, name)
	if err != nil {
		return store.RunFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return store.RunFile{}, fmt.Errorf("artifacts: reading %s: %w", name, err)
	}
	if err := s.uploadFile(f, orgID, runID, name, n, fi.ModTime()); err != nil {
		return store.RunFile{}, err
	}
	return store.RunFile{
		ID:        s.ids.Next(PrefixArtifact),
		Type:      typ,
		Name:      name,
		Size:      n,
		SHA256:    hex.EncodeToString(h.Sum(nil)),
		CreatedAt: client.NewTime(s.now()),
	}, nil
}

// RemoveRun deletes a run's directory and everything in it, and with a
// bucket the run's objects. A run without files is not an error.
func (s *Store) RemoveRun(orgID, runID string) error {
	if err := checkIDs(orgID, runID); err != nil {
		return err
	}
	var errs []error
	if err := s.root.RemoveAll(orgID + "/" + runID); err != nil {
		errs = append(errs, fmt.Errorf("artifacts: %w", err))
	}
	if s.bucket != nil {
		errs = append(errs, s.bucket.removeDir(orgID, runID))
	}
	return errors.Join(errs...)
}

// open opens a file for reading, with its modification time: the
// directory's file when this daemon has it, else (with a bucket) its
// object. The caller has checked the ids and the name; a file that is
// nowhere is an error wrapping fs.ErrNotExist. Only a file missing from
// the disk is looked for in the bucket: one that is there but refused (a
// symbolic link, a directory in place of the run's) is refused.
func (s *Store) open(ctx context.Context, orgID, dirID, name string) (io.ReadSeekCloser, time.Time, error) {
	err := s.checkDirs(orgID, dirID)
	if err == nil {
		f, fi, ferr := s.openRegular(orgID, dirID, name)
		if ferr == nil {
			return f, fi.ModTime(), nil
		}
		err = ferr
	}
	if s.bucket == nil || !errors.Is(err, fs.ErrNotExist) {
		return nil, time.Time{}, err
	}
	return s.bucket.open(ctx, s.bucket.key(orgID, dirID, name))
}

// checkDirs makes sure that the org and run directories are real
// directories, not symbolic links (which os.Root would follow as long as
// they stay inside the root, for example into another org's tree).
//
// The checks use os.Lstat on full paths, one system call each, rather than
// Root.Lstat, which walks the path a component at a time; the root's own
// path is the caller's and trusted. What keeps every access inside the
// root, even if a directory is swapped for a link between this check and
// the open, is that the open goes through the os.Root.
func (s *Store) checkDirs(orgID, runID string) error {
	orgDir := filepath.Join(s.dir, orgID)
	for _, p := range [2]string{orgDir, filepath.Join(orgDir, runID)} {
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("artifacts: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%w: %s is not a directory", ErrNotRegular, p)
		}
	}
	return nil
}

// openRegular opens a run's file for reading if it is a regular file, not
// a symbolic link. os.Root follows a final symbolic link even with
// O_NOFOLLOW (as long as it stays inside the root), so the check is Lstat,
// then an open through the root, then a comparison of the opened
// descriptor with what Lstat saw: a file swapped for a link in between is
// detected. The caller has checked the directories (checkDirs).
func (s *Store) openRegular(orgID, runID, name string) (*os.File, fs.FileInfo, error) {
	rel := orgID + "/" + runID + "/" + name
	lfi, err := os.Lstat(filepath.Join(s.dir, orgID, runID, name))
	if err != nil {
		return nil, nil, fmt.Errorf("artifacts: %w", err)
	}
	if !lfi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotRegular, name)
	}
	f, err := s.root.Open(rel)
	if err != nil {
		return nil, nil, fmt.Errorf("artifacts: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("artifacts: %w", err)
	}
	if !fi.Mode().IsRegular() || !os.SameFile(lfi, fi) {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s changed while opening", ErrNotRegular, name)
	}
	return f, fi, nil
}

func checkIDs(orgID, runID string) error {
	if !ValidID(orgID) {
		return fmt.Errorf("%w: org %q", ErrInvalidID, orgID)
	}
	if !ValidID(runID) {
		return fmt.Errorf("%w: run %q", ErrInvalidID, runID)
	}
	return nil
}

// ValidID reports whether id can name an org or run directory: 1 to
// MaxIDLen bytes of [A-Za-z0-9_].
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
