package listing

import (
	"context"
	"errors"
	"iter"
	"strings"
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

// TestCollectAndEach: Collect stops at its limit and names what it listed
// in an error; Each keeps the order of the ids and names the one that
// failed.
func TestCollectAndEach(t *testing.T) {
	seq := func(n int, failAt int) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			for i := 1; i <= n; i++ {
				var err error
				if i == failAt {
					err = errors.New("boom")
				}
				if !yield(i, err) {
					return
				}
			}
		}
	}
	if got, err := Collect(seq(5, 0), 3, "things"); err != nil || len(got) != 3 || got[2] != 3 {
		t.Errorf("limit 3: %v %v", got, err)
	}
	if got, err := Collect(seq(5, 0), 0, "things"); err != nil || len(got) != 5 {
		t.Errorf("no limit: %v %v", got, err)
	}
	if _, err := Collect(seq(5, 2), 0, "things"); err == nil || err.Error() != "list the things: boom" {
		t.Errorf("a failing page: %v", err)
	}
	if PageSize(0) != 100 || PageSize(7) != 7 || PageSize(500) != 100 {
		t.Errorf("page sizes %d %d %d", PageSize(0), PageSize(7), PageSize(500))
	}
	get := func(_ context.Context, id string) (string, error) {
		if id == "bad" {
			return "", errors.New("not found")
		}
		return "<" + id + ">", nil
	}
	if got, err := Each(t.Context(), []string{"b", "a"}, get, "thing"); err != nil || strings.Join(got, "") != "<b><a>" {
		t.Errorf("each: %v %v", got, err)
	}
	if _, err := Each(t.Context(), []string{"a", "bad"}, get, "thing"); err == nil || err.Error() != "get thing bad: not found" {
		t.Errorf("a failing get: %v", err)
	}
}
