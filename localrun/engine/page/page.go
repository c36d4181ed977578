// Package page observes a browser tab for a language model and acts on it.
//
// A tab is a chromedp context (from chromedp.NewContext, attached to a page
// target); the browser package owns tabs, dialogs, downloads and tab switching.
// New wraps such a context in a Page, which keeps the state of one tab: the
// current epoch and the map from short element ids to the nodes they name.
//
// # Observation
//
// Observe runs one JavaScript walker (page.js, embedded) per document realm
// and returns the interactive elements of the page in document order, with
// same-origin iframes and open shadow roots inline, a compact text rendering
// for the prompt that fits a character budget, the visible text and an
// optional viewport JPEG. Cross-origin iframes run out of process in Chromium:
// for each one the walker of the parent reports the frame element, Go asks
// DOM.describeNode for its frame id, attaches a second chromedp context to
// the "iframe" target with chromedp.WithTargetID (and WithDetachOnCancel, so
// that ending the session never closes the frame), and runs the walker there.
// Coordinates of elements in such frames are moved into the tab's viewport by
// the content-box origin of the frame element, so the mouse events of actions,
// which always go to the tab, land in the right place.
//
// # Ids and epochs
//
// The walker runs in an isolated world of each document (Page.
// createIsolatedWorld, named "abctl"), as Playwright's utility world does:
// it shares the DOM with the page but not its JavaScript, so a page that
// replaces built-ins (Date.now, JSON.stringify, Array.prototype.map,
// Element.prototype methods, MutationObserver) or adds toJSON to built-in
// prototypes can neither break nor mislead it, and cannot see it. Its state
// lives in a closure reachable through a Symbol-keyed global of that world:
// a counter, a Map from local number to element and a WeakMap from element
// to number, so a node keeps its local number for as long as it lives. Go
// maps (realm, realm token, local number) to a short global id ("kd": consonants only,
// so that a model cannot read it as a number) from a counter that is never reset, so an id
// is never reused, and ids are stable across re-observations of the same
// nodes. Data attributes written
// into the DOM were the alternative: visible to the page, copied by
// cloneNode (two nodes with one id), and noise for MutationObservers.
//
// One consequence for other users of the tab: chromedp v0.23 records the
// last execution context created in a frame as the frame's context, without
// looking at isDefault, so once a Page has observed a document, chromedp's
// own Evaluate, Poll and queries on that tab run in the abctl world too.
// They see the same DOM, but not the page's JavaScript globals; code that
// needs those evaluates with runtime.Evaluate and no context id (the main
// world), as this package does for location.href and document.readyState.
//
// The epoch changes when the main frame commits a new document (seen through
// Page.frameNavigated) or when the walker finds a new realm token (a replaced
// document). Ids from an older epoch, unknown ids, ids whose node left the
// document and ids whose realm token no longer matches give ErrStaleID; an id
// is resolved to a node by identity, never by a selector, so an action can
// never reach a different node than the one observed.
//
// # Actions
//
// Actions use CDP input (trusted events) and check their result. Click
// scrolls the element into view if needed, hit-tests the press point with
// elementFromPoint through shadow roots and frames (and, for out-of-process
// frames, again in every ancestor realm), fails with "covered by ..." when
// another element would receive the click, and afterwards checks, with a
// mousedown listener armed in the element's window, that the press landed on
// the element. InputText reads the value back; SelectOption reads the
// selection back; UploadFile reads the file count back. An action that
// starts a navigation of the tab waits (bounded) for the new document and
// reports it in Result.Navigated. Every action returns a Result; it returns
// an error as well only when the request itself cannot be carried out
// (ErrStaleID, ErrNavigation, ErrNoMatch, an unknown key, a dead tab or an
// ended context). A page that navigates in the middle of an action gives a
// failed Result with a reason, not a crash.
//
// Resolve turns a CSS or XPath selector into an id (polling until the
// context's deadline), for model-free blocks; WaitStable waits for the DOM
// to go quiet. Waiting for late content is the caller's choice: Observe
// never waits.
package page

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// Defaults and limits.
const (
	// DefaultJPEGQuality is the JPEG quality of screenshots when none is given.
	DefaultJPEGQuality = 70
	// DefaultBudget is the size in characters of Observation.Rendered when
	// ObserveOptions.Budget is zero.
	DefaultBudget = 40000
	// DefaultTextLimit is the size in characters of Observation.Text when
	// ObserveOptions.TextLimit is zero.
	DefaultTextLimit = 20000
	// MaxWait is the longest Wait sleeps.
	MaxWait = 10 * time.Second
	// DefaultTimeout bounds an operation whose context has no deadline.
	DefaultTimeout = 30 * time.Second
	// DefaultResolveWait is how long Resolve polls when its context has no
	// deadline.
	DefaultResolveWait = 5 * time.Second
	// maxElements caps the elements one realm reports.
	maxElements = 5000
	// maxFrames caps the out-of-process and sandboxed frames walked, and
	// maxFrameDepth their nesting.
	maxFrames     = 16
	maxFrameDepth = 4
	// navWait bounds the wait for a navigation that an action started.
	navWait = 10 * time.Second
)

// ErrStaleID is returned (wrapped, with the id and the reason) when an
// element id belongs to an older observation, no longer names a node in the
// page, or was never issued. The caller should observe the page again.
var ErrStaleID = errors.New("stale element id")

// ErrNavigation is returned (wrapped, with the URL and the browser's error
// text) when GoTo or GoBack cannot load the page.
var ErrNavigation = errors.New("navigation failed")

// ErrNoMatch is returned (wrapped, with the selector) when Resolve finds no
// element before its deadline.
var ErrNoMatch = errors.New("no element matches")

// ErrUnknownKey is returned (wrapped) by KeyPress for a key name outside its
// list.
var ErrUnknownKey = errors.New("unknown key")

//go:embed page.js
var pageJS string

// jsKey names the Symbol under which page.js installs itself. It carries a
// hash of the script, so two builds with different scripts never share state
// in one document.
var jsKey = "abctl.page." + shortHash(pageJS)

// Result is what an action did, checked after the fact.
type Result struct {
	// OK is true when the action did what was asked (the value was verified,
	// the click landed on the element, the page loaded).
	OK bool
	// Reason says why the action failed, for the model: "covered by
	// div#cookie-banner "We use cookies"", "element is disabled", "could not
	// load http://...: net::ERR_CONNECTION_REFUSED".
	Reason string
	// Detail is a short note on what happened when it is worth telling
	// ("selected "France"", "scrolled the page to 720 of 5400").
	Detail string
	// Navigated is true when the main frame committed a new document during
	// the action; element ids of earlier observations are then stale.
	Navigated bool
	// URL is the main frame's URL after the action, when known.
	URL string
	// Egress is the EgressHeader of the response of the document GoTo
	// or GoBack loaded: "refused" when the run's egress proxy answered
	// with a refusal instead of the site.
	Egress string
}

// Element is one interactive element of an observation.
type Element struct {
	// ID is the short id to act on ("kd"): two or more consonants.
	ID string
	// Frame is the id of the frame the element lives in ("f1", see
	// Observation.Frames), or "" for the top document.
	Frame string
	// Tag is the lower-case tag name; Role the explicit or implicit ARIA
	// role; Type the type of an input ("email", "checkbox", ...).
	Tag, Role, Type string
	// Text is the visible text of links, buttons and clickable elements.
	Text string
	// Label is the accessible label of a field (label element, aria-label,
	// aria-labelledby, title or the text just before it).
	Label string
	// Placeholder, Name and Href are the attributes of that name (Href
	// absolute).
	Placeholder, Name, Href string
	// Value is the current value: text of a field, selected option labels of
	// a select, chosen file names. Passwords are masked (secrets.Mask).
	Value string
	// Checked, Disabled, Required and ReadOnly are the element's states.
	Checked, Disabled, Required, ReadOnly bool
	// Clickable is true for elements that are interactive only because they
	// look or act clickable (cursor: pointer, onclick, tabindex).
	Clickable bool
	// InViewport is true when some of the element is in the viewport (and
	// inside the visible part of its frame).
	InViewport bool
	// Options are the option labels of a select (at most 60, then "…+N").
	Options []string
	// Attrs holds other attributes worth knowing (aria-expanded, maxlength,
	// accept, target, ...).
	Attrs map[string]string
	// Icon is a name derived from what draws a control that has no words
	// (or only symbols such as "‹"): an icon font's class (fa-trash ->
	// "trash"), a Material ligature, an image's file name, an SVG sprite's
	// id, else the control's own class. Shown as icon="trash".
	Icon string
	// Context is the text of the row, card or list item of a control whose
	// line would otherwise read the same as another's (button "Select" in
	// every row), without its own name, at most 60 characters. Shown as
	// in="...".
	Context string
	// Rect is x, y, width, height in CSS pixels of the tab's viewport.
	Rect [4]float64
}

// Frame is an iframe of an observation.
type Frame struct {
	// ID is the short frame id used in Element.Frame ("f1").
	ID string
	// Parent is the ID of the frame that holds it, "" for the top document.
	Parent string
	// URL and Name of the frame (Name from the name or title attribute).
	URL, Name string
	// CrossOrigin is true for a frame the top document cannot script
	// (another origin, or sandboxed); it is walked in its own realm.
	CrossOrigin bool
	// TargetID is the CDP target id of an out-of-process frame.
	TargetID string
	// Rect is the frame's content box in the tab's viewport.
	Rect [4]float64
	// Error is set when the frame could not be walked.
	Error string
}

// Tab describes a tab of the browser session for the header of Rendered.
// The browser package knows the tabs; it passes them in ObserveOptions.
type Tab struct {
	// ID is the browser package's short id of the tab ("t1").
	ID string
	// Title and URL of the tab's page.
	Title, URL string
	// Active marks the tab the model acts on.
	Active bool
}

// ObserveOptions tune Observe.
type ObserveOptions struct {
	// Screenshot asks for a JPEG of the viewport.
	Screenshot bool
	// JPEGQuality is the screenshot quality, 1..100 (default 70).
	JPEGQuality int
	// Budget is the maximum length of Rendered in characters (default
	// 40000). Elements in the viewport are kept first, then the nearest ones.
	Budget int
	// TextLimit caps Text in characters (default 20000); NoText leaves Text
	// empty and saves the layout walk it needs.
	TextLimit int
	NoText    bool
	// Tabs and Dialogs come from the browser package and are shown in the
	// header of Rendered: the open tabs, and the messages of JavaScript
	// dialogs that opened since the last observation.
	Tabs    []Tab
	Dialogs []string
}

// Observation is what the model needs to act on a page.
type Observation struct {
	// Epoch numbers the document generation; ids are valid within it.
	Epoch uint64
	// URL and Title of the top document.
	URL, Title string
	// Elements are the interactive elements in document order, frames
	// inline.
	Elements []Element
	// Frames are the iframes that were walked.
	Frames []Frame
	// Rendered is the compact text for the prompt, within the budget: a
	// header (title, URL, tabs, dialogs, scroll position), then one line
	// per element in document order, such as
	//
	//	[bf] input:email "Email" placeholder="you@example.com" required
	//	[bk] button "Sign in"
	//	[bm] select "Country" value="France" options=[France|Germany|…+12]
	//
	// with marker lines where the frame changes, where the viewport ends,
	// and where elements were left out ("… 37 more here"), and a last line
	// counting those above and below the viewport.
	Rendered string
	// Text is the visible text of the page (all frames), capped: the top
	// document's first, then each frame's. When the top document has more
	// text than the cap, Text keeps a window around the viewport (a
	// quarter of the cap above it), and TextAbove and TextBelow count the
	// characters of the top document's text left out before and after it.
	Text string
	// TextAt is the byte offset in Text where the text in the viewport
	// starts: that of the first text, in document order, shown in the
	// viewport outside fixed and sticky boxes. It is 0 when the page is
	// not scrolled or the viewport shows no text of the top document.
	TextAt int
	// TextAbove and TextBelow count the characters (UTF-16 code units)
	// of the top document's text that Text leaves out before its start and
	// after its end.
	TextAbove, TextBelow int
	// Screenshot is a JPEG of the viewport when asked for.
	Screenshot []byte
	// Kept is the name under which the run kept Screenshot in its
	// directory ("" when it did not): the run's steps name it.
	Kept string
	// Truncated counts elements left out of Rendered (and elements beyond
	// the walker's cap).
	Truncated int
	// Viewport is width and height; Scroll is x and y; PageSize is the
	// scrollable width and height of the top document, in CSS pixels.
	Viewport, Scroll, PageSize [2]float64
	// Tabs and Dialogs are copied from the options.
	Tabs    []Tab
	Dialogs []string
}

// Page is the state of one tab. Its methods are safe for concurrent use;
// they run one at a time.
type Page struct {
	tab     context.Context
	initErr error
	nav     *navTracker
	epoch   atomic.Uint64

	// sem serialises operations (a lock that a waiting caller's context
	// can abandon) and guards what follows.
	sem chan struct{}

	// frames are the tab's documents and the element ids issued in them.
	frames *frames

	// hooked is set once the click-listener hook is installed (hooks.go).
	hooked bool
}

// frames are the document realms of a tab (its top document, same-origin
// and out-of-process frames) and the registry of the element ids issued
// in them; they run the walker's scripts in those realms. Their methods
// are called with the Page's sem held.
type frames struct {
	tab   context.Context
	epoch *atomic.Uint64 // the Page's epoch

	regEpoch   uint64 // epoch of the registry below
	nextID     uint64 // last element number issued, never reset
	epochFirst uint64 // first element number of the current epoch
	ids        map[string]*elemRef
	byKey      map[elemKey]string
	frameIDs   map[elemKey]string // frame element → "f3"
	nextFrame  int
	topTok     string
	tokEpoch   uint64
	top        *realm
	children   map[elemKey]*realm // frame element → child realm
	sessions   map[string]*realm  // OOPIF target id → realm with its session

	// clickMark names the attribute the click-listener hook marks
	// elements with (hooks.go).
	clickMark string
}

// elemKey names a node: its realm, the realm's token and the local number.
type elemKey struct {
	realm string
	tok   string
	local int
}

// elemRef is what an id stands for.
type elemRef struct {
	id    string
	realm *realm
	tok   string
	local int
	frame string
}

// New returns the Page of a tab. tab must be a chromedp context attached to
// a page target (the browser package makes them). New subscribes to the
// tab's navigation events; it does not touch the page otherwise.
func New(tab context.Context) *Page {
	p := &Page{tab: tab, sem: make(chan struct{}, 1)}
	p.frames = &frames{tab: tab, epoch: &p.epoch, clickMark: newClickMark()}
	p.frames.resetRegistry()
	p.epoch.Store(1)
	p.frames.regEpoch = 1
	c := chromedp.FromContext(tab)
	if c == nil {
		p.initErr = errors.New("page: the context is not a chromedp context")
		return p
	}
	p.nav = newNavTracker(func() { p.epoch.Add(1) })
	if err := chromedp.Listen(tab, p.nav.handle); err != nil {
		p.initErr = fmt.Errorf("page: listen to the tab: %w", err)
		return p
	}
	if c.Target == nil {
		p.initErr = errors.New("page: the tab has no target")
		return p
	}
	p.nav.setMain(cdp.FrameID(c.Target.TargetID))
	p.frames.top = &realm{key: "top", sess: tab, frameID: cdp.FrameID(c.Target.TargetID)}
	return p
}

// Epoch returns the current epoch. It changes when the main frame commits a
// new document, and when an operation finds the document replaced.
func (p *Page) Epoch() uint64 { return p.epoch.Load() }

// Close ends the sessions the Page opened to out-of-process frames. It never
// closes the tab or the frames. The sessions also end with the tab's context.
func (p *Page) Close() {
	p.sem <- struct{}{}
	defer func() { <-p.sem }()
	for _, r := range p.frames.sessions {
		if r.cancel != nil {
			r.cancel()
		}
	}
	p.frames.sessions = map[string]*realm{}
}

func (f *frames) resetRegistry() {
	for _, r := range f.sessions {
		if r.cancel != nil {
			r.cancel()
		}
	}
	f.ids = map[string]*elemRef{}
	f.byKey = map[elemKey]string{}
	f.frameIDs = map[elemKey]string{}
	f.children = map[elemKey]*realm{}
	f.sessions = map[string]*realm{}
	f.epochFirst = f.nextID + 1
}

// syncEpoch resets the registry when the epoch moved since it was built.
// Callers hold p.sem.
func (f *frames) syncEpoch() {
	if e := f.epoch.Load(); e != f.regEpoch {
		f.resetRegistry()
		f.regEpoch = e
	}
}

// syncTop records the token of the top realm. A new token means a new
// document: the epoch moves unless a navigation event moved it already.
// Callers hold p.sem.
func (f *frames) syncTop(tok string) {
	if tok == f.topTok {
		f.syncEpoch()
		return
	}
	if f.topTok != "" && f.tokEpoch == f.epoch.Load() {
		f.epoch.Add(1)
	}
	f.syncEpoch()
	f.topTok = tok
	f.tokEpoch = f.epoch.Load()
	if f.top != nil {
		f.top.tok = tok
	}
}

// register returns the id of a node, issuing a new one when needed.
// Callers hold p.sem.
func (f *frames) register(r *realm, tok string, local int, frame string) string {
	k := elemKey{r.key, tok, local}
	if id, ok := f.byKey[k]; ok {
		ref := f.ids[id]
		ref.realm, ref.frame = r, frame
		return id
	}
	f.nextID++
	id := encodeID(f.nextID)
	f.byKey[k] = id
	f.ids[id] = &elemRef{id: id, realm: r, tok: tok, local: local, frame: frame}
	return id
}

// frameID returns the short id of a frame element. Callers hold p.sem.
func (f *frames) frameID(r *realm, tok string, local int) string {
	k := elemKey{r.key, tok, local}
	if id, ok := f.frameIDs[k]; ok {
		return id
	}
	f.nextFrame++
	id := "f" + strconv.Itoa(f.nextFrame)
	f.frameIDs[k] = id
	return id
}

// lookup finds the node of an id, or says why it is stale. The id may be
// written as a model writes it ("[bq]", " BQ "; see CleanID). Callers hold
// p.sem.
func (f *frames) lookup(id string) (*elemRef, error) {
	f.syncEpoch()
	id = CleanID(id)
	if ref, ok := f.ids[id]; ok {
		if ref.realm.gone {
			return nil, staleErr(id, "its frame is gone")
		}
		return ref, nil
	}
	n, ok := decodeID(id)
	switch {
	case id == "":
		return nil, fmt.Errorf("%w: the element id is empty; %s", ErrStaleID, idForm())
	case oldFormID(id):
		return nil, staleErr(id, "it has the form of an earlier version of abctl; "+idForm())
	case !ok:
		return nil, staleErr(id, "it is not an element id ("+idForm()+")")
	case n < f.epochFirst:
		return nil, staleErr(id, "it belongs to an earlier page (the page navigated or was replaced)")
	default:
		return nil, staleErr(id, "it was never issued on this page")
	}
}

func staleErr(id, why string) error {
	return fmt.Errorf("%w: %s: %s; observe the page again and use an id from the new observation", ErrStaleID, id, why)
}

// begin locks the Page and gives the operation a context that carries the
// tab's chromedp values, ends with ctx, and has a deadline (DefaultTimeout
// when ctx has none).
func (p *Page) begin(ctx context.Context) (context.Context, func(), error) {
	if p.initErr != nil {
		return nil, nil, p.initErr
	}
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		<-p.sem
		return nil, nil, err
	}
	c, cancel := derive(p.tab, ctx, DefaultTimeout)
	if d, ok := ctx.Value(actionWaitKey{}).(time.Duration); ok {
		// The caller's action wait goes with it (the derived context
		// carries the tab's values, not the caller's).
		c = WithActionWait(c, d)
	}
	if !p.hooked {
		// Without the hook the walker still lists what it can see; the
		// next operation tries again.
		p.hooked = p.frames.installClickHook(c) == nil
	}
	return c, func() { cancel(); <-p.sem }, nil
}

// beginOn begins an operation on the element id: it locks the Page as
// begin does and looks the id up. On an error the Page is not locked.
func (p *Page) beginOn(ctx context.Context, id string) (context.Context, *elemRef, func(), error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	ref, err := p.frames.lookup(id)
	if err != nil {
		done()
		return nil, nil, nil, err
	}
	return ctx, ref, done, nil
}

// derive returns a context with the chromedp values of base that ends when
// ctx ends, with the deadline of ctx or def when ctx has none.
func derive(base, ctx context.Context, def time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(base)
	stop := context.AfterFunc(ctx, func() {
		// A deadline ends c through its own copy of the deadline below,
		// so that c reports context.DeadlineExceeded.
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	var tcancel context.CancelFunc = func() {}
	if dl, ok := ctx.Deadline(); ok {
		c, tcancel = context.WithDeadline(c, dl)
	} else if def > 0 {
		c, tcancel = context.WithTimeout(c, def)
	}
	return c, func() {
		tcancel()
		stop()
		cancel()
	}
}

// within returns a context that ends after at most d, or with ctx.
func within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
