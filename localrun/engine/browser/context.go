package browser

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/internal/egress"
)

// Download limits of a browser context when ContextOptions leaves them zero.
const (
	DefaultMaxDownloadBytes      int64 = 100 << 20
	DefaultMaxDownloads                = 64
	DefaultMaxTotalDownloadBytes int64 = 512 << 20
)

// ContextOptions configures one run's browser context.
type ContextOptions struct {
	// RunID names the run in logs.
	RunID string
	// BrowserAddress is a remote browser for this run (http://host:9222 or
	// ws://...). It overrides Options.RemoteURL and Options.Endpoints (the
	// run then counts in no endpoint). Empty: the pool's browser.
	BrowserAddress string
	// DownloadDir receives the downloads of the run; it is created. Empty: the
	// browser denies every download. A local browser writes unfinished files
	// in a directory of the pool's, so that once Close has returned nothing
	// writes in DownloadDir any more. A remote browser writes them in
	// DownloadDir's subdirectory .downloading, and the path is on the
	// browser's machine, so downloads only work when it shares the directory
	// (same host or a shared volume).
	DownloadDir string
	// MaxDownloadBytes caps one file (default 100 MiB).
	MaxDownloadBytes int64
	// MaxDownloads caps the number of files kept or in progress (default 64);
	// a download over the cap is canceled.
	MaxDownloads int
	// MaxTotalDownloadBytes caps the sum of all files (default 512 MiB).
	MaxTotalDownloadBytes int64
	// DialogPrompt is the answer given to window.prompt. Empty: prompts are
	// dismissed (as if the user pressed Cancel).
	DialogPrompt string
	// Proxy is the proxy server of the run's browser context
	// (http://host:port: the run's egress.Proxy), given with
	// egress.BrowserBypassList so that loopback goes through it too. A
	// local Chromium and a browser on this machine (a loopback address)
	// take it; another remote browser only with ProxyRemote, since it
	// reaches the proxy only when the proxy listens on an address it can
	// reach. Empty: no proxy. Context.Proxied says whether it was given.
	Proxy string
	// ProxyRemote gives Proxy to remote browsers that are not on this
	// machine too.
	ProxyRemote bool
}

// TabInfo describes a tab of a browser context.
type TabInfo struct {
	ID     string // target id; the argument of SwitchTab and CloseTab
	URL    string
	Title  string
	Active bool // the tab that Tab returns
	Index  int  // 0 for the first tab of the browser context, then in the order the tabs opened
}

// Dialog is a JavaScript dialog that the browser context answered by itself.
type Dialog struct {
	Type     string // alert, confirm, prompt or beforeunload
	Message  string
	URL      string // the frame that opened the dialog
	Answer   string // the text given to a prompt
	Accepted bool   // false when the dialog was dismissed
	At       time.Time
}

// Context is an isolated browser context of a run and its tabs: it follows
// the tabs the page opens, answers the page's dialogs and keeps its
// downloads (Downloads). Its methods are safe for concurrent use, but the
// actions on one tab context must not run concurrently (see
// chromedp.NewContext).
type Context struct {
	pool      *Pool
	inst      *instance
	addr      string
	opts      ContextOptions
	contextID cdp.BrowserContextID
	// initScripts run in every document of the tabs attached after they
	// are added (Restore).
	initScripts []string
	dl          *Downloads // nil when downloads are denied
	created     time.Time
	place       *place // its place on a fleet endpoint; nil for other browsers
	proxied     bool   // the browser context uses opts.Proxy
	answers     dialogAnswers

	mu          sync.Mutex
	tabs        tabList
	seq         int
	changed     chan struct{} // closed and replaced on every change
	closing     bool
	closeDone   chan struct{}
	closeErr    error
	cleaned     chan struct{} // closed once Close's background work is done (the staging directory removed)
	err         error
	done        chan struct{}
	lost        chan struct{}   // closed when done closes for another reason than Close
	fallbackTab context.Context // returned by Tab when no tab is ready

	// announced counts the tabs the browser connection announced (its
	// reader goroutine counts them as they arrive, in the order of the
	// wire); taken counts those tabCreated has taken in (or found known).
	// While taken is behind, a tab is opening: a click that opened a
	// popup has its tab announced before the click's answer arrives, so
	// ActiveTab waits for it even when the worker has not handled it yet.
	announced atomic.Int64
	taken     int64 // guarded by mu

	events *eventQueue // handled by the worker goroutine (handle)
	wg     sync.WaitGroup
	saving sync.WaitGroup // completed downloads being moved into DownloadDir
}

// tabList is the tabs of a browser context in activation order: the last
// open, attached tab is the active one. Context.mu guards it.
type tabList []*tab

// active returns the active tab: the most recently opened or switched-to
// tab that is still open, and whether a newer tab is still being attached.
func (l tabList) active() (active *tab, pending bool) {
	for i := len(l) - 1; i >= 0; i-- {
		tb := l[i]
		if tb.gone {
			continue
		}
		if tb.ready {
			return tb, pending
		}
		pending = true
	}
	return nil, pending
}

// findLocked returns the open, attached tab with the id.
func (l tabList) find(id string) (int, *tab, error) {
	for i, tb := range l {
		if string(tb.id) == id && !tb.gone {
			if !tb.ready {
				return i, nil, fmt.Errorf("tab %s is still opening", id)
			}
			return i, tb, nil
		}
	}
	return -1, nil, fmt.Errorf("no tab %q in this session", id)
}

// attached returns the chromedp contexts of the attached tabs, in
// activation order.
func (l tabList) attached() []context.Context {
	tabs := make([]context.Context, 0, len(l))
	for _, tb := range l {
		if tb.ready && tb.ctx != nil {
			tabs = append(tabs, tb.ctx)
		}
	}
	return tabs
}

// eventQueue hands the events of a browser context to one worker
// goroutine, which handles them in order: answering a dialog or following
// a new tab takes protocol round trips, which the goroutines that read
// the browser's events must not wait for.
type eventQueue struct {
	handle func(ev any)

	mu     sync.Mutex
	shut   bool // the browser context is closing: events are dropped
	events []any

	wake    chan struct{} // worker wake-up (capacity 1)
	stop    chan struct{} // closed by Context.Close: the worker ends
	started bool          // the worker runs (set before it starts)
	exited  chan struct{} // closed when the worker ended
}

func newEventQueue(handle func(ev any)) *eventQueue {
	return &eventQueue{handle: handle, wake: make(chan struct{}, 1), stop: make(chan struct{}), exited: make(chan struct{})}
}

// start starts the worker.
func (q *eventQueue) start() {
	q.started = true
	go q.work()
}

// push hands an event to the worker without blocking.
func (q *eventQueue) push(ev any) {
	q.mu.Lock()
	if q.shut {
		q.mu.Unlock()
		return
	}
	q.events = append(q.events, ev)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drop refuses new events and drops those not handled yet.
func (q *eventQueue) drop() {
	q.mu.Lock()
	q.shut = true
	q.events = nil
	q.mu.Unlock()
}

// work handles the queued events in order, until stop.
func (q *eventQueue) work() {
	defer close(q.exited)
	for {
		select {
		case <-q.stop:
			return
		case <-q.wake:
		}
		for {
			q.mu.Lock()
			evs := q.events
			q.events = nil
			q.mu.Unlock()
			if len(evs) == 0 {
				break
			}
			for _, ev := range evs {
				select {
				case <-q.stop:
					return
				default:
				}
				q.handle(ev)
			}
		}
	}
}

// tab is one page target of the browser context.
type tab struct {
	id     target.ID
	seq    int
	ctx    context.Context
	cancel context.CancelFunc
	ready  bool         // attached
	gone   bool         // closed or failed to attach
	guard  *dialogGuard // answers its dialogs; nil: the chromedp session does
}

// Acquire creates the browser context of a run, with one tab,
// its viewport set, downloads configured, ready to navigate. ctx bounds the
// creation only. With Options.Endpoints, a run without its own
// BrowserAddress is placed on an endpoint of the fleet, waiting in the queue
// while none has room (see ErrQueueFull and ErrQueueTimeout).
func (p *Pool) Acquire(ctx context.Context, o ContextOptions) (*Context, error) {
	addr := o.BrowserAddress
	if addr == "" {
		addr = p.opts.RemoteURL
	} else if err := checkRemoteURL(addr); err != nil {
		return nil, err
	}
	if o.MaxDownloadBytes <= 0 {
		o.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	if o.MaxDownloads <= 0 {
		o.MaxDownloads = DefaultMaxDownloads
	}
	if o.MaxTotalDownloadBytes <= 0 {
		o.MaxTotalDownloadBytes = DefaultMaxTotalDownloadBytes
	}
	if addr == "" && p.fleet != nil {
		return p.acquireOnFleet(ctx, o)
	}
	s, _, err := p.openContext(ctx, o, addr, nil)
	return s, err
}

// openContext opens a browser context on the browser at addr ("" = local); pl is its
// place on a fleet endpoint, or nil. browserFault tells whether the error
// came from the browser (connecting, or the browser context's creation in it) rather
// than from ctx, the pool's end or the download directory.
func (p *Pool) openContext(ctx context.Context, o ContextOptions, addr string, pl *place) (s *Context, browserFault bool, err error) {
	s = &Context{
		pool:      p,
		addr:      addr,
		place:     pl,
		opts:      o,
		answers:   dialogAnswers{prompt: o.DialogPrompt},
		created:   time.Now(),
		changed:   make(chan struct{}),
		done:      make(chan struct{}),
		lost:      make(chan struct{}),
		closeDone: make(chan struct{}),
		cleaned:   make(chan struct{}),
	}
	s.events = newEventQueue(s.handle)
	s.proxied = o.Proxy != "" && (addr == "" || o.ProxyRemote || onThisMachine(addr))
	if o.DownloadDir != "" {
		var parent string
		if addr == "" {
			var err error
			if parent, err = p.stagingParent(); err != nil {
				return nil, false, err
			}
		}
		dl, err := newDownloads(o, parent)
		if err != nil {
			return nil, false, err
		}
		dl.c = s
		s.dl = dl
	}
	inst, err := p.acquireBrowser(ctx, addr)
	if err != nil {
		s.dl.removeStaging()
		return nil, !errors.Is(err, ErrPoolClosed) && ctx.Err() == nil, err
	}
	s.inst = inst
	if err := s.open(ctx); err != nil {
		s.abandon()
		if ctx.Err() == nil && !inst.alive() {
			inst.mu.Lock()
			if inst.dead != nil {
				err = fmt.Errorf("%w (%w)", err, inst.dead)
			}
			inst.mu.Unlock()
		}
		return nil, ctx.Err() == nil, fmt.Errorf("opening a browser session: %w", err)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		s.Close(context.Background())
		return nil, false, ErrPoolClosed
	}
	p.sessions[s] = struct{}{}
	p.mu.Unlock()
	s.events.start()
	p.log.Debug("session opened", "run", o.RunID, "browser", displayAddr(addr), "endpoint", s.Endpoint(), "context", s.contextID, "took", time.Since(s.created))
	return s, false, nil
}

// open creates the browser context and its first tab.
func (s *Context) open(ctx context.Context) error {
	b := s.inst.b
	params := target.CreateBrowserContextParams{
		// A remote browser disposes of the context if our connection drops.
		DisposeOnDetach: new(true),
	}
	if s.proxied {
		// Every request of the context's pages (navigations, subresources,
		// fetch, websockets) goes through the run's egress proxy; loopback
		// too, which Chromium otherwise sends around any proxy.
		params.ProxyServer = s.opts.Proxy
		params.ProxyBypassList = egress.BrowserBypassList
	}
	bc, err := cdp.Call(ctx, b, target.CreateBrowserContext, params)
	if err != nil {
		return err
	}
	s.contextID = bc.BrowserContextID

	// The download behaviour is independent of the tab: set it meanwhile.
	dlErr := make(chan error, 1)
	go func() {
		params := cdpbrowser.SetDownloadBehaviorParams{
			Behavior:         cdpbrowser.SetDownloadBehaviorBehaviorDeny,
			BrowserContextID: s.contextID,
		}
		if s.dl != nil {
			params.Behavior = cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName
			params.DownloadPath = s.dl.staging
			params.EventsEnabled = new(true)
		}
		_, err := cdp.Call(ctx, b, cdpbrowser.SetDownloadBehavior, params)
		dlErr <- err
	}()

	// The first tab of a new browser context needs a window of its own
	// (newWindow=false fails with "no browser is open").
	ct, err := cdp.Call(ctx, b, target.CreateTarget, target.CreateTargetParams{
		URL:              "about:blank",
		BrowserContextID: s.contextID,
		NewWindow:        new(true),
	})
	if err != nil {
		<-dlErr
		return err
	}
	tb := &tab{id: ct.TargetID, seq: 0}
	s.tabs = []*tab{tb}
	s.seq = 1
	if err := s.inst.register(s.contextID, s); err != nil {
		<-dlErr
		return err
	}
	s.inst.setOwner(string(ct.TargetID), s)
	// No dialog guard on this tab: it shows about:blank until the run
	// navigates, which it does only once the attach below is done, so no
	// dialog can open during the attach, and the tab's chromedp session
	// answers the dialogs (tabListener). The guard's second session cost
	// every run the browser work of a second Page domain, about 2 % of the
	// fleet's runs per second (bench/records/2026-11-29-fleet-floor.md).
	// The tabs the page opens get one (tabCreated).
	err = s.attach(ctx, tb)
	if derr := <-dlErr; err == nil && derr != nil {
		err = fmt.Errorf("setting the download behaviour: %w", derr)
	}
	if err != nil {
		return err
	}
	s.fallbackTab = tb.ctx
	return nil
}

// attach makes the chromedp context of tb, attaches it and sets the viewport.
// ctx bounds the attach; the tab lives until its cancel.
func (s *Context) attach(ctx context.Context, tb *tab) error {
	tctx, cancel := chromedp.NewContext(s.inst.ctx,
		chromedp.WithTargetID(tb.id),
		// Close disposes of the whole browser context at once; the tabs only
		// need to detach.
		chromedp.WithDetachOnCancel(),
		chromedp.WithListener(s.tabListener(tb)))
	s.mu.Lock()
	tb.ctx, tb.cancel = tctx, cancel // for dialogs that open during the attach
	s.mu.Unlock()
	// The first Run binds the tab to tctx, so it must not get a derived
	// context; ctx cancels it instead.
	stop := context.AfterFunc(ctx, cancel)
	vw, vh := s.pool.viewport[0], s.pool.viewport[1]
	s.mu.Lock()
	scripts := slices.Clone(s.initScripts)
	s.mu.Unlock()
	err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(vw), Height: int64(vh), DeviceScaleFactor: 1,
		})
		for _, src := range scripts {
			if err != nil {
				break
			}
			_, err = cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
		}
		return err
	}))
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		go cancel()
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		return fmt.Errorf("attaching to tab %s: %w", tb.id, err)
	}
	s.mu.Lock()
	tb.ready = true
	s.notifyLocked()
	s.mu.Unlock()
	return nil
}

// tabListener returns the event func of a tab. It runs on the reader
// goroutine of the tab: it only records and queues.
func (s *Context) tabListener(tb *tab) func(ev any) {
	return func(ev any) {
		switch ev := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			s.mu.Lock()
			guarded := tb.guard != nil
			s.mu.Unlock()
			if !guarded { // else the guard session answers it
				s.events.push(dialogEvent{tab: tb, ev: ev})
			}
		case *page.EventFrameAttached:
			s.inst.setOwner(string(ev.FrameID), s)
		case *page.EventFrameNavigated:
			if ev.Frame != nil {
				s.inst.setOwner(string(ev.Frame.ID), s)
			}
		}
	}
}

// dialogEvent is a dialog of a tab, queued for the worker.
type dialogEvent struct {
	tab *tab
	ev  *page.EventJavascriptDialogOpening
}

// handle runs one event on the worker goroutine.
func (s *Context) handle(ev any) {
	switch ev := ev.(type) {
	case dialogEvent:
		s.answerDialog(ev.tab, ev.ev)
	case guardMessage:
		ev.guard.handle(ev.raw)
	case *target.EventTargetCreated:
		s.tabCreated(ev.TargetInfo)
	case *target.EventTargetDestroyed:
		s.tabGone(ev.TargetID, "")
	case *target.EventTargetCrashed:
		s.tabGone(ev.TargetID, ev.Status)
	case *cdpbrowser.EventDownloadWillBegin:
		s.dl.willBegin(ev)
	case *cdpbrowser.EventDownloadProgress:
		s.dl.progress(ev)
	}
}

// isTab reports whether a target is a tab of a browser context (not a
// worker, an iframe or a tab's helper page).
func isTab(info *target.Info) bool {
	return info != nil && info.Type == "page" && info.Subtype == ""
}

// tabCreated starts to follow a new page of the browser context (a link with
// target=_blank, window.open): it becomes the active tab once attached.
func (s *Context) tabCreated(info *target.Info) {
	if !isTab(info) {
		return
	}
	s.mu.Lock()
	s.taken++
	s.notifyLocked()
	if s.closing || s.err != nil || slices.ContainsFunc(s.tabs, func(t *tab) bool { return t.id == info.TargetID }) {
		s.mu.Unlock()
		return
	}
	tb := &tab{id: info.TargetID, seq: s.seq}
	s.seq++
	s.tabs = append(s.tabs, tb)
	s.notifyLocked()
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), attachTimeout)
		defer cancel()
		go func() { // Close stops the attach
			select {
			case <-s.events.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		// The guard first: the page can open a dialog before the chromedp
		// session is attached, and that would block the attach.
		guardDialogs(ctx, s, tb)
		err := s.attach(ctx, tb)
		if err != nil {
			// A download opens a tab that closes at once; that is normal.
			s.pool.log.Debug("new tab not followed", "run", s.opts.RunID, "tab", tb.id, "err", err)
			s.tabGone(tb.id, "")
			return
		}
		s.mu.Lock()
		gone := tb.gone || s.closing
		s.mu.Unlock()
		if gone {
			s.cancelTab(tb)
		}
	}()
}

// tabGone forgets a tab that closed (or crashed). When the page closed the
// last tab, a blank one opens so that the run can go on.
func (s *Context) tabGone(id target.ID, crashStatus string) {
	s.mu.Lock()
	i := slices.IndexFunc(s.tabs, func(t *tab) bool { return t.id == id })
	if i < 0 {
		s.mu.Unlock()
		return
	}
	tb := s.tabs[i]
	if crashStatus != "" {
		// A crashed tab stays listed: the next action on it fails, which the
		// run reports.
		s.mu.Unlock()
		s.pool.log.Warn("tab crashed", "run", s.opts.RunID, "tab", id, "status", crashStatus)
		return
	}
	tb.gone = true
	s.tabs = slices.Delete(s.tabs, i, i+1)
	empty := len(s.tabs) == 0 && !s.closing && s.err == nil
	guard := tb.guard
	if tb.ready {
		s.fallbackTab = tb.ctx
	}
	s.notifyLocked()
	s.mu.Unlock()
	guard.forget()
	s.cancelTab(tb)
	if empty {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if _, err := cdp.Call(ctx, s.inst.b, target.CreateTarget, target.CreateTargetParams{
			URL: "about:blank", BrowserContextID: s.contextID, NewWindow: new(true),
		}); err != nil {
			s.pool.log.Warn("reopening a tab", "run", s.opts.RunID, "err", err)
		}
	}
}

// cancelTab detaches from a tab in the background (the detach is a round trip
// that nobody needs to wait for).
func (s *Context) cancelTab(tb *tab) {
	s.mu.Lock()
	cancel := tb.cancel
	tb.cancel = nil
	s.mu.Unlock()
	if cancel != nil {
		go cancel() // bounded by chromedp's own timeout
	}
}

// notifyLocked wakes the waiters of a change. Call with s.mu held.
func (s *Context) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Tab returns the active tab as a chromedp context: the newest tab that the
// page opened, unless SwitchTab chose another; when the active tab closes, the
// one active before it. It never blocks; a tab that the page has just opened
// is returned once it is attached (see ActiveTab). After the end of the
// browser context it returns a canceled context. Run actions on it with chromedp (its
// first Run has happened: a context derived with a timeout is fine); open
// tabs with NewTab, not with chromedp.NewContext.
func (s *Context) Tab() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tb, _ := s.tabs.active(); tb != nil && s.err == nil {
		return tb.ctx
	}
	return s.fallbackTab
}

// ActiveTab is Tab after waiting for the tabs that are still being attached
// (a popup that an action has just opened), bounded by ctx. It fails when the
// browser context has ended.
func (s *Context) ActiveTab(ctx context.Context) (context.Context, error) {
	for {
		s.mu.Lock()
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		tb, pending := s.tabs.active()
		pending = pending || s.announced.Load() > s.taken
		changed := s.changed
		s.mu.Unlock()
		if tb != nil && !pending {
			return tb.ctx, nil
		}
		select {
		case <-changed:
		case <-s.done:
		case <-ctx.Done():
			if tb != nil {
				return tb.ctx, nil
			}
			return nil, ctx.Err()
		}
	}
}

// Tabs lists the open tabs of the browser context in the order they opened.
func (s *Context) Tabs(ctx context.Context) ([]TabInfo, error) {
	if err := s.Err(); err != nil {
		return nil, err
	}
	res, err := cdp.Call(ctx, s.inst.b, target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	infos := make(map[target.ID]*target.Info, len(res.TargetInfos))
	for _, info := range res.TargetInfos {
		if info.BrowserContextID == s.contextID {
			infos[info.TargetID] = info
		}
	}
	s.mu.Lock()
	active, _ := s.tabs.active()
	tabs := make([]*tab, 0, len(s.tabs))
	for _, tb := range s.tabs {
		if tb.ready && !tb.gone && infos[tb.id] != nil {
			tabs = append(tabs, tb)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(tabs, func(a, b *tab) int { return a.seq - b.seq })
	out := make([]TabInfo, len(tabs))
	for i, tb := range tabs {
		info := infos[tb.id]
		out[i] = TabInfo{ID: string(tb.id), URL: info.URL, Title: info.Title, Active: tb == active, Index: i}
	}
	return out, nil
}

// NewTab opens a blank tab in the browser context, makes it the
// active tab and returns it. (A chromedp.NewContext made from a tab would
// open its tab outside the browser context: use NewTab.)
func (s *Context) NewTab(ctx context.Context) (context.Context, error) {
	if err := s.Err(); err != nil {
		return nil, err
	}
	create := func(newWindow bool) (target.CreateTargetResult, error) {
		return cdp.Call(ctx, s.inst.b, target.CreateTarget, target.CreateTargetParams{
			URL: "about:blank", BrowserContextID: s.contextID, NewWindow: new(newWindow),
		})
	}
	ct, err := create(false)
	if err != nil {
		ct, err = create(true) // the context has no window left
	}
	if err != nil {
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	// The worker attaches it, as it does for the tabs that pages open.
	for {
		s.mu.Lock()
		var tctx context.Context
		for _, t := range s.tabs {
			if t.id == ct.TargetID && t.ready {
				tctx = t.ctx
			}
		}
		changed, sessErr := s.changed, s.err
		s.mu.Unlock()
		switch {
		case sessErr != nil:
			return nil, sessErr
		case tctx != nil:
			return tctx, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("opening a tab: %w", ctx.Err())
		}
	}
}

// SwitchTab makes the tab active (and brings it to the front, so that it
// renders and runs its animation frames).
func (s *Context) SwitchTab(ctx context.Context, id string) error {
	i, tb, err := s.lockTab(id)
	if err != nil {
		return err
	}
	s.tabs = append(slices.Delete(s.tabs, i, i+1), tb)
	s.notifyLocked()
	s.mu.Unlock()
	_, err = cdp.Call(ctx, s.inst.b, target.ActivateTarget, target.ActivateTargetParams{TargetID: tb.id})
	return err
}

// CloseTab closes a tab. The previously active tab becomes active again. The
// last tab of a browser context cannot be closed.
func (s *Context) CloseTab(ctx context.Context, id string) error {
	i, tb, err := s.lockTab(id)
	if err != nil {
		return err
	}
	open := 0
	for _, t := range s.tabs {
		if !t.gone {
			open++
		}
	}
	if open <= 1 {
		s.mu.Unlock()
		return errors.New("cannot close the last tab of the session")
	}
	tb.gone = true
	s.tabs = slices.Delete(s.tabs, i, i+1)
	s.fallbackTab = tb.ctx
	guard := tb.guard
	s.notifyLocked()
	s.mu.Unlock()
	_, err = cdp.Call(ctx, s.inst.b, target.CloseTarget, target.CloseTargetParams{TargetID: tb.id})
	guard.forget() // closing the target detaches it
	s.cancelTab(tb)
	s.mu.Lock()
	next, _ := s.tabs.active()
	s.mu.Unlock()
	if next != nil {
		// Bring the tab that is active now to the front (best effort).
		cdp.Call(ctx, s.inst.b, target.ActivateTarget, target.ActivateTargetParams{TargetID: next.id})
	}
	return err
}

// lockTab finds the open, attached tab with the id and returns with s.mu
// held; on an error (no such tab, or the browser context ended) s.mu is
// not held.
func (s *Context) lockTab(id string) (int, *tab, error) {
	s.mu.Lock()
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return -1, nil, err
	}
	i, tb, err := s.tabs.find(id)
	if err != nil {
		s.mu.Unlock()
		return -1, nil, err
	}
	return i, tb, nil
}

// Done is closed when the browser context ends: its browser died or disconnected, or
// Close was called. Err says which.
func (s *Context) Done() <-chan struct{} { return s.done }

// Lost is closed when the browser context ends because its browser went
// away (the process exited, the connection to it dropped, the fleet
// endpoint failed, the pool closed): as soon as the pool learns it, with
// Err saying why. Unlike Done, Close does not close it, so that a run can
// watch it to end at once when its browser is gone, rather than when its
// next action fails.
func (s *Context) Lost() <-chan struct{} { return s.lost }

// Err is nil while the browser context is usable. After Done it is the reason, such
// as "the browser process exited unexpectedly: signal: killed", or
// ErrContextClosed after Close.
func (s *Context) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Ended tells whether a failed action failed because the browser is gone.
// When the connection to the browser has ended, the browser context fails with the
// reason a moment later (finding the reason means waiting for the process to
// be reaped); meanwhile an action on a tab already fails with
// context.Canceled. Ended then waits, bounded by ctx, for that reason and
// returns it. It returns nil at once while the browser is connected (an action
// failed for a reason of its page, or its tab closed), and Err once the
// browser context ended.
func (s *Context) Ended(ctx context.Context) error {
	if err := s.Err(); err != nil {
		return err
	}
	if s.inst == nil || !s.inst.lost() {
		return nil
	}
	select {
	case <-s.done:
		return s.Err()
	case <-ctx.Done():
		return nil
	}
}

// Proxied reports whether the browser context sends its
// requests through ContextOptions.Proxy.
func (s *Context) Proxied() bool { return s.proxied }

// Browser names the browser the browser context runs on: "local Chromium", the
// fleet endpoint's name, or the remote browser's address (without
// credentials or query).
func (s *Context) Browser() string {
	if s.place != nil {
		return s.place.ep.name
	}
	return displayAddr(s.addr)
}

// onThisMachine reports whether a browser address names this machine: a
// loopback address, or localhost.
func onThisMachine(addr string) bool {
	u, err := url.Parse(addr)
	if err != nil {
		return false
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// ContextID is the id of the browser context.
func (s *Context) ContextID() string { return string(s.contextID) }

// fail ends the browser context because of its browser (or Close), and gives back
// its place on a fleet endpoint.
func (s *Context) fail(reason error) {
	s.mu.Lock()
	ended := s.err == nil
	if ended {
		s.err = reason
		close(s.done)
		if !errors.Is(reason, ErrContextClosed) {
			close(s.lost)
		}
		s.notifyLocked()
	}
	s.mu.Unlock()
	if ended && s.place != nil {
		s.place.release()
	}
}

// Close disposes of the browser context (which closes its tabs at once),
// without closing a remote browser. It is idempotent; a second call waits for
// the first and returns its result. Downloads still in progress are dropped:
// call WaitDownloads first to keep them. When Close returns, the files of
// completed downloads are in DownloadDir and, with a local browser, nothing
// writes there any more.
func (s *Context) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.closeDone
		return s.closeErr
	}
	s.closing = true
	s.events.drop()
	tabs := s.tabs
	s.mu.Unlock()

	var err error
	s.inst.unregister(s)
	if s.inst.alive() {
		_, err = cdp.Call(ctx, s.inst.b, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: s.contextID})
		if err != nil && !s.inst.alive() {
			err = nil // the browser went away meanwhile: nothing is left to dispose
		}
	}
	close(s.events.stop)
	for _, tb := range tabs {
		s.cancelTab(tb)
	}
	s.fail(ErrContextClosed)
	// A completed download is being moved into DownloadDir: let it land (a
	// rename or a local copy), so that the caller may remove the directory.
	s.saving.Wait()

	// The detaches and download work end by themselves; wait in the
	// background so that Close returns at once. (Before the browser context leaves
	// p.browser contexts, so that Pool.Close waits for this too.)
	p := s.pool
	p.wg.Go(func() {
		if s.events.started {
			<-s.events.exited
		}
		s.wg.Wait()
		s.dl.removeStaging()
		close(s.cleaned)
	})
	p.releaseBrowser(s.inst)
	p.mu.Lock()
	delete(p.sessions, s)
	p.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("disposing of the browser context: %w", err)
	}
	s.closeErr = err
	close(s.closeDone)
	return err
}

// abandon undoes a failed Acquire.
func (s *Context) abandon() {
	s.mu.Lock()
	s.closing = true
	s.events.drop()
	tabs := s.tabs
	s.mu.Unlock()
	s.inst.unregister(s)
	if s.contextID != "" && s.inst.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		cdp.Call(ctx, s.inst.b, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: s.contextID})
		cancel()
	}
	for _, tb := range tabs {
		s.cancelTab(tb)
	}
	s.wg.Wait()
	s.saving.Wait()
	s.dl.removeStaging()
	s.pool.releaseBrowser(s.inst)
}
