package engine_test

// Runs that need no browser, through a real daemon with the real engine on
// a fleet of one Chromium endpoint: N runs (-lazy.runs, 200) of an agent of
// conditional blocks only, posted one after the other. Each round measures
// the time from the first POST to the last run's end (its finished_at)
// beside the time the POSTs themselves take, its ceiling in the same round:
// runs that open no browser end in about the time it takes to start them.
// It reports the medians of the rounds and the fleet's placements and queue
// waits, which must stay 0.
//
//	go test ./localrun/engine -run '^$' -bench BenchmarkRunsWithoutBrowser -benchtime 3x

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/chromiumtest"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
)

var lazyRuns = flag.Int("lazy.runs", 200, "runs per round of BenchmarkRunsWithoutBrowser")

func BenchmarkRunsWithoutBrowser(b *testing.B) {
	needBrowser(b)
	m := chromiumtest.Start(b)
	e := newEngine(b, engine.Config{BrowserEndpoints: []browser.Endpoint{{URL: m.URL(), Name: "one", Capacity: 2}}})
	addr, _ := daemontest.Start(b, b.TempDir(), daemon.Config{APIKey: testKey, Executor: e, Workers: 10})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Conditions only", WorkflowDefinition: conditionalAgent()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	n := *lazyRuns
	var posts, walls, ratios []float64
	b.ResetTimer()
	for range b.N {
		ids := make([]string, 0, n)
		start := time.Now()
		for i := range n {
			r, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID,
				Parameters: map[string]any{"n": []string{"1", "2"}[i%2]}})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, r.RunID)
		}
		posted := time.Since(start)
		var last time.Time
		for _, id := range ids {
			r, err := waitRun(ctx, c, id)
			if err != nil || r.Status != client.RunStatusCompleted || r.FinishedAt == nil {
				b.Fatalf("run %s: %+v %v", id, r, err)
			}
			if r.FinishedAt.After(last) {
				last = r.FinishedAt.Time
			}
		}
		wall := last.Sub(start)
		posts = append(posts, posted.Seconds())
		walls = append(walls, wall.Seconds())
		ratios = append(ratios, wall.Seconds()/posted.Seconds())
	}
	b.StopTimer()
	st, _ := e.FleetStatus()
	b.ReportMetric(median(posts), "posts_s")
	b.ReportMetric(median(walls), "first_post_to_last_end_s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(float64(endpointNamed(st, "one").Placed), "placements")
	b.ReportMetric(float64(st.QueueWaits), "queue_waits")
	b.ReportMetric(float64(n), "runs/round")
}
