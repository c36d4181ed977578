// Package browser runs the browsers of the local execution engine: one warm
// Chromium per daemon (or a remote browser reached over CDP), and one isolated
// browser context per run.
//
// A [Pool] owns the browsers. [Pool.Acquire] gives a run its [Context]: a fresh
// browser context (cookies, storage, cache and downloads of its own) with one
// tab. A tab is a chromedp context (see [Context.Tab]); the observation and
// action code drives it with chromedp and cdproto.
//
// The browser context follows the tabs that the page opens (target=_blank links,
// window.open), answers JavaScript dialogs by itself and records them, and
// saves downloads under their real names within size and count limits.
// [Context.Close] disposes of the browser context directly.
//
// If the local Chromium dies, the browser contexts on it end with an error that says
// so (see [Context.Done] and [Context.Err]), and the pool starts a new browser
// for the next run. A remote browser is never closed: the pool only closes the
// browser contexts it created and its own connection.
//
// With [Options.Endpoints], the pool runs no browser of its own: it places
// each run on the least loaded healthy browser of a fleet, queues the runs
// when the fleet is full or down, and reports the fleet's state in
// [Pool.Status].
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// EnvChromium is the environment variable that names the Chromium binary when
// [Options.ChromiumPath] is empty.
const EnvChromium = "ABCTL_CHROMIUM"

// chromiumNames are the program names that FindChromium looks for on PATH, in
// order.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ErrNoChromium is the error (wrapped) of FindChromium, NewPool and Acquire when
// no Chromium binary is found.
var ErrNoChromium = errors.New("no Chromium browser found")

// ErrPoolClosed is the error of Acquire after Close.
var ErrPoolClosed = errors.New("browser pool is closed")

// ErrContextClosed is the error of a browser context that its owner closed. Err returns
// it after Close.
var ErrContextClosed = errors.New("browser session is closed")

// DefaultViewportWidth and DefaultViewportHeight are the viewport of every
// tab when Options.Viewport is zero (device scale factor 1).
const (
	DefaultViewportWidth  = 1280
	DefaultViewportHeight = 720
)

// TabAttachTimeout bounds the attach to a tab that a page opened: a caller
// waiting for a new tab to be ready (Context.ActiveTab) waits no longer.
const TabAttachTimeout = 15 * time.Second

const (
	startTimeout  = 60 * time.Second // launch of a local browser or connection to a remote one
	quickDeath    = 10 * time.Second // a browser that dies sooner counts against eager restarts
	closeTimeout  = 10 * time.Second // graceful close of the local browser
	attachTimeout = TabAttachTimeout
	callTimeout   = 5 * time.Second // background protocol calls (dialogs, cancels)
)

// Options configures a Pool.
type Options struct {
	// ChromiumPath is the browser binary. Empty: $ABCTL_CHROMIUM, then the first
	// of chromium, chromium-browser, google-chrome, google-chrome-stable on PATH.
	ChromiumPath string
	// ExtraFlags are added to the command line of the local browser, such as
	// "--proxy-server=http://127.0.0.1:3128" or "--lang=de". A flag given here
	// replaces a default flag of the same name.
	ExtraFlags []string
	// RemoteURL is a daemon-wide remote browser (http://host:9222 or
	// ws://host:9222/devtools/browser/...). When it is set, runs use it unless
	// they name their own ContextOptions.BrowserAddress, and no local browser
	// starts.
	RemoteURL string
	// Viewport is the CSS viewport of every tab, {width, height}. Zero: 1280x720.
	// The device scale factor is always 1, so screenshot pixels are CSS pixels.
	Viewport [2]int
	// Logger receives the diagnostics of the pool. Nil: slog.Default().
	Logger *slog.Logger

	// Endpoints are the remote browsers of the fleet; when set, runs without
	// their own BrowserAddress are placed on one of them and no local browser starts.
	Endpoints []Endpoint
	// QueueTimeout bounds how long Acquire waits for an endpoint with room (default 2 minutes);
	// MaxQueue bounds how many wait at once (default 256; beyond it Acquire fails at once).
	QueueTimeout time.Duration
	MaxQueue     int
	// HealthInterval is how often idle endpoints are checked (default 5 s).
	HealthInterval time.Duration

	// DevTools is told the DevTools addresses (host:port) of the browsers
	// the pool reaches and what they are, so that the daemon keeps the
	// pages of runs away from them: each local Chromium it starts (a
	// restart too) when it listens on a port, and the websocket address a
	// fleet endpoint's /json/version names when it is not the endpoint's
	// own (a hosted service's browser). The local Chromium is driven over
	// a pipe (chromedp's default), so it opens no DevTools port unless
	// ExtraFlags ask for one.
	DevTools func(addr, what string)
}

// FindChromium returns the absolute path of the Chromium binary. A non-empty
// path is checked (a name without a slash is looked up on PATH); an empty path
// means $ABCTL_CHROMIUM, then chromium, chromium-browser, google-chrome and
// google-chrome-stable on PATH. The error wraps ErrNoChromium and says how to
// install Chromium or point to it.
func FindChromium(path string) (string, error) {
	const hint = "install it (Debian/Ubuntu: apt-get install chromium) or give its path with --chromium or " + EnvChromium
	source := "--chromium"
	if path == "" {
		if env := os.Getenv(EnvChromium); env != "" {
			path, source = env, EnvChromium
		}
	}
	if path != "" {
		found, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w: %s=%q is not an executable file (%v); %s", ErrNoChromium, source, path, err, hint)
		}
		if abs, err := filepath.Abs(found); err == nil {
			found = abs
		}
		return found, nil
	}
	for _, name := range chromiumNames {
		if found, err := exec.LookPath(name); err == nil {
			if abs, err := filepath.Abs(found); err == nil {
				found = abs
			}
			return found, nil
		}
	}
	return "", fmt.Errorf("%w: none of %s is on PATH; %s", ErrNoChromium, strings.Join(chromiumNames, ", "), hint)
}

// Pool owns the browsers of a daemon: one warm local Chromium, restarted when
// it dies, and connections to remote browsers. It is safe for concurrent use.
type Pool struct {
	opts     Options
	log      *slog.Logger
	viewport [2]int
	execPath string // "" until a local browser is needed
	fleet    *fleet // nil without Options.Endpoints

	mu          sync.Mutex
	closed      bool
	browsers    map[string]*slot // "" = local, else the remote address
	sessions    map[*Context]struct{}
	quickDeaths int // local browsers in a row that died soon after their start

	wg sync.WaitGroup // background goroutines (restarts, tab cancels, watchers)

	staging    sync.Once // makes stagingDir
	stagingDir string    // where local browsers write unfinished downloads; removed by Close
	stagingErr error
}

// stagingParent returns the pool's directory for unfinished downloads of
// local browsers, creating it on first use in the system's temporary
// directory. Each browser context stages in a directory of its own below it.
func (p *Pool) stagingParent() (string, error) {
	p.staging.Do(func() {
		p.stagingDir, p.stagingErr = os.MkdirTemp("", "abctl-downloads-")
		if p.stagingErr != nil {
			p.stagingErr = fmt.Errorf("creating the download staging directory: %w", p.stagingErr)
		}
	})
	return p.stagingDir, p.stagingErr
}

// slot is the browser for one address, or its start in progress.
type slot struct {
	inst  *instance
	start *startCall
}

// startCall is one start of a browser that several Acquire calls can wait for.
type startCall struct {
	done chan struct{}
	inst *instance
	err  error
}

// NewPool makes a pool. Unless o.RemoteURL or o.Endpoints is set, it finds
// Chromium and starts the warm local browser; ctx bounds that start only, not
// the life of the browser, which lasts until Close. With o.Endpoints, it
// checks each endpoint once (an endpoint that does not answer starts down)
// and starts their health checks.
func NewPool(ctx context.Context, o Options) (*Pool, error) {
	p := &Pool{
		opts:     o,
		log:      o.Logger,
		viewport: o.Viewport,
		browsers: make(map[string]*slot),
		sessions: make(map[*Context]struct{}),
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.viewport[0] <= 0 || p.viewport[1] <= 0 {
		p.viewport = [2]int{DefaultViewportWidth, DefaultViewportHeight}
	}
	if len(o.Endpoints) > 0 {
		f, err := newFleet(p, o)
		if err != nil {
			return nil, err
		}
		p.fleet = f
		f.start(ctx)
		return p, nil
	}
	if o.RemoteURL != "" {
		if err := checkRemoteURL(o.RemoteURL); err != nil {
			return nil, err
		}
		return p, nil
	}
	path, err := FindChromium(o.ChromiumPath)
	if err != nil {
		return nil, err
	}
	p.execPath = path
	inst, err := p.acquireBrowser(ctx, "")
	if err != nil {
		return nil, err
	}
	p.releaseBrowser(inst)
	return p, nil
}

// checkRemoteURL rejects an address that cannot name a CDP endpoint.
func checkRemoteURL(addr string) error {
	switch {
	case strings.HasPrefix(addr, "http://"), strings.HasPrefix(addr, "https://"),
		strings.HasPrefix(addr, "ws://"), strings.HasPrefix(addr, "wss://"):
		return nil
	}
	return fmt.Errorf("browser address %q: want http://host:port or ws://host:port/devtools/browser/...", addr)
}

// Close closes every browser context, closes the local browser and the connections to
// remote browsers (never a remote browser itself), and waits for the
// background work of the pool. It is idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return nil
	}
	p.closed = true
	if p.fleet != nil {
		p.fleet.shutdown() // before the browser contexts close: their places go to nobody
	}
	sessions := make([]*Context, 0, len(p.sessions))
	for s := range p.sessions {
		sessions = append(sessions, s)
	}
	p.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	for _, s := range sessions {
		s.Close(ctx)
	}

	p.mu.Lock()
	var insts []*instance
	var starts []*startCall
	for addr, sl := range p.browsers {
		if sl.inst != nil {
			insts = append(insts, sl.inst)
		}
		if sl.start != nil {
			starts = append(starts, sl.start)
		}
		delete(p.browsers, addr)
	}
	p.mu.Unlock()
	for _, c := range starts { // a start in progress closes its browser itself
		<-c.done
	}
	var errs []error
	for _, inst := range insts {
		errs = append(errs, inst.close())
	}
	p.wg.Wait()
	// The browsers are gone: nothing writes in the staging directory now.
	p.staging.Do(func() {}) // no directory is made after this
	if p.stagingDir != "" {
		if err := os.RemoveAll(p.stagingDir); err != nil {
			errs = append(errs, fmt.Errorf("removing the download staging directory: %w", err))
		}
	}
	return errors.Join(errs...)
}

// acquireBrowser returns the live browser for addr ("" = local), starting it
// when needed, and takes a reference that releaseBrowser gives back. Starts are
// shared: concurrent callers wait for one start, and a caller that gives up
// (ctx) does not stop it.
func (p *Pool) acquireBrowser(ctx context.Context, addr string) (*instance, error) {
	for attempt := 0; attempt < 3; attempt++ {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrPoolClosed
		}
		sl := p.browsers[addr]
		if sl == nil {
			sl = &slot{}
			p.browsers[addr] = sl
		}
		if inst := sl.inst; inst != nil && inst.alive() {
			inst.refs++
			p.mu.Unlock()
			return inst, nil
		}
		sl.inst = nil
		c := sl.start
		if c == nil {
			c = &startCall{done: make(chan struct{})}
			sl.start = c
			p.wg.Add(1)
			go p.startBrowser(addr, c)
		}
		p.mu.Unlock()

		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if c.err != nil {
			return nil, c.err
		}
		// The new browser can have died already; then start another.
	}
	return nil, fmt.Errorf("the browser at %s keeps dying at start", displayAddr(addr))
}

// fleetIdleKeep is how long the connection to a fleet endpoint stays open
// once no browser context uses it. The next run reuses it instead of
// connecting again (the look-up of /json/version, the websocket handshake,
// the target discovery: round trips that would hold its place on the
// endpoint while no page runs), and a fleet that went idle lets go of the
// browsers of a hosted service, where a connection can hold (and bill) a
// browser.
const fleetIdleKeep = 30 * time.Second

// releaseBrowser gives back a reference of acquireBrowser. A remote connection
// that no browser context uses any more is closed, unless it is the daemon-wide one;
// a fleet endpoint's after fleetIdleKeep, unless a browser context uses it again.
func (p *Pool) releaseBrowser(inst *instance) {
	p.mu.Lock()
	inst.refs--
	if inst.refs <= 0 && !p.closed && p.fleetEndpoint(inst.addr) != nil {
		inst.idleGen++
		gen := inst.idleGen
		p.mu.Unlock()
		time.AfterFunc(fleetIdleKeep, func() { p.closeIdle(inst, gen) })
		return
	}
	idle := p.dropIdleLocked(inst)
	p.mu.Unlock()
	if idle {
		p.wg.Go(func() { inst.close() })
	}
}

// closeIdle closes the connection to a fleet endpoint that no browser
// context used since its release number gen.
func (p *Pool) closeIdle(inst *instance, gen uint64) {
	p.mu.Lock()
	if p.closed || inst.refs > 0 || inst.idleGen != gen || !p.dropIdleLocked(inst) {
		p.mu.Unlock()
		return
	}
	p.wg.Add(1) // under p.mu: Close has not begun, so it waits for this
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		inst.close()
	}()
}

// dropIdleLocked takes a remote connection that no browser context uses
// out of its slot, unless it is the daemon-wide one; it reports whether it
// did (the caller then closes it).
func (p *Pool) dropIdleLocked(inst *instance) bool {
	sl := p.browsers[inst.addr]
	idle := inst.refs <= 0 && inst.remote && inst.addr != p.opts.RemoteURL && sl != nil && sl.inst == inst
	if idle {
		sl.inst = nil
		if sl.start == nil {
			delete(p.browsers, inst.addr)
		}
	}
	return idle
}

// startBrowser starts the browser for addr and publishes it in its slot.
func (p *Pool) startBrowser(addr string, c *startCall) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var inst *instance
	var err error
	if addr == "" {
		inst, err = p.startLocal(ctx)
	} else {
		inst, err = p.connectRemote(ctx, addr)
	}

	p.mu.Lock()
	closed := p.closed
	if sl := p.browsers[addr]; sl != nil && sl.start == c {
		sl.start = nil
		if err == nil && !closed {
			sl.inst = inst
		}
	}
	p.mu.Unlock()
	if err == nil && closed {
		inst.close()
		err = ErrPoolClosed
	}
	c.inst, c.err = inst, err
	close(c.done)
	if err == nil {
		p.wg.Go(func() { p.watch(addr, inst) })
	}
}

// localFlags returns the command line of the local browser.
func (p *Pool) localFlags() []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(p.execPath)}
	opts = append(opts, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts,
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-domain-reliability", true),
		// WebRTC sends no UDP around the proxy of a run's browser context
		// (its egress proxy): no peer connection reaches what the proxy
		// would refuse, nor reveals the machine's addresses.
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		// No idle about:blank tab: every run gets its own browser context, so
		// the startup tab would only hold a renderer (~150 MiB PSS) for nothing.
		chromedp.Flag("no-startup-window", true),
		chromedp.WindowSize(p.viewport[0], p.viewport[1]),
	)
	for _, f := range p.opts.ExtraFlags {
		name, value, hasValue := strings.Cut(strings.TrimLeft(f, "-"), "=")
		if name == "" {
			continue
		}
		if hasValue {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	return opts
}

// startLocal launches the local Chromium.
func (p *Pool) startLocal(ctx context.Context) (*instance, error) {
	if p.execPath == "" {
		path, err := FindChromium(p.opts.ChromiumPath)
		if err != nil {
			return nil, err
		}
		p.execPath = path
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), p.localFlags()...)
	inst, err := p.startInstance(ctx, allocCtx, allocCancel, "", false)
	if err != nil {
		return nil, fmt.Errorf("starting Chromium %s: %w", p.execPath, err)
	}
	p.log.Debug("browser started", "path", p.execPath, "pid", inst.pid())
	if p.opts.DevTools != nil {
		if addr := localDevTools(inst.pid()); addr != "" {
			p.opts.DevTools(addr, "the DevTools of the local Chromium")
		}
	}
	return inst, nil
}

// localDevTools returns the DevTools address (127.0.0.1:port) of the
// local Chromium of process pid, "" when it listens on none: driven over a
// pipe, it has no port; with --remote-debugging-port (an ExtraFlag), the
// port it took is the first line of DevToolsActivePort in its user data
// directory. Its command line is read from /proc (Linux); elsewhere it
// returns "".
func localDevTools(pid int) string {
	if pid <= 0 {
		return ""
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	var dataDir, port string
	listens := false
	for _, arg := range strings.Split(string(raw), "\x00") {
		if v, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			dataDir = v
		}
		if v, ok := strings.CutPrefix(arg, "--remote-debugging-port="); ok {
			listens, port = true, v
		}
	}
	if !listens {
		return ""
	}
	if port != "0" && port != "" {
		return "127.0.0.1:" + port
	}
	if dataDir == "" {
		return ""
	}
	// Chromium writes the file once it listens, which it does before it
	// answers the first DevTools call.
	for range 50 {
		b, err := os.ReadFile(filepath.Join(dataDir, "DevToolsActivePort"))
		if line, _, ok := strings.Cut(string(b), "\n"); err == nil && ok && line != "" && line != "0" {
			return "127.0.0.1:" + line
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ""
}

// connectRemote connects to a browser that runs already.
func (p *Pool) connectRemote(ctx context.Context, addr string) (*instance, error) {
	if err := checkRemoteURL(addr); err != nil {
		return nil, err
	}
	if ep := p.fleetEndpoint(addr); ep != nil {
		allocCtx, allocCancel, err := p.fleet.allocator(ctx, ep)
		if err == nil {
			var inst *instance
			if inst, err = p.startInstance(ctx, allocCtx, allocCancel, addr, true); err == nil {
				p.log.Debug("connected to browser endpoint", "endpoint", ep.name, "url", ep.display)
				return inst, nil
			}
		}
		// The endpoint's status and the run's error name it already.
		return nil, fmt.Errorf("connecting: %w", err)
	}
	allocCtx, allocCancel := remote.NewAllocator(context.Background(), addr)
	inst, err := p.startInstance(ctx, allocCtx, allocCancel, addr, true)
	if err != nil {
		return nil, fmt.Errorf("connecting to the browser at %s: %w", addr, err)
	}
	p.log.Debug("connected to remote browser", "address", addr)
	return inst, nil
}

// startInstance allocates the browser of allocCtx and prepares it: target
// discovery, and the listener that routes browser events to browser contexts.
func (p *Pool) startInstance(ctx context.Context, allocCtx context.Context, allocCancel context.CancelFunc, addr string, isRemote bool) (*instance, error) {
	inst := &instance{
		started:   time.Now(),
		pool:      p,
		addr:      addr,
		remote:    isRemote,
		allocStop: allocCancel,
		byContext: make(map[cdp.BrowserContextID]*Context),
		owner:     make(map[string]*Context),
		dlOwner:   make(map[string]*Context),
		guards:    make(map[target.SessionID]*dialogGuard),
	}
	logf := func(format string, args ...any) { p.log.Debug("chromedp: " + fmt.Sprintf(format, args...)) }
	inst.ctx, inst.cancel = chromedp.NewContext(allocCtx,
		chromedp.WithBrowserOption(chromedp.WithBrowserLogf(logf), chromedp.WithBrowserErrorf(logf)))

	// The first use of the context starts (or connects to) the browser and
	// binds its life to inst.ctx, so it must be inst.ctx itself; ctx only
	// bounds the start.
	stop := context.AfterFunc(ctx, inst.cancel)
	err := chromedp.ListenBrowser(inst.ctx, inst.onEvent)
	if err == nil {
		inst.b = chromedp.FromContext(inst.ctx).Browser
		_, err = cdp.Call(ctx, inst.b, target.SetDiscoverTargets, target.SetDiscoverTargetsParams{Discover: true})
	}
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		inst.cancel()
		allocCancel()
		return nil, err
	}
	return inst, nil
}

// watch waits for the end of a browser. If it ended without Close, the
// browser contexts on it fail with the reason, and a local browser is started again
// for the next runs.
func (p *Pool) watch(addr string, inst *instance) {
	<-inst.ctx.Done()
	inst.mu.Lock()
	closing := inst.closing
	inst.mu.Unlock()
	if closing {
		return
	}
	reason := inst.deathReason()
	if p.fleet != nil {
		reason = p.fleet.lost(inst, reason)
	}
	inst.setDead(reason)
	p.log.Warn("browser lost", "browser", displayAddr(addr), "err", reason)

	p.mu.Lock()
	restart := false
	if addr == "" {
		if time.Since(inst.started) < quickDeath {
			p.quickDeaths++
		} else {
			p.quickDeaths = 0
		}
	}
	if sl := p.browsers[addr]; sl != nil && sl.inst == inst {
		sl.inst = nil
		// Start the next browser at once, unless the browsers keep dying:
		// then the next Acquire starts one (and reports its error).
		restart = addr == "" && !p.closed && sl.start == nil && p.quickDeaths < 3
		if restart {
			sl.start = &startCall{done: make(chan struct{})}
			p.wg.Add(1)
			go p.startBrowser(addr, sl.start)
		}
	}
	p.mu.Unlock()
	inst.allocStop()
}

// displayAddr names a browser in messages.
func displayAddr(addr string) string {
	if addr == "" {
		return "local Chromium"
	}
	return redactURL(addr)
}

// fleetEndpoint returns the endpoint of the fleet whose URL is addr, or nil.
func (p *Pool) fleetEndpoint(addr string) *endpoint {
	if p.fleet == nil {
		return nil
	}
	return p.fleet.byURL[addr]
}

// instance is one browser: the local process or a connection to a remote one.
type instance struct {
	pool      *Pool
	addr      string
	remote    bool
	started   time.Time
	ctx       context.Context // chromedp context of the browser (no target)
	cancel    context.CancelFunc
	allocStop context.CancelFunc
	b         *chromedp.Browser

	mu        sync.Mutex
	refs      int    // guarded by pool.mu
	idleGen   uint64 // guarded by pool.mu: counts the times refs fell to 0 (closeIdle)
	closing   bool
	dead      error
	byContext map[cdp.BrowserContextID]*Context
	owner     map[string]*Context // target and frame ids → browser context
	dlOwner   map[string]*Context // download guid → browser context
	guards    map[target.SessionID]*dialogGuard
}

func (inst *instance) pid() int {
	if pr := inst.b.Process(); pr != nil {
		return pr.Pid
	}
	return 0
}

func (inst *instance) alive() bool {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	return inst.dead == nil && !inst.closing && inst.ctx.Err() == nil
}

// lost reports whether the connection to the browser has dropped or the
// browser's context ended (the watcher then fails the browser contexts with the
// reason). A tab's action can fail with the dropped connection before the
// browser's context ends.
func (inst *instance) lost() bool {
	if inst.ctx.Err() != nil {
		return true
	}
	select {
	case <-inst.b.LostConnection:
		return true
	default:
		return false
	}
}

// deathReason explains why the browser context ended without Close.
func (inst *instance) deathReason() error {
	if inst.remote {
		return fmt.Errorf("lost the connection to the remote browser at %s", inst.addr)
	}
	// After the death, a call returns the exit error of the process (chromedp
	// waits up to a second for the process to be reaped).
	_, err := chromedp.CallBrowser(inst.ctx, cdpbrowser.GetVersion, cdp.Empty{})
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return fmt.Errorf("the browser process exited unexpectedly: %v", exitErr)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("the browser process exited unexpectedly: %v", err)
	}
	return errors.New("the browser process exited unexpectedly (lost the connection to it)")
}

// setDead records the end of the browser and fails its browser contexts.
func (inst *instance) setDead(reason error) {
	inst.mu.Lock()
	if inst.dead == nil {
		inst.dead = reason
	}
	sessions := make([]*Context, 0, len(inst.byContext))
	for _, s := range inst.byContext {
		sessions = append(sessions, s)
	}
	inst.mu.Unlock()
	for _, s := range sessions {
		s.fail(reason)
	}
}

// close stops the local browser gracefully, or closes the connection to a
// remote browser (never the browser itself).
func (inst *instance) close() error {
	inst.mu.Lock()
	if inst.closing {
		inst.mu.Unlock()
		return nil
	}
	inst.closing = true
	inst.mu.Unlock()
	var err error
	if inst.remote {
		inst.cancel()
	} else if inst.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(inst.ctx, closeTimeout)
		err = chromedp.Cancel(ctx)
		cancel()
		inst.cancel()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
	}
	inst.allocStop()
	inst.setDead(ErrPoolClosed)
	return err
}

// register routes the events of a browser context to s.
func (inst *instance) register(id cdp.BrowserContextID, s *Context) error {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.dead != nil {
		return inst.dead
	}
	inst.byContext[id] = s
	return nil
}

// unregister stops the routing to s.
func (inst *instance) unregister(s *Context) {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	if inst.byContext[s.contextID] == s {
		delete(inst.byContext, s.contextID)
	}
	for k, v := range inst.owner {
		if v == s {
			delete(inst.owner, k)
		}
	}
	for k, v := range inst.dlOwner {
		if v == s {
			delete(inst.dlOwner, k)
		}
	}
	for k, g := range inst.guards {
		if g.s == s {
			delete(inst.guards, k)
		}
	}
}

// setOwner records that a target or frame id belongs to s (downloads name the
// frame that started them).
func (inst *instance) setOwner(id string, s *Context) {
	inst.mu.Lock()
	if inst.byContext[s.contextID] == s {
		inst.owner[id] = s
	}
	inst.mu.Unlock()
}

// onEvent runs on the reader goroutine of the browser connection: it must
// only route, never block or call the browser.
func (inst *instance) onEvent(ev any) {
	var s *Context
	inst.mu.Lock()
	switch ev := ev.(type) {
	case *target.EventTargetCreated:
		if info := ev.TargetInfo; info != nil && info.BrowserContextID != "" {
			if s = inst.byContext[info.BrowserContextID]; s != nil {
				inst.owner[string(info.TargetID)] = s
			}
		}
	case *target.EventTargetDestroyed:
		s = inst.owner[string(ev.TargetID)]
		delete(inst.owner, string(ev.TargetID))
	case *target.EventTargetCrashed:
		s = inst.owner[string(ev.TargetID)]
	case *cdpbrowser.EventDownloadWillBegin:
		if s = inst.owner[string(ev.FrameID)]; s != nil {
			inst.dlOwner[ev.GUID] = s
		} else if len(inst.byContext) == 1 {
			for _, only := range inst.byContext {
				s = only
			}
			inst.dlOwner[ev.GUID] = s
		}
	case *cdpbrowser.EventDownloadProgress:
		s = inst.dlOwner[ev.GUID]
		if s == nil && ev.State != cdpbrowser.DownloadProgressStateInProgress {
			s = inst.ownerOfDownloadLocked(ev)
		}
		if ev.State != cdpbrowser.DownloadProgressStateInProgress {
			delete(inst.dlOwner, ev.GUID)
		}
	case *target.EventReceivedMessageFromTarget:
		if g := inst.guards[ev.SessionID]; g != nil && isGuardNews(ev.Message) {
			s = g.s
			ev2 := guardMessage{guard: g, raw: ev.Message}
			inst.mu.Unlock()
			s.events.push(ev2)
			return
		}
	}
	inst.mu.Unlock()
	if s != nil {
		if tc, ok := ev.(*target.EventTargetCreated); ok && isTab(tc.TargetInfo) {
			s.announced.Add(1) // before the worker can take it in
		}
		s.events.push(ev)
	}
}

// ownerOfDownloadLocked finds the browser context of a download whose start was not
// routed (an unknown frame), by the directory the file landed in.
func (inst *instance) ownerOfDownloadLocked(ev *cdpbrowser.EventDownloadProgress) *Context {
	for _, s := range inst.byContext {
		if s.dl == nil {
			continue
		}
		if ev.FilePath != "" && filepath.Dir(ev.FilePath) == s.dl.staging {
			return s
		}
		if _, err := os.Stat(filepath.Join(s.dl.staging, ev.GUID)); err == nil {
			return s
		}
	}
	return nil
}
