// Package runbrowser is the browser of one run as the engine drives it: the
// run's browser context (package browser) with a page.Page per tab, the
// active tab and its settling, navigation under the run's egress policy,
// screenshots, downloads, the recording, and the files of the run's
// directory (Files).
//
// The agent loop sees a Browser only through agent.Browser (AgentView); the
// block interpreter and the run_action runs use it directly.
package runbrowser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/record"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/executor"
)

// RecordingName is the file name of a run's recording.
const RecordingName = "recording.webm"

// Browser is the browser side of one run (an agent or task run, or the
// browser of a run_action workflow run). Its browser context opens at once
// (Open) or when the run first needs it (New, Acquire): a run whose blocks
// never touch a page never opens one, and then has no recording, no
// screenshot and no browser state. Its methods are not safe for
// concurrent use.
type Browser struct {
	log  *slog.Logger
	bctx *browser.Context // the run's browser context and its tabs; nil until opened
	// opener opens bctx on first use (nil once tried); openErr is why it
	// could not, which every later use returns.
	opener  Opener
	openErr error
	ffmpeg  string // records the run once its browser opens ("" for no recording)
	// recorded is told when the recording starts; nil: nobody.
	recorded func(start time.Time)
	files    *Files
	view     *view
	guard    *egress.Guard // what the run may reach; nil: no policy
	// refusals are those of the browser context's egress proxy; nil
	// without one.
	refusals *Refusals

	tab     context.Context // the tab last acted on
	pages   map[context.Context]*page.Page
	watches map[context.Context]*tabWatch // the loading state of each tab (settle.go)
	rec     *record.Recorder

	privateStart bool // the run loaded a local or private address

	// shared: the browser context belongs to a browser session that
	// outlives the run; Close leaves it open.
	shared bool

	// frameSrc is what Frame shows to viewers of the running run
	// (frame.go).
	frameSrc frameSource

	// secrets are the run's credentials: placeholders typed are revealed
	// at the last moment (TypeText), and what the page shows of them is
	// scrubbed from every observation.
	secrets *secrets.Set
}

// ErrNotOpened is the error of BrowserState for a run that never opened its
// browser: it has no state of its own, and whatever state it started from
// is still the one to keep.
var ErrNotOpened = errors.New("the run opened no browser")

// BrowserState returns the browser state of the run's browser context
// (its cookies and the local storage of its tabs' origins); ErrNotOpened
// when the run never opened one.
func (s *Browser) BrowserState(ctx context.Context) (*browser.State, error) {
	if s.bctx == nil {
		return nil, ErrNotOpened
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return browser.ReadState(tctx, s.bctx)
}

// SetSecrets gives the run's browser the run's credentials.
func (s *Browser) SetSecrets(set *secrets.Set) { s.secrets = set }

// Secrets returns the run's credentials (nil when it has none).
func (s *Browser) Secrets() *secrets.Set { return s.secrets }

// TypeText types text into the element id of pg (page.InputText), with
// the placeholders of the run's credentials replaced by their values as
// the last thing before typing; what the result says is scrubbed of them.
func (s *Browser) TypeText(ctx context.Context, pg *page.Page, id, text string) (page.Result, error) {
	real, secret, err := s.secrets.Reveal(ctx, text)
	if err != nil {
		return page.Result{Reason: err.Error()}, nil
	}
	var res page.Result
	if secret {
		res, err = pg.InputSecret(ctx, id, real)
	} else {
		res, err = pg.InputText(ctx, id, real)
	}
	if secret {
		res.Reason, res.Detail = s.secrets.Scrub(res.Reason), s.secrets.Scrub(res.Detail)
		if err != nil {
			err = scrubbedError{msg: s.secrets.Scrub(err.Error()), err: err}
		}
	}
	return res, err
}

// scrubbedError is an error whose text had secrets replaced; it unwraps to
// the original for errors.Is and errors.As.
type scrubbedError struct {
	msg string
	err error
}

func (e scrubbedError) Error() string { return e.msg }
func (e scrubbedError) Unwrap() error { return e.err }

// scrubObservation replaces, in what an observation shows, the values the
// run's credentials revealed (a one-time code still in its field, a page
// that echoes what was typed) with their placeholders.
func (s *Browser) scrubObservation(obs *page.Observation) {
	if !s.secrets.Revealed() {
		return
	}
	sc := s.secrets.Scrub
	// Where the viewport's text starts moves with what is scrubbed before it.
	at := len(sc(obs.Text[:min(max(obs.TextAt, 0), len(obs.Text))]))
	obs.Rendered, obs.Text, obs.Title, obs.URL = sc(obs.Rendered), sc(obs.Text), sc(obs.Title), sc(obs.URL)
	obs.TextAt = min(at, len(obs.Text))
	for i := range obs.Elements {
		e := &obs.Elements[i]
		e.Text, e.Label, e.Value, e.Placeholder, e.Href = sc(e.Text), sc(e.Label), sc(e.Value), sc(e.Placeholder), sc(e.Href)
	}
}

// Options configure a Browser.
type Options struct {
	// Dir is the run's directory, where its files go.
	Dir string
	// Progress is told of each screenshot.
	Progress executor.Progress
	Logger   *slog.Logger
	// FFmpeg records the run when it is set.
	FFmpeg string
	// HTTP fetches the files to upload.
	HTTP *http.Client
	// Shared: the browser context belongs to a browser session (POST
	// /v1/browser_sessions) that outlives the run: Close leaves it open.
	Shared bool
	// Guard decides what the run may reach: its navigations and the
	// files it fetches (package internal/egress); nil: no policy.
	Guard *egress.Guard
	// Refusals are told the refusals of the browser context's egress
	// proxy, so that a navigation it refused fails with the reason; nil
	// without a proxy.
	Refusals *Refusals
	// Recorded, when set, is told when the run's recording starts (the
	// time its video's 0 shows), once it does.
	Recorded func(start time.Time)
}

// Opener opens the browser context of a run when it first needs one, with
// the refusals of its egress proxy (nil without one).
type Opener func(ctx context.Context) (*browser.Context, *Refusals, error)

// Open returns the Browser of a run over its browser context, open
// already, and starts the recording when ffmpeg is there. A recording that
// cannot start is logged; the run goes on.
func Open(ctx context.Context, bs *browser.Context, o Options) *Browser {
	s := New(o, nil)
	s.opened(ctx, bs)
	return s
}

// New returns the Browser of a run whose browser context opens, through
// open, when the run first needs it (Acquire, or any use of a page).
// o.Refusals is ignored: the opener gives them.
func New(o Options, open Opener) *Browser {
	s := &Browser{
		log: o.Logger, opener: open, ffmpeg: o.FFmpeg, shared: o.Shared, guard: o.Guard, refusals: o.Refusals, recorded: o.Recorded,
		files:   newFiles(o.Dir, o.Progress, o.Logger, o.HTTP),
		pages:   map[context.Context]*page.Page{},
		watches: map[context.Context]*tabWatch{},
	}
	s.view = &view{s: s}
	return s
}

// Acquire opens the run's browser context unless it is open: nil once it
// is. An opening that failed is not tried again: every later call, and
// every action on a page, fails with its error.
func (s *Browser) Acquire(ctx context.Context) error {
	if s.bctx != nil {
		return nil
	}
	if s.openErr != nil {
		return s.openErr
	}
	if s.opener == nil {
		s.openErr = errors.New("the run has no browser")
		return s.openErr
	}
	open := s.opener
	s.opener = nil
	bs, refusals, err := open(ctx)
	if err != nil {
		s.openErr = err
		return err
	}
	s.refusals = refusals
	s.opened(ctx, bs)
	return nil
}

// Opened reports whether the run's browser context is open (or was, before
// Close).
func (s *Browser) Opened() bool { return s.bctx != nil }

// Context returns the run's browser context, nil while it is not open.
func (s *Browser) Context() *browser.Context { return s.bctx }

// opened takes the browser context that opened, and starts the recording.
func (s *Browser) opened(ctx context.Context, bs *browser.Context) {
	s.bctx = bs
	s.frameSrc.open(bs)
	if s.ffmpeg != "" {
		s.startRecording(ctx, s.ffmpeg)
	}
}

func (s *Browser) startRecording(ctx context.Context, ffmpeg string) {
	tab, err := s.bctx.ActiveTab(ctx)
	if err != nil {
		s.log.Warn("no recording: no tab", "error", err)
		return
	}
	rec, err := record.Start(context.WithoutCancel(ctx), tab, filepath.Join(s.files.dir, RecordingName), record.Options{FFmpeg: ffmpeg})
	if err != nil {
		s.log.Warn("the run is not recorded", "error", err)
		return
	}
	s.rec = rec
	s.tab = tab
	s.frameSrc.recording(rec)
	if s.recorded != nil {
		s.recorded(rec.Started())
	}
}

// Files are the run's files.
func (s *Browser) Files() *Files { return s.files }

// AgentView is the run's browser as the agent loop sees it.
func (s *Browser) AgentView() agent.Browser { return s.view }

// Err is why the browser context ended, nil while it is open or was never
// opened.
func (s *Browser) Err() error {
	if s.bctx == nil {
		return nil
	}
	return s.bctx.Err()
}

// Ended says whether an action failed because the browser is gone (see
// browser.Context.Ended); nil when the browser never opened.
func (s *Browser) Ended(ctx context.Context) error {
	if s.bctx == nil {
		return nil
	}
	return s.bctx.Ended(ctx)
}

// page returns the Page of the active tab (the one a popup made active,
// say), and makes the recording follow it. It opens the run's browser
// context when it is not open yet.
func (s *Browser) page(ctx context.Context) (*page.Page, error) {
	if err := s.Acquire(ctx); err != nil {
		return nil, err
	}
	// Immediate unless a tab is opening, which is waited for as long as
	// its attach may take.
	actx, cancel := context.WithTimeout(ctx, browser.TabAttachTimeout)
	tab, err := s.bctx.ActiveTab(actx)
	cancel()
	if err != nil {
		if serr := s.bctx.Ended(ctx); serr != nil {
			return nil, fmt.Errorf("the browser session ended: %w", serr)
		}
		return nil, err
	}
	pg, ok := s.pages[tab]
	if !ok {
		pg = page.New(tab)
		s.pages[tab] = pg
		s.watches[tab] = newTabWatch(tab)
	}
	if tab != s.tab {
		s.tab = tab
		if s.rec != nil {
			if err := s.rec.Follow(tab); err != nil {
				s.log.Debug("the recording does not follow the new tab", "error", err)
			}
		}
	}
	return pg, nil
}

// Navigate loads url in the active tab, once the run's egress allows it
// (CheckNavigation). A page that cannot be loaded fails with the browser's
// reason, one the egress refused with the refusal.
func (s *Browser) Navigate(ctx context.Context, rawURL string) (page.Result, error) {
	pg, err := s.page(ctx)
	if err != nil {
		return page.Result{}, err
	}
	res, err := s.goTo(ctx, pg, rawURL)
	if u, perr := url.Parse(rawURL); perr == nil && agent.IsPrivateHost(u.Hostname()) && !egress.IsRefused(err) {
		s.privateStart = true
	}
	if egress.IsRefused(err) {
		return res, err
	}
	if err != nil {
		// A load that failed because the browser went away says so.
		if ctx.Err() == nil {
			if serr := s.bctx.Ended(ctx); serr != nil {
				return res, fmt.Errorf("the browser session ended: %w", serr)
			}
		}
		if res.Reason != "" {
			return res, errors.New(res.Reason)
		}
		return res, err
	}
	return res, nil
}

// goTo is the one way a run's browser is sent to a URL: checked by the
// run's egress, refused navigations failing with the refusal (Navigate in
// egress.go).
func (s *Browser) goTo(ctx context.Context, pg *page.Page, rawURL string) (page.Result, error) {
	return Navigate(ctx, s.guard, s.refusals, pg, rawURL)
}

// CurrentURL is the URL of the active tab, "" when unknown.
func (s *Browser) CurrentURL(ctx context.Context) string {
	if s.bctx == nil {
		return ""
	}
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	tabs, err := s.bctx.Tabs(tctx)
	if err != nil {
		return ""
	}
	for _, t := range tabs {
		if t.Active {
			return t.URL
		}
	}
	return ""
}

// Click finds the element of a selector (waiting up to timeout) and clicks
// it, once more when the page replaced the element in between.
func (s *Browser) Click(ctx context.Context, selector string, timeout time.Duration) (page.Result, error) {
	var last page.Result
	err := s.OnElement(ctx, selector, timeout, func(pg *page.Page, id string) (page.Result, error) {
		res, err := pg.Click(ctx, id)
		last = res
		return res, err
	})
	return last, err
}

// OnElement resolves a selector (CSS, or XPath with an "xpath=" prefix) in
// the active tab, waiting up to timeout for it to match, and runs fn on the
// element, resolving once more when the page replaced the element in
// between. A selector that matches nothing in time is a *NoMatchError.
func (s *Browser) OnElement(ctx context.Context, selector string, timeout time.Duration, fn func(*page.Page, string) (page.Result, error)) error {
	for attempt := 0; attempt < 2; attempt++ {
		pg, id, err := s.resolve(ctx, selector, timeout)
		if err != nil {
			return err
		}
		res, err := fn(pg, id)
		if errors.Is(err, page.ErrStaleID) {
			continue
		}
		if err != nil {
			return ActionErr(res, err)
		}
		if !res.OK {
			return errors.New(res.Reason)
		}
		return nil
	}
	return fmt.Errorf("the element of %q kept being replaced by the page", selector)
}

// resolve finds the element of a selector in the active tab.
func (s *Browser) resolve(ctx context.Context, selector string, timeout time.Duration) (*page.Page, string, error) {
	pg, err := s.page(ctx)
	if err != nil {
		return nil, "", err
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	id, err := pg.Resolve(rctx, selector)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if errors.Is(err, page.ErrNoMatch) {
			return nil, "", &NoMatchError{Selector: selector, Timeout: timeout}
		}
		if serr := s.bctx.Ended(ctx); serr != nil {
			return nil, "", fmt.Errorf("the browser session ended: %w", serr)
		}
		return nil, "", err
	}
	return pg, id, nil
}

// NoMatchError is a selector that matched nothing in time.
type NoMatchError struct {
	Selector string
	Timeout  time.Duration
}

func (e *NoMatchError) Error() string {
	return fmt.Sprintf("no element matches the selector %q within %d ms", e.Selector, e.Timeout.Milliseconds())
}

func (e *NoMatchError) Unwrap() error { return page.ErrNoMatch }

// ActionErr is the error of an action that failed, with the reason its
// Result gives when that says more.
func ActionErr(res page.Result, err error) error {
	if res.Reason != "" && res.Reason != err.Error() {
		return fmt.Errorf("%s: %w", res.Reason, err)
	}
	return err
}

// Screenshot takes a JPEG of the active tab into the run's directory and
// reports it. Failures are logged: a missing screenshot never fails a run.
// A run whose browser never opened has nothing to show: no screenshot.
func (s *Browser) Screenshot(ctx context.Context) {
	if s.bctx == nil || ctx.Err() != nil || s.bctx.Err() != nil {
		return
	}
	pg, err := s.page(ctx)
	if err != nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	jpg, err := pg.Screenshot(sctx, 0)
	if err != nil {
		s.log.Debug("no screenshot", "error", err)
		return
	}
	s.files.keepScreenshot(jpg)
}

// LookNow reads the active page as it is, after a short settle. The
// screenshot of the observation is kept as a run screenshot.
func (s *Browser) LookNow(ctx context.Context) (*page.Page, *page.Observation, error) {
	pg, err := s.page(ctx)
	if err != nil {
		return nil, nil, s.browserErr(ctx, err)
	}
	settle(ctx, pg, s.watches[s.tab])
	obs, _, err := s.look(ctx, pg)
	if err != nil {
		return nil, nil, s.browserErr(ctx, err)
	}
	return pg, obs, nil
}

// look observes the page with a screenshot (kept as a run screenshot),
// the tabs when there are several, and the dialogs answered since the last
// look. tabIDs maps the short ids of the tabs listed to their targets.
func (s *Browser) look(ctx context.Context, pg *page.Page) (_ *page.Observation, tabIDs map[string]string, _ error) {
	opts := page.ObserveOptions{Screenshot: true, Budget: agent.ObserveBudget}
	tctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	tabs, err := s.bctx.Tabs(tctx)
	cancel()
	if err == nil && len(tabs) > 1 {
		tabIDs = map[string]string{}
		for _, t := range tabs {
			short := fmt.Sprintf("t%d", t.Index+1)
			tabIDs[short] = t.ID
			opts.Tabs = append(opts.Tabs, page.Tab{ID: short, Title: t.Title, URL: t.URL, Active: t.Active})
		}
	}
	for _, d := range s.bctx.Dialogs() {
		msg := d.Type + ": " + d.Message
		if d.Type == "prompt" || d.Type == "confirm" {
			if d.Accepted {
				msg += " (accepted)"
			} else if d.Type == "prompt" {
				msg += " (dismissed: no answer was given; answer_dialog gives one to the next prompt)"
			} else {
				msg += " (dismissed)"
			}
		}
		opts.Dialogs = append(opts.Dialogs, msg)
	}
	octx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	obs, err := pg.Observe(octx, opts)
	if err != nil {
		return nil, tabIDs, err
	}
	if len(obs.Screenshot) > 0 {
		obs.Kept = s.files.keepScreenshot(obs.Screenshot)
	}
	s.scrubObservation(obs)
	return obs, tabIDs, nil
}

// browserErr says why the page could not be read: the browser ended, or
// the page failed.
func (s *Browser) browserErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// A browser that went away fails the page first; the browser context learns why
	// a moment later.
	if serr := s.Ended(ctx); serr != nil {
		return fmt.Errorf("the browser session ended: %w", serr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("the page could not be read: %w", err)
}

// Tab is a tab of the run's browser, for what concerns its whole document.
type Tab struct{ ctx context.Context }

// ActiveTab returns the active tab.
func (s *Browser) ActiveTab(ctx context.Context) (Tab, error) {
	if _, err := s.page(ctx); err != nil {
		return Tab{}, err
	}
	return Tab{s.tab}, nil
}

// Title is the title of the tab's document, or "page".
func (t Tab) Title(ctx context.Context) string {
	tctx, cancel := onTab(t.ctx, ctx, 3*time.Second)
	defer cancel()
	title, err := chromedp.Run(tctx, chromedp.Title())
	if err != nil || strings.TrimSpace(title) == "" {
		return "page"
	}
	return title
}

// PDF says how a tab is printed.
type PDF struct {
	Landscape, Background bool
	// Width and Height are the paper's, in inches.
	Width, Height float64
}

// PrintPDF prints the tab's document to PDF.
func (t Tab) PrintPDF(ctx context.Context, o PDF) ([]byte, error) {
	pctx, cancel := onTab(t.ctx, ctx, 60*time.Second)
	defer cancel()
	res, err := chromedp.Call(pctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{
		Landscape:       &o.Landscape,
		PrintBackground: &o.Background,
		PaperWidth:      o.Width,
		PaperHeight:     o.Height,
	})
	if err != nil {
		return nil, err
	}
	return res.Data, nil
}

// onTab returns a context with tab's chromedp values that ends with ctx or
// after d.
func onTab(tab, ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithTimeout(tab, d)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// Mark is the downloads of the run's browser at a moment: WaitDownload waits for
// one after it.
type Mark struct{ done, failed int }

// Mark returns the downloads of the run's browser now (none before it
// opens).
func (s *Browser) Mark() Mark {
	if s.bctx == nil {
		return Mark{}
	}
	return Mark{done: len(s.bctx.Downloads().Completed()), failed: len(s.bctx.Downloads().Failed())}
}

// WaitDownload waits until a download that started after m completes, up
// to timeout, and returns the names of the new files.
func (s *Browser) WaitDownload(ctx context.Context, m Mark, timeout time.Duration) ([]string, error) {
	if err := s.Acquire(ctx); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		done := s.bctx.Downloads().Completed()
		if len(done) > m.done && s.bctx.Downloads().Pending() == 0 {
			break
		}
		if failed := s.bctx.Downloads().Failed(); len(failed) > m.failed && len(done) == m.done && s.bctx.Downloads().Pending() == 0 {
			f := failed[len(failed)-1]
			return nil, fmt.Errorf("the download of %s failed: %s", f.Name, f.Reason)
		}
		if err := s.bctx.Err(); err != nil {
			return nil, fmt.Errorf("the browser session ended: %w", err)
		}
		if time.Now().After(deadline) {
			if len(done) > m.done {
				break // a later download is still running; keep what finished
			}
			if s.bctx.Downloads().Pending() > 0 {
				return nil, fmt.Errorf("the download did not finish within %s", timeout)
			}
			return nil, fmt.Errorf("no download started within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
	}
	added := s.SyncDownloads()
	if len(added) == 0 {
		return nil, errors.New("the download finished but its file could not be kept")
	}
	return added, nil
}

// SyncDownloads adds the downloads the browser completed since the last
// call to the run's files, renaming a file whose name the artifact store
// would refuse. It returns the names added.
func (s *Browser) SyncDownloads() []string {
	if s.bctx == nil {
		return nil
	}
	return s.files.sync(s.bctx.Downloads().Completed())
}

// Close ends the browser side of the run: it waits for downloads in
// progress (bounded), stops the recording, closes the browser context and
// removes the temporary files. It returns the recording's file name, ""
// when there is none. When ctx is done it hurries, since the daemon waits
// for the run to return. A Browser that never opened only removes its
// temporary files, and can no longer open.
func (s *Browser) Close(ctx context.Context) (recording string) {
	s.frameSrc.close()
	if s.bctx == nil {
		s.opener = nil
		if s.openErr == nil {
			s.openErr = errors.New("the run's browser is closed")
		}
		s.files.removeTemp()
		return ""
	}
	budget := 60 * time.Second
	if ctx.Err() != nil {
		budget = 1500 * time.Millisecond
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), budget)
	defer cancel()
	if ctx.Err() == nil && s.bctx.Err() == nil {
		wctx, wcancel := context.WithTimeout(cctx, 30*time.Second)
		if err := s.bctx.Downloads().Wait(wctx); err != nil {
			s.log.Warn("downloads left unfinished", "error", err)
		}
		wcancel()
	}
	s.SyncDownloads()
	if s.rec != nil {
		s.rec.EndCapture(cctx)
	}
	for _, pg := range s.pages {
		pg.Close()
	}
	if !s.shared {
		// Before the video is encoded: the run's place on the browser is
		// free for the next run while ffmpeg finishes.
		if err := s.bctx.Close(cctx); err != nil {
			s.log.Debug("closing the browser context", "error", err)
		}
	}
	if s.rec != nil {
		path, err := s.rec.Stop(cctx)
		switch {
		case err == nil:
			recording = filepath.Base(path)
		case errors.Is(err, record.ErrNoFrames):
			s.log.Info("no recording: no frame was captured")
		default:
			s.log.Warn("the recording could not be finished", "error", err)
		}
	}
	s.files.removeTemp()
	return recording
}
