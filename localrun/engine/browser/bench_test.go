package browser

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// formBody is a small form page (about 30 elements, 12 interactive), like
// the form.html of the performance baseline.
const formBody = `<h1>Sign up</h1><form id="f" onsubmit="return false">
<label>Name <input id="name" name="name"></label>
<label>Email <input id="email" type="email" name="email"></label>
<label>Password <input id="pw" type="password" name="pw"></label>
<label>Country <select id="country"><option>DE</option><option>FR</option><option>US</option></select></label>
<label><input type="checkbox" id="terms"> I agree</label>
<label><input type="radio" name="plan" value="a"> A</label><label><input type="radio" name="plan" value="b"> B</label>
<textarea id="note"></textarea>
<button id="submit" type="submit">Submit</button> <button type="reset">Reset</button>
</form><p><a href="#help">Help</a> <a href="#terms">Terms</a></p>`

// durations collects timings and reports their median.
type durations []time.Duration

func (d durations) median() time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// rawNewContext is the raw chromedp way, on the pool's own browser (same
// flags, same process): a tab in a new browser context, then navigate.
func rawNewContext(b *testing.B, p *Pool, url string) (context.Context, context.CancelFunc) {
	inst, err := p.acquireBrowser(context.Background(), "")
	if err != nil {
		b.Fatal(err)
	}
	p.releaseBrowser(inst)
	ctx, cancel := chromedp.NewContext(inst.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		b.Fatal(err)
	}
	return ctx, cancel
}

// poolAcquire is Acquire + navigate on the pool.
func poolAcquire(b *testing.B, p *Pool, url string) *Context {
	s, err := p.Acquire(context.Background(), ContextOptions{RunID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := chromedp.Do(s.Tab(), chromedp.Navigate(url)); err != nil {
		b.Fatal(err)
	}
	return s
}

// settle lets the browser finish tearing down the last context (its renderer
// exits in the background) before the next timed iteration, for both sides.
func settle() { time.Sleep(settleTime) }

var settleTime = 150 * time.Millisecond

func warmUp(b *testing.B, p *Pool, url string) {
	for i := 0; i < 3; i++ {
		poolAcquire(b, p, url).Close(context.Background())
		_, cancel := rawNewContext(b, p, url)
		cancel()
	}
}

// BenchmarkAcquireNavigate: Acquire (new browser context + tab + viewport +
// download behaviour) and navigate a small local page. Close is not timed.
func BenchmarkAcquireNavigate(b *testing.B) {
	p := needBrowser(b)
	url := newSite(b).URL + "/form"
	warmUp(b, p, url)
	var d durations
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s := poolAcquire(b, p, url)
		d = append(d, time.Since(start))
		b.StopTimer()
		s.Close(context.Background())
		settle()
		b.StartTimer()
	}
	b.ReportMetric(ms(d.median()), "median-ms")
}

// BenchmarkRawChromedp: chromedp.NewContext(WithNewBrowserContext) + Navigate
// of the same page on the same browser. Cancel is not timed.
func BenchmarkRawChromedp(b *testing.B) {
	p := needBrowser(b)
	url := newSite(b).URL + "/form"
	warmUp(b, p, url)
	var d durations
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		_, cancel := rawNewContext(b, p, url)
		d = append(d, time.Since(start))
		b.StopTimer()
		cancel()
		settle()
		b.StartTimer()
	}
	b.ReportMetric(ms(d.median()), "median-ms")
}

// BenchmarkAcquireVsRaw alternates the two, so that both see the same load
// of this shared machine, and reports both medians and their ratio.
func BenchmarkAcquireVsRaw(b *testing.B) {
	p := needBrowser(b)
	url := newSite(b).URL + "/form"
	warmUp(b, p, url)
	var pool, raw durations
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s := poolAcquire(b, p, url)
		pool = append(pool, time.Since(start))
		s.Close(context.Background())

		start = time.Now()
		_, cancel := rawNewContext(b, p, url)
		raw = append(raw, time.Since(start))
		cancel()
	}
	b.ReportMetric(ms(pool.median()), "pool-median-ms")
	b.ReportMetric(ms(raw.median()), "raw-median-ms")
	b.ReportMetric(float64(pool.median())/float64(raw.median()), "pool/raw")
}

// BenchmarkClose: Context.Close (dispose of the browser context).
func BenchmarkClose(b *testing.B) {
	p := needBrowser(b)
	url := newSite(b).URL + "/form"
	warmUp(b, p, url)
	var d durations
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := poolAcquire(b, p, url)
		b.StartTimer()
		start := time.Now()
		if err := s.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
		d = append(d, time.Since(start))
	}
	b.ReportMetric(ms(d.median()), "median-ms")
}

// BenchmarkCloseRaw: the cancel of a raw chromedp context (detach, close the
// tab, wait until it is gone, dispose of the browser context).
func BenchmarkCloseRaw(b *testing.B) {
	p := needBrowser(b)
	url := newSite(b).URL + "/form"
	warmUp(b, p, url)
	var d durations
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, cancel := rawNewContext(b, p, url)
		b.StartTimer()
		start := time.Now()
		cancel()
		d = append(d, time.Since(start))
	}
	b.ReportMetric(ms(d.median()), "median-ms")
}
