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
	"github.com/abctl/abctl/localrun/engine/session"
	"github.com/abctl/abctl/localrun/executor"
)

var _ executor.BrowserSessions = (*Engine)(nil)

// keptSession is an open browser session.
type keptSession struct {
	org  string
	bs   *browser.Session
	be   *browserEgress // its egress proxy, which lives as long as it; nil: none
	lock chan struct{}  // capacity 1: held by the run executing in the session, and by its closing
}

// OpenBrowserSession implements executor.BrowserSessions.
func (e *Engine) OpenBrowserSession(ctx context.Context, orgID, id string, o executor.BrowserSessionOptions) error {
	pool, err := e.browserPool(ctx)
	if err != nil {
		return err
	}
	bs, be, err := e.acquire(ctx, pool, orgID, browser.SessionOptions{RunID: id})
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
		if err := bs.Restore(ctx, &st); err != nil {
			return fail(fmt.Errorf("the browser profile could not be loaded: %w", err))
		}
	}
	if o.URL != "" {
		// Checked by the organization's egress like every navigation of a
		// run (session.Navigate).
		pg := page.New(bs.Tab())
		_, err := session.Navigate(ctx, e.guard(orgID), be.sessionRefusals(), pg, o.URL)
		pg.Close()
		if err != nil {
			return fail(fmt.Errorf("%s could not be loaded: %w", o.URL, err))
		}
	}
	e.keptMu.Lock()
	defer e.keptMu.Unlock()
	if e.kept == nil {
		e.kept = map[string]*keptSession{}
	}
	if _, dup := e.kept[id]; dup {
		return fail(fmt.Errorf("the browser session %s is open already", id))
	}
	e.kept[id] = &keptSession{org: orgID, bs: bs, be: be, lock: make(chan struct{}, 1)}
	return nil
}

// CloseBrowserSession implements executor.BrowserSessions.
func (e *Engine) CloseBrowserSession(ctx context.Context, orgID, id string, keepState bool) ([]byte, error) {
	e.keptMu.Lock()
	ks := e.kept[id]
	if ks != nil && ks.org == orgID {
		delete(e.kept, id)
	}
	e.keptMu.Unlock()
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
		if st, err = ks.bs.State(ctx); err == nil {
			state, err = json.Marshal(st)
		}
	}
	ks.bs.Close(context.WithoutCancel(ctx))
	return state, err
}

// useKept returns the open browser session a run executes in, holding it
// for the run: release gives it back. It waits, within ctx, while another
// run uses it.
// be is the session's egress proxy (nil: none).
func (e *Engine) useKept(ctx context.Context, orgID, id string) (bs *browser.Session, be *browserEgress, release func(), err error) {
	e.keptMu.Lock()
	ks := e.kept[id]
	e.keptMu.Unlock()
	if ks == nil || ks.org != orgID {
		return nil, nil, nil, fmt.Errorf("The browser session %s is not open: it was closed, it timed out, or the daemon restarted since it was opened.", id)
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

// closeKept closes every open browser session (the engine is closing).
func (e *Engine) closeKept(ctx context.Context) {
	e.keptMu.Lock()
	kept := e.kept
	e.kept = nil
	e.keptMu.Unlock()
	for _, ks := range kept {
		ks.bs.Close(ctx)
	}
}
