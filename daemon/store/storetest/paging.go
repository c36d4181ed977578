package storetest

import (
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

// testPagesFarPastTheEnd: a page whose first row would lie past any
// number an int holds is an empty page, not an overflow, on every list
// that pages.
func testPagesFarPastTheEnd(t *testing.T, o opener) {
	f := newFixture(t, o)
	org := f.org.ID
	f.newRun(client.RunTypeTaskV1, nil)
	if _, err := f.Profiles().Create(ctx, org, "Blank", "", nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Scripts().Create(ctx, org, store.ScriptInput{Content: []byte("format: abctl.script/v1\n")}); err != nil {
		t.Fatal(err)
	}
	a := f.create(org, AgentDef("Invoices"))
	f.schedule(org, a.WorkflowPermanentID, "@daily", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f.folder(org, "Finance")

	const page, size = 1 << 60, 1 << 40
	if list, err := f.Credentials().List(ctx, org, store.CredentialQuery{Page: page, PageSize: size}); err != nil || list == nil || len(list) != 0 {
		t.Errorf("credentials %v %v", list, err)
	}
	if list, err := f.Profiles().List(ctx, org, store.ProfileQuery{Page: page, PageSize: size}); err != nil || list == nil || len(list) != 0 {
		t.Errorf("profiles %v %v", list, err)
	}
	if list, err := f.Scripts().List(ctx, org, page, size, ""); err != nil || list == nil || len(list) != 0 {
		t.Errorf("scripts %v %v", list, err)
	}
	if list, total, err := f.Schedules().ListAll(ctx, org, store.ScheduleQuery{Page: page, PageSize: size}); err != nil || total != 1 || list == nil || len(list) != 0 {
		t.Errorf("schedules %v %d %v", list, total, err)
	}
	if list, err := f.Folders().List(ctx, org, page, size, ""); err != nil || len(list) != 0 {
		t.Errorf("folders %v %v", list, err)
	}
	if list, err := f.Agents().List(ctx, org, store.AgentQuery{Page: page, PageSize: size}); err != nil || list == nil || len(list) != 0 {
		t.Errorf("agents %v %v", list, err)
	}
	if list, err := f.Runs().List(ctx, org, store.RunQuery{Page: page, PageSize: size}); err != nil || list == nil || len(list) != 0 {
		t.Errorf("runs %v %v", list, err)
	}
}
