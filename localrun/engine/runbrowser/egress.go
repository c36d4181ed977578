package runbrowser

// The egress of a run's browser (package internal/egress): every
// navigation the run asks for is checked here before the browser goes
// (Navigate, and through it goto_url blocks, the task's starting url,
// login and file_download urls, run_action's goto, the model's goto_url,
// a browser session's start URL), and a navigation that the run's egress
// proxy refused fails with the proxy's reason rather than as a page.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/abctl/abctl/internal/egress"
	"github.com/abctl/abctl/localrun/engine/page"
)

// Refusals records the refusals of a browser context's egress (its
// proxy's, reported through egress.Guard.WithReport), so that a navigation
// can name the refusal that stopped it. It keeps the last few. It is safe
// for concurrent use; a nil *Refusals records nothing.
type Refusals struct {
	mu   sync.Mutex
	seq  uint64
	last []refusal
}

type refusal struct {
	seq uint64
	err *egress.Error
}

const keptRefusals = 32

// Add records a refusal.
func (r *Refusals) Add(e *egress.Error) {
	if r == nil || e == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if len(r.last) >= keptRefusals {
		r.last = append(r.last[:0], r.last[1:]...)
	}
	r.last = append(r.last, refusal{seq: r.seq, err: e})
}

// mark is the count of refusals so far; since takes it.
func (r *Refusals) mark() uint64 {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// since returns the refusal after mark of the host and port of rawURL,
// else, with any, the last refusal after mark; nil when none came.
func (r *Refusals) since(mark uint64, rawURL string, any bool) *egress.Error {
	if r == nil {
		return nil
	}
	host, port := hostPort(rawURL)
	r.mu.Lock()
	defer r.mu.Unlock()
	var last *egress.Error
	for i := len(r.last) - 1; i >= 0; i-- {
		x := r.last[i]
		if x.seq <= mark {
			break
		}
		if last == nil {
			last = x.err
		}
		if host == "" {
			continue
		}
		h, p, err := net.SplitHostPort(x.err.Target)
		if err != nil {
			h, p = hostPort(x.err.Target)
		}
		if strings.EqualFold(strings.Trim(h, "[]"), host) && p == port {
			return x.err
		}
	}
	if any {
		return last
	}
	return nil
}

// hostPort is the host (without brackets, lower case) and port (the
// scheme's default when the URL has none) of a URL.
func hostPort(raw string) (host, port string) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", ""
	}
	port = u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https", "wss":
			port = "443"
		default:
			port = "80"
		}
	}
	return strings.ToLower(u.Hostname()), port
}

// CheckNavigation checks a URL the run sends its browser to, as GoTo would
// load it (what a model writes, "example.com/x", is https://example.com/x):
// about:blank or an http or https URL whose host the guard allows. The
// schemes a page could use to read this machine's files or the browser's
// own pages (file:, chrome:, devtools:, view-source:, javascript:, data:
// and every other) are refused with no policy too (g nil), which decides
// nothing else. A refusal is an *egress.Error; a host name that does not
// resolve is left to the browser, which says so in its words.
func CheckNavigation(ctx context.Context, g *egress.Guard, raw string) error {
	u, err := page.NormalizeURL(raw)
	if err != nil {
		// What GoTo cannot load either, such as an unsupported scheme:
		// refused by the scheme rule when it has one, else GoTo's error.
		u = strings.TrimSpace(raw)
		if p, perr := url.Parse(u); perr != nil || p.Scheme == "" {
			return nil
		}
	}
	// Without a policy (g nil) the guard checks the scheme alone.
	err = g.CheckNavigation(ctx, u)
	if err != nil && !egress.IsRefused(err) {
		return nil // a name that does not resolve: the browser says so
	}
	return err
}

// Navigate checks rawURL (CheckNavigation), loads it in pg, and fails a
// load that the run's egress proxy refused with the refusal recorded in
// refusals: a navigation the proxy refused is a failed navigation, not a
// page (an https one fails in the browser as a tunnel that could not be
// made; an http one shows the proxy's refusal page, as does a redirect to
// a refused address).
func Navigate(ctx context.Context, g *egress.Guard, refusals *Refusals, pg *page.Page, rawURL string) (page.Result, error) {
	if err := CheckNavigation(ctx, g, rawURL); err != nil {
		return page.Result{Reason: err.Error()}, err
	}
	mark := refusals.mark()
	res, err := pg.GoTo(ctx, rawURL)
	switch {
	case err != nil && ctx.Err() == nil:
		if e := refusals.since(mark, rawURL, strings.Contains(res.Reason, "ERR_TUNNEL_CONNECTION_FAILED")); e != nil {
			e = refusedNavigation(e, rawURL)
			return page.Result{Reason: e.Error(), URL: res.URL, Navigated: res.Navigated}, e
		}
	case err == nil && res.Egress != "":
		at := res.URL
		if at == "" {
			at = rawURL
		}
		if e := refusals.since(mark, at, true); e != nil {
			e = refusedNavigation(e, at)
			return page.Result{Reason: e.Error(), URL: res.URL, Navigated: res.Navigated}, e
		}
		err = errors.New("could not load " + at + ": the run's egress proxy could not reach it (" + strings.TrimPrefix(res.Detail, "HTTP ") + ")")
		return page.Result{Reason: err.Error(), URL: res.URL, Navigated: res.Navigated}, fmt.Errorf("%w: %w", page.ErrNavigation, err)
	}
	return res, err
}

// refusedNavigation is a refusal of the proxy (which names host:port)
// as the navigation's: naming the URL, and where it led when the refused
// address is another (a redirect).
func refusedNavigation(e *egress.Error, rawURL string) *egress.Error {
	c := *e
	host, port := hostPort(rawURL)
	if host == "" {
		return &c
	}
	h, p, err := net.SplitHostPort(e.Target)
	if err == nil && strings.EqualFold(strings.Trim(h, "[]"), host) && p == port {
		c.Target = egress.Redact(rawURL)
	} else {
		c.Target = egress.Redact(rawURL) + ", which led to " + e.Target
	}
	return &c
}
