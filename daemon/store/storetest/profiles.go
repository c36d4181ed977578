package storetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/abctl/abctl/daemon/ids"
	"github.com/abctl/abctl/daemon/store"
)

// testProfilesAndKeptStates: browser states (of runs, agents, sessions
// and profiles) are sealed and read back only by their own record and
// organization (that the stored bytes never hold a cookie's value is each
// backend's own test); profiles list newest first, search, update,
// soft-delete; an agent's kept state is forgotten on reset.
func testProfilesAndKeptStates(t *testing.T, o opener) {
	clock := newClock()
	secret := bytes.Repeat([]byte{7}, store.SecretSize)
	s := o.open(t, store.Options{Now: clock.Now, IDs: ids.NewWithClock(1, clock.Now), Secret: secret})
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
	if err := p.KeepSessionState(ctx, a.ID, "pbs_1", state); err != nil {
		t.Fatal(err)
	}
	if got, err := p.SessionState(ctx, a.ID, "pbs_1"); err != nil || !bytes.Equal(got, state) {
		t.Errorf("the session's state %s %v", got, err)
	}
	if got, err := p.SessionState(ctx, a.ID, "pbs\x00odd"); err != nil || got != nil {
		t.Errorf("an odd session id: %s %v", got, err)
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
	_, err = p.Get(ctx, b.ID, full.BrowserProfileID)
	wantNotFound(t, "another organization's profile", err, store.RecordProfile, full.BrowserProfileID)
	list, _ := p.List(ctx, a.ID, store.ProfileQuery{PageSize: 10})
	if len(list) != 2 || list[0].Name != "Blank" || list[1].Name != "Billing" {
		t.Errorf("list %v", list)
	}
	if found, _ := p.List(ctx, a.ID, store.ProfileQuery{PageSize: 10, Search: "SIGNED"}); len(found) != 1 || found[0].Name != "Billing" {
		t.Errorf("search by description: %v", found)
	}
	if page, err := p.List(ctx, a.ID, store.ProfileQuery{Page: 1 << 20, PageSize: 100}); err != nil || page == nil || len(page) != 0 {
		t.Errorf("a page past the end %v %v", page, err)
	}
	up, err := p.Update(ctx, a.ID, empty.BrowserProfileID, ptr("Renamed"), ptr(""))
	if err != nil || up.Name != "Renamed" || up.Description != nil {
		t.Errorf("update %+v %v", up, err)
	}
	if err := p.Delete(ctx, a.ID, full.BrowserProfileID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.State(ctx, a.ID, full.BrowserProfileID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted profile's state: %v", err)
	}
	if err := p.Delete(ctx, a.ID, full.BrowserProfileID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a second delete %v", err)
	}
	if live, _ := p.List(ctx, a.ID, store.ProfileQuery{PageSize: 10}); len(live) != 1 || live[0].Name != "Renamed" {
		t.Errorf("without the deleted %v", live)
	}
	if all, _ := p.List(ctx, a.ID, store.ProfileQuery{PageSize: 10, IncludeDeleted: true}); len(all) != 2 || all[1].DeletedAt == nil {
		t.Errorf("include_deleted: %v", all)
	}
	if err := p.ResetAgentState(ctx, a.ID, "wpid_1"); err != nil {
		t.Fatal(err)
	}
	if got, err := p.AgentState(ctx, a.ID, "wpid_1"); got != nil || err != nil {
		t.Errorf("after reset the agent starts from %s %v", got, err)
	}
	_, err = p.RunState(ctx, "o_404", "wr_1")
	wantNotFound(t, "an unknown organization", err, store.RecordOrganization, "o_404")
}
