package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon/store"
)

func testReopenKeepsData(t *testing.T, o opener) {
	f := newFixture(t, o)
	fl := f.folder(f.org.ID, "Finance")
	def := AgentDef("Invoices", WorkflowParam("url", "portal", "https://example.com"))
	def.FolderID = &fl.FolderID
	a := f.create(f.org.ID, def)
	a2 := f.update(f.org.ID, a.WorkflowPermanentID, AgentDef("Invoices v2"))
	b := f.create(f.org.ID, AgentDef("Other"))
	if err := f.Agents().Delete(ctx, f.org.ID, b.WorkflowPermanentID); err != nil {
		t.Fatal(err)
	}
	f.reopen()

	org, err := f.Authenticate(ctx, f.key)
	if err != nil || org != f.org {
		t.Fatalf("Authenticate after reopen: %+v, %v", org, err)
	}
	got, err := f.Agents().Get(ctx, f.org.ID, a.WorkflowPermanentID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if mustJSON(t, got) != mustJSON(t, a2) {
		t.Fatalf("after reopen:\n%s\nwant\n%s", mustJSON(t, got), mustJSON(t, a2))
	}
	vs, err := f.Agents().Versions(ctx, f.org.ID, a.WorkflowPermanentID)
	if err != nil || len(vs) != 2 {
		t.Fatalf("versions: %d, %v", len(vs), err)
	}
	if _, err := f.Agents().Get(ctx, f.org.ID, b.WorkflowPermanentID, 0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted agent after reopen: %v", err)
	}
	if n := f.count(f.org.ID, fl.FolderID); n != 1 {
		t.Fatalf("folder count after reopen %d", n)
	}
	if got := f.list(f.org.ID, store.AgentQuery{}); len(got) != 1 || got[0] != a.WorkflowPermanentID {
		t.Fatalf("list after reopen %v", got)
	}
	// New ids after reopen (another worker) do not collide.
	c := f.create(f.org.ID, AgentDef("After"))
	if c.WorkflowPermanentID == a.WorkflowPermanentID || c.WorkflowPermanentID == b.WorkflowPermanentID {
		t.Fatal("id reused")
	}
}

func testCanceledContext(t *testing.T, o opener) {
	f := newFixture(t, o)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := f.Agents().Create(cctx, f.org.ID, AgentDef("x"), ""); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateAgent: %v", err)
	}
	if _, err := f.Agents().List(cctx, f.org.ID, store.AgentQuery{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ListAgents: %v", err)
	}
	rec := f.newRun(client.RunTypeTaskV1, nil)
	for name, call := range map[string]func() error{
		"Folders.List":      func() error { _, err := f.Folders().List(cctx, f.org.ID, 1, 10, ""); return err },
		"Tags.Keys":         func() error { _, err := f.Tags().Keys(cctx, f.org.ID); return err },
		"Credentials.List":  func() error { _, err := f.Credentials().List(cctx, f.org.ID, store.CredentialQuery{}); return err },
		"Schedules.Enabled": func() error { _, err := f.Schedules().Enabled(cctx); return err },
		"Uploads.Create":    func() error { return f.Uploads().Create(cctx, f.org.ID, &store.Upload{ID: "a_1"}) },
		"Runs.List":         func() error { _, err := f.Runs().List(cctx, f.org.ID, store.RunQuery{}); return err },
		"Runs.Get":          func() error { _, err := f.Runs().Get(cctx, f.org.ID, rec.ID); return err },
		"Runs.Update": func() error {
			_, err := f.Runs().Update(cctx, f.org.ID, rec.ID, func(*store.RunRecord) error { return nil })
			return err
		},
	} {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
