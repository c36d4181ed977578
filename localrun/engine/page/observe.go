package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/abctl/abctl/localrun/engine/secrets"
)

// jsonOpts decode page answers: page text may hold lone surrogates.
var jsonOpts = jsonv2.JoinOptions(jsonv2.DefaultOptionsV2(), jsonv2.AllowInvalidUTF8(true))

// jsonUnmarshal decodes JSON from the page. It uses the JSON v2 package
// that cdproto uses, which is several times faster than encoding/json on
// the walker's answers.
func jsonUnmarshal(b []byte, v any) error { return jsonv2.Unmarshal(b, v, jsonOpts) }

// wObs is the walker's answer for one realm.
type wObs struct {
	Tok    string   `json:"tok"`
	URL    string   `json:"url"`
	Title  string   `json:"title"`
	VW     float64  `json:"vw"`
	VH     float64  `json:"vh"`
	SX     float64  `json:"sx"`
	SY     float64  `json:"sy"`
	SW     float64  `json:"sw"`
	SH     float64  `json:"sh"`
	Els    []wEl    `json:"els"`
	Frames []wFrame `json:"frames"`
	More   int      `json:"more"`
	Text   string   `json:"text"`
	TA     int      `json:"ta"` // offset of the viewport's text in Text, in UTF-16 code units
	TC     int      `json:"tc"` // characters of the top document's text left out above Text
	TL     int      `json:"tl"` // and below
}

type wEl struct {
	I   int               `json:"i"`
	F   int               `json:"f"`
	T   string            `json:"t"`
	R   string            `json:"r"`
	Y   string            `json:"y"`
	X   string            `json:"x"`
	L   string            `json:"l"`
	P   string            `json:"p"`
	N   string            `json:"n"`
	H   string            `json:"h"`
	Val string            `json:"val"`
	C   int               `json:"c"`
	D   int               `json:"d"`
	Q   int               `json:"q"`
	RO  int               `json:"ro"`
	K   int               `json:"k"`
	PW  int               `json:"pw"`
	O   []string          `json:"o"`
	A   map[string]string `json:"a"`
	IC  string            `json:"ic"`
	In  string            `json:"in"`
	B   [4]float64        `json:"b"`
	V   int               `json:"v"`
}

type wFrame struct {
	I  int        `json:"i"`
	P  int        `json:"p"`
	B  [4]float64 `json:"b"`
	C  [4]float64 `json:"c"`
	At int        `json:"at"`
	N  string     `json:"n"`
	U  string     `json:"u"`
	X  int        `json:"x"`
}

// Observe returns the interactive elements of the page, the rendering for
// the prompt, the visible text and, when asked, a viewport screenshot. Ids of
// nodes seen before keep their id; new nodes get new ids. Polling for late
// content is the caller's job (see Resolve and WaitStable).
func (p *Page) Observe(ctx context.Context, o ObserveOptions) (*Observation, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()

	var shot []byte
	var shotErr error
	var wg sync.WaitGroup
	if o.Screenshot {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shot, shotErr = screenshot(ctx, p.nav, o.JPEGQuality)
		}()
	}

	obs, err := p.frames.observe(ctx, o)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if o.Screenshot {
		if shotErr != nil {
			return nil, fmt.Errorf("screenshot: %w", shotErr)
		}
		obs.Screenshot = shot
	}
	return obs, nil
}

func (f *frames) observe(ctx context.Context, o ObserveOptions) (*Observation, error) {
	textMax := o.TextLimit
	if textMax <= 0 {
		textMax = DefaultTextLimit
	}
	args := map[string]any{"max": maxElements, "noText": o.NoText, "textMax": textMax, "mark": f.clickMark}
	var w wObs
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		err = f.call(ctx, f.top, "observe", args, &w)
		if !errors.Is(err, errNavRace) {
			break
		}
		// The document changed under the walker; walk the new one.
	}
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	f.syncTop(w.Tok)

	obs := &Observation{
		URL:      w.URL,
		Title:    w.Title,
		Viewport: [2]float64{w.VW, w.VH},
		Scroll:   [2]float64{w.SX, w.SY},
		PageSize: [2]float64{w.SW, w.SH},
		Tabs:     o.Tabs,
		Dialogs:  o.Dialogs,
	}
	viewport := [4]float64{0, 0, w.VW, w.VH}
	st := &obsState{obs: obs, textMax: textMax, seen: map[*realm]bool{f.top: true}}
	st.text = append(st.text, w.Text)
	st.textLen = len(w.Text)
	f.top.tok = w.Tok
	obs.Elements = f.collect(ctx, st, f.top, &w, 0, 0, viewport, "", 0)
	obs.Truncated = st.more
	f.pruneSessions(st.seen)
	f.release(ctx, f.top)
	obs.Epoch = f.epoch.Load()
	if !o.NoText {
		obs.Text = joinText(st.text, textMax)
		obs.TextAt = min(utf16ToByte(w.Text, w.TA), len(obs.Text))
		obs.TextAbove, obs.TextBelow = w.TC, w.TL
	}
	render(obs, o)
	return obs, nil
}

type obsState struct {
	obs     *Observation
	text    []string
	textLen int
	textMax int
	frames  int
	more    int
	seen    map[*realm]bool
}

// collect turns the walker's answer for realm r into Elements (with the
// elements of its child realms spliced in at their frame elements). ox, oy
// move realm coordinates into the tab's viewport; clip is the visible part of
// the realm in the tab's viewport; frame is the realm's own frame id.
func (f *frames) collect(ctx context.Context, st *obsState, r *realm, w *wObs, ox, oy float64, clip [4]float64, frame string, depth int) []Element {
	st.more += w.More
	// Frame ids of this realm's frames, by walker index (1-based).
	fids := make([]string, len(w.Frames)+1)
	fids[0] = frame
	for k, wf := range w.Frames {
		fid := f.frameID(r, w.Tok, wf.I)
		fids[k+1] = fid
		parent := frame
		if wf.P > 0 && wf.P <= len(w.Frames) {
			parent = fids[wf.P]
		}
		st.obs.Frames = append(st.obs.Frames, Frame{
			ID: fid, Parent: parent, URL: wf.U, Name: wf.N, CrossOrigin: wf.X == 1,
			Rect: [4]float64{wf.B[0] + ox, wf.B[1] + oy, wf.B[2], wf.B[3]},
		})
	}
	// Register this realm's elements first, so ids follow document order.
	own := make([]Element, len(w.Els))
	for k := range w.Els {
		e := &w.Els[k]
		fid := frame
		if e.F > 0 && e.F < len(fids) {
			fid = fids[e.F]
		}
		rect := [4]float64{e.B[0] + ox, e.B[1] + oy, e.B[2], e.B[3]}
		el := Element{
			ID:          f.register(r, w.Tok, e.I, fid),
			Frame:       fid,
			Tag:         e.T,
			Role:        e.R,
			Type:        e.Y,
			Text:        e.X,
			Label:       e.L,
			Placeholder: e.P,
			Name:        e.N,
			Href:        e.H,
			Value:       e.Val,
			Checked:     e.C == 1,
			Disabled:    e.D == 1,
			Required:    e.Q == 1,
			ReadOnly:    e.RO == 1,
			Clickable:   e.K == 1,
			Options:     e.O,
			Attrs:       e.A,
			Icon:        e.IC,
			Context:     e.In,
			Rect:        rect,
		}
		if e.PW == 1 && el.Value != "" {
			el.Value = secrets.Mask
		}
		if e.V == 1 {
			v := isect(rect, clip)
			el.InViewport = v[2] > 0 && v[3] > 0
		}
		own[k] = el
	}
	// Walk the child realms; their elements are spliced in at their frames.
	type splice struct {
		at  int
		els []Element
	}
	var splices []splice
	base := len(st.obs.Frames) - len(w.Frames)
	for k, wf := range w.Frames {
		if wf.X != 1 {
			continue
		}
		// st.obs.Frames grows in the recursion below; index it afresh.
		fi := func() *Frame { return &st.obs.Frames[base+k] }
		if depth+1 > maxFrameDepth || st.frames >= maxFrames {
			fi().Error = "not walked (too many or too deeply nested frames)"
			continue
		}
		st.frames++
		child, err := f.childRealm(ctx, r, w.Tok, wf.I, fids[k+1])
		if err != nil {
			fi().Error = err.Error()
			continue
		}
		fi().TargetID = string(child.targetID)
		var cw wObs
		err = f.call(ctx, child, "observe", map[string]any{"max": maxElements, "noText": st.textLen >= st.textMax, "textMax": st.textMax - st.textLen + 1, "mark": f.clickMark}, &cw)
		if err != nil {
			if errors.Is(err, errRealmGone) {
				child.gone = true
			}
			fi().Error = err.Error()
			continue
		}
		st.seen[child] = true
		child.tok = cw.Tok
		if cw.Text != "" && st.textLen < st.textMax {
			t := "--- frame " + fi().ID + " (" + cw.URL + ") ---\n" + cw.Text
			st.text = append(st.text, t)
			st.textLen += len(t) + 1
		}
		cox, coy := ox+wf.B[0], oy+wf.B[1]
		cclip := isect([4]float64{wf.C[0] + ox, wf.C[1] + oy, wf.C[2], wf.C[3]}, clip)
		if fi().URL == "" {
			fi().URL = cw.URL
		}
		els := f.collect(ctx, st, child, &cw, cox, coy, cclip, fids[k+1], depth+1)
		f.release(ctx, child)
		splices = append(splices, splice{at: wf.At, els: els})
	}

	out := make([]Element, 0, len(own)+8)
	si := 0
	for k := range own {
		for si < len(splices) && splices[si].at <= k {
			out = append(out, splices[si].els...)
			si++
		}
		out = append(out, own[k])
	}
	for ; si < len(splices); si++ {
		out = append(out, splices[si].els...)
	}
	return out
}

func isect(a, b [4]float64) [4]float64 {
	l := max(a[0], b[0])
	t := max(a[1], b[1])
	r := min(a[0]+a[2], b[0]+b[2])
	bt := min(a[1]+a[3], b[1]+b[3])
	return [4]float64{l, t, max(0, r-l), max(0, bt-t)}
}

// pruneSessions ends the sessions of out-of-process frames that were not
// seen in this observation. Callers hold p.sem.
func (f *frames) pruneSessions(seen map[*realm]bool) {
	for id, r := range f.sessions {
		if !seen[r] {
			if r.cancel != nil {
				r.cancel()
			}
			r.gone = true
			delete(f.sessions, id)
		}
	}
	for k, r := range f.children {
		if r.gone || !seen[r] {
			if r.docFrame != "" {
				r.gone = true
			}
			delete(f.children, k)
		}
	}
}

func joinText(parts []string, limit int) string {
	n := 0
	out := make([]byte, 0, 1024)
	for _, s := range parts {
		if s == "" {
			continue
		}
		if n > 0 {
			out = append(out, '\n')
		}
		if len(out)+len(s) > limit {
			s = truncUTF8(s, limit-len(out))
		}
		out = append(out, s...)
		n++
		if len(out) >= limit {
			break
		}
	}
	return string(out)
}

// utf16ToByte turns an offset in s counted in UTF-16 code units, as
// JavaScript counts, into a byte offset (len(s) when it is past the end).
func utf16ToByte(s string, units int) int {
	if units <= 0 {
		return 0
	}
	for i, r := range s {
		if units <= 0 {
			return i
		}
		if r >= 0x10000 {
			units -= 2
		} else {
			units--
		}
	}
	return len(s)
}

func truncUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// screenshot takes a JPEG of the viewport. While the tab has no active page
// (Chromium swaps in the document of a navigation, such as its error page
// after a failed one, in another renderer) it waits for the swap, bounded
// by ctx: it tries again when the tab's main frame moves on, and at the
// latest every notAttachedPoll.
func screenshot(ctx context.Context, nav *navTracker, quality int) ([]byte, error) {
	if quality <= 0 || quality > 100 {
		quality = DefaultJPEGQuality
	}
	q := int64(quality)
	for {
		wake := nav.changed()
		res, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
			Format:           page.CaptureScreenshotFormatJpeg,
			Quality:          &q,
			OptimizeForSpeed: new(true),
		})
		if err == nil {
			return res.Data, nil
		}
		if !notAttached(err) {
			return nil, err
		}
		t := time.NewTimer(notAttachedPoll)
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w (waiting for the tab's page: %v)", err, ctx.Err())
		}
		t.Stop()
	}
}

// notAttachedPoll is how often screenshot tries again while the tab has no
// active page and no navigation event comes.
const notAttachedPoll = 100 * time.Millisecond

// notAttached reports the error of a command sent while the tab has no
// active page.
func notAttached(err error) bool {
	return strings.Contains(err.Error(), "Not attached to an active page")
}

// Screenshot returns a JPEG of the viewport (quality 1..100, 0 for the
// default 70).
func (p *Page) Screenshot(ctx context.Context, quality int) ([]byte, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return screenshot(ctx, p.nav, quality)
}

// PrintPDF prints the page to PDF with the browser's defaults and
// backgrounds.
func (p *Page) PrintPDF(ctx context.Context) ([]byte, error) {
	ctx, done, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return chromedp.Run(ctx, chromedp.PrintToPDF(chromedp.PDFPrintBackground()))
}
