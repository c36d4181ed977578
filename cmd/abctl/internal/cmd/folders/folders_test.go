package folders

import (
	"strings"
	"testing"

	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

func TestCreate(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *CreateOptions
	if err := cmdtest.Exec(NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil }), "Billing", "--description", "Invoices"); err != nil {
		t.Fatal(err)
	}
	if got.Title != "Billing" || got.Description != "Invoices" || got.Format != printer.Name {
		t.Errorf("options %+v", got)
	}
	if err := cmdtest.Exec(NewCmdCreate(f, nil), "Billing", "-o", "wide"); !cmdtest.IsUsage(err) {
		t.Errorf("-o wide: %v", err)
	}
}

func TestUpdate(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *UpdateOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdUpdate(f, func(o *UpdateOptions) error { got = o; return nil }), args...)
	}
	if err := run("folder/fld_1", "--title", ""); err != nil {
		t.Fatal(err)
	}
	if got.FolderID != "fld_1" || got.Title == nil || *got.Title != "" || got.Description != nil {
		t.Errorf("--title \"\": %+v", got)
	}
	if err := run("fld_1", "--description", "d", "-o", "json"); err != nil || got.Title != nil || *got.Description != "d" || got.Format != printer.JSON {
		t.Errorf("--description: %+v %v", got, err)
	}
	if err := run("fld_1"); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "give --title, --description or both") {
		t.Errorf("nothing to change: %v", err)
	}
	if err := run("run/wr_1", "--title", "x"); got != nil || !cmdtest.IsUsage(err) {
		t.Errorf("a run for a folder: %v", err)
	}
}

func TestDelete(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *DeleteOptions
	run := func(args ...string) error {
		got = nil
		return cmdtest.Exec(NewCmdDelete(f, func(o *DeleteOptions) error { got = o; return nil }), args...)
	}
	if err := run("folder/fld_1"); err != nil || got.FolderID != "fld_1" || got.DeleteAgents {
		t.Errorf("delete: %+v %v", got, err)
	}
	if err := run("fld_1", "--delete-agents"); got != nil || !cmdtest.IsUsage(err) || !strings.Contains(err.Error(), "add --yes") {
		t.Errorf("--delete-agents without --yes: %v", err)
	}
	if err := run("fld_1", "--delete-agents", "-y"); err != nil || !got.DeleteAgents || !got.Yes {
		t.Errorf("--delete-agents -y: %+v %v", got, err)
	}
	f.IO.SetTTY(true, false, true)
	if err := run("fld_1", "--delete-agents"); err != nil || got.Yes {
		t.Errorf("on a terminal: %+v %v", got, err)
	}
}
