package page

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// navTracker follows the main frame of a tab through its events. Its handle
// method runs on chromedp's reader goroutine, so it only updates counters
// under a short lock and wakes waiters.
type navTracker struct {
	onNewDoc func()

	mu         sync.Mutex
	main       cdp.FrameID
	s          navSnap
	status     map[cdp.LoaderID]string
	egress     map[cdp.LoaderID]string // the EgressHeader of the document's response
	wake       chan struct{}
	statusKeys []cdp.LoaderID
}

// navSnap is a copy of the tracker's counters.
type navSnap struct {
	url         string
	requested   uint64 // renderer-initiated navigations of the main frame in this tab
	reqURL      string
	stopAtReq   uint64 // stopped when the last navigation was requested
	committed   uint64 // new documents committed in the main frame
	commitType  page.NavigationType
	loader      cdp.LoaderID // loader of the last committed document
	sameDoc     uint64       // same-document navigations (pushState, fragments)
	started     uint64       // main frame started loading
	stopped     uint64       // main frame stopped loading
	stopAtStart uint64       // stopped when the main frame last started loading
	dcl, load   cdp.LoaderID // last loaders that fired DOMContentLoaded and load
}

// loaded reports whether the last committed document reached
// DOMContentLoaded (a page restored from the back/forward cache fires none).
func (s navSnap) loaded() bool {
	return s.loader != "" && (s.dcl == s.loader || s.load == s.loader) || s.commitType == page.NavigationTypeBackForwardCacheRestore
}

func newNavTracker(onNewDoc func()) *navTracker {
	return &navTracker{onNewDoc: onNewDoc, wake: make(chan struct{}), status: map[cdp.LoaderID]string{}, egress: map[cdp.LoaderID]string{}}
}

func (n *navTracker) setMain(id cdp.FrameID) {
	n.mu.Lock()
	n.main = id
	n.mu.Unlock()
}

func (n *navTracker) handle(ev any) {
	n.mu.Lock()
	changed := true
	newDoc := false
	switch e := ev.(type) {
	case *page.EventFrameRequestedNavigation:
		if e.FrameID == n.main && e.Disposition == page.ClientNavigationDispositionCurrentTab {
			n.s.requested++
			n.s.reqURL = e.URL
			n.s.stopAtReq = n.s.stopped
		} else {
			changed = false
		}
	case *page.EventFrameNavigated:
		if e.Frame != nil && e.Frame.ParentID == "" {
			n.main = e.Frame.ID
			n.s.committed++
			n.s.commitType = e.Type
			n.s.loader = e.Frame.LoaderID
			n.s.url = e.Frame.URL + e.Frame.URLFragment
			newDoc = true
		} else {
			changed = false
		}
	case *page.EventNavigatedWithinDocument:
		if e.FrameID == n.main {
			n.s.sameDoc++
			n.s.url = e.URL
		} else {
			changed = false
		}
	case *page.EventFrameStartedLoading:
		if e.FrameID == n.main {
			n.s.started++
			n.s.stopAtStart = n.s.stopped
		} else {
			changed = false
		}
	case *page.EventFrameStoppedLoading:
		if e.FrameID == n.main {
			n.s.stopped++
		} else {
			changed = false
		}
	case *page.EventLifecycleEvent:
		switch {
		case e.FrameID != n.main:
			changed = false
		case e.Name == "DOMContentLoaded":
			n.s.dcl = e.LoaderID
		case e.Name == "load":
			n.s.load = e.LoaderID
		default:
			changed = false
		}
	case *network.EventResponseReceived:
		if e.Type == network.ResourceTypeDocument && e.FrameID == n.main && e.Response != nil {
			if len(n.statusKeys) >= 16 {
				delete(n.status, n.statusKeys[0])
				delete(n.egress, n.statusKeys[0])
				n.statusKeys = n.statusKeys[1:]
			}
			n.status[e.LoaderID] = strings.TrimSpace(strconv.FormatInt(e.Response.Status, 10) + " " + e.Response.StatusText)
			for k, v := range e.Response.Headers {
				if strings.EqualFold(k, EgressHeader) {
					n.egress[e.LoaderID], _ = v.(string)
				}
			}
			n.statusKeys = append(n.statusKeys, e.LoaderID)
		}
		changed = false
	default:
		changed = false
	}
	if changed {
		close(n.wake)
		n.wake = make(chan struct{})
	}
	n.mu.Unlock()
	if newDoc && n.onNewDoc != nil {
		n.onNewDoc()
	}
}

// changed returns a channel closed at the tracker's next change.
func (n *navTracker) changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.wake
}

func (n *navTracker) snap() navSnap {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.s
}

func (n *navTracker) statusOf(l cdp.LoaderID) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.status[l]
}

func (n *navTracker) egressOf(l cdp.LoaderID) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.egress[l]
}

// EgressHeader is the response header by which a run's egress proxy marks
// the answers it made itself (package internal/egress): "refused" on a
// refusal's page. Result.Egress carries it for the document.
const EgressHeader = "X-Abctl-Egress"

// wait returns the first snapshot for which cond holds, or the last one and
// the context's error.
func (n *navTracker) wait(ctx context.Context, cond func(navSnap) bool) (navSnap, error) {
	for {
		n.mu.Lock()
		s, w := n.s, n.wake
		n.mu.Unlock()
		if cond(s) {
			return s, nil
		}
		select {
		case <-w:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// URL returns the main frame's address (location.href, read in the page's
// own world).
func (p *Page) URL(ctx context.Context) (string, error) {
	tctx, cancel := derive(p.tab, ctx, 0)
	defer cancel()
	uctx, cancelU := within(tctx, 3*time.Second)
	defer cancelU()
	res, err := chromedp.Call(uctx, runtime.Evaluate, runtime.EvaluateParams{Expression: "location.href", ReturnByValue: new(true)})
	if err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil || res.Result == nil {
		return "", fmt.Errorf("location.href could not be read")
	}
	var s string
	if err := jsonUnmarshal(res.Result.Value, &s); err != nil {
		return "", err
	}
	return s, nil
}

// flush makes one round trip to the renderer, so that the events it sent
// before it handled an input event have arrived, and returns location.href.
func flush(ctx context.Context) string { return evalString(ctx, "location.href") }

// evalString evaluates a JavaScript expression of the page's main world
// that gives a string, within at most two seconds; "" when it fails.
func evalString(ctx context.Context, expr string) string {
	ectx, cancel := within(ctx, 2*time.Second)
	defer cancel()
	res, err := chromedp.Call(ectx, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true)})
	if err != nil || res.Result == nil {
		return ""
	}
	var s string
	_ = jsonUnmarshal(res.Result.Value, &s)
	return s
}

// settle finishes an input action: when it started a navigation of the main
// frame, it waits (bounded) until the new document is loaded or the
// navigation ends otherwise, and it fills Navigated and URL.
//
// res.URL, when set, is a location.href read after the input; it stands in
// for the round trip that flush makes otherwise.
func (n *navTracker) settle(ctx context.Context, before navSnap, res *Result) {
	href := res.URL
	if href == "" {
		href = flush(ctx)
	}
	s := n.snap()
	if s.requested > before.requested || s.committed > before.committed {
		wctx, cancel := within(ctx, navWait)
		var err error
		s, err = n.wait(wctx, func(s navSnap) bool {
			if s.committed > before.committed {
				return s.loaded()
			}
			// Stopped without a new document: a download, a 204, a
			// navigation the page cancelled.
			return s.stopped > s.stopAtReq
		})
		cancel()
		if err != nil && s.committed == before.committed {
			addDetail(res, "a navigation started and had not finished")
		}
	}
	res.Navigated = s.committed > before.committed
	switch {
	case res.Navigated || s.sameDoc > before.sameDoc:
		res.URL = s.url
	case href != "":
		res.URL = href
	default:
		res.URL = s.url
	}
}

func addDetail(r *Result, s string) {
	if r.Detail == "" {
		r.Detail = s
	} else {
		r.Detail += "; " + s
	}
}

// NormalizeURL accepts what a model may write ("example.com/x") and
// returns the absolute URL GoTo loads.
func NormalizeURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("empty URL")
	}
	if !strings.Contains(raw, "://") && !strings.HasPrefix(raw, "about:") && !strings.HasPrefix(raw, "data:") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "http", "https", "file", "about", "data":
	default:
		return "", fmt.Errorf("unsupported scheme %q", u.Scheme)
	}
	if (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return "", errors.New("no host")
	}
	return u.String(), nil
}

// loadGrace is how long GoTo waits for the load event after
// DOMContentLoaded before it accepts an interactive document.
const loadGrace = 5 * time.Second

// GoTo navigates the tab to a URL and waits for the document: until the load
// event, or, when load does not come, until the document is interactive. It
// uses ctx's deadline (DefaultTimeout without one). A URL that cannot be
// loaded gives a failed Result ("could not load <url>: net::ERR_...") and an
// error wrapping ErrNavigation. An HTTP error status still loads a page; it
// is named in Detail.
func (p *Page) GoTo(ctx context.Context, rawURL string) (Result, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	u, err := NormalizeURL(rawURL)
	if err != nil {
		r := Result{Reason: fmt.Sprintf("could not load %s: %v", rawURL, err)}
		return r, fmt.Errorf("%w: %s", ErrNavigation, r.Reason)
	}
	before := p.nav.snap()
	nav, err := chromedp.Call(ctx, page.Navigate, page.NavigateParams{URL: u})
	if err != nil {
		why := err.Error()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why = "timed out"
		}
		r := Result{Reason: fmt.Sprintf("could not load %s: %s", u, why)}
		return r, fmt.Errorf("%w: %s", ErrNavigation, r.Reason)
	}
	if nav.ErrorText != "" {
		r := Result{Reason: fmt.Sprintf("could not load %s: %s", u, nav.ErrorText), URL: u}
		if nav.IsDownload {
			r.Reason += " (the URL started a download)"
		} else if nav.ErrorText != "net::ERR_ABORTED" {
			// Chromium answers Page.navigate before it commits its error
			// page (with the failed navigation's loader, often in a
			// process of its own); until then the tab has no active page
			// and the next observation fails ("Not attached to an active
			// page"). Wait for that commit and its load, or for the main
			// frame to stop loading without it, bounded only by ctx: on a
			// busy machine the commit can take seconds. ERR_ABORTED (a
			// 204, a navigation the page cancelled) and downloads commit
			// nothing.
			_, _ = p.nav.wait(ctx, func(s navSnap) bool {
				if s.committed > before.committed && s.loader == nav.LoaderID {
					return s.loaded()
				}
				return s.started > before.started && s.stopped > s.stopAtStart
			})
		}
		r.Navigated = p.nav.snap().committed > before.committed
		return r, fmt.Errorf("%w: %s", ErrNavigation, r.Reason)
	}
	if nav.LoaderID == "" {
		// Same document (a fragment); nothing to load.
		res := Result{OK: true}
		p.nav.settle(ctx, before, &res)
		return res, nil
	}
	return p.nav.waitDocument(ctx, before, nav.LoaderID, u)
}

// waitDocument waits for the document of loader (or of any new commit when
// loader is empty) after a navigation the Page started.
func (n *navTracker) waitDocument(ctx context.Context, before navSnap, loader cdp.LoaderID, what string) (Result, error) {
	s, err := n.wait(ctx, func(s navSnap) bool {
		if s.committed == before.committed {
			return loader == "" && s.sameDoc > before.sameDoc
		}
		if loader != "" && s.loader != loader {
			return false
		}
		return s.loaded()
	})
	res := Result{OK: true, Navigated: s.committed > before.committed, URL: s.url}
	if err != nil {
		if ctx.Err() != nil && s.committed > before.committed {
			// The deadline passed before DOMContentLoaded; accept a
			// document that is interactive anyway.
			rs := evalString(context.WithoutCancel(ctx), "document.readyState")
			if rs == "interactive" || rs == "complete" {
				res.Detail = "the page did not finish loading in time; it is " + rs
				return res, nil
			}
		}
		res.OK = false
		res.Reason = fmt.Sprintf("could not load %s: timed out", what)
		return res, fmt.Errorf("%w: %s", ErrNavigation, res.Reason)
	}
	if s.loader != "" && s.load != s.loader && s.commitType != page.NavigationTypeBackForwardCacheRestore {
		gctx, cancel := within(ctx, loadGrace)
		s2, err := n.wait(gctx, func(x navSnap) bool { return x.load == s.loader || x.loader != s.loader })
		cancel()
		if err != nil {
			res.Detail = "the load event did not come; the page is interactive"
		} else {
			s = s2
		}
	}
	res.URL = s.url
	if st := n.statusOf(s.loader); st != "" && !strings.HasPrefix(st, "2") && !strings.HasPrefix(st, "3") {
		addDetail(&res, "HTTP "+st)
	}
	res.Egress = n.egressOf(s.loader)
	return res, nil
}

// GoBack goes one entry back in the tab's history and waits for the
// document as GoTo does. With no earlier entry it returns a failed Result and
// no error.
func (p *Page) GoBack(ctx context.Context) (Result, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return Result{Reason: err.Error()}, err
	}
	defer done()
	h, err := chromedp.Call(ctx, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		return Result{Reason: "could not read the history: " + err.Error()}, err
	}
	if h.CurrentIndex <= 0 || int(h.CurrentIndex) > len(h.Entries)-1 {
		return Result{Reason: "there is no earlier page in this tab's history"}, nil
	}
	prev := h.Entries[h.CurrentIndex-1]
	before := p.nav.snap()
	if _, err := chromedp.Call(ctx, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: prev.ID}); err != nil {
		r := Result{Reason: fmt.Sprintf("could not go back to %s: %v", prev.URL, err)}
		return r, fmt.Errorf("%w: %s", ErrNavigation, r.Reason)
	}
	return p.nav.waitDocument(ctx, before, "", prev.URL)
}
