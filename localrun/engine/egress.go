package engine

// The egress of the runs' browsers (package internal/egress): each browser
// context of a run gets a proxy of its own, started from the guard of the
// run's organization, through which the page's own requests go
// (navigations, subresources, fetch, XHR, websockets); the navigations the
// run asks for are checked before the browser goes (engine/runbrowser); the
// DevTools endpoints of the daemon's browsers are protected from every run.
//
// Which browsers get the proxy: a local Chromium always; a browser of the
// fleet or the daemon-wide remote browser when it is on this machine (a
// loopback address), or, when Config.EgressProxyHost is set (the proxies
// then listen on an address the browsers reach), wherever it is. A run's
// own browser_address (run_action's) is the organization's own browser:
// it gets the proxy only when it is on this machine. A browser elsewhere
// cannot reach the proxy on 127.0.0.1 unless the operator says where the
// proxies listen, and what an organization's own remote browser reaches is
// its own network's business; the address itself is checked by the guard
// before the engine connects, so that it cannot name the fleet, the local
// Chromium or the daemon. A remote browser without the proxy is logged
// once.

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
)

// browserEgress is the egress of one browser context: its proxy, the
// refusals it made, and the run told of them (a kept browser session
// serves several runs in turn). A nil *browserEgress is no proxy.
type browserEgress struct {
	proxy    *egress.Proxy
	refusals runbrowser.Refusals

	mu   sync.Mutex
	tell func(*egress.Error) // the run executing in the context; nil between runs
}

// report receives the proxy's refusals.
func (b *browserEgress) report(e *egress.Error) {
	b.refusals.Add(e)
	b.mu.Lock()
	tell := b.tell
	b.mu.Unlock()
	if tell != nil {
		tell(e)
	}
}

// follow makes the proxy's refusals go to a run's tell (nil: to none).
func (b *browserEgress) follow(tell func(*egress.Error)) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.tell = tell
	b.mu.Unlock()
}

// runRefusals is what a run's runbrowser.Browser is told the refusals of
// the proxy through (nil without a proxy).
func (b *browserEgress) runRefusals() *runbrowser.Refusals {
	if b == nil {
		return nil
	}
	return &b.refusals
}

// acquire opens a browser context for a run of orgID (or for a browser
// session), with its egress proxy when the engine has a policy. The proxy
// closes with the browser context (bs.Done).
func (e *Engine) acquire(ctx context.Context, pool *browser.Pool, orgID string, o browser.ContextOptions) (*browser.Context, *browserEgress, error) {
	g := e.guard(orgID)
	if g == nil {
		bs, err := pool.Acquire(ctx, o)
		return bs, nil, err
	}
	e.protectPending(false)
	if o.BrowserAddress != "" {
		// The organization's own browser must not be the fleet's, the
		// local Chromium's DevTools, or the daemon; the engine connects
		// to the address that was checked.
		pinned, err := g.PinURL(ctx, o.BrowserAddress, "http", "https", "ws", "wss")
		if err != nil {
			return nil, nil, err
		}
		o.BrowserAddress = pinned
	}
	be := &browserEgress{}
	p, err := g.WithReport(be.report).StartProxy(e.cfg.EgressProxyHost, e.log)
	if err != nil {
		return nil, nil, err
	}
	be.proxy = p
	o.Proxy = p.URL()
	// See the comment at the top: with a proxy host the operator set, the
	// daemon's browsers take the proxy wherever they are; a run's own
	// browser only on this machine.
	o.ProxyRemote = e.cfg.EgressProxyHost != "" && o.BrowserAddress == ""
	bs, err := pool.Acquire(ctx, o)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	if !bs.Proxied() {
		p.Close()
		e.warnUnproxied(bs.Browser())
		return bs, nil, nil
	}
	go func() {
		<-bs.Done()
		p.Close()
	}()
	return bs, be, nil
}

// warnUnproxied logs, once per browser, that a remote browser runs without
// the egress proxy.
func (e *Engine) warnUnproxied(name string) {
	if _, seen := e.unproxied.LoadOrStore(name, true); seen {
		return
	}
	e.log.Warn("a remote browser runs without the egress proxy: what its pages request is not checked by the egress policy (set the egress proxy host to an address of this machine the browsers reach)",
		"browser", name)
}

// protectBrowsers protects the DevTools endpoints of the daemon's remote
// browsers (the fleet's, the daemon-wide one) from every run. A host name
// that does not resolve yet (a browser container that starts after the
// daemon) is tried again before each run's browser opens (acquire), until
// it does.
func (e *Engine) protectBrowsers() error {
	if e.cfg.Egress == nil {
		return nil
	}
	var pending []protection
	if e.cfg.BrowserAddress != "" {
		pending = append(pending, protection{e.cfg.BrowserAddress, "the DevTools of the daemon's browser"})
	}
	for _, ep := range e.cfg.BrowserEndpoints {
		name := ep.Name
		if name == "" {
			name = egress.Redact(ep.URL)
		}
		pending = append(pending, protection{ep.URL, fmt.Sprintf("the DevTools of browser endpoint %q", name)})
	}
	for _, p := range pending {
		if _, err := hostPortOf(p.addr); err != nil {
			return err
		}
	}
	e.protectMu.Lock()
	e.unprotected = pending
	e.protectMu.Unlock()
	e.protectPending(true)
	return nil
}

// protection is a browser address to protect and what it is.
type protection struct{ addr, what string }

// protectPending protects the browser addresses not protected yet; warn
// logs those that still fail.
// Tries are at most every 10 seconds.
func (e *Engine) protectPending(warn bool) {
	e.protectMu.Lock()
	defer e.protectMu.Unlock()
	if len(e.unprotected) == 0 || !warn && time.Since(e.protectTried) < 10*time.Second {
		return
	}
	e.protectTried = time.Now()
	left := e.unprotected[:0]
	for _, p := range e.unprotected {
		hp, _ := hostPortOf(p.addr)
		if err := e.cfg.Egress.Protect(hp, p.what); err != nil {
			if warn {
				e.log.Warn("a browser's DevTools are not protected from runs yet (tried again as runs start)", "browser", egress.Redact(p.addr), "error", err)
			}
			left = append(left, p)
		}
	}
	e.unprotected = left
}

// protectLocalDevTools protects the DevTools port of a local Chromium the
// pool started (browser.Options.DevTools).
func (e *Engine) protectDevTools(addr, what string) {
	if e.cfg.Egress == nil {
		return
	}
	if err := e.cfg.Egress.Protect(addr, what); err != nil {
		e.log.Warn("a browser's DevTools are not protected from runs", "address", addr, "error", err)
	}
}

// hostPortOf is host:port of a browser address (the scheme's port when it
// names none).
func hostPortOf(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("browser address %q is not a URL with a host", egress.Redact(raw))
	}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https", "wss":
			port = "443"
		default:
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
