package pgstore_test

import (
	"testing"

	"github.com/abctl/abctl/daemon/store"
	"github.com/abctl/abctl/daemon/store/pgstore"
	"github.com/abctl/abctl/daemon/store/storetest"
)

// TestConformance runs the store's conformance suite on PostgreSQL: each
// of its tests on a database of its own on the package's server.
func TestConformance(t *testing.T) {
	storetest.Run(t, openPG, reopenPG)
}

// openPG opens a store on a new, empty database.
func openPG(t *testing.T, opts store.Options) store.Store {
	t.Helper()
	return open(t, newDatabase(t), opts)
}

// reopenPG closes s and opens its database again, as a restarted daemon
// does.
func reopenPG(t *testing.T, s store.Store, opts store.Options) store.Store {
	t.Helper()
	url := s.(*pgstore.Store).URL()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return open(t, url, opts)
}
