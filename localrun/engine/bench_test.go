package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/internal/testsite"
	"github.com/abctl/abctl/localrun/engine"
	"github.com/abctl/abctl/localrun/executor"
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

// siteProcessEnv, set in the environment of this test binary, makes
// TestSiteProcess serve the test site instead of testing it. The CPU
// benchmark starts the site so, in a child process, to keep the cost of
// serving the pages out of the CPU it measures.
const siteProcessEnv = "ABCTL_TESTSITE_PROCESS"

// siteProcess is the test site served by a child process.
type siteProcess struct {
	origin string // http://127.0.0.1:PORT
	pid    int
}

// cpu returns the CPU time the site process has used, from the scheduler's
// per-thread counters (nanoseconds; /proc/PID/stat counts in ticks of 10
// ms, too coarse for one run), or -1 where /proc does not have them.
func (sp *siteProcess) cpu() time.Duration {
	files, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", sp.pid))
	if err != nil || len(files) == 0 {
		return -1
	}
	var total time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		var ns int64
		if _, err := fmt.Sscan(string(b), &ns); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// startSiteProcess starts this test binary as the test site's server and
// returns the site's main origin (see startSite).
func startSiteProcess(tb testing.TB) string {
	tb.Helper()
	return startSite(tb).origin
}

// startSite starts this test binary as the test site's server. The child
// serves until its standard input closes, which the cleanup (or this
// process's end) does.
func startSite(tb testing.TB) *siteProcess {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSiteProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), siteProcessEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start the test site process: %v", err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	origin := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		origin <- strings.TrimSpace(line)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case o := <-origin:
		if !strings.HasPrefix(o, "http://127.0.0.1:") {
			tb.Fatalf("the test site process announced %q, not its address", o)
		}
		return &siteProcess{origin: o, pid: cmd.Process.Pid}
	case <-time.After(30 * time.Second):
		tb.Fatal("the test site process did not announce its address within 30 s")
	}
	return nil
}

// TestSiteProcess checks the site process of the CPU benchmark: it serves
// the pages the benchmark uses, from another process. Run with
// siteProcessEnv set, it is that process.
func TestSiteProcess(t *testing.T) {
	if os.Getenv(siteProcessEnv) != "" {
		site := testsite.Start(t)
		fmt.Println(site.URL(""))
		io.Copy(io.Discard, os.Stdin) // until the parent is done
		return
	}
	site := startSite(t)
	resp, err := http.Get(site.origin + testsite.PageForm)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d, %v", testsite.PageForm, resp.StatusCode, err)
	}
	if site.cpu() == 0 {
		t.Error("the site process served a page and shows no CPU time")
	}
	for _, sel := range sevenActionSelectors {
		if id := strings.TrimPrefix(sel, "#"); !strings.Contains(string(body), `id="`+id+`"`) {
			t.Errorf("the form page has no element %s", sel)
		}
	}
}

// rawBrowser starts the peer of the benchmarks: Chromium with the engine's
// flags, driven by raw chromedp; it ends with the benchmark.
func rawBrowser(tb testing.TB) context.Context {
	tb.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.Flag("headless", "new"), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 720))
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	tb.Cleanup(func() { cancelBrowser(); cancelAlloc() })
	if _, err := chromedp.Run(browserCtx, chromedp.Evaluate[int]("1")); err != nil {
		tb.Fatal(err)
	}
	return browserCtx
}

// sevenActions is the reference run of the performance notes: open a page,
// then six actions on it, a screenshot after each.
var sevenActionSelectors = []string{"#text", "#email", "#password", "#number", "#tel", "#agree"}

// BenchmarkEngineRunCPU runs an agent of 7 model-free blocks (goto_url and
// six clicks, a screenshot after each, no recording) through the engine,
// and, in the same run, the same page, clicks and screenshots with raw
// chromedp in a new browser context. It reports the CPU this process used
// per run (the engine's own cost: Chromium's is in its processes, and the
// test site is served by another process, startSite) and the wall
// time, as medians.
func BenchmarkEngineRunCPU(b *testing.B) {
	needBrowser(b)
	site := startSite(b)
	formURL := site.origin + testsite.PageForm
	e := newEngine(b, engine.Config{})
	def := client.WorkflowDefinition{Blocks: client.Blocks{gotoBlock("open", formURL)}}
	for i, sel := range sevenActionSelectors {
		def.Blocks = append(def.Blocks, click("click_"+string(rune('a'+i)), sel))
	}
	// Each side runs under a profiler label, which the goroutines it
	// starts (the browsers' readers and event loops) inherit, so that a CPU
	// profile separates them: pprof -tagfocus side=engine.
	engineCtx := pprof.WithLabels(context.Background(), pprof.Labels("side", "engine"))
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("side", "raw"))
	onSide := func(ctx context.Context, f func()) {
		defer pprof.SetGoroutineLabels(context.Background())
		pprof.SetGoroutineLabels(ctx)
		f()
	}
	var cancelAlloc, cancelBrowser context.CancelFunc
	var browserCtx context.Context
	onSide(ctx, func() {
		var alloc context.Context
		alloc, cancelAlloc = chromedp.NewExecAllocator(ctx,
			chromedp.Flag("headless", "new"), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("no-first-run", true),
			chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 720))
		browserCtx, cancelBrowser = chromedp.NewContext(alloc)
	})
	defer cancelAlloc()
	defer cancelBrowser()
	var err error
	onSide(ctx, func() { _, err = chromedp.Run(browserCtx, chromedp.Evaluate[int]("1")) })
	if err != nil {
		b.Fatal(err)
	}
	raw := func() error {
		tab, cancel := chromedp.NewContext(browserCtx, chromedp.WithNewBrowserContext())
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(formURL)); err != nil {
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
	// The job (and its directory) is made before the measured interval.
	engineRun := func(j *executor.Job) (res executor.Result) {
		onSide(engineCtx, func() { res = e.Execute(engineCtx, j, &progress{}) })
		return res
	}
	// Warm both up once (the engine starts its browser on its first run).
	if res := engineRun(job(b, def, nil)); res.Status != client.RunStatusCompleted {
		b.Fatalf("warm-up run: %s %s", res.Status, res.FailureReason)
	}
	if onSide(ctx, func() { err = raw() }); err != nil {
		b.Fatal(err)
	}

	var engineCPU, engineWall, rawCPU, rawWall, siteCPU []time.Duration
	b.ResetTimer()
	for range b.N {
		j := job(b, def, nil)
		s0, c0, w0 := site.cpu(), cpuNow(b), time.Now()
		res := engineRun(j)
		engineCPU, engineWall = append(engineCPU, cpuNow(b)-c0), append(engineWall, time.Since(w0))
		siteCPU = append(siteCPU, site.cpu()-s0)
		if res.Status != client.RunStatusCompleted {
			b.Fatalf("run: %s %s", res.Status, res.FailureReason)
		}
		c0, w0 = cpuNow(b), time.Now()
		if onSide(ctx, func() { err = raw() }); err != nil {
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
	// What serving the pages of one engine run costs the site process: the
	// share the measurement included when the site ran in this process.
	if site.cpu() >= 0 {
		b.ReportMetric(median(siteCPU), "site-cpu-ms")
	}
	b.ReportMetric(median(rawWall), "raw-wall-ms")
}
