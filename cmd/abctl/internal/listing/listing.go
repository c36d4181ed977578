// Package listing is what the commands that list and show the service's
// resources share: the inputs and flags of a list command (ListOptions,
// NewListCmd), reading a list page by page up to --limit, reading
// resources by id, the get command of a kind of resource (a Getter), and
// the printer.Listing of the resources that more than one command prints
// (folders, tag values). A command's own listings stay in its package.
package listing

import (
	"context"
	"fmt"
	"iter"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// One returns the single item of a list shown by id (JSON and YAML show it
// alone, not in an array), or the list.
func One[T any](items []T, single bool) any {
	if single && len(items) == 1 {
		return items[0]
	}
	return items
}

// Folders lists folders; single means they were asked for by one id,
// wide adds their descriptions.
func Folders(folders []*client.Folder, single, wide bool) printer.Listing {
	l := printer.Listing{Value: One(folders, single), Headers: []string{"id", "title", "agents", "updated"}}
	if wide {
		l.Headers = append(l.Headers, "description")
	}
	for _, fo := range folders {
		l.Names = append(l.Names, resource.Folder.Name(fo.FolderID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, fo := range folders {
			row := []string{fo.FolderID, fo.Title, fmt.Sprint(fo.WorkflowCount), t.Time(fo.ModifiedAt.Time)}
			if wide {
				description := ""
				if fo.Description != nil {
					description = *fo.Description
				}
				row = append(row, description)
			}
			t.AddRow(row...)
		}
	}
	return l
}

// Folder shows one folder (folders create and update).
func Folder(folder *client.Folder) printer.Listing {
	return Folders([]*client.Folder{folder}, true, false)
}

// TagValues lists tag values with their colours and agent counts.
func TagValues(values []*client.TagValue) printer.Listing {
	l := printer.Listing{Value: values, Headers: []string{"key", "value", "color", "agents"}}
	for _, v := range values {
		l.Names = append(l.Names, v.Key+"="+v.Value)
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, v := range values {
			t.AddRow(v.Key, v.Value, string(v.Color), fmt.Sprint(v.WorkflowCount))
		}
	}
	return l
}

// PageSize is the page size that reads up to limit items (0: all) in as
// few requests as the service allows (at most 100 a page).
func PageSize(limit int) int {
	if limit > 0 && limit < 100 {
		return limit
	}
	return 100
}

// Collect reads up to limit items of seq (0: all of them); an error says
// what was being listed ("list the credentials: ...").
func Collect[T any](seq iter.Seq2[T, error], limit int, what string) ([]T, error) {
	out := []T{}
	for item, err := range seq {
		if err != nil {
			return nil, fmt.Errorf("list the %s: %w", what, err)
		}
		out = append(out, item)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// Each gets every id, in order; an error names the one that failed ("get
// credential cred_1: ...").
func Each[T any](ctx context.Context, ids []string, get func(context.Context, string) (T, error), what string) ([]T, error) {
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		item, err := get(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("get %s %s: %w", what, id, err)
		}
		out = append(out, item)
	}
	return out, nil
}

// CheckLimit checks the value of a --limit flag that bounds a list (0: all
// of it).
func CheckLimit(limit int) error {
	if limit < 0 {
		return cmdutil.UsageErrorf("--limit must be 0 (all) or more, not %d", limit)
	}
	return nil
}
