package engine

// Browser sessions kept between runs (executor.BrowserSessions): a browser
// context opened on request, in which the runs that name it execute one at
// a time, each with its own step log, screenshots and recording, and which
// outlives them until it is closed. Downloads are not kept in a browser
// session: its browser context denies them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/abctl/abctl/localrun/engine/browser"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/runbrowser"
	"github.com/abctl/abctl/localrun/executor"
)

var _ executor.BrowserSessions = (*Engine)(nil)

// browserSession is an open browser session.
type browserSession struct {
	org  string
	bs   *browser.Context
	be   *browserEgress // its egress proxy, which lives as long as it; nil: none
	lock chan struct{}  // capacity 1: held by the run executing in the session, and by its closing
}

// OpenBrowserSession implements executor.BrowserSessions.
func (e *Engine) OpenBrowserSession(ctx context.Context, orgID, id string, o executor.BrowserSessionOptions) error {
	pool, err := e.browserPool(ctx)
	if err != nil {
		return err
	}
	bs, be, err := e.acquire(ctx, pool, orgID, browser.ContextOptions{RunID: id})
	if err != nil {
		return fmt.Errorf("the browser session could not be opened: %w", err)
	}
	fail := func(err error) error {
		bs.Close(context.WithoutCancel(ctx))
		return err
	}
	if len(o.State) > 0 {
		var st browser.State
		if err := json.Unmarshal(o.State, &st); err != nil {
			return fail(fmt.Errorf("the browser profile cannot be read: %w", err))
		}
		if err := browser.RestoreState(ctx, bs, &st); err != nil {
			return fail(fmt.Errorf("the browser profile could not be loaded: %w", err))
		}
	}
	if o.URL != "" {
		// Checked by the organization's egress like every navigation of a
		// run (runbrowser.Navigate).
		pg := page.New(bs.Tab())
		_, err := runbrowser.Navigate(ctx, e.guard(orgID), be.runRefusals(), pg, o.URL)
		pg.Close()
		if err != nil {
			return fail(fmt.Errorf("%s could not be loaded: %w", o.URL, err))
		}
	}
	e.browserSessionsMu.Lock()
	defer e.browserSessionsMu.Unlock()
	if e.browserSessions == nil {
		e.browserSessions = map[string]*browserSession{}
	}
	if _, dup := e.browserSessions[id]; dup {
		return fail(fmt.Errorf("the browser session %s is open already", id))
	}
	e.browserSessions[id] = &browserSession{org: orgID, bs: bs, be: be, lock: make(chan struct{}, 1)}
	return nil
}

// CloseBrowserSession implements executor.BrowserSessions.
func (e *Engine) CloseBrowserSession(ctx context.Context, orgID, id string, keepState bool) ([]byte, error) {
	e.browserSessionsMu.Lock()
	ks := e.browserSessions[id]
	if ks != nil && ks.org == orgID {
		delete(e.browserSessions, id)
	}
	e.browserSessionsMu.Unlock()
	if ks == nil || ks.org != orgID {
		return nil, nil
	}
	// Wait for a run in the session to end; its context bounds the wait.
	select {
	case ks.lock <- struct{}{}:
	case <-ctx.Done():
		ks.bs.Close(context.WithoutCancel(ctx))
		return nil, ctx.Err()
	}
	var state []byte
	var err error
	if keepState && ks.bs.Err() == nil {
		var st *browser.State
		if st, err = browser.ReadState(ctx, ks.bs); err == nil {
			state, err = json.Marshal(st)
		}
	}
	ks.bs.Close(context.WithoutCancel(ctx))
	return state, err
}

// useBrowserSession returns the open browser session a run executes in, holding it
// for the run: release gives it back. It waits, within ctx, while another
// run uses it.
// be is the session's egress proxy (nil: none).
func (e *Engine) useBrowserSession(ctx context.Context, orgID, id string) (bs *browser.Context, be *browserEgress, release func(), err error) {
	e.browserSessionsMu.Lock()
	ks := e.browserSessions[id]
	e.browserSessionsMu.Unlock()
	if ks == nil || ks.org != orgID {
		return nil, nil, nil, fmt.Errorf("The browser session %s is not open in this daemon: it was closed, it timed out, the daemon restarted since it was opened, "+
			"or another daemon sharing this one's database opened it (a session's browser is in the daemon that opened it).", id)
	}
	select {
	case ks.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, nil, ctx.Err()
	}
	if err := ks.bs.Err(); err != nil {
		<-ks.lock
		return nil, nil, nil, errors.New("The browser session " + id + " ended: " + err.Error())
	}
	return ks.bs, ks.be, func() { <-ks.lock }, nil
}

// closeBrowserSessions closes every open browser session (the engine is closing).
func (e *Engine) closeBrowserSessions(ctx context.Context) {
	e.browserSessionsMu.Lock()
	open := e.browserSessions
	e.browserSessions = nil
	e.browserSessionsMu.Unlock()
	for _, ks := range open {
		ks.bs.Close(ctx)
	}
}
