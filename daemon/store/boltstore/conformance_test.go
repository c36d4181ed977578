package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/boltstore"
	"github.com/abctl/abctl/daemon/store/storetest"
)

// TestConformance runs the store's conformance suite on bbolt files in
// temporary directories.
func TestConformance(t *testing.T) {
	storetest.Run(t, openBolt, reopenBolt)
}

// openBolt opens a store in a new file.
func openBolt(t *testing.T, opts store.Options) store.Store {
	t.Helper()
	return openBoltAt(t, filepath.Join(t.TempDir(), "abctl.db"), opts)
}

// reopenBolt closes s and opens its file again.
func reopenBolt(t *testing.T, s store.Store, opts store.Options) store.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return openBoltAt(t, s.(*boltstore.Store).Path(), opts)
}

func openBoltAt(t *testing.T, path string, opts store.Options) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
