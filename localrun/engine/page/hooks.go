package page

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The click-listener hook.
//
// Many controls of real sites are plain elements that a script made
// clickable: el.addEventListener("click", ...) or el.onclick = ..., with no
// onclick attribute, no role and no pointer cursor (or one on :hover only).
// The walker runs in an isolated world: it sees the DOM but not the page's
// JavaScript objects, so it cannot ask which elements have listeners. The
// hook closes that gap. It runs in the page's main world of every document
// of the tab's process before the page's own scripts
// (Page.addScriptToEvaluateOnNewDocument, and at once in the document
// already loaded), wraps EventTarget.prototype.addEventListener and the
// onclick-like property setters of HTMLElement and SVGElement, and marks an
// element that gets a click, mousedown, mouseup, pointerdown, pointerup,
// touchstart or touchend listener, or a mouseenter, mouseover, pointerenter
// or pointerover one (a menu that opens on hover is a control too: the
// model hovers or clicks it), with an attribute whose name is random
// per Page (clickMarkPrefix + 16 hex digits). The walker reads the mark
// (classify in page.js).
//
// What it covers: listeners on the element itself, and delegation from a
// list to its items (a listener on a <ul> lists each <li> with words of
// its own). A listener on an element that holds other controls (a
// framework's root, a toolbar) is delegation to them and lists nothing; its
// children are listed when they have a pointer cursor, on hover or always.
// Not covered: documents loaded before the Page's first operation (their
// listeners added since are seen), and out-of-process frames (another
// site's iframes), which the tab's session does not reach.
//
// Why an attribute: the isolated world shares only the DOM with the page.
// The attribute is set once per element, never on window, document, <html>,
// <body> or elements the walker lists anyway (links, buttons, fields,
// labels), so it adds few mutations. A page can read, remove or forge it,
// which gives it no power it lacks without the hook: forging lists an
// element the page could list with onclick="" (actions go to the listed
// node itself, by identity), and removing it hides nothing a page could not
// hide by other means (the mark only ever adds elements to the list).
//
// The hook wraps the functions with Proxy objects, so they keep their name,
// length and native-looking source text, and it calls only functions it
// captured before any page script ran, so a page that later replaces
// setAttribute or Reflect cannot make it misbehave.

// clickMarkPrefix starts the name of the click-listener mark attribute.
const clickMarkPrefix = "data-abctl-click-"

// newClickMark returns a fresh mark attribute name.
func newClickMark() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return clickMarkPrefix + hex.EncodeToString(b[:])
}

// clickHookJS is the hook's source; %q is the mark attribute's name.
const clickHookJS = `(() => {
  const MARK = %q;
  const EVENTS = { click: 1, mousedown: 1, mouseup: 1, pointerdown: 1, pointerup: 1, touchstart: 1, touchend: 1, mouseenter: 1, mouseover: 1, pointerenter: 1, pointerover: 1 };
  const LISTED = { a: 1, button: 1, input: 1, select: 1, textarea: 1, label: 1, summary: 1, option: 1, body: 1, html: 1 };
  const apply = Reflect.apply;
  const nodeType = Object.getOwnPropertyDescriptor(Node.prototype, 'nodeType').get;
  const localName = Object.getOwnPropertyDescriptor(Element.prototype, 'localName').get;
  const hasAttr = Element.prototype.hasAttribute;
  const setAttr = Element.prototype.setAttribute;
  const mark = (x) => {
    try {
      if (apply(nodeType, x, []) !== 1 || LISTED[apply(localName, x, [])] === 1) return;
      if (!apply(hasAttr, x, [MARK])) apply(setAttr, x, [MARK, '']);
    } catch (e) {
      // not an element (window, a document, an XMLHttpRequest)
    }
  };
  const ET = EventTarget.prototype;
  ET.addEventListener = new Proxy(ET.addEventListener, {
    apply(target, self, args) {
      if (typeof args[0] === 'string' && EVENTS[args[0]] === 1 && args[1]) mark(self);
      return apply(target, self, args);
    },
  });
  for (const P of [HTMLElement.prototype, SVGElement.prototype]) {
    for (const name of ['onclick', 'onmousedown', 'onmouseup', 'onpointerdown', 'onpointerup', 'ontouchstart', 'ontouchend']) {
      const d = Object.getOwnPropertyDescriptor(P, name);
      if (!d || !d.set || !d.configurable) continue;
      Object.defineProperty(P, name, {
        get: d.get,
        set: new Proxy(d.set, {
          apply(target, self, args) {
            if (args[0]) mark(self);
            return apply(target, self, args);
          },
        }),
        enumerable: d.enumerable,
        configurable: true,
      });
    }
  }
})();`

// installClickHook adds the click-listener hook to the tab's new documents
// and runs it in the current one. Callers hold p.sem.
func (f *frames) installClickHook(ctx context.Context) error {
	src := fmt.Sprintf(clickHookJS, f.clickMark)
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source:         src,
		RunImmediately: new(true),
	})
	if err != nil {
		return fmt.Errorf("install the click-listener hook: %w", err)
	}
	return nil
}
