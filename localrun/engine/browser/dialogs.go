package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// A page that opens a dialog while the browser context attaches to its tab
// (a popup whose script calls alert at once) blocks chromedp's attach: the
// attach evaluates a script before it enables the Page domain, and the page
// answers no script while the dialog is open. So each tab the page opens
// gets a second, non-flat CDP session (a dialog guard) before the chromedp
// attach (the first tab of a browser context needs none: see
// Context.open): it
// enables the Page domain first and answers every dialog of the tab. Its
// messages arrive as Target.receivedMessageFromTarget events on the browser
// connection. One session answers, so each dialog is recorded once. When the guard cannot be
// attached, the chromedp session of the tab answers the dialogs instead.

// noDialogGuard turns the guards off (tests of the fallback).
var noDialogGuard atomic.Bool

// dialogGuard is the side session of one tab.
type dialogGuard struct {
	s       *Context
	id      target.SessionID
	nextID  int
	pending map[int]*Dialog // request id → the answer being given
}

// guardMessage is a message of a guard session, queued for the worker.
type guardMessage struct {
	guard *dialogGuard
	raw   string
}

// guardDialogs attaches the dialog guard of a tab of s. When it cannot, the
// tab keeps no guard and its chromedp session answers the dialogs.
func guardDialogs(ctx context.Context, s *Context, tb *tab) {
	if noDialogGuard.Load() {
		return
	}
	res, err := cdp.Call(ctx, s.inst.b, target.AttachToTarget, target.AttachToTargetParams{TargetID: tb.id, Flatten: new(false)})
	if err != nil {
		s.pool.log.Debug("dialog guard not attached", "run", s.opts.RunID, "tab", tb.id, "err", err)
		return
	}
	g := &dialogGuard{s: s, id: res.SessionID, pending: make(map[int]*Dialog)}
	s.inst.mu.Lock()
	s.inst.guards[g.id] = g
	s.inst.mu.Unlock()
	// The browser side of Page.enable takes effect when the message is
	// dispatched, before the page runs another script; its reply does not
	// matter.
	if err := g.send(ctx, "Page.enable", nil); err != nil {
		s.pool.log.Debug("dialog guard not enabled", "run", s.opts.RunID, "tab", tb.id, "err", err)
		g.forget()
		return
	}
	s.mu.Lock()
	tb.guard = g
	s.mu.Unlock()
}

// send sends a command on the guard session; the reply arrives as a message.
func (g *dialogGuard) send(ctx context.Context, method string, params any) error {
	g.s.mu.Lock()
	g.nextID++
	id := g.nextID
	g.s.mu.Unlock()
	return g.sendID(ctx, id, method, params)
}

func (g *dialogGuard) sendID(ctx context.Context, id int, method string, params any) error {
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return g.s.inst.b.Call(ctx, "Target.sendMessageToTarget", map[string]any{"sessionId": g.id, "message": string(b)}, nil)
}

// forget stops the routing of the guard's messages (its tab is gone, which
// detaches the session). It accepts nil.
func (g *dialogGuard) forget() {
	if g == nil {
		return
	}
	g.s.inst.mu.Lock()
	delete(g.s.inst.guards, g.id)
	g.s.inst.mu.Unlock()
}

// isGuardNews tells the messages of a guard that matter (dialogs and replies)
// from its other Page events, cheaply, on the reader goroutine.
func isGuardNews(raw string) bool {
	return strings.HasPrefix(raw, `{"id":`) || strings.Contains(raw, `"Page.javascriptDialogOpening"`)
}

// handle answers the dialogs that the guard session reports, and records
// those whose answer the browser took (worker goroutine).
func (g *dialogGuard) handle(raw string) {
	s := g.s
	var msg struct {
		ID     int                                `json:"id"`
		Method string                             `json:"method"`
		Params *page.EventJavascriptDialogOpening `json:"params"`
		Error  *struct{ Message string }          `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &msg); err != nil {
		return
	}
	switch {
	case msg.Method == "Page.javascriptDialogOpening" && msg.Params != nil:
		d, params := s.answers.decide(msg.Params)
		s.mu.Lock()
		g.nextID++
		id := g.nextID
		g.pending[id] = d
		s.mu.Unlock()
		s.answers.record(d)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		if err := g.sendID(ctx, id, "Page.handleJavaScriptDialog", params); err != nil {
			s.pool.log.Warn("answering a dialog", "run", s.opts.RunID, "type", d.Type, "err", err)
			s.answers.unrecord(d)
		}
	case msg.ID != 0:
		s.mu.Lock()
		d, ok := g.pending[msg.ID]
		delete(g.pending, msg.ID)
		s.mu.Unlock()
		if ok && msg.Error != nil {
			s.pool.log.Warn("answering a dialog", "run", s.opts.RunID, "type", d.Type, "err", msg.Error.Message)
			s.answers.unrecord(d)
		}
	}
}

// dialogAnswers decides the answers to the JavaScript dialogs of a browser
// context and keeps the dialogs answered until Context.Dialogs takes them.
type dialogAnswers struct {
	prompt string // ContextOptions.DialogPrompt

	mu       sync.Mutex
	next     *string   // AnswerNextPrompt's answer, for the next window.prompt only
	answered []*Dialog // answered (or being answered) since the last take
}

// AnswerNextPrompt arms the answer to the next window.prompt of the
// browser context, in any tab: it is accepted with text (which may be
// empty), once. Later prompts get ContextOptions.DialogPrompt again. The
// agent's answer_dialog action calls it before the action that opens the
// prompt: a dialog blocks its page, so it is answered the moment it opens.
func (s *Context) AnswerNextPrompt(text string) {
	s.answers.mu.Lock()
	s.answers.next = &text
	s.answers.mu.Unlock()
}

// Dialogs returns the dialogs answered since the last call, oldest first.
func (s *Context) Dialogs() []Dialog { return s.answers.take() }

// decide decides the answer to a dialog: accept alert, confirm and
// beforeunload; answer a prompt with the armed answer (AnswerNextPrompt),
// else DialogPrompt, or dismiss it.
func (a *dialogAnswers) decide(ev *page.EventJavascriptDialogOpening) (*Dialog, page.HandleJavaScriptDialogParams) {
	d := &Dialog{Type: string(ev.Type), Message: ev.Message, URL: ev.URL, Accepted: true, At: time.Now()}
	params := page.HandleJavaScriptDialogParams{Accept: true}
	if ev.Type == page.DialogTypePrompt {
		a.mu.Lock()
		armed := a.next
		a.next = nil
		a.mu.Unlock()
		if armed != nil {
			params.PromptText = *armed
			d.Answer = *armed
		} else if a.prompt != "" {
			params.PromptText = a.prompt
			d.Answer = a.prompt
		} else {
			params.Accept = false
			d.Accepted = false
		}
	}
	return d, params
}

// record adds an answered dialog for take.
func (a *dialogAnswers) record(d *Dialog) {
	a.mu.Lock()
	a.answered = append(a.answered, d)
	a.mu.Unlock()
}

// unrecord drops a dialog whose answer the browser refused, unless take
// already returned it.
func (a *dialogAnswers) unrecord(d *Dialog) {
	a.mu.Lock()
	a.answered = slices.DeleteFunc(a.answered, func(x *Dialog) bool { return x == d })
	a.mu.Unlock()
}

// take returns the dialogs answered since the last call, oldest first.
func (a *dialogAnswers) take() []Dialog {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Dialog, len(a.answered))
	for i, d := range a.answered {
		out[i] = *d
	}
	a.answered = nil
	return out
}

// answerDialog answers a dialog reported by the chromedp session of a tab and
// records it. It runs on the worker: while a dialog is open the page answers
// no command, and answering from the listener would deadlock.
func (s *Context) answerDialog(tb *tab, ev *page.EventJavascriptDialogOpening) {
	d, params := s.answers.decide(ev)
	s.mu.Lock()
	tctx := tb.ctx
	s.mu.Unlock()
	if tctx == nil {
		return
	}
	// Record before answering: the page goes on as soon as the browser has
	// the answer, maybe before the reply reaches us.
	s.answers.record(d)
	// The listener only runs once the chromedp target exists, so the call
	// goes to it even while the attach is still running.
	ctx, cancel := context.WithTimeout(tctx, callTimeout)
	_, err := chromedp.Call(ctx, page.HandleJavaScriptDialog, params)
	cancel()
	if err != nil {
		s.pool.log.Warn("answering a dialog", "run", s.opts.RunID, "type", ev.Type, "err", fmt.Sprint(err))
		s.answers.unrecord(d)
	}
}
