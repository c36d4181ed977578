package page

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserCtx is the browser shared by the tests of the package; nil when no
// Chromium was found.
var (
	browserCtx  context.Context
	chromiumErr string
)

// findChromium looks for a Chromium binary: $CHROME_PATH, then the usual
// names on $PATH.
func findChromium() string {
	if p := os.Getenv("CHROME_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	path := findChromium()
	if path == "" {
		chromiumErr = "no Chromium binary found (set CHROME_PATH, or install chromium)"
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "page-test-profile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 720),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	if err := chromedp.Do(bctx); err != nil {
		fmt.Fprintln(os.Stderr, "start chromium:", err)
		return 1
	}
	browserCtx = bctx
	code := m.Run()
	cctx, cancel := context.WithTimeout(bctx, 5*time.Second)
	_ = chromedp.Cancel(cctx)
	cancel()
	return code
}

// newTab opens a tab for one test (closed at its end) with a 1280x720
// viewport, and returns it with a Page.
func newTab(tb testing.TB) (context.Context, *Page) {
	tb.Helper()
	if browserCtx == nil {
		tb.Skip(chromiumErr)
	}
	tab, cancel := chromedp.NewContext(browserCtx)
	tb.Cleanup(cancel)
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 720)); err != nil {
		tb.Fatalf("open tab: %v", err)
	}
	return tab, New(tab)
}

// hangGuard bounds one step of a test: long enough that no slow machine
// reaches it, it only turns a hang into a failure.
const hangGuard = 2 * time.Minute

// tctx is the context of one step of a test: a guard against a hang
// (hangGuard), never a deadline the step is expected to meet. The step's
// own waits (action wait, load grace, option wait, ...) are the engine's.
func tctx(tb testing.TB, tab context.Context) context.Context {
	ctx, cancel := context.WithTimeout(tab, hangGuard)
	tb.Cleanup(cancel)
	return ctx
}

// expiringCtx is the context of a step whose deadline d the test means to
// run out (a page slower than d, an element that never appears): the
// step's result is what it does when its deadline passes.
func expiringCtx(tb testing.TB, tab context.Context, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(tab, d)
	tb.Cleanup(cancel)
	return ctx
}
