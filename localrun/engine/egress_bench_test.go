package engine_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
)

// BenchmarkEgress measures what the egress policy costs a run: the same
// model-free agent (five pages of the test site, a screenshot after each,
// no recording) through an engine without a policy and through one whose
// every page request goes through the run's egress proxy, and raw
// chromedp loading the same pages in a new browser context, the peer.
// Each iteration runs the three in turn; it reports their wall times and
// the engines' CPU in this process (the proxy runs in it) as medians.
func BenchmarkEgress(b *testing.B) {
	needBrowser(b)
	site := startSite(b)
	pages := []string{testsite.PageForm, testsite.PageShopSearch, testsite.PageFrames, testsite.PageIndex, testsite.PageDownload}
	def := client.WorkflowDefinition{}
	for i, p := range pages {
		def.Blocks = append(def.Blocks, gotoBlock(string(rune('a'+i)), site.origin+p))
	}
	plain := newEngine(b, engine.Config{})
	policy := egress.New(egress.Config{Shared: func() bool { return false }})
	guarded := newEngine(b, engine.Config{Egress: policy})

	browserCtx := rawBrowser(b)
	raw := func() error {
		tab, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
		defer cancel()
		for _, p := range pages {
			if err := chromedp.Do(tab, chromedp.Navigate(site.origin+p)); err != nil {
				return err
			}
			if _, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err != nil {
				return err
			}
		}
		return nil
	}
	run := func(e *engine.Engine) (wall, cpu time.Duration) {
		j := job(b, def, nil)
		c0, w0 := cpuNow(b), time.Now()
		res := e.Execute(context.Background(), j, &progress{})
		wall, cpu = time.Since(w0), cpuNow(b)-c0
		if res.Status != client.RunStatusCompleted {
			b.Fatalf("run: %s %s", res.Status, res.FailureReason)
		}
		return wall, cpu
	}
	// Warm up: each engine starts its browser with its first run.
	run(plain)
	run(guarded)
	if err := raw(); err != nil {
		b.Fatal(err)
	}
	var plainWall, plainCPU, guardedWall, guardedCPU, rawWall []time.Duration
	b.ResetTimer()
	for range b.N {
		w, c := run(plain)
		plainWall, plainCPU = append(plainWall, w), append(plainCPU, c)
		w, c = run(guarded)
		guardedWall, guardedCPU = append(guardedWall, w), append(guardedCPU, c)
		w0 := time.Now()
		if err := raw(); err != nil {
			b.Fatal(err)
		}
		rawWall = append(rawWall, time.Since(w0))
	}
	median := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(plainWall), "no-policy-ms")
	b.ReportMetric(median(guardedWall), "proxied-ms")
	b.ReportMetric(median(rawWall), "raw-ms")
	b.ReportMetric(median(guardedWall)/median(plainWall), "proxied/no-policy")
	b.ReportMetric(median(guardedWall)/median(rawWall), "proxied/raw")
	b.ReportMetric(median(plainCPU), "no-policy-cpu-ms")
	b.ReportMetric(median(guardedCPU), "proxied-cpu-ms")
}
