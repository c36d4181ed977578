package storetest

import (
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// testBrowserSessions: sessions are made with their organization and
// time, listed newest first, their organization's only; an update that
// changes nothing or fails writes nothing; EndOpen ends the open sessions
// of every organization, once.
func testBrowserSessions(t *testing.T, o opener) {
	f := newFixture(t, o)
	other := f.newOrg("other")
	s := f.BrowserSessions()
	first := &client.BrowserSession{BrowserSessionID: s.NewID(), Status: ptr(store.SessionRunning)}
	second := &client.BrowserSession{BrowserSessionID: s.NewID(), Status: ptr(store.SessionRunning)}
	inOther := &client.BrowserSession{BrowserSessionID: s.NewID(), Status: ptr(store.SessionRunning)}
	for _, c := range []struct {
		org string
		bs  *client.BrowserSession
	}{{f.org.ID, first}, {f.org.ID, second}, {other.ID, inOther}} {
		if err := s.Create(ctx, c.org, c.bs); err != nil {
			t.Fatal(err)
		}
	}
	if first.OrganizationID != f.org.ID || first.CreatedAt.IsZero() {
		t.Errorf("created %+v", first)
	}
	list, err := s.List(ctx, f.org.ID)
	if err != nil || len(list) != 2 || list[0].BrowserSessionID != second.BrowserSessionID {
		t.Errorf("list %+v %v", list, err)
	}
	_, err = s.Get(ctx, other.ID, first.BrowserSessionID)
	wantNotFound(t, "another organization's", err, store.RecordSession, first.BrowserSessionID)

	changed, err := s.Update(ctx, f.org.ID, first.BrowserSessionID, func(bs *client.BrowserSession) error {
		bs.Timeout = ptr(20)
		return nil
	})
	if err != nil || changed.Timeout == nil || *changed.Timeout != 20 {
		t.Fatalf("update %+v %v", changed, err)
	}
	got, err := s.Get(ctx, f.org.ID, first.BrowserSessionID)
	if err != nil || got.Timeout == nil || *got.Timeout != 20 {
		t.Errorf("after the update: %+v %v", got, err)
	}
	same, err := s.Update(ctx, f.org.ID, first.BrowserSessionID, func(*client.BrowserSession) error { return store.ErrUnchanged })
	if err != nil || !same.ModifiedAt.Equal(got.ModifiedAt.Time) {
		t.Errorf("an unchanged update %+v %v", same, err)
	}
	boom := errors.New("boom")
	if _, err := s.Update(ctx, f.org.ID, first.BrowserSessionID, func(bs *client.BrowserSession) error { bs.Timeout = ptr(1); return boom }); err != boom {
		t.Errorf("the change's error: %v", err)
	}
	if got, _ := s.Get(ctx, f.org.ID, first.BrowserSessionID); *got.Timeout != 20 {
		t.Errorf("a failed change was written: %+v", got)
	}
	if _, err := s.Update(ctx, f.org.ID, second.BrowserSessionID, func(bs *client.BrowserSession) error {
		bs.Status = ptr(store.SessionClosed)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n, err := s.EndOpen(ctx, store.SessionEndedByRestart)
	if err != nil || n != 2 {
		t.Errorf("EndOpen = %d %v, want 2 (one per organization)", n, err)
	}
	if got, _ := s.Get(ctx, other.ID, inOther.BrowserSessionID); *got.Status != store.SessionEndedByRestart || got.CompletedAt == nil {
		t.Errorf("ended %+v", got)
	}
	if got, _ := s.Get(ctx, f.org.ID, second.BrowserSessionID); *got.Status != store.SessionClosed {
		t.Errorf("a closed session changed: %+v", got)
	}
	if n, err := s.EndOpen(ctx, store.SessionEndedByRestart); err != nil || n != 0 {
		t.Errorf("EndOpen again = %d %v", n, err)
	}
	_, err = s.List(ctx, "o_404")
	wantNotFound(t, "an unknown organization", err, store.RecordOrganization, "o_404")
}
