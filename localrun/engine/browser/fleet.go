package browser

// The fleet: several remote browsers (Options.Endpoints), each with a
// capacity of concurrent browser contexts. Acquire places a run on the healthy
// endpoint with room that is the least loaded; when none has room, the run
// waits in a bounded FIFO queue. An endpoint whose connection fails is marked
// down and the run tries another; a background check takes endpoints back
// when they answer again.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp/remote"
)

// DefaultEndpointCapacity is the number of concurrent browser contexts of an Endpoint
// whose Capacity is zero.
const DefaultEndpointCapacity = 4

// Defaults of the fleet's Options.
const (
	DefaultQueueTimeout   = 2 * time.Minute
	DefaultMaxQueue       = 256
	DefaultHealthInterval = 5 * time.Second
)

const (
	healthTimeout   = 2 * time.Second        // one health check of an endpoint
	discoverTimeout = 20 * time.Second       // the look-up of an endpoint's websocket address
	probeSpacing    = 500 * time.Millisecond // a down endpoint is checked for a waiting run at most this often
)

// ErrQueueFull is the error (wrapped) of Acquire when Options.MaxQueue runs
// wait for a browser endpoint already.
var ErrQueueFull = errors.New("the queue of runs waiting for a browser endpoint is full")

// ErrQueueTimeout is the error (wrapped) of Acquire when no browser endpoint
// had room within Options.QueueTimeout. The message says why for each one.
var ErrQueueTimeout = errors.New("no browser endpoint took the run")

// Endpoint is one browser of the fleet reached over CDP.
//
// An http(s):// URL, or a ws(s):// URL with neither a path nor a query, is a
// browser's DevTools address: its websocket address is asked at
// <URL>/json/version (with Headers). Any other ws(s):// URL (such as
// ws://host:9222/devtools/browser/ID, a Selenium Grid session's
// /se/cdp address, or a service's wss://host/?token=...) is dialed as given.
// Credentials in the URL (user:password@) are sent as basic authorization
// unless Headers has an Authorization header.
type Endpoint struct {
	URL      string            // http(s)://host:port or ws(s)://host:port/...
	Headers  map[string]string // sent when connecting (tokens of hosted browser services)
	Capacity int               // concurrent browser contexts; 0: DefaultEndpointCapacity (4)
	Name     string            // for status and messages; "": the URL without credentials or query
}

// FleetStatus is the state of the fleet (see Pool.Status).
type FleetStatus struct {
	Endpoints     []EndpointStatus `json:"endpoints"`
	Queued        int              `json:"queued"`         // Acquire calls waiting for room now
	QueueWaits    uint64           `json:"queue_waits"`    // Acquire calls that had to wait, in all
	QueueTimeouts uint64           `json:"queue_timeouts"` // ... that gave up after QueueTimeout
}

// EndpointStatus is the state of one endpoint of the fleet.
type EndpointStatus struct {
	Name      string `json:"name"`
	URL       string `json:"url"` // URL without credentials or query
	Capacity  int    `json:"capacity"`
	InUse     int    `json:"in_use"` // browser contexts open or opening on it
	Healthy   bool   `json:"healthy"`
	LastError string `json:"last_error,omitempty"` // why it was last marked down ("" when never)
	Failures  uint64 `json:"failures"`             // browser contexts that ended because the endpoint failed, plus failed connects
	Placed    uint64 `json:"placed"`               // browser contexts placed on it, in all
}

// Status returns the state of the fleet: each endpoint and the queue. It is
// the zero FleetStatus when the pool has no Endpoints.
func (p *Pool) Status() FleetStatus {
	f := p.fleet
	if f == nil {
		return FleetStatus{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st := FleetStatus{
		Endpoints:     make([]EndpointStatus, len(f.eps)),
		Queued:        len(f.waiters),
		QueueWaits:    f.waits,
		QueueTimeouts: f.timeouts,
	}
	for i, ep := range f.eps {
		st.Endpoints[i] = EndpointStatus{
			Name: ep.name, URL: ep.display, Capacity: ep.capacity, InUse: ep.inUse,
			Healthy: ep.healthy, LastError: ep.lastErr, Failures: ep.failures, Placed: ep.placed,
		}
	}
	return st
}

// Endpoint is the name of the fleet endpoint that the browser context runs on; "" for
// the local browser or a run's own BrowserAddress.
func (s *Context) Endpoint() string {
	if s.place == nil {
		return ""
	}
	return s.place.ep.name
}

// fleet is the state of a pool's Endpoints.
type fleet struct {
	pool         *Pool
	eps          []*endpoint
	byURL        map[string]*endpoint // Endpoint.URL (the pool's browser address) → endpoint
	queueTimeout time.Duration
	maxQueue     int
	interval     time.Duration
	client       *http.Client  // health checks and websocket address look-ups
	stop         chan struct{} // closed by shutdown

	mu       sync.Mutex
	closed   bool
	waiters  []*waiter // FIFO
	waits    uint64
	timeouts uint64
}

// endpoint is one Endpoint. The fields below mu are guarded by fleet.mu.
type endpoint struct {
	name     string
	url      string // as configured: the key of its browser in Pool.browsers
	display  string // url without credentials or query
	dial     *url.URL
	header   http.Header
	capacity int
	discover bool // the websocket address is asked at /json/version

	inUse     int
	healthy   bool
	lastErr   string
	failures  uint64
	placed    uint64
	probing   bool
	lastProbe time.Time
}

// label names the endpoint in messages: "b" (http://127.0.0.1:9222).
func (ep *endpoint) label() string {
	if ep.name == ep.display {
		return fmt.Sprintf("%q", ep.name)
	}
	return fmt.Sprintf("%q (%s)", ep.name, ep.display)
}

// hide takes the query of the endpoint's URL (where services put their
// tokens) out of an error that its status, the logs or a run's error show.
func (ep *endpoint) hide(err error) error {
	q := ep.dial.RawQuery
	if q == "" || !strings.Contains(err.Error(), q) {
		return err
	}
	return &hiddenError{msg: strings.ReplaceAll(err.Error(), q, "(query hidden)"), err: err}
}

// hiddenError is an error whose message lost a secret (see endpoint.hide).
type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }

// waiter is an Acquire waiting in the queue.
type waiter struct {
	failed map[*endpoint]error // endpoints that failed for this Acquire: not tried again
	ready  chan struct{}       // closed when ep is set
	ep     *endpoint           // the endpoint whose place was reserved for it
}

// place is a reserved place on an endpoint: taken when the browser context is about
// to open, given back once by release.
type place struct {
	f    *fleet
	ep   *endpoint
	once sync.Once
}

// release gives the place back and hands it to the first waiter that can take it.
func (pl *place) release() {
	pl.once.Do(func() {
		f := pl.f
		f.mu.Lock()
		pl.ep.inUse--
		f.dispatchLocked()
		f.mu.Unlock()
	})
}

// newFleet checks the endpoints of o.
func newFleet(p *Pool, o Options) (*fleet, error) {
	if o.RemoteURL != "" {
		return nil, errors.New("a pool takes either one remote browser (RemoteURL) or a fleet of endpoints (Endpoints), not both")
	}
	f := &fleet{
		pool:         p,
		byURL:        make(map[string]*endpoint),
		queueTimeout: o.QueueTimeout,
		maxQueue:     o.MaxQueue,
		interval:     o.HealthInterval,
		// A new connection for each check: a check sees whether the endpoint
		// takes connections now, and nothing stays open between checks.
		client: &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DisableKeepAlives: true}},
		stop:   make(chan struct{}),
	}
	if f.queueTimeout <= 0 {
		f.queueTimeout = DefaultQueueTimeout
	}
	if f.maxQueue <= 0 {
		f.maxQueue = DefaultMaxQueue
	}
	if f.interval <= 0 {
		f.interval = DefaultHealthInterval
	}
	names := make(map[string]bool)
	for i, e := range o.Endpoints {
		ep, err := newEndpoint(e)
		if err != nil {
			return nil, fmt.Errorf("browser endpoint %d: %w", i+1, err)
		}
		if f.byURL[ep.url] != nil {
			return nil, fmt.Errorf("browser endpoint %s is given twice", ep.label())
		}
		if names[ep.name] {
			return nil, fmt.Errorf("two browser endpoints are named %q: give them different names", ep.name)
		}
		names[ep.name] = true
		f.byURL[ep.url] = ep
		f.eps = append(f.eps, ep)
	}
	return f, nil
}

// newEndpoint checks one Endpoint and fills in its defaults.
func newEndpoint(e Endpoint) (*endpoint, error) {
	if err := checkRemoteURL(e.URL); err != nil {
		return nil, err
	}
	u, err := url.Parse(e.URL)
	if err != nil {
		return nil, fmt.Errorf("browser address %q: %w", redactURL(e.URL), err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("browser address %q has no host", redactURL(e.URL))
	}
	if e.Capacity < 0 {
		return nil, fmt.Errorf("browser endpoint %s: capacity %d is negative", redactURL(e.URL), e.Capacity)
	}
	ep := &endpoint{
		name:     e.Name,
		url:      e.URL,
		display:  redactURL(e.URL),
		capacity: e.Capacity,
		header:   make(http.Header),
		healthy:  true,
	}
	if ep.name == "" {
		ep.name = ep.display
	}
	if ep.capacity == 0 {
		ep.capacity = DefaultEndpointCapacity
	}
	for k, v := range e.Headers {
		ep.header.Set(k, v)
	}
	if u.User != nil && ep.header.Get("Authorization") == "" {
		pass, _ := u.User.Password()
		ep.header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass)))
	}
	dial := *u
	dial.User = nil
	dial.Fragment = ""
	ep.dial = &dial
	switch u.Scheme {
	case "http", "https":
		ep.discover = true
	default: // ws, wss
		ep.discover = (u.Path == "" || u.Path == "/") && u.RawQuery == ""
	}
	return ep, nil
}

// redactURL is addr without credentials, query or fragment, for messages and
// status.
func redactURL(addr string) string {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" {
		if i := strings.IndexAny(addr, "?#"); i >= 0 {
			addr = addr[:i]
		}
		if at := strings.LastIndex(addr, "@"); at >= 0 {
			if scheme := strings.Index(addr, "://"); scheme >= 0 && scheme < at {
				addr = addr[:scheme+3] + addr[at+1:]
			}
		}
		return addr
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return u.String()
}

// versionURL is the /json/version address of the endpoint: below the
// endpoint's path for a DevTools address, at the root of the host for a
// websocket address that is dialed as given. A plain (not TLS) host name is
// resolved first: Chromium refuses a Host header that is neither an IP
// address nor localhost.
func (ep *endpoint) versionURL(ctx context.Context) (string, error) {
	u := *ep.dial
	tls := u.Scheme == "https" || u.Scheme == "wss"
	u.Scheme = "http"
	if tls {
		u.Scheme = "https"
	}
	if ep.discover {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/json/version"
	} else {
		u.Path = "/json/version"
	}
	u.RawPath = ""
	if !tls {
		host, err := resolveHostPort(ctx, u.Host)
		if err != nil {
			return "", err
		}
		u.Host = host
	}
	return u.String(), nil
}

// resolveHostPort replaces a host name by its first IP address.
func resolveHostPort(ctx context.Context, hostport string) (string, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, nil // no port: leave it to the request
	}
	if host == "localhost" || net.ParseIP(host) != nil {
		return hostport, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return "", err
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("host %s has no address", host)
	}
	return net.JoinHostPort(addrs[0].IP.String(), port), nil
}

// getVersion sends GET /json/version to the endpoint with its headers.
func (f *fleet) getVersion(ctx context.Context, ep *endpoint) (*http.Response, error) {
	addr, err := ep.versionURL(ctx)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return nil, err
	}
	req.Header = ep.header.Clone()
	return f.client.Do(req)
}

// check tells whether the endpoint answers: /json/version succeeds for a
// DevTools address; for a websocket address dialed as given, any answer
// other than a server error or a refusal of the credentials will do (such
// services need not serve /json/version).
func (f *fleet) check(ctx context.Context, ep *endpoint) error {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	resp, err := f.getVersion(ctx, ep)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no answer within %s", healthTimeout)
		}
		return shortNetError(err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	bad := resp.StatusCode/100 != 2
	if !ep.discover {
		bad = resp.StatusCode >= 500 || resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden
	}
	if bad {
		return fmt.Errorf("GET /json/version answered %s", resp.Status)
	}
	return nil
}

// shortNetError drops the request and dial details of a network error, to
// keep "connection refused" or "i/o timeout".
func shortNetError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) && se.Err != nil {
		err = se.Err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("the connection closed without an answer (%w)", err)
	}
	return err
}

// webSocketURL is the address to dial for the endpoint's browser.
func (f *fleet) webSocketURL(ctx context.Context, ep *endpoint) (string, error) {
	if !ep.discover {
		return ep.dial.String(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, discoverTimeout)
	defer cancel()
	resp, err := f.getVersion(ctx, ep)
	if err != nil {
		return "", fmt.Errorf("asking for its websocket address: %w", shortNetError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("asking for its websocket address: GET /json/version answered %s", resp.Status)
	}
	var version struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&version); err != nil {
		return "", fmt.Errorf("reading /json/version: %w", err)
	}
	ws, err := url.Parse(version.WebSocketDebuggerURL)
	if err != nil || ws.Host == "" {
		return "", fmt.Errorf("/json/version gave no usable webSocketDebuggerUrl (%q)", version.WebSocketDebuggerURL)
	}
	// A service behind TLS can report the browser's own ws:// address.
	if ws.Scheme == "ws" && (ep.dial.Scheme == "https" || ep.dial.Scheme == "wss") {
		ws.Scheme = "wss"
	}
	if ws.RawQuery == "" {
		ws.RawQuery = ep.dial.RawQuery // a service's token
	}
	if tell := f.pool.opts.DevTools; tell != nil {
		port := ws.Port()
		if port == "" {
			port = map[bool]string{true: "443", false: "80"}[ws.Scheme == "wss"]
		}
		tell(net.JoinHostPort(ws.Hostname(), port), fmt.Sprintf("the DevTools of browser endpoint %q", ep.name))
	}
	return ws.String(), nil
}

// allocator makes the chromedp allocator that connects to the endpoint.
func (f *fleet) allocator(ctx context.Context, ep *endpoint) (context.Context, context.CancelFunc, error) {
	ws, err := f.webSocketURL(ctx, ep)
	if err != nil {
		return nil, nil, err
	}
	opts := []remote.Option{remote.NoModifyURL}
	if len(ep.header) > 0 {
		opts = append(opts, remote.WithDialHTTPHeader(ep.header))
	}
	allocCtx, cancel := remote.NewAllocator(context.Background(), ws, opts...)
	return allocCtx, cancel, nil
}

// start checks every endpoint once, bounded by ctx, and starts the health
// checks in the background.
func (f *fleet) start(ctx context.Context) {
	var wg sync.WaitGroup
	for _, ep := range f.eps {
		wg.Go(func() {
			if err := f.check(ctx, ep); err != nil {
				f.markDown(ep, err, 0)
			}
		})
	}
	wg.Wait()
	f.pool.wg.Go(f.healthLoop)
}

// healthLoop checks every endpoint every interval, until shutdown.
func (f *fleet) healthLoop() {
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
		}
		for _, ep := range f.eps {
			f.probe(ep, 0)
		}
	}
}

// probe checks an endpoint in the background, unless a check of it runs
// already or ran less than spacing ago. An endpoint that answers is taken
// back (and waiting runs get its room); one that does not is marked down.
func (f *fleet) probe(ep *endpoint, spacing time.Duration) {
	f.mu.Lock()
	if f.closed || ep.probing || (spacing > 0 && time.Since(ep.lastProbe) < spacing) {
		f.mu.Unlock()
		return
	}
	ep.probing = true
	ep.lastProbe = time.Now()
	f.pool.wg.Add(1) // under f.mu: shutdown has not begun, so Close waits for it
	f.mu.Unlock()
	go func() {
		defer f.pool.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-f.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := f.check(ctx, ep)
		f.mu.Lock()
		ep.probing = false
		f.mu.Unlock()
		if err == nil {
			f.markUp(ep)
		} else if ctx.Err() == nil {
			f.markDown(ep, err, 0)
		}
	}()
}

// markUp takes an endpoint back after it answered.
func (f *fleet) markUp(ep *endpoint) {
	f.mu.Lock()
	back := !ep.healthy && !f.closed
	if back {
		ep.healthy = true
		f.dispatchLocked()
	}
	f.mu.Unlock()
	if back {
		f.pool.log.Info("browser endpoint is back", "endpoint", ep.name, "url", ep.display)
	}
}

// markDown stops placing runs on an endpoint; failures are the failed
// connects or browser contexts that it adds to the endpoint's count.
func (f *fleet) markDown(ep *endpoint, err error, failures uint64) {
	err = ep.hide(err)
	f.mu.Lock()
	was := ep.healthy
	ep.healthy = false
	ep.lastErr = err.Error()
	ep.failures += failures
	f.mu.Unlock()
	if was {
		f.pool.log.Warn("browser endpoint is down", "endpoint", ep.name, "url", ep.display, "err", err)
	}
}

// lost handles the end of the connection to an endpoint's browser: the
// endpoint is marked down, each browser context placed on it counts as a failure,
// and the returned reason (that the browser contexts end with) names the endpoint.
// For any other browser it returns reason.
func (f *fleet) lost(inst *instance, reason error) error {
	ep := f.byURL[inst.addr]
	if ep == nil {
		return reason
	}
	inst.mu.Lock()
	var n uint64
	for _, s := range inst.byContext {
		if s.place != nil && s.place.ep == ep {
			n++
		}
	}
	inst.mu.Unlock()
	err := fmt.Errorf("the browser endpoint %s went away: the connection to it dropped", ep.label())
	f.markDown(ep, errors.New("the connection to it dropped"), n)
	return err
}

// shutdown ends the health checks and the waits of the queue (Pool.Close).
func (f *fleet) shutdown() {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.stop)
	}
	f.mu.Unlock()
	f.client.CloseIdleConnections()
}

// pickLocked returns the healthy endpoint with room that is the least loaded
// (the lowest share of its capacity in use, then the fewest browser contexts, then
// the first configured), leaving out the endpoints in skip; nil if none.
func (f *fleet) pickLocked(skip map[*endpoint]error) *endpoint {
	var best *endpoint
	for _, ep := range f.eps {
		if !ep.healthy || ep.inUse >= ep.capacity {
			continue
		}
		if _, failed := skip[ep]; failed {
			continue
		}
		if best == nil {
			best = ep
			continue
		}
		// ep.inUse/ep.capacity < best.inUse/best.capacity, in integers.
		l, r := ep.inUse*best.capacity, best.inUse*ep.capacity
		if l < r || (l == r && ep.inUse < best.inUse) {
			best = ep
		}
	}
	return best
}

// dispatchLocked gives free places to the waiters, first come first served.
func (f *fleet) dispatchLocked() {
	if f.closed {
		return
	}
	for i := 0; i < len(f.waiters); {
		w := f.waiters[i]
		ep := f.pickLocked(w.failed)
		if ep == nil {
			i++
			continue
		}
		ep.inUse++
		w.ep = ep
		f.waiters = slices.Delete(f.waiters, i, i+1)
		close(w.ready)
	}
}

// reserve takes a place for a run, waiting in the queue until deadline or
// the end of ctx. failed are the endpoints that failed for this run already;
// waited is set when the run had to wait (counted once per run).
func (f *fleet) reserve(ctx context.Context, failed map[*endpoint]error, deadline time.Time, waited *bool) (*place, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, ErrPoolClosed
	}
	if len(failed) == len(f.eps) {
		why := f.whyLocked(failed)
		f.mu.Unlock()
		return nil, fmt.Errorf("no browser endpoint could take the run: %s", why)
	}
	w := &waiter{failed: failed, ready: make(chan struct{})}
	f.waiters = append(f.waiters, w)
	f.dispatchLocked()
	if w.ep != nil {
		f.mu.Unlock()
		return &place{f: f, ep: w.ep}, nil
	}
	if len(f.waiters) > f.maxQueue {
		f.removeLocked(w)
		f.mu.Unlock()
		return nil, fmt.Errorf("%w (%d runs wait already)", ErrQueueFull, f.maxQueue)
	}
	if !*waited {
		*waited = true
		f.waits++
	}
	var down []*endpoint
	for _, ep := range f.eps {
		if _, bad := failed[ep]; !bad && !ep.healthy && ep.inUse < ep.capacity {
			down = append(down, ep)
		}
	}
	f.mu.Unlock()
	// A browser that was down can be back already: check it now rather than
	// at the next round of health checks.
	for _, ep := range down {
		f.probe(ep, probeSpacing)
	}

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
	case <-timer.C:
		err = ErrQueueTimeout
	case <-ctx.Done():
		err = ctx.Err()
	case <-f.stop:
		err = ErrPoolClosed
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.ep != nil { // served, perhaps at the last moment
		return &place{f: f, ep: w.ep}, nil
	}
	f.removeLocked(w)
	switch {
	case errors.Is(err, ErrQueueTimeout):
		f.timeouts++
		return nil, fmt.Errorf("%w within %s: %s", ErrQueueTimeout, f.queueTimeout, f.whyLocked(failed))
	case ctx.Err() != nil:
		return nil, fmt.Errorf("waiting for a browser endpoint: %w (%s)", err, f.whyLocked(failed))
	}
	return nil, err
}

// removeLocked takes a waiter out of the queue.
func (f *fleet) removeLocked(w *waiter) {
	if i := slices.Index(f.waiters, w); i >= 0 {
		f.waiters = slices.Delete(f.waiters, i, i+1)
	}
}

// whyLocked says for each endpoint why it could not take a run:
// `browser endpoint "b" (http://127.0.0.1:40411) is down: connection
// refused; "a" is full (4 of 4)`.
func (f *fleet) whyLocked(failed map[*endpoint]error) string {
	parts := make([]string, 0, len(f.eps))
	for _, ep := range f.eps {
		var why string
		if err, ok := failed[ep]; ok {
			why = fmt.Sprintf("%s failed for this run: %v", ep.label(), err)
		} else if !ep.healthy {
			why = fmt.Sprintf("%s is down: %s", ep.label(), ep.lastErr)
		} else if ep.inUse >= ep.capacity {
			why = fmt.Sprintf("%q is full (%d of %d)", ep.name, ep.inUse, ep.capacity)
		} else {
			why = fmt.Sprintf("%q has room now (%d of %d)", ep.name, ep.inUse, ep.capacity)
		}
		parts = append(parts, why)
	}
	return "browser endpoint " + strings.Join(parts, "; ")
}

// acquireOnFleet opens a run's browser context on an endpoint of the fleet. An
// endpoint that fails to connect or to open the browser context is marked down and
// the run goes to another one (each endpoint is tried once).
func (p *Pool) acquireOnFleet(ctx context.Context, o ContextOptions) (*Context, error) {
	f := p.fleet
	deadline := time.Now().Add(f.queueTimeout)
	failed := make(map[*endpoint]error)
	waited := false
	for {
		pl, err := f.reserve(ctx, failed, deadline, &waited)
		if err != nil {
			return nil, err
		}
		s, fault, err := p.openContext(ctx, o, pl.ep.url, pl)
		if err == nil {
			f.mu.Lock()
			pl.ep.placed++
			f.mu.Unlock()
			return s, nil
		}
		if !fault || ctx.Err() != nil {
			pl.release()
			return nil, err
		}
		err = pl.ep.hide(err)
		failed[pl.ep] = err
		f.markDown(pl.ep, err, 1)
		pl.release() // after markDown: its room must not go to a waiter now
		p.log.Debug("browser endpoint failed to take a run; trying another", "run", o.RunID, "endpoint", pl.ep.name, "err", err)
	}
}
