package get

import (
	"fmt"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

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
	l := printer.Listing{Value: listing.One(runs, single), Headers: []string{"id", "type", "status", "steps", "created", "duration"}}
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
