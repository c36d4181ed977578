package boltstore

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/store"
)

// TestAPIKeysStoredHashed: the key itself never reaches the file.
func TestAPIKeysStoredHashed(t *testing.T) {
	f := newFixture(t)
	const given = "given-key-0123456789-abcdefghijklmnop"
	if err := f.AddAPIKey(ctx, f.org.ID, given); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{f.key, strings.TrimPrefix(f.key, "abk_"), given} {
		if bytes.Contains(data, []byte(k)) {
			t.Errorf("the file contains the key %q", k)
		}
	}
	f.reopen2()
	if _, err := f.Authenticate(ctx, given); err != nil {
		t.Fatal(err)
	}
}

// reopen2 opens the file again after the test closed it itself.
func (f *fixture) reopen2() {
	f.t.Helper()
	s, err := Open(f.path, store.Options{Now: f.clock.Now})
	if err != nil {
		f.t.Fatal(err)
	}
	f.Store = s
}

func TestCompareIDs(t *testing.T) {
	if compareIDs("o_9", "o_10") >= 0 || compareIDs("o_10", "o_9") <= 0 || compareIDs("o_5", "o_5") != 0 {
		t.Fatal("compareIDs is not numeric")
	}
}
