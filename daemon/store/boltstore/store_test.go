package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/abctl/abctl/daemon/store"
)

func TestOpenModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "abctl.db")
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Path() != path {
		t.Errorf("Path = %q", s.Path())
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, filepath.Dir(dir): 0o700, path: 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", p, got, want)
		}
	}
	if s.db.NoSync {
		t.Error("NoSync is set: writes would not be durable")
	}
}

func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	s2, err := Open(path, store.Options{LockTimeout: 150 * time.Millisecond})
	if err == nil {
		s2.Close()
		t.Fatal("second Open of the same file succeeded")
	}
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("error %v does not match ErrLocked", err)
	}
	for _, want := range []string{path, "another abctl daemon is using this data directory"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("gave up after %v, before the lock timeout", waited)
	}
	// Once the first store is closed, the file opens.
	s.Close()
	s3, err := Open(path, store.Options{LockTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s3.Close()
}

func readSchemaVersion(t *testing.T, path string) uint64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v uint64
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if b == nil {
			return errors.New("no meta bucket")
		}
		v = binary.BigEndian.Uint64(b.Get(keySchemaVersion))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func writeSchemaVersion(t *testing.T, path string, v uint64) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(keySchemaVersion, u64(v))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSchemaVersionWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := readSchemaVersion(t, path); got != SchemaVersion() || got != uint64(len(migrations)) {
		t.Fatalf("schema version %d, want %d", got, SchemaVersion())
	}
}

func TestSchemaTooNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	writeSchemaVersion(t, path, SchemaVersion()+1)
	_, err = Open(path, store.Options{})
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("Open of a newer schema: %v", err)
	}
	for _, want := range []string{path, fmt.Sprintf("schema version %d", SchemaVersion()+1), fmt.Sprintf("up to %d", SchemaVersion())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The failed Open released the file and left it alone.
	if got := readSchemaVersion(t, path); got != SchemaVersion()+1 {
		t.Errorf("schema version rewritten to %d", got)
	}
}

// TestOpenBareBoltFile: a bbolt file without any bucket (schema 0) is
// migrated.
func TestOpenBareBoltFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateOrganization(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if got := readSchemaVersion(t, path); got != SchemaVersion() {
		t.Fatalf("schema version %d", got)
	}
}

// TestMigrationsOrderAndOnce runs a three-step history against a file at
// version 1: steps 2 and 3 run once, in order, in one transaction; a
// failing step leaves the file untouched.
func TestMigrationsOrderAndOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	s, err := Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	var ran []uint64
	step := func(v uint64) migration {
		return migration{version: v, name: "test", apply: func(tx *bolt.Tx) error {
			ran = append(ran, v)
			_, err := tx.CreateBucket([]byte{byte('0' + v)})
			return err
		}}
	}
	failing := migration{version: 4, name: "fails", apply: func(tx *bolt.Tx) error { return errors.New("boom") }}
	history := append([]migration{migrations[0]}, step(2), step(3))
	writeSchemaVersion(t, path, 1)

	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrate(db, path, append(history, failing)); err == nil || !strings.Contains(err.Error(), "migration 4 (fails): boom") {
		t.Fatalf("failing migration: %v", err)
	}
	// Rolled back: neither the buckets of steps 2 and 3 nor a new version.
	_ = db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("2")) != nil {
			t.Error("step 2 survived a failed migration")
		}
		if v := binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get(keySchemaVersion)); v != 1 {
			t.Errorf("version %d after a failed migration", v)
		}
		return nil
	})
	ran = nil
	if err := migrate(db, path, history); err != nil {
		t.Fatal(err)
	}
	if err := migrate(db, path, history); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 2 || ran[0] != 2 || ran[1] != 3 {
		t.Fatalf("ran %v, want [2 3] once", ran)
	}
	_ = db.View(func(tx *bolt.Tx) error {
		if v := binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get(keySchemaVersion)); v != 3 {
			t.Errorf("version %d, want 3", v)
		}
		return nil
	})
}

func TestCorruptSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket(bucketMeta)
		return b.Put(keySchemaVersion, []byte("x"))
	})
	db.Close()
	if _, err := Open(path, store.Options{}); err == nil || !strings.Contains(err.Error(), "corrupt schema version") {
		t.Fatalf("Open: %v", err)
	}
}
