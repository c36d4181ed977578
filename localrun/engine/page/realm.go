package page

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// A realm is a JavaScript global where page.js keeps its state: the top
// document of the tab, the top document of an out-of-process iframe, or a
// frame of the tab's process that its parent cannot script (a sandboxed
// frame). Same-origin frames are not realms of their own: the walker of the
// realm that holds them walks them inline.
type realm struct {
	key  string
	sess context.Context // chromedp context of the target that runs the realm
	// cancel ends a session this Page opened (out-of-process frames).
	cancel context.CancelFunc
	// targetID is the CDP target of an out-of-process frame.
	targetID target.ID
	// frameID is the frame whose document the realm is.
	frameID cdp.FrameID
	// docFrame is set for an in-process frame evaluated on the parent's
	// session (its frameID).
	docFrame cdp.FrameID
	// world is the execution context of page.js's isolated world in the
	// frame's current document; 0 until it is made, and again once a
	// call finds it gone (the frame has a new document).
	world runtime.ExecutionContextID
	// parent and host name the frame element that holds the realm.
	parent    *realm
	hostTok   string
	hostLocal int
	frame     string // short frame id of the realm's document
	tok       string
	gone      bool
	objs      bool // remote objects of the group "abctl-page" may exist
}

// errNavRace marks a call that failed because the document went away under
// it (a navigation in the middle of an action).
var errNavRace = errors.New("the page navigated during the action")

// errRealmGone marks a call to a frame whose target or document is gone.
var errRealmGone = errors.New("the frame is gone")

const missing = "\u0001missing"

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

func callExpr(op string, args any) (string, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	k, _ := json.Marshal(jsKey)
	o, _ := json.Marshal(op)
	return "(()=>{const L=globalThis[Symbol.for(" + string(k) + ")];return L?L.run(" + string(o) + "," + string(a) + "):" + quoteJS(missing) + "})()", nil
}

func quoteJS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var installExpr = pageJS + "(" + quoteJS(jsKey) + ")"

// worldName names page.js's isolated world in the execution contexts a
// CDP client sees.
const worldName = "abctl"

// eval evaluates an expression in page.js's isolated world of a realm.
//
// page.js runs in an isolated world (Page.createIsolatedWorld), as
// Playwright's utility world: it shares the DOM with the page but none of
// its JavaScript, so a page that replaces Date, JSON, Array.prototype,
// Element.prototype or MutationObserver, or adds toJSON to built-in
// prototypes, cannot break or mislead the observation, and cannot see
// page.js. The world lives as long as the frame's document; a call that
// finds it gone makes it again, once, in the new document.
func (f *frames) eval(ctx context.Context, r *realm, expr string, byValue, await bool) (*runtime.RemoteObject, error) {
	if r.gone {
		return nil, errRealmGone
	}
	if !byValue {
		r.objs = true
	}
	sctx, cancel := derive(r.sess, ctx, 0)
	defer cancel()
	for {
		id, made, err := f.world(sctx, r)
		if err != nil {
			return nil, err
		}
		out, err := chromedp.Call(sctx, runtime.Evaluate, runtime.EvaluateParams{
			Expression:    expr,
			ContextID:     id,
			ReturnByValue: &byValue,
			AwaitPromise:  &await,
			Silent:        new(true),
			ObjectGroup:   "abctl-page",
		})
		if err != nil {
			r.world = 0
			if !made && isGoneContext(err) {
				continue // made for an earlier document of the frame
			}
			return nil, classify(err)
		}
		if exc := out.ExceptionDetails; exc != nil {
			msg := exc.Text
			if exc.Exception != nil && exc.Exception.Description != "" {
				msg = exc.Exception.Description
			}
			if isNavMessage(msg) {
				return nil, fmt.Errorf("%w (%s)", errNavRace, firstLine(msg))
			}
			return nil, fmt.Errorf("page script: %s", firstLine(msg))
		}
		return out.Result, nil
	}
}

// world returns the realm's isolated world, making it when there is none
// (made is then true).
func (f *frames) world(sctx context.Context, r *realm) (id runtime.ExecutionContextID, made bool, err error) {
	if r.world != 0 {
		return r.world, false, nil
	}
	out, err := chromedp.Call(sctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{
		FrameID:   r.frameID,
		WorldName: worldName,
	})
	if err != nil {
		if isGoneFrame(err) {
			if r.docFrame != "" {
				return 0, false, fmt.Errorf("%w: %v", errRealmGone, err)
			}
			return 0, false, fmt.Errorf("%w (%v)", errNavRace, err)
		}
		return 0, false, classify(err)
	}
	r.world = out.ExecutionContextID
	return r.world, true, nil
}

// isGoneContext reports an evaluation in a context that no longer exists.
func isGoneContext(err error) bool {
	return strings.Contains(err.Error(), "Cannot find context with specified id")
}

// isGoneFrame reports a frame that no longer exists.
func isGoneFrame(err error) bool {
	return strings.Contains(err.Error(), "No frame for given id found")
}

// classify turns the protocol errors of a document that went away into
// errNavRace or errRealmGone.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, chromedp.ErrTargetDetached) {
		return fmt.Errorf("%w: %v", errRealmGone, err)
	}
	var ce *cdproto.Error
	if errors.As(err, &ce) && isNavMessage(ce.Message) {
		return fmt.Errorf("%w (%s)", errNavRace, ce.Message)
	}
	if isNavMessage(err.Error()) {
		return fmt.Errorf("%w (%v)", errNavRace, err)
	}
	return err
}

func isNavMessage(m string) bool {
	for _, s := range []string{
		"Execution context was destroyed",
		"Cannot find context with specified id",
		"Inspected target navigated or closed",
		"Cannot find default execution context",
		"Could not find object with given id",
		"Node with given id does not belong to the document",
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// callRaw runs an operation of page.js in a realm and returns its JSON,
// installing page.js first when the document does not have it yet.
func (f *frames) callRaw(ctx context.Context, r *realm, op string, args any, await bool) ([]byte, error) {
	expr, err := callExpr(op, args)
	if err != nil {
		return nil, err
	}
	for attempt := 0; attempt < 2; attempt++ {
		res, err := f.eval(ctx, r, expr, true, await)
		if err != nil {
			return nil, err
		}
		var s string
		if err := jsonUnmarshal(res.Value, &s); err != nil {
			return nil, fmt.Errorf("page script %s: unexpected result %.80s", op, res.Value)
		}
		if s != missing {
			return []byte(s), nil
		}
		if _, err := f.eval(ctx, r, installExpr, true, false); err != nil {
			return nil, fmt.Errorf("install page script: %w", err)
		}
	}
	return nil, errors.New("page script could not be installed")
}

// call runs an operation and decodes its JSON result into out.
func (f *frames) call(ctx context.Context, r *realm, op string, args, out any) error {
	b, err := f.callRaw(ctx, r, op, args, false)
	if err != nil {
		return err
	}
	if err := jsonUnmarshal(b, out); err != nil {
		return fmt.Errorf("page script %s: decode: %w", op, err)
	}
	return nil
}

// object returns the remote object of a node of a realm (for DOM commands),
// or nil when the node is gone.
func (f *frames) object(ctx context.Context, r *realm, tok string, local int) (runtime.RemoteObjectID, error) {
	expr, err := callExpr("get", map[string]any{"tok": tok, "i": local})
	if err != nil {
		return "", err
	}
	for attempt := 0; attempt < 2; attempt++ {
		res, err := f.eval(ctx, r, expr, false, false)
		if err != nil {
			return "", err
		}
		if res.Type == runtime.RemoteObjectTypeString {
			if _, err := f.eval(ctx, r, installExpr, true, false); err != nil {
				return "", err
			}
			continue
		}
		if res.ObjectID == "" {
			return "", nil
		}
		return res.ObjectID, nil
	}
	return "", errors.New("page script could not be installed")
}

// release frees the remote objects the Page made in a realm.
func (f *frames) release(ctx context.Context, r *realm) {
	if r.gone || !r.objs {
		return
	}
	r.objs = false
	sctx, cancel := derive(r.sess, ctx, 0)
	defer cancel()
	_, _ = chromedp.Call(sctx, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: "abctl-page"})
}

// childRealm returns the realm of a frame that the walker of parent could
// not enter, making it (and, for an out-of-process frame, a session to its
// target) on first use. Callers hold p.sem.
func (f *frames) childRealm(ctx context.Context, parent *realm, tok string, local int, frame string) (*realm, error) {
	k := elemKey{parent.key, tok, local}
	if r, ok := f.children[k]; ok && !r.gone {
		r.frame = frame
		return r, nil
	}
	obj, err := f.object(ctx, parent, tok, local)
	if err != nil {
		return nil, err
	}
	if obj == "" {
		return nil, errRealmGone
	}
	sctx, cancel := derive(parent.sess, ctx, 0)
	dn, err := chromedp.Call(sctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj})
	cancel()
	if err != nil {
		return nil, classify(err)
	}
	if dn.Node == nil || dn.Node.FrameID == "" {
		return nil, errors.New("the frame element has no frame")
	}
	var r *realm
	if dn.Node.ContentDocument != nil {
		// In the tab's process, but closed to the parent's scripts.
		r = &realm{key: "d:" + string(dn.Node.FrameID), sess: parent.sess, frameID: dn.Node.FrameID, docFrame: dn.Node.FrameID}
	} else {
		tid := target.ID(dn.Node.FrameID)
		if s, ok := f.sessions[string(tid)]; ok && !s.gone {
			r = s
		} else {
			fctx, fcancel, err := attach(ctx, f.tab, tid)
			if err != nil {
				return nil, fmt.Errorf("attach to the frame's target: %w", err)
			}
			r = &realm{key: "t:" + string(tid), sess: fctx, cancel: fcancel, targetID: tid, frameID: cdp.FrameID(tid)}
			f.sessions[string(tid)] = r
		}
	}
	r.parent, r.hostTok, r.hostLocal, r.frame = parent, tok, local, frame
	f.children[k] = r
	return r, nil
}

// attach opens a chromedp session to an existing target (an out-of-process
// iframe). The session must run on a context that outlives this call, so the
// first Run happens on the session's own context in a goroutine, bounded by
// ctx.
func attach(ctx context.Context, tab context.Context, id target.ID) (context.Context, context.CancelFunc, error) {
	fctx, fcancel := chromedp.NewContext(tab, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(fctx) }()
	select {
	case err := <-done:
		if err != nil {
			fcancel()
			return nil, nil, err
		}
		return fctx, fcancel, nil
	case <-ctx.Done():
		fcancel()
		<-done
		return nil, nil, ctx.Err()
	}
}
