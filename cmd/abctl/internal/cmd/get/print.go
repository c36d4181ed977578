package get

import (
	"fmt"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// one returns the single item of a list shown by id (JSON and YAML show it
// alone), or the list.
func one[T any](items []T, single bool) any {
	if single && len(items) == 1 {
		return items[0]
	}
	return items
}

func runListListing(items []*client.RunListItem, wide bool, now time.Time) printer.Listing {
	l := printer.Listing{Value: items, Headers: []string{"id", "type", "status", "title", "created", "duration"}}
	if wide {
		l.Headers = append(l.Headers, "agent", "trigger")
	}
	for _, r := range items {
		l.Names = append(l.Names, resource.Run.Name(r.RunID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, r := range items {
			row := []string{r.RunID, string(r.RunType), string(r.Status), deref(r.Title), t.Time(r.CreatedAt.Time), duration(r.StartedAt, r.FinishedAt, now)}
			if wide {
				trigger := ""
				if r.TriggerType != nil {
					trigger = string(*r.TriggerType)
				}
				row = append(row, deref(r.WorkflowPermanentID), trigger)
			}
			t.AddRow(row...)
		}
	}
	return l
}

func runsListing(runs []*client.Run, single, wide bool, now time.Time) printer.Listing {
	l := printer.Listing{Value: one(runs, single), Headers: []string{"id", "type", "status", "steps", "created", "duration"}}
	if wide {
		l.Headers = append(l.Headers, "failure reason", "recording")
	}
	for _, r := range runs {
		l.Names = append(l.Names, resource.Run.Name(r.RunID))
	}
	l.Rows = func(t *printer.TablePrinter) {
		for _, r := range runs {
			row := []string{r.RunID, string(r.RunType), string(r.Status), fmt.Sprint(r.GetStepCount()), t.Time(r.CreatedAt.Time), duration(r.StartedAt, r.FinishedAt, now)}
			if wide {
				row = append(row, r.GetFailureReason(), r.GetRecordingURL())
			}
			t.AddRow(row...)
		}
	}
	return l
}

func foldersListing(folders []*client.Folder, single, wide bool) printer.Listing {
	l := printer.Listing{Value: one(folders, single), Headers: []string{"id", "title", "agents", "updated"}}
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
				row = append(row, deref(fo.Description))
			}
			t.AddRow(row...)
		}
	}
	return l
}

// TagValuesListing lists tag values (get tags, tags values).
func TagValuesListing(values []*client.TagValue) printer.Listing {
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

// FolderListing shows one folder (folders create and update).
func FolderListing(folder *client.Folder) printer.Listing {
	return foldersListing([]*client.Folder{folder}, true, false)
}
