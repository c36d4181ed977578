package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func openBolt(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "commit.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestGroupCommit: concurrent writes all become durable, each returns
// its own outcome, and a write that fails in a group leaves no trace while
// the others of its group go in.
func TestGroupCommit(t *testing.T) {
	db := openBolt(t)
	c := &committer{db: db}
	const writers, each = 16, 50
	errBad := errors.New("refused")
	var wg sync.WaitGroup
	errs := make([]error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := w*each + i
				errs[n] = c.write(func(tx *bolt.Tx) error {
					b := tx.Bucket([]byte("b"))
					if err := b.Put(fmt.Appendf(nil, "k%05d", n), []byte("v")); err != nil {
						return err
					}
					if n%7 == 0 {
						return fmt.Errorf("write %d: %w", n, errBad) // after a write: it must be undone
					}
					return nil
				})
			}
		}()
	}
	wg.Wait()
	if err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("b"))
		for n := range writers * each {
			got := b.Get(fmt.Appendf(nil, "k%05d", n))
			switch {
			case n%7 == 0 && (got != nil || !errors.Is(errs[n], errBad) || !strings.Contains(errs[n].Error(), fmt.Sprintf("write %d:", n))):
				t.Errorf("write %d failed: stored %q, error %v; want nothing stored and its own error", n, got, errs[n])
			case n%7 != 0 && (got == nil || errs[n] != nil):
				t.Errorf("write %d: stored %q, error %v; want it stored, no error", n, got, errs[n])
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestGroupCommitPanic: a write that panics panics in its caller's
// goroutine, as db.Update would, and the committer goes on.
func TestGroupCommitPanic(t *testing.T) {
	db := openBolt(t)
	c := &committer{db: db}
	func() {
		defer func() {
			if p := recover(); p == nil || fmt.Sprint(p) != "boom" {
				t.Errorf("recovered %v, want the write's own panic", p)
			}
		}()
		_ = c.write(func(tx *bolt.Tx) error { panic("boom") })
	}()
	if err := c.write(func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("after"), []byte("1")) }); err != nil {
		t.Fatalf("a write after the panic: %v", err)
	}
}

// TestGroupCommitGathers: writers that write again as soon as they are
// answered share commits (CommitStats counts them), and every write is
// counted once.
func TestGroupCommitGathers(t *testing.T) {
	st := newFixture(t).Store
	c0, w0 := st.CommitStats()
	const writers, each = 20, 10
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := st.update(t.Context(), func(tx *bolt.Tx) error {
					b, err := tx.CreateBucketIfNotExists([]byte("gather"))
					if err != nil {
						return err
					}
					return b.Put(fmt.Appendf(nil, "%02d-%02d", w, i), []byte("v"))
				})
				if err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	c1, w1 := st.CommitStats()
	if w1-w0 != writers*each {
		t.Fatalf("CommitStats counts %d writes, want %d", w1-w0, writers*each)
	}
	// Without grouping there would be one commit per write.
	if commits := c1 - c0; commits >= writers*each {
		t.Errorf("%d writes took %d commits: no write shared a commit", writers*each, commits)
	}
	// A lone writer commits alone, once per write.
	for i := range 3 {
		if err := st.update(t.Context(), func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("gather")).Put(fmt.Appendf(nil, "lone-%d", i), []byte("v"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	if c2, w2 := st.CommitStats(); c2-c1 != 3 || w2-w1 != 3 {
		t.Errorf("3 lone writes: %d commits, %d writes; want 3 and 3", c2-c1, w2-w1)
	}
}
