package boltstore

import (
	"bytes"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/storetest"
)

// TestConformance runs the store's conformance suite on bbolt files in
// temporary directories. It is an internal test so that every store the
// suite opens has its buckets checked (checkInvariants: summaries, order
// index, folder counters, tags, run index and run views) when the suite
// reopens it and when its test ends: the suite's scenarios are bbolt's
// index tests too.
func TestConformance(t *testing.T) {
	storetest.Run(t, openConformance, reopenConformance)
}

// checkedStore is a store the suite opened.
type checkedStore struct {
	*Store
	// views is whether every run's view is the one the store's RunViews
	// make (see viewsFollow).
	views bool

	mu     sync.Mutex
	closed bool // by a reopen, which checked the invariants
}

// openConformance opens a store in a new file.
func openConformance(t *testing.T, opts store.Options) store.Store {
	t.Helper()
	return openChecked(t, filepath.Join(t.TempDir(), "abctl.db"), opts, true)
}

// reopenConformance checks s's invariants, closes it and opens its file
// again.
func reopenConformance(t *testing.T, s store.Store, opts store.Options) store.Store {
	t.Helper()
	c := s.(*checkedStore)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		checkInvariants(t, c.Store, c.views)
		c.closed = true
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return openChecked(t, c.Path(), opts, viewsFollow(t, c, opts.RunViews))
}

// viewsFollow tells whether the runs' views are what next makes of them
// once the store c is opened again with next: they were (c.views) and
// next makes the same views, or next is of another Format than c's views,
// so that Open makes every view again. Views of the same Format that make
// other views, or no views, leave the views as they were.
func viewsFollow(t *testing.T, c *checkedStore, next store.RunViews) bool {
	t.Helper()
	prev := c.Store.views
	if prev == nil || next == nil {
		return c.views && prev == nil && next == nil
	}
	if c.views && reflect.DeepEqual(prev, next) {
		return true
	}
	pf, err := prev.Format()
	if err != nil {
		t.Fatal(err)
	}
	nf, err := next.Format()
	if err != nil {
		t.Fatal(err)
	}
	return !bytes.Equal(pf, nf)
}

// openChecked opens the file at path and, when the test ends, checks the
// store's invariants (unless a reopen did) and closes it.
func openChecked(t *testing.T, path string, opts store.Options, views bool) *checkedStore {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	c := &checkedStore{Store: s, views: views}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.closed {
			checkInvariants(t, c.Store, c.views)
			c.closed = true
			c.Close()
		}
	})
	return c
}
