package page

import (
	"context"
	_ "embed"
	"slices"
	"testing"
	"time"

	"github.com/abctl/abctl/internal/testsite"
	"github.com/chromedp/chromedp"
)

//go:embed testdata/collect.js
var rawCollector string

// benchTab opens a tab on a page of the test site for a benchmark.
func benchTab(b *testing.B, path string) (context.Context, *Page) {
	b.Helper()
	site := testsite.Start(b)
	tab, p := newTab(b)
	ctx, cancel := context.WithTimeout(tab, 15*time.Second)
	defer cancel()
	if res, err := p.GoTo(ctx, site.URL(path)); err != nil || !res.OK {
		b.Fatalf("go to %s: %+v %v", path, res, err)
	}
	// Warm up: install page.js and let V8 compile it, as the raw ceiling's
	// script is compiled by its own first run.
	for range 3 {
		if _, err := p.Observe(ctx, ObserveOptions{}); err != nil {
			b.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](rawCollector)); err != nil {
			b.Fatal(err)
		}
	}
	return tab, p
}

// BenchmarkObserveBig observes the 2,000-element page; raw is the ceiling:
// chromedp.Evaluate of a plain collector on the same page in the same run.
func BenchmarkObserveBig(b *testing.B) {
	tab, p := benchTab(b, testsite.PageBig)
	b.Run("page", func(b *testing.B) {
		var obs *Observation
		for b.Loop() {
			var err error
			obs, err = p.Observe(tab, ObserveOptions{})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(obs.Rendered)), "rendered-chars")
		b.ReportMetric(float64(len(obs.Elements)), "elements")
		b.ReportMetric(float64(len(obs.Text)), "text-chars")
	})
	b.Run("page-notext", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.Observe(tab, ObserveOptions{NoText: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("page-screenshot", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.Observe(tab, ObserveOptions{Screenshot: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		var out string
		for b.Loop() {
			var err error
			out, err = chromedp.Run(tab, chromedp.Evaluate[string](rawCollector))
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(out)), "json-bytes")
	})
	// paired alternates the two in one loop and reports their medians, so
	// that load on a shared machine hits both alike.
	b.Run("paired", func(b *testing.B) {
		paired(b, func() error {
			_, err := p.Observe(tab, ObserveOptions{})
			return err
		}, func() error {
			_, err := chromedp.Run(tab, chromedp.Evaluate[string](rawCollector))
			return err
		})
	})
}

// paired runs page and raw alternately and reports the median of each in
// milliseconds, and their ratio.
func paired(b *testing.B, page, raw func() error) {
	var tp, tr []float64
	for b.Loop() {
		t0 := time.Now()
		if err := page(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := raw(); err != nil {
			b.Fatal(err)
		}
		tp = append(tp, float64(t1.Sub(t0).Microseconds())/1000)
		tr = append(tr, float64(time.Since(t1).Microseconds())/1000)
	}
	mp, mr := median(tp), median(tr)
	b.ReportMetric(mp, "page-ms")
	b.ReportMetric(mr, "raw-ms")
	if mr > 0 {
		b.ReportMetric(mp/mr, "page/raw")
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}

// BenchmarkClick clicks the same button with Page.Click (scroll check,
// hit test, trusted mouse events, navigation check) and, as the ceiling,
// with chromedp.Click on its CSS selector.
func BenchmarkClick(b *testing.B) {
	tab, p := benchTab(b, testsite.PageBig)
	id, err := p.Resolve(tab, "#top-button")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("page", func(b *testing.B) {
		for b.Loop() {
			res, err := p.Click(tab, id)
			if err != nil || !res.OK {
				b.Fatalf("%+v %v", res, err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS("#top-button"))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("paired", func(b *testing.B) {
		paired(b, func() error {
			res, err := p.Click(tab, id)
			if err == nil && !res.OK {
				b.Fatalf("%+v", res)
			}
			return err
		}, func() error {
			return chromedp.Do(tab, chromedp.Click(chromedp.CSS("#top-button")))
		})
	})
}
