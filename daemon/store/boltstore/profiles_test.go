package boltstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// TestBrowserStateNotInFile: browser states are sealed: the file holds a
// profile's name but never a cookie's value, neither the profile's state
// nor the kept states of a run and an agent. (What the states answer is
// the conformance suite's ProfilesAndKeptStates.)
func TestBrowserStateNotInFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	clock := newClock()
	secret := bytes.Repeat([]byte{7}, store.SecretSize)
	s, err := Open(path, store.Options{Now: clock.Now, IDs: ids.NewWithClock(1, clock.Now), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := s.CreateOrganization(ctx, "a")
	state := []byte(`{"cookies":[{"name":"sid","value":"c00kie-v4lue-0123"}],"origins":[]}`)
	p := s.Profiles()
	if err := p.KeepRunState(ctx, a.ID, "wr_1", "wpid_1", state); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Create(ctx, a.ID, "Billing", "signed in", state, "wpid_1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(file, []byte("c00kie-v4lue")) || !bytes.Contains(file, []byte("Billing")) {
		t.Error("the store file holds a cookie's value in the clear (or the search read nothing)")
	}
}
