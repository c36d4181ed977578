package localrun_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/localrun"
	"github.com/abctl/abctl/localrun/internal/testsite"
)

// cpuNow is the CPU time (user + system) this process has used: the
// engine's own share of a run, without Chromium's, which runs in other
// processes.
func cpuNow(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sevenActions is the reference run of the performance notes: open a page,
// then six actions on it, a screenshot after each.
var sevenActionSelectors = []string{"#text", "#email", "#password", "#number", "#tel", "#agree"}

// BenchmarkEngineRunCPU runs an agent of 7 model-free blocks (goto_url and
// six clicks, a screenshot after each, no recording) through the engine,
// and, in the same run, the same page, clicks and screenshots with raw
// chromedp in a new browser context. It reports the CPU this process used
// per run (the engine's own cost; Chromium's is elsewhere) and the wall
// time, as medians.
func BenchmarkEngineRunCPU(b *testing.B) {
	needBrowser(b)
	site := testsite.Start(b)
	e := newEngine(b, localrun.Config{})
	def := client.WorkflowDefinition{Blocks: client.Blocks{gotoBlock("open", site.URL(testsite.PageForm))}}
	for i, sel := range sevenActionSelectors {
		def.Blocks = append(def.Blocks, click("click_"+string(rune('a'+i)), sel))
	}
	ctx := context.Background()

	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.Flag("headless", "new"), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 720))
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if _, err := chromedp.Run(browserCtx, chromedp.Evaluate[int]("1")); err != nil {
		b.Fatal(err)
	}
	raw := func() error {
		tab, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(site.URL(testsite.PageForm))); err != nil {
			return err
		}
		if _, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err != nil {
			return err
		}
		for _, sel := range sevenActionSelectors {
			if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(sel))); err != nil {
				return err
			}
			if _, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err != nil {
				return err
			}
		}
		return nil
	}
	// Warm both up once.
	if res := e.Execute(ctx, job(b, def, nil), &progress{}); res.Status != client.RunStatusCompleted {
		b.Fatalf("warm-up run: %s %s", res.Status, res.FailureReason)
	}
	if err := raw(); err != nil {
		b.Fatal(err)
	}

	var engineCPU, engineWall, rawCPU, rawWall []time.Duration
	b.ResetTimer()
	for range b.N {
		c0, w0 := cpuNow(b), time.Now()
		res := e.Execute(ctx, job(b, def, nil), &progress{})
		engineCPU, engineWall = append(engineCPU, cpuNow(b)-c0), append(engineWall, time.Since(w0))
		if res.Status != client.RunStatusCompleted {
			b.Fatalf("run: %s %s", res.Status, res.FailureReason)
		}
		c0, w0 = cpuNow(b), time.Now()
		if err := raw(); err != nil {
			b.Fatal(err)
		}
		rawCPU, rawWall = append(rawCPU, cpuNow(b)-c0), append(rawWall, time.Since(w0))
	}
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(engineCPU), "engine-cpu-ms")
	b.ReportMetric(median(rawCPU), "raw-cpu-ms")
	b.ReportMetric(median(engineWall), "engine-wall-ms")
	b.ReportMetric(median(rawWall), "raw-wall-ms")
}
