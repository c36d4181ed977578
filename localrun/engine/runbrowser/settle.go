package runbrowser

// Settling a tab after actions, on events rather than fixed sleeps.
//
// A tabWatch follows a tab's DevTools events: the requests in flight
// (network.requestWillBeSent until loadingFinished or loadingFailed; web
// sockets and event streams excluded, as they never finish) and a pending
// navigation of the main frame (page.frameRequestedNavigation until the new
// document's DOMContentLoaded, or the frame stopping). settle waits until
// no navigation is pending and the network is quiet, then until the DOM has
// been quiet for a moment (page.WaitStable), and checks once more, since a
// script may start a request or a navigation in between (a form that
// posts with fetch, then moves to another page). A request that has made
// no progress for networkQuietAfter no longer counts (long polling,
// beacons), and settleCap bounds the whole wait. settleLoad is the first
// part alone, for a replay that waits for its elements itself.

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/localrun/engine/page"
)

// networkQuietAfter is how long the network must see no activity before
// requests still in flight are ignored.
const networkQuietAfter = 500 * time.Millisecond

// settleQuiet is how long the DOM must stay quiet after an action before
// the page is read; settleCap bounds the wait.
const (
	settleQuiet = 40 * time.Millisecond
	settleCap   = 2 * time.Second
)

// tabWatch follows the requests and navigations of one tab. Its handle
// method runs on chromedp's event goroutine: it only updates state under a
// short lock.
type tabWatch struct {
	mu       sync.Mutex
	main     cdp.FrameID
	inflight map[network.RequestID]bool
	last     time.Time // last network activity
	navSince time.Time // a navigation of the main frame is pending since then; zero when none
	changed  chan struct{}
}

func newTabWatch(tab context.Context) *tabWatch {
	w := &tabWatch{inflight: map[network.RequestID]bool{}, changed: make(chan struct{})}
	if err := chromedp.Listen(tab, w.handle); err != nil {
		return nil // a tab that is gone: settle falls back to the DOM alone
	}
	return w
}

func (w *tabWatch) handle(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Type == network.ResourceTypeWebSocket || e.Type == network.ResourceTypeEventSource {
			return
		}
		w.inflight[e.RequestID] = true
		w.last = now
	case *network.EventLoadingFinished:
		delete(w.inflight, e.RequestID)
		w.last = now
	case *network.EventLoadingFailed:
		delete(w.inflight, e.RequestID)
		w.last = now
	case *cdppage.EventFrameRequestedNavigation:
		if (w.main == "" || e.FrameID == w.main) && e.Disposition == cdppage.ClientNavigationDispositionCurrentTab {
			w.navSince = now
		}
	case *cdppage.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			w.main = e.Frame.ID
			if w.navSince.IsZero() {
				w.navSince = now // a navigation the browser started (a form post)
			}
		}
	case *cdppage.EventDomContentEventFired, *cdppage.EventLoadEventFired:
		w.navSince = time.Time{}
	case *cdppage.EventFrameStoppedLoading:
		if e.FrameID == w.main {
			w.navSince = time.Time{}
		}
	default:
		return
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// busy reports whether the tab is loading: a navigation pending, or
// requests in flight with recent activity. ch is closed at the next
// change.
func (w *tabWatch) busy(now time.Time) (bool, <-chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	nav := !w.navSince.IsZero() && now.Sub(w.navSince) < settleCap
	net := len(w.inflight) > 0 && now.Sub(w.last) < networkQuietAfter
	return nav || net, w.changed
}

// settle waits, bounded by settleCap, for the page of the tab to stop
// loading and its DOM to be quiet.
func settle(ctx context.Context, pg *page.Page, w *tabWatch) {
	ctx, cancel := context.WithTimeout(ctx, settleCap)
	defer cancel()
	for round := 0; round < 3; round++ {
		if !waitIdle(ctx, w) {
			return
		}
		pg.WaitStable(ctx, settleQuiet)
		if ctx.Err() != nil || w == nil {
			return
		}
		if busy, _ := w.busy(time.Now()); !busy {
			return
		}
	}
}

// settleLoad waits, bounded by settleCap, for the tab to stop loading (no
// navigation pending, the network quiet), without waiting for its DOM to be
// quiet: on a page that is idle it returns at once.
func settleLoad(ctx context.Context, w *tabWatch) {
	ctx, cancel := context.WithTimeout(ctx, settleCap)
	defer cancel()
	waitIdle(ctx, w)
}

// waitIdle waits while the tab is loading (tabWatch.busy); false when ctx
// ended first. A nil watch (a tab that was gone) is idle.
func waitIdle(ctx context.Context, w *tabWatch) bool {
	if w == nil {
		return true
	}
	for {
		busy, ch := w.busy(time.Now())
		if !busy {
			return true
		}
		t := time.NewTimer(100 * time.Millisecond) // also notices a request going quiet
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
}
