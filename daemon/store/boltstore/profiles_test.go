package boltstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// TestProfilesAndKeptStates: browser states are sealed (the file never
// holds a cookie's value), read back only by their own record and
// organization; profiles list newest first, search, soft-delete; an
// agent's kept state is forgotten on reset.
func TestProfilesAndKeptStates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "abctl.db")
	clock := newClock()
	secret := bytes.Repeat([]byte{7}, store.SecretSize)
	s, err := Open(path, store.Options{Now: clock.Now, IDs: ids.NewWithClock(1, clock.Now), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := s.CreateOrganization(ctx, "a")
	b, _, _ := s.CreateOrganization(ctx, "b")
	state := []byte(`{"cookies":[{"name":"sid","value":"c00kie-v4lue-0123"}],"origins":[]}`)
	p := s.Profiles()

	if err := p.KeepRunState(ctx, a.ID, "wr_1", "wpid_1", state); err != nil {
		t.Fatal(err)
	}
	for name, get := range map[string]func() ([]byte, error){
		"the run's":   func() ([]byte, error) { return p.RunState(ctx, a.ID, "wr_1") },
		"the agent's": func() ([]byte, error) { return p.AgentState(ctx, a.ID, "wpid_1") },
	} {
		if got, err := get(); err != nil || !bytes.Equal(got, state) {
			t.Errorf("%s state: %s %v", name, got, err)
		}
	}
	if got, err := p.RunState(ctx, b.ID, "wr_1"); err != nil || got != nil {
		t.Errorf("another organization reads %s %v", got, err)
	}
	full, err := p.Create(ctx, a.ID, "Billing", "signed in", state, "wpid_1")
	if err != nil {
		t.Fatal(err)
	}
	empty, err := p.Create(ctx, a.ID, "Blank", "", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.State(ctx, a.ID, full.BrowserProfileID); !bytes.Equal(got, state) || err != nil {
		t.Errorf("the profile's state: %s %v", got, err)
	}
	if got, err := p.State(ctx, a.ID, empty.BrowserProfileID); got != nil || err != nil {
		t.Errorf("an empty profile's state: %s %v", got, err)
	}
	if _, err := p.Get(ctx, b.ID, full.BrowserProfileID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another organization gets the profile: %v", err)
	}
	list, _ := p.List(ctx, a.ID, store.ProfileQuery{PageSize: 10})
	if len(list) != 2 || list[0].Name != "Blank" || list[1].Name != "Billing" {
		t.Errorf("list %v", list)
	}
	if found, _ := p.List(ctx, a.ID, store.ProfileQuery{PageSize: 10, Search: "SIGNED"}); len(found) != 1 || found[0].Name != "Billing" {
		t.Errorf("search by description: %v", found)
	}
	if err := p.Delete(ctx, a.ID, full.BrowserProfileID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.State(ctx, a.ID, full.BrowserProfileID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted profile's state: %v", err)
	}
	if all, _ := p.List(ctx, a.ID, store.ProfileQuery{PageSize: 10, IncludeDeleted: true}); len(all) != 2 || all[1].DeletedAt == nil {
		t.Errorf("include_deleted: %v", all)
	}
	if err := p.ResetAgentState(ctx, a.ID, "wpid_1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.AgentState(ctx, a.ID, "wpid_1"); got != nil {
		t.Errorf("after reset the agent starts from %s", got)
	}
	s.Close()
	file, _ := os.ReadFile(path)
	if bytes.Contains(file, []byte("c00kie-v4lue")) || !strings.Contains(string(file), "Billing") {
		t.Error("the store file holds a cookie's value in the clear (or the search read nothing)")
	}
}
