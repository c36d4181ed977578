package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/internal/retry"
)

type wQuery struct {
	Err  string `json:"err"`
	N    int    `json:"n"`
	Tok  string `json:"tok"`
	I    int    `json:"i"`
	T    string `json:"t"`
	Y    string `json:"y"`
	Host int    `json:"host"`
}

// Resolve finds an element by selector and returns its id, for model-free
// blocks and single actions. The selector is CSS, or XPath with the prefix
// "xpath=" (a selector starting with "//" is taken as XPath too). It searches
// the top document, its same-origin frames and open shadow roots (CSS only
// reaches into shadow roots when the document itself has no match), then the
// cross-origin frames of the last observation, and returns the first visible
// match (else the first match). It polls until ctx's deadline
// (DefaultResolveWait without one); no match gives an error wrapping
// ErrNoMatch that names the selector. An invalid selector fails at once.
func (p *Page) Resolve(ctx context.Context, selector string) (string, error) {
	args, err := queryArgs(selector)
	if err != nil {
		return "", err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultResolveWait)
		defer cancel()
	}
	start := time.Now()
	for delay := 25 * time.Millisecond; ; delay = min(delay*2, 250*time.Millisecond) {
		id, err := p.resolveOnce(ctx, args)
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
				return "", err
			}
			break // the deadline ended the wait
		}
		if id != "" {
			return id, nil
		}
		if retry.Sleep(ctx, delay) != nil {
			break
		}
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return "", ctx.Err()
	}
	return "", fmt.Errorf("%w %q (waited %s)", ErrNoMatch, selector, time.Since(start).Round(time.Millisecond))
}

// ResolveNow is Resolve without the wait: it looks once, as the page is
// now, and a selector that matches nothing is an error wrapping ErrNoMatch
// at once.
func (p *Page) ResolveNow(ctx context.Context, selector string) (string, error) {
	args, err := queryArgs(selector)
	if err != nil {
		return "", err
	}
	id, err := p.resolveOnce(ctx, args)
	if err == nil && id == "" {
		err = fmt.Errorf("%w %q", ErrNoMatch, selector)
	}
	return id, err
}

// queryArgs are the arguments of the page script's query for a selector:
// CSS, or XPath with the "xpath=" prefix or a leading "//" or "(//".
func queryArgs(selector string) (map[string]any, error) {
	sel := strings.TrimSpace(selector)
	xpath := false
	switch {
	case strings.HasPrefix(sel, "xpath="):
		sel, xpath = strings.TrimPrefix(sel, "xpath="), true
	case strings.HasPrefix(sel, "css="):
		sel = strings.TrimPrefix(sel, "css=")
	case strings.HasPrefix(sel, "//") || strings.HasPrefix(sel, "(//"):
		xpath = true
	}
	if sel == "" {
		return nil, fmt.Errorf("%w: empty selector", ErrNoMatch)
	}
	return map[string]any{"sel": sel, "xpath": xpath}, nil
}

func (p *Page) resolveOnce(ctx context.Context, args map[string]any) (string, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	var q wQuery
	if err := p.frames.call(ctx, p.frames.top, "query", args, &q); err != nil {
		if isTransient(err) {
			return "", nil
		}
		return "", err
	}
	if q.Err != "" {
		return "", fmt.Errorf("invalid selector %q: %s", args["sel"], q.Err)
	}
	p.frames.syncTop(q.Tok)
	if q.N > 0 {
		frame := ""
		if q.Host != 0 {
			frame = p.frames.frameID(p.frames.top, q.Tok, q.Host)
		}
		return p.frames.register(p.frames.top, q.Tok, q.I, frame), nil
	}
	for _, r := range p.frames.children {
		if r.gone {
			continue
		}
		var cq wQuery
		if err := p.frames.call(ctx, r, "query", args, &cq); err != nil || cq.N == 0 || cq.Err != "" {
			continue
		}
		frame := r.frame
		if cq.Host != 0 {
			frame = p.frames.frameID(r, cq.Tok, cq.Host)
		}
		r.tok = cq.Tok
		return p.frames.register(r, cq.Tok, cq.I, frame), nil
	}
	return "", nil
}

// isTransient reports errors that a retry may cure: the document went away
// in the middle of a call.
func isTransient(err error) bool {
	return err != nil && (errors.Is(err, errNavRace))
}

// WaitStable waits until the top document saw no DOM mutation for quiet (at
// most until ctx's deadline, and at most MaxWait), and reports whether it
// became quiet. Use it after an action on pages that render late.
func (p *Page) WaitStable(ctx context.Context, quiet time.Duration) (bool, error) {
	if quiet <= 0 {
		quiet = 300 * time.Millisecond
	}
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return false, err
	}
	defer done()
	maxWait := MaxWait
	if dl, ok := ctx.Deadline(); ok {
		maxWait = min(maxWait, time.Until(dl)-50*time.Millisecond)
	}
	if maxWait <= 0 {
		return false, context.DeadlineExceeded
	}
	b, err := p.frames.callRaw(ctx, p.frames.top, "stable", map[string]any{"quiet": quiet.Milliseconds(), "max": maxWait.Milliseconds()}, true)
	if err != nil {
		return false, err
	}
	var out struct {
		Quiet int `json:"quiet"`
	}
	if err := jsonUnmarshal(b, &out); err != nil {
		return false, err
	}
	return out.Quiet == 1, nil
}
