package listing

import (
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
)

func TestOne(t *testing.T) {
	items := []int{7}
	if got := One(items, true); got != 7 {
		t.Errorf("one asked by id: %v, want the item", got)
	}
	if got, ok := One(items, false).([]int); !ok || len(got) != 1 {
		t.Errorf("a list of one: %v, want the list", got)
	}
	if got, ok := One([]int{1, 2}, true).([]int); !ok || len(got) != 2 {
		t.Errorf("two: %v", got)
	}
}

func TestFolders(t *testing.T) {
	at := client.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	folders := []*client.Folder{
		{FolderID: "fld_1", Title: "Billing", WorkflowCount: 2, ModifiedAt: at, Description: new("Invoices")},
		{FolderID: "fld_2", Title: "Empty", ModifiedAt: at},
	}
	for _, tc := range []struct {
		format printer.Format
		wide   bool
		want   string
	}{
		{printer.Table, false, "fld_1\tBilling\t2\t2026-01-02T03:04:05Z\nfld_2\tEmpty\t0\t2026-01-02T03:04:05Z\n"},
		{printer.Wide, true, "fld_1\tBilling\t2\t2026-01-02T03:04:05Z\tInvoices\nfld_2\tEmpty\t0\t2026-01-02T03:04:05Z\t\n"},
		{printer.Name, false, "folder/fld_1\nfolder/fld_2\n"},
	} {
		ios, _, out, _ := iostreams.Test()
		if err := Folders(folders, false, tc.wide).Print(ios, time.Now(), tc.format); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.format, out.String(), tc.want)
		}
	}
	// One folder (create, update) is an object in JSON, not an array.
	l := Folder(folders[0])
	if f, ok := l.Value.(*client.Folder); !ok || f.FolderID != "fld_1" || len(l.Headers) != 4 {
		t.Errorf("Folder: %#v %v", l.Value, l.Headers)
	}
}

func TestTagValues(t *testing.T) {
	values := []*client.TagValue{{Key: "env", Value: "prod", Color: client.TagColor("green"), WorkflowCount: 3}}
	for _, tc := range []struct {
		format printer.Format
		want   string
	}{
		{printer.Table, "env\tprod\tgreen\t3\n"},
		{printer.Name, "env=prod\n"},
	} {
		ios, _, out, _ := iostreams.Test()
		if err := TagValues(values).Print(ios, time.Now(), tc.format); err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.format, out.String(), tc.want)
		}
	}
}
