package engine_test

// The fleet under load: model-free agent runs through a real daemon on 1, 2
// and 3 Chromium endpoints (two runs at a time each), beside raw chromedp
// loading the same page with the same concurrency on the same browsers, at
// the same viewport, in the same run.
//
//	go test ./localrun/engine -run '^$' -bench BenchmarkFleet -benchtime 3x -timeout 30m
//
// Reported per number of endpoints: runs per second through the daemon,
// the median time from a run's creation to running (the API's created_at
// to started_at) and to its end, raw chromedp's page loads per second and
// the ratio; the same for raw chromedp that also takes the JPEG screenshot a
// run takes after its block by contract (raw-shot: the peer doing the
// run's browser work); and the daemon's own CPU per run and Go heap per
// concurrent run (the test binary is the daemon: its CPU while only the
// daemon works).
//
// A round of the daemon lasts from the first POST to the last run's
// finished_at (the test binary is the daemon: one clock), as a round of raw
// chromedp lasts until its last load returns; the polling that waits for
// the runs' ends is not counted, since it would add up to one polling
// interval to the daemon's round only (polled/raw is the ratio with it, as
// the records before 2026-11-29 measured). Where a run's time goes is reported
// too, as medians from its timeline: setup (started_at to its block's
// start: the job, the browser context), the block (the navigation and
// what follows it), and teardown (the block's end to finished_at: closing
// the browser context, the step log, the final record).

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/daemon"
	"github.com/abctl/abctl/daemon/daemontest"
	"github.com/abctl/abctl/internal/chromiumtest"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/engine/browser"
	enginepage "github.com/abctl/abctl/localrun/engine/page"
)

// fleetBenchRuns is the number of runs of one round; fleetBenchCapacity
// the concurrent runs of each endpoint.
const (
	fleetBenchRuns     = 24
	fleetBenchCapacity = 2
)

func BenchmarkFleet(b *testing.B) {
	needBrowser(b)
	origin := startSiteProcess(b)
	page := origin + testsite.PageForm
	browsers := []*chromiumtest.Browser{chromiumtest.Start(b), chromiumtest.Start(b), chromiumtest.Start(b)}
	for n := 1; n <= len(browsers); n++ {
		b.Run(fmt.Sprintf("endpoints=%d", n), func(b *testing.B) { benchFleet(b, browsers[:n], page) })
	}
}

func benchFleet(b *testing.B, browsers []*chromiumtest.Browser, page string) {
	var endpoints []browser.Endpoint
	for i, br := range browsers {
		endpoints = append(endpoints, browser.Endpoint{URL: br.URL(), Name: fmt.Sprintf("e%d", i+1), Capacity: fleetBenchCapacity})
	}
	concurrency := len(browsers) * fleetBenchCapacity
	e := newEngine(b, engine.Config{BrowserEndpoints: endpoints})
	// The daemon's default workers: the fleet's capacity.
	addr, _ := daemontest.Start(b, b.TempDir(), daemon.Config{APIKey: testKey, Executor: e})
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(testKey), client.WithMaxRetries(0))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	agent, err := c.Agents.Create(ctx, &client.AgentDefinition{Title: "Open a page", WorkflowDefinition: client.WorkflowDefinition{
		Blocks: client.Blocks{gotoBlock("open", page)},
	}}, nil)
	if err != nil {
		b.Fatal(err)
	}

	// daemonRound runs fleetBenchRuns runs at once; it returns the round's
	// wall time, each run's time to running and to its end, the CPU the
	// process used and the most heap in use while the runs went on.
	daemonRound := func() (wall, polled time.Duration, toRunning, toEnd []float64, ph phases, cpu time.Duration, heap uint64) {
		var peak uint64
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Go(func() {
			// runtime/metrics, not runtime.ReadMemStats: that stops the
			// world, and every 20 ms it took a sixth of the daemon's CPU
			// and delayed its goroutines, in the daemon's rounds only.
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				peak = max(peak, heapInUse())
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		})
		cpu0 := processCPU()
		t0 := time.Now()
		ids := make([]string, fleetBenchRuns)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Go(func() {
				r, err := c.Runs.StartAgent(ctx, &client.AgentRunRequest{AgentID: agent.WorkflowPermanentID})
				if err != nil {
					b.Error(err)
					return
				}
				ids[i] = r.RunID
			})
		}
		wg.Wait()
		var last time.Time
		runs := make([]*client.Run, 0, len(ids))
		for _, id := range ids {
			// Longer than waitRun's 2 minutes: on a busy machine the
			// last of 24 runs on 2 places can take that.
			wctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
			r, err := c.Runs.Wait(wctx, id, &client.WaitOptions{Interval: 100 * time.Millisecond, MaxInterval: time.Second})
			cancel()
			if err != nil || r.Status != client.RunStatusCompleted || r.StartedAt == nil || r.FinishedAt == nil {
				b.Fatalf("run %s: %v %v", id, r, err)
			}
			toRunning = append(toRunning, ms(r.StartedAt.Time.Sub(r.CreatedAt.Time)))
			toEnd = append(toEnd, ms(r.FinishedAt.Time.Sub(r.CreatedAt.Time)))
			if r.FinishedAt.Time.After(last) {
				last = r.FinishedAt.Time
			}
			runs = append(runs, r)
		}
		wall, polled = last.Sub(t0), time.Since(t0)
		cpu = processCPU() - cpu0
		close(stop)
		sampler.Wait()
		for _, r := range runs {
			ph.add(b, ctx, c, r)
		}
		return wall, polled, toRunning, toEnd, ph, cpu, peak
	}

	// rawRound loads the page fleetBenchRuns times with chromedp, with the
	// same concurrency on the same browsers, each in a new browser context.
	var allocs []context.Context
	for _, br := range browsers {
		actx, cancel := remote.NewAllocator(ctx, br.URL())
		b.Cleanup(cancel)
		bctx, bcancel := chromedp.NewContext(actx)
		b.Cleanup(bcancel)
		if _, err := chromedp.Run(bctx, chromedp.Evaluate[int]("1")); err != nil {
			b.Fatal(err)
		}
		allocs = append(allocs, bctx)
	}
	// Each load is at the viewport a run has (browser.DefaultViewportWidth
	// × Height, set as the engine sets it), not the headless window's
	// 800×600: a run's page is painted at that size. With shot, each load
	// is followed by the JPEG screenshot of the viewport that a run takes
	// after its block by contract (docs/blocks.md), at the engine's
	// quality: the peer that does the run's browser work.
	viewport := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: browser.DefaultViewportWidth, Height: browser.DefaultViewportHeight, DeviceScaleFactor: 1})
		return err
	})
	rawRound := func(shot bool) time.Duration {
		t0 := time.Now()
		jobs := make(chan int, fleetBenchRuns)
		for i := range fleetBenchRuns {
			jobs <- i
		}
		close(jobs)
		var wg sync.WaitGroup
		for w := range concurrency {
			wg.Go(func() {
				for range jobs {
					tab, cancel := chromedp.NewContext(allocs[w%len(allocs)], chromedp.WithNewBrowserContext())
					if err := chromedp.Do(tab, viewport); err != nil {
						b.Error(err)
					}
					if err := chromedp.Do(tab, chromedp.Navigate(page)); err != nil {
						b.Error(err)
					}
					if shot {
						q := int64(enginepage.DefaultJPEGQuality)
						if _, err := chromedp.Call(tab, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
							Format: cdppage.CaptureScreenshotFormatJpeg, Quality: &q, OptimizeForSpeed: new(true)}); err != nil {
							b.Error(err)
						}
					}
					cancel()
				}
			})
		}
		wg.Wait()
		return time.Since(t0)
	}

	daemonRound() // warm up: the connections, the page script
	rawRound(false)
	rawRound(true)
	var runsPerSec, polledPerSec, rawPerSec, rawShotPerSec, running, ends, cpuPerRun, heapPerRun []float64
	var all phases
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		heap0 := heapInUse()
		wall, polled, toRunning, toEnd, ph, cpu, peak := daemonRound()
		runsPerSec = append(runsPerSec, fleetBenchRuns/wall.Seconds())
		polledPerSec = append(polledPerSec, fleetBenchRuns/polled.Seconds())
		running = append(running, toRunning...)
		ends = append(ends, toEnd...)
		all.setup = append(all.setup, ph.setup...)
		all.block = append(all.block, ph.block...)
		all.teardown = append(all.teardown, ph.teardown...)
		cpuPerRun = append(cpuPerRun, ms(cpu)/fleetBenchRuns)
		if peak > heap0 {
			heapPerRun = append(heapPerRun, float64(peak-heap0)/float64(concurrency)/(1<<20))
		}
		rawPerSec = append(rawPerSec, fleetBenchRuns/rawRound(false).Seconds())
		rawShotPerSec = append(rawShotPerSec, fleetBenchRuns/rawRound(true).Seconds())
	}
	b.StopTimer()
	b.ReportMetric(median(runsPerSec), "runs/s")
	b.ReportMetric(median(rawPerSec), "raw-loads/s")
	b.ReportMetric(median(runsPerSec)/median(rawPerSec), "daemon/raw")
	b.ReportMetric(median(polledPerSec)/median(rawPerSec), "polled/raw")
	b.ReportMetric(median(rawShotPerSec), "raw-shot-loads/s")
	b.ReportMetric(median(runsPerSec)/median(rawShotPerSec), "daemon/raw-shot")
	b.ReportMetric(median(running), "p50-to-running-ms")
	b.ReportMetric(median(ends), "p50-to-end-ms")
	b.ReportMetric(median(all.setup), "p50-setup-ms")
	b.ReportMetric(median(all.block), "p50-block-ms")
	b.ReportMetric(median(all.teardown), "p50-teardown-ms")
	b.ReportMetric(median(cpuPerRun), "daemon-cpu-ms/run")
	if len(heapPerRun) > 0 {
		b.ReportMetric(median(heapPerRun), "heap-MiB/concurrent-run")
	}
}

// phases are where runs' time went, in milliseconds, from their timelines:
// setup (started_at to the start of the run's one block), the block, and
// teardown (the block's end to finished_at).
type phases struct{ setup, block, teardown []float64 }

// add reads the timeline of a run that ended and adds its phases.
func (ph *phases) add(b *testing.B, ctx context.Context, c *client.Client, r *client.Run) {
	tl, err := c.Runs.Timeline(ctx, r.RunID)
	if err != nil {
		b.Fatalf("timeline of run %s: %v", r.RunID, err)
	}
	if len(tl) != 1 || tl[0].Block == nil || tl[0].Block.Duration == nil {
		b.Fatalf("run %s: want one block that ended in its timeline, got %d entries", r.RunID, len(tl))
	}
	blk := tl[0].Block
	start := blk.CreatedAt.Time
	end := start.Add(time.Duration(*blk.Duration * float64(time.Second)))
	ph.setup = append(ph.setup, ms(start.Sub(r.StartedAt.Time)))
	ph.block = append(ph.block, ms(end.Sub(start)))
	ph.teardown = append(ph.teardown, ms(r.FinishedAt.Time.Sub(end)))
}

// heapInUse is the Go heap in use (runtime.MemStats.HeapInuse: objects
// and the unused part of their spans), read without stopping the world.
func heapInUse() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64() + sample[1].Value.Uint64()
}

// processCPU is the CPU time (user and system) this process used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
