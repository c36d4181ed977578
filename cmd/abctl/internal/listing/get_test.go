package listing

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdtest"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// testGetter reads folders that exist in the test's map.
func testGetter(folders map[string]*client.Folder) Getter[*client.Folder] {
	return Getter[*client.Folder]{
		Kind: resource.Folder,
		Noun: "folder",
		Get: func(_ context.Context, _ *client.Client, id string) (*client.Folder, error) {
			if fo, ok := folders[id]; ok {
				return fo, nil
			}
			return nil, errors.New("not found")
		},
		Show: func(fs []*client.Folder, single bool, _ time.Time) printer.Listing { return Folders(fs, single, false) },
	}
}

// TestGetterNewCmd: ids (or kind/ID) become the options' IDs, -o is
// checked first, and an id of another kind is a usage error.
func TestGetterNewCmd(t *testing.T) {
	f, _ := cmdtest.NewFactory(t, nil)
	var got *GetOptions
	cmd := testGetter(nil).NewCmd(f, &cobra.Command{Use: "get FOLDER_ID..."}, func(o *GetOptions) error { got = o; return nil })
	if err := cmdtest.Exec(cmd, "folder/fld_1", "fld_2", "-o", "json"); err != nil || got == nil ||
		strings.Join(got.IDs, ",") != "fld_1,fld_2" || got.Format != printer.JSON {
		t.Fatalf("get: %v, options %+v", err, got)
	}
	for _, args := range [][]string{{"fld_1", "-o", "wide"}, {"run/wr_1"}} {
		got = nil
		if err := cmdtest.Exec(cmd, args...); got != nil || !cmdtest.IsUsage(err) {
			t.Errorf("get %q: %v, want a usage error and nothing run", args, err)
		}
	}
}

// TestGetterRun: the resources are read in order and shown, one alone;
// a failure names the resource.
func TestGetterRun(t *testing.T) {
	f, streams := cmdtest.NewFactory(t, nil)
	g := testGetter(map[string]*client.Folder{"fld_1": {FolderID: "fld_1"}, "fld_2": {FolderID: "fld_2"}})
	opts := &GetOptions{IO: f.IO, Client: func(context.Context) (*client.Client, error) { return nil, nil }, Now: time.Now, Format: printer.Name}
	opts.IDs = []string{"fld_2", "fld_1"}
	if err := g.Run(t.Context(), opts); err != nil || streams.Out.String() != "folder/fld_2\nfolder/fld_1\n" {
		t.Errorf("run: %v, printed %q", err, streams.Out.String())
	}
	streams.Out.Reset()
	opts.IDs, opts.Format = []string{"fld_1"}, printer.JSON
	if err := g.Run(t.Context(), opts); err != nil || !strings.HasPrefix(streams.Out.String(), "{") {
		t.Errorf("one: %v, printed %q, want the folder alone", err, streams.Out.String())
	}
	opts.IDs = []string{"fld_1", "fld_9"}
	if err := g.Run(t.Context(), opts); err == nil || err.Error() != "get folder fld_9: not found" {
		t.Errorf("a missing folder: %v", err)
	}
}

// TestCheckLimit: 0 (all) and more; a negative limit is a usage error.
func TestCheckLimit(t *testing.T) {
	if CheckLimit(0) != nil || CheckLimit(5) != nil {
		t.Error("0 and 5 refused")
	}
	if err := CheckLimit(-1); !cmdtest.IsUsage(err) || err.Error() != "--limit must be 0 (all) or more, not -1" {
		t.Errorf("-1: %v", err)
	}
}
