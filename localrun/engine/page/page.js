// The in-page half of package page (github.com/abctl/abctl/engine/page).
//
// Go evaluates this function expression once per document realm (the top
// document of a tab, or the top document of an out-of-process iframe), with the
// name of a Symbol as its only argument. It installs one object on the global
// object under that Symbol; later calls reach it through run(op, args), which
// returns a JSON string (or a Promise of one).
//
// State lives in this closure: a counter of local element numbers, a Map from
// number to element and a WeakMap from element to number. A node keeps its
// number for as long as it lives, so repeated observations give it the same
// id. A fresh random token names this realm; Go keeps (token, number) pairs,
// so an id can never resolve to a node of another document.
(function (KEY) {
  'use strict';
  const sym = Symbol.for(KEY);
  if (globalThis[sym]) return 'ok';

  const W = globalThis;
  const stringify = JSON.stringify;
  const st = {
    tok: Math.random().toString(36).slice(2, 10) + Date.now().toString(36),
    n: 0,
    byId: new Map(),
    ids: new WeakMap(),
    marks: null,
  };

  // Tags that never hold anything the model can act on.
  const SKIP = {
    script: 1, style: 1, noscript: 1, template: 1, head: 1, meta: 1, link: 1,
    title: 1, base: 1, datalist: 1, option: 1, optgroup: 1, slot: 0,
  };
  // ARIA roles of widgets a user operates.
  const WIDGET = {
    button: 1, link: 1, checkbox: 1, radio: 1, menuitem: 1, menuitemcheckbox: 1,
    menuitemradio: 1, option: 1, tab: 1, switch: 1, textbox: 1, searchbox: 1,
    combobox: 1, listbox: 1, slider: 1, spinbutton: 1, treeitem: 1,
  };
  // Tags that are controls whatever their attributes.
  const TAGCAND = { a: 1, button: 1, input: 1, select: 1, textarea: 1, summary: 1, label: 1, iframe: 1, frame: 1 };
  // Input types that are buttons, and those typed into with insertText.
  const BUTTONTYPE = { submit: 1, button: 1, reset: 1, image: 1 };
  const TEXTTYPE = {
    text: 1, search: 1, email: 1, url: 1, tel: 1, password: 1, number: 1, '': 1,
  };
  const SETTERTYPE = {
    date: 1, time: 1, 'datetime-local': 1, month: 1, week: 1, color: 1, range: 1,
  };
  // Attributes worth showing beside the fixed fields of an element.
  const ATTRS = {
    'aria-expanded': 1, 'aria-haspopup': 1, 'aria-selected': 1, 'aria-pressed': 1,
    'aria-current': 1, 'aria-invalid': 1, 'aria-checked': 1, 'aria-valuenow': 1,
    min: 1, max: 1, step: 1, maxlength: 1, pattern: 1, accept: 1, multiple: 1,
    autocomplete: 1, readonly: 1, target: 1, download: 1, title: 1, alt: 1,
    inputmode: 1,
  };

  // squash collapses whitespace and trims, then keeps at most 600
  // characters: cut after collapsing, so that text padded with whitespace
  // (a headline link's markup) keeps its words. The raw text is bounded
  // first so that a huge one costs little.
  function squash(s) {
    if (!s) return '';
    if (s.length > 20000) s = s.slice(0, 20000);
    s = s.replace(/\s+/g, ' ').trim();
    return s.length > 600 ? s.slice(0, 600) : s;
  }

  // Elements whose content is not text a person reads.
  const NOTTEXT = { script: 1, style: 1, noscript: 1, template: 1, head: 1, title: 1 };

  // Tags that are laid out inline by default: the only elements whose
  // edges may fall inside a word (<b>Sub</b>mit), so the only ones whose
  // computed display flatText asks for.
  const INLINE = {
    span: 1, b: 1, i: 1, em: 1, strong: 1, a: 1, small: 1, sup: 1, sub: 1, code: 1,
    mark: 1, u: 1, s: 1, abbr: 1, font: 1, q: 1, cite: 1, kbd: 1, var: 1, time: 1,
    data: 1, bdi: 1, bdo: 1, del: 1, ins: 1, dfn: 1, samp: 1, tt: 1, big: 1,
    strike: 1, nobr: 1, label: 1, wbr: 1,
  };
  // Lists and list-like groups: a clickable item's name leaves out the
  // lists nested in it (a tree folder is "Docs", not "DocsReadmeLicense").
  const NESTLIST = { ul: 1, ol: 1, menu: 1 };
  const NESTROLE = { group: 1, tree: 1, listbox: 1, menu: 1, menubar: 1, list: 1 };
  function nestedList(x) {
    if (NESTLIST[x.localName] === 1) return true;
    const r = x.getAttribute('role');
    return r !== null && NESTROLE[r] === 1;
  }
  // Class names of icon fonts that draw their glyph from a ligature: the
  // text in them ("delete") is the icon's name, not words on the page.
  const LIGATURE = /(?:^|\s)material-(?:icons|symbols)/;
  // isBoundary reports whether the edges of element x separate words: an
  // element laid out as a box (block, inline-block, a flex or grid item,
  // a table cell, a line break) does; an inline element (<b>Sub</b>mit)
  // does not.
  function isBoundary(x) {
    const t = x.localName;
    if (INLINE[t] !== 1) return true;
    const w = x.ownerDocument.defaultView;
    if (!w) return false;
    const d = w.getComputedStyle(x).display;
    return d !== 'inline' && d !== 'contents' && d !== 'none';
  }

  // flatText is the text of n as a person reads it: its text nodes in the
  // flat tree (into open shadow roots, with the nodes slotted where their
  // slots are), without what scripts, styles, noscript and templates hold
  // or what aria-hidden hides, whitespace collapsed, at most max characters.
  // Words on either side of a box's edge are kept apart (see isBoundary).
  // With o.lists false, lists nested in n (nestedList) are left out; with
  // o.values, the values of the fields in n are read as text (not those of
  // password fields, nor the "on" of checkboxes); o.noLig leaves out the ligatures of icon fonts; o.skip
  // is an element left out; o.allEdges takes every element's edges for
  // word boundaries, which spares the computed styles.
  function flatText(n, max, o) {
    let out = '';
    let visits = 5000;
    const skipLists = o && o.lists === false;
    const values = o && o.values;
    const noLig = o && o.noLig;
    const skip = o ? o.skip : null;
    const allEdges = o && o.allEdges;
    const add = (data) => {
      const piece = (data.length > max + 2000 ? data.slice(0, max + 2000) : data).replace(/\s+/g, ' ');
      if (piece === ' ') {
        if (out && out[out.length - 1] !== ' ') out += ' ';
      } else if (piece) {
        out += out && out[out.length - 1] === ' ' && piece[0] === ' ' ? piece.slice(1) : piece;
      }
    };
    const walk = (x, top) => {
      if (out.length >= max || --visits < 0) return;
      if (x.nodeType === 3) {
        add(x.data);
        return;
      }
      let edge = false;
      if (x.nodeType === 1) {
        const t = x.localName;
        if (NOTTEXT[t] === 1) return;
        if (!top) {
          if (x === skip || (skipLists && nestedList(x))) return;
          if (x.hasAttributes()) {
            if (x.getAttribute('aria-hidden') === 'true') return;
            if (noLig && LIGATURE.test(x.getAttribute('class') || '')) return;
            // A closed menu or panel (hidden by a class or an inline
            // style) is not part of its control's name. Only elements with
            // attributes are hidden that way (a stylesheet's tag rule
            // aside), and the walk goes down from the control, so its own
            // display is enough: display: contents has no box but shows its
            // children, which checkVisibility() would drop. The layout is
            // clean during an observation, so offsetParent is cheap: only
            // an element without one (hidden, fixed or contents) has its
            // style read.
            if (x.hidden) return;
            if (x.offsetParent === null && x.localName !== 'body') {
              const dv = x.ownerDocument.defaultView;
              if (dv && dv.getComputedStyle(x).display === 'none') return;
            }
          }
        }
        if (values && !top && (t === 'input' || t === 'select' || t === 'textarea')) {
          const v = t === 'select'
            ? Array.from(x.selectedOptions || [], (op) => op.label || op.textContent).join(', ')
            : (x.type === 'password' || x.type === 'hidden' || x.type === 'checkbox' || x.type === 'radio' ? '' : x.value);
          if (v) add(' ' + v + ' ');
          return;
        }
        if (!top && (allEdges || isBoundary(x))) {
          edge = true;
          add(' ');
        }
        if (t === 'slot' && x.assignedNodes) {
          const as = x.assignedNodes({ flatten: true });
          if (as.length) {
            for (const c of as) walk(c, false);
            if (edge) add(' ');
            return;
          }
        }
        if (x.shadowRoot) {
          walk(x.shadowRoot, false);
          if (edge) add(' ');
          return;
        }
      } else if (x.nodeType !== 11) {
        return;
      }
      for (let c = x.firstChild; c; c = c.nextSibling) walk(c, false);
      if (edge) add(' ');
    };
    walk(n, true);
    out = out.trim();
    return out.length > max ? out.slice(0, max) : out;
  }

  // pseudoText is the text CSS generates for an element and its first
  // descendants (::before and ::after content: "×" on a delete button),
  // which is all the name some controls have.
  function pseudoText(el) {
    const W2 = el.ownerDocument.defaultView;
    if (!W2) return '';
    let out = '';
    const one = (x) => {
      for (const ps of ['::before', '::after']) {
        const c = W2.getComputedStyle(x, ps).content;
        if (c && c[0] === '"' && c.length > 2) out += c.slice(1, -1).replace(/\\(.)/g, '$1') + ' ';
      }
    };
    one(el);
    const kids = el.querySelectorAll('*');
    for (let k = 0; k < kids.length && k < 10 && !out.trim(); k++) one(kids[k]);
    return squash(out);
  }
  function cap(s, n) {
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }
  function r1(v) {
    return Math.round(v * 10) / 10;
  }

  // ---- ids ----------------------------------------------------------------

  function idOf(el) {
    let i = st.ids.get(el);
    if (i === undefined) {
      i = ++st.n;
      st.ids.set(el, i);
      st.byId.set(i, el);
    }
    return i;
  }
  function alive(el) {
    if (!el.isConnected) return false;
    const d = el.ownerDocument;
    return !!(d && d.defaultView);
  }
  function prune() {
    for (const [i, el] of st.byId) {
      if (!alive(el)) {
        st.byId.delete(i);
        st.ids.delete(el);
      }
    }
  }
  function lookup(a) {
    if (a.tok !== st.tok) return [null, 'the page was replaced since that observation'];
    const el = st.byId.get(a.i);
    if (!el) return [null, 'the element no longer exists'];
    if (!alive(el)) {
      st.byId.delete(a.i);
      st.ids.delete(el);
      return [null, 'the element was removed from the page'];
    }
    return [el, ''];
  }

  // ---- geometry -----------------------------------------------------------

  // The content box of a frame element, relative to its own document's viewport.
  function contentBox(fe) {
    const r = fe.getBoundingClientRect();
    const cs = fe.ownerDocument.defaultView.getComputedStyle(fe);
    const pl = parseFloat(cs.paddingLeft) || 0;
    const pt = parseFloat(cs.paddingTop) || 0;
    const pr = parseFloat(cs.paddingRight) || 0;
    const pb = parseFloat(cs.paddingBottom) || 0;
    return {
      x: r.left + fe.clientLeft + pl,
      y: r.top + fe.clientTop + pt,
      w: Math.max(0, fe.clientWidth - pl - pr),
      h: Math.max(0, fe.clientHeight - pt - pb),
    };
  }
  function isect(a, b) {
    const l = Math.max(a[0], b[0]);
    const t = Math.max(a[1], b[1]);
    const r = Math.min(a[0] + a[2], b[0] + b[2]);
    const btm = Math.min(a[1] + a[3], b[1] + b[3]);
    return [l, t, Math.max(0, r - l), Math.max(0, btm - t)];
  }
  // Offset and visible clip of a document of this realm, in realm viewport
  // coordinates (the realm's own document has offset 0 and the viewport clip).
  function docGeom(doc) {
    let ox = 0;
    let oy = 0;
    let clip = null;
    let w = doc.defaultView;
    const chain = [];
    for (let g = 0; w && w !== W && g < 16; g++) {
      let fe = null;
      try {
        fe = w.frameElement;
      } catch (e) {
        fe = null;
      }
      if (!fe) break;
      chain.push(fe);
      w = fe.ownerDocument.defaultView;
    }
    clip = [0, 0, W.innerWidth, W.innerHeight];
    for (let k = chain.length - 1; k >= 0; k--) {
      const b = contentBox(chain[k]);
      ox += b.x;
      oy += b.y;
      clip = isect(clip, [ox, oy, b.w, b.h]);
    }
    return { ox, oy, clip };
  }
  // The box of an element: its bounding box, the largest line box of a
  // wrapped inline element (pass its computed style to allow that), or the
  // box of its first sized child when it has none of its own.
  function bestRect(el, cs) {
    let r = el.getBoundingClientRect();
    if (r.width >= 1 && r.height >= 1) {
      if (!cs || cs.display !== 'inline') return r;
      const rs = el.getClientRects();
      if (rs.length > 1) {
        // A wrapped inline element: take the largest fragment.
        let best = rs[0];
        for (let k = 1; k < rs.length && k < 20; k++) {
          if (rs[k].width * rs[k].height > best.width * best.height) best = rs[k];
        }
        r = best;
      }
      return r;
    }
    for (let c = el.firstElementChild, k = 0; c && k < 5; c = c.nextElementSibling, k++) {
      const cr = c.getBoundingClientRect();
      if (cr.width >= 1 && cr.height >= 1) return cr;
    }
    return r;
  }
  // The point to press on an element and whether enough of it is visible.
  function point(el) {
    const g = docGeom(el.ownerDocument);
    const r = bestRect(el, el.ownerDocument.defaultView.getComputedStyle(el));
    const box = [r.left + g.ox, r.top + g.oy, r.width, r.height];
    const vis = isect(box, g.clip);
    const area = box[2] * box[3];
    const varea = vis[2] * vis[3];
    const full = Math.min(area, g.clip[2] * g.clip[3]);
    return {
      x: vis[0] + vis[2] / 2,
      y: vis[1] + vis[3] / 2,
      box,
      sized: box[2] >= 1 && box[3] >= 1,
      ok: varea >= 1 && varea >= 0.5 * full,
    };
  }

  // ---- hit testing --------------------------------------------------------

  // The element a click at (x, y) in realm coordinates lands on, through open
  // shadow roots and same-origin frames.
  function deepHit(x, y) {
    let doc = W.document;
    let ox = 0;
    let oy = 0;
    let last = null;
    for (let g = 0; g < 32; g++) {
      let h = doc.elementFromPoint(x - ox, y - oy);
      if (!h) return last;
      for (let k = 0; k < 32 && h.shadowRoot; k++) {
        const h2 = h.shadowRoot.elementFromPoint(x - ox, y - oy);
        if (!h2 || h2 === h) break;
        h = h2;
      }
      last = h;
      if (h.localName === 'iframe' || h.localName === 'frame') {
        let d = null;
        try {
          d = h.contentDocument;
        } catch (e) {
          d = null;
        }
        if (!d) return h;
        const b = contentBox(h);
        ox += b.x;
        oy += b.y;
        doc = d;
        continue;
      }
      return h;
    }
    return last;
  }
  function composedParent(n) {
    if (n.parentNode) {
      const p = n.parentNode;
      if (p.nodeType === 9) {
        const w = p.defaultView;
        try {
          return w && w !== W ? w.frameElement : null;
        } catch (e) {
          return null;
        }
      }
      if (p.nodeType === 11) return p.host || null;
      return p;
    }
    return n.host || null;
  }
  function within(target, h) {
    for (let n = h, g = 0; n && g < 1000; g++) {
      if (n === target) return true;
      n = composedParent(n);
    }
    return false;
  }
  function accepts(target, h) {
    if (!h) return false;
    if (within(target, h)) return true;
    if (h.localName === 'label' && h.control === target) return true;
    if (target.localName === 'label' && target.control && within(target.control, h)) return true;
    return false;
  }
  function desc(n) {
    let s = n.localName;
    if (n.id) s += '#' + cap(n.id, 40);
    const cl = (n.getAttribute('class') || '').trim();
    if (cl) s += '.' + cl.split(/\s+/).slice(0, 2).join('.');
    const t = cap(squash(n.textContent), 50);
    if (t) s += ' "' + t + '"';
    return s;
  }
  // Describe what covers an element: the nearest ancestor of the hit element
  // that is an overlay (fixed or sticky) or has an id, else the hit itself.
  function coverDesc(h) {
    let pick = null;
    for (let n = h, g = 0; n && n.nodeType === 1 && g < 10; g++) {
      const cs = n.ownerDocument.defaultView.getComputedStyle(n);
      if (cs.position === 'fixed' || cs.position === 'sticky') {
        pick = n;
        break;
      }
      if (!pick && n.id) pick = n;
      n = composedParent(n);
    }
    return desc(pick || h);
  }
  function deepActive() {
    let a = W.document.activeElement;
    for (let g = 0; a && g < 32; g++) {
      if (a.shadowRoot && a.shadowRoot.activeElement) {
        a = a.shadowRoot.activeElement;
        continue;
      }
      if (a.localName === 'iframe' || a.localName === 'frame') {
        let d = null;
        try {
          d = a.contentDocument;
        } catch (e) {
          d = null;
        }
        if (d && d.activeElement && d.activeElement !== d.body) {
          a = d.activeElement;
          continue;
        }
      }
      break;
    }
    return a;
  }
  function isDisabled(el) {
    try {
      if (el.matches(':disabled')) return true;
    } catch (e) {
      // not a form control
    }
    return el.getAttribute('aria-disabled') === 'true';
  }

  // ---- text and labels ----------------------------------------------------

  // Characters of the Private Use Areas: the glyphs of icon fonts
  // (Font Awesome's "\f1f8"), which read as nothing.
  const PUA = /[\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}]/gu;
  function dropPUA(s) {
    const t = s.replace(PUA, ' ');
    return t === s ? s : squash(t);
  }
  // The options of flatText for the name of a control: its own words,
  // not those of the lists nested in it nor the ligatures of its icons.
  const NAMETEXT = { lists: false, noLig: true };
  const NAMETEXTALL = { noLig: true };

  // Roles of entries of lists, trees and menus, besides li, tr and dt.
  const ENTRYROLE = { listitem: 1, row: 1, option: 1, treeitem: 1, menuitem: 1, menuitemcheckbox: 1, menuitemradio: 1 };
  // textOf is the name of a control from its content: its text (for an
  // entry of a list, tree or menu, without the lists nested in it, unless
  // that is all it holds), else the alt, aria-label or title of an image
  // or icon in it, else the text CSS generates.
  function textOf(el) {
    const t = el.localName;
    const r = el.getAttribute('role');
    const entry = t === 'li' || t === 'tr' || t === 'dt' || (r !== null && ENTRYROLE[r] === 1);
    let s = entry ? dropPUA(flatText(el, 600, NAMETEXT)) : '';
    if (!s) s = dropPUA(flatText(el, 600, NAMETEXTALL));
    if (!s) {
      const img = el.querySelector('img[alt],[aria-label],[title],svg title');
      if (img) s = squash(img.getAttribute('alt') || img.getAttribute('aria-label') || img.getAttribute('title') || img.textContent);
    }
    if (!s) s = dropPUA(pseudoText(el));
    return cap(s, 150);
  }

  // ---- icons --------------------------------------------------------------
  //
  // A control with no words (a trash can drawn by an icon font, an <img>
  // without alt, a CSS content: url(...)) is named from what draws it, so
  // that the model can tell the trash from the star. The name is shown as
  // derived (icon="trash"), not as text.

  // Class names of icon sets: a prefix and the icon's name (fa-trash,
  // bi-heart-fill, glyphicon-star, icon-reply, mdi-delete), or the name
  // and a suffix (like-icon).
  const ICONCLASS = /^(?:fa[srlbdk]?|bi|icon|icons|ico|glyphicon|glyph|ion|ionicons|mdi|ti|la[srb]?|lni|ri|bx[sl]?|feather|oi|fi|gg|ph|codicon|octicon|uil|uis|ic|si|svg-icon|sprite)[-_](.+)$/;
  const ICONSUFFIX = /^(.+?)[-_](?:icon|ico)$/;
  // Modifiers of icon sets (fa-solid, fa-2x, icon-button): no icon's name.
  const ICONMOD = /^(?:solid|regular|light|thin|duotone|brands|sharp|fw|lg|sm|xs|xl|2xs|2xl|\d+x|spin|pulse|beat|bounce|fade|shake|border|inverse|li|ul|pull-(?:left|right)|rotate-.*|flip-.*|stack(?:-.*)?|size-.*|button|btn|link|wrap|wrapper|container|text|label|left|right|small|large|medium|white|black|primary|secondary|outline|outlined|filled|round|rounded|two-tone|set|font)$/;
  // words turns an identifier (trash-2, arrowLeft, ic_delete) into
  // lower-case words.
  function words(s) {
    return squash(s.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[-_.]+/g, ' ')).toLowerCase().slice(0, 40);
  }
  function classIcon(x) {
    const cl = x.getAttribute('class');
    if (!cl) return '';
    for (const tok of cl.trim().split(/\s+/)) {
      const m = ICONCLASS.exec(tok) || ICONSUFFIX.exec(tok);
      if (!m) continue;
      const rest = m[1].replace(/^(?:md|ios|logo|outline|solid|regular)-/, '');
      if (ICONMOD.test(rest)) continue;
      return words(rest);
    }
    return '';
  }
  // Words of an image file name that say nothing of the icon.
  const FILESTOP = /^(?:icon|icons|ic|ico|img|image|images|btn|button|svg|png|sprite|baseline|outline|round|sharp|black|white|\d+px|\d+x\d*|[0-9a-f]{8,})$/i;
  // fileWords is the name an image's URL gives (/img/trash-2.svg ->
  // "trash 2", ic_delete_24px.png -> "delete"); '' for data: URLs.
  function fileWords(u) {
    if (!u || /^data:/i.test(u)) return '';
    let f = u.split(/[?#]/)[0];
    f = f.slice(f.lastIndexOf('/') + 1);
    try {
      f = decodeURIComponent(f);
    } catch (e) {
      // keep it as written
    }
    f = f.replace(/\.[a-z0-9]{2,5}$/i, '').replace(/([a-z])([A-Z])/g, '$1 $2');
    const ws = f.split(/[-_.\s@]+/).filter((w) => w && !FILESTOP.test(w) && !(w.length >= 12 && /\d/.test(w)));
    return ws.join(' ').toLowerCase().slice(0, 40);
  }
  // cssURL is the first url(...) of a computed CSS value.
  function cssURL(v) {
    if (!v || v === 'none' || v === 'normal') return '';
    const m = /url\(\s*(["']?)([^"')]*)\1\s*\)/.exec(v);
    return m ? m[2] : '';
  }
  // Class words that name no action: layout, state and framework words.
  const CLASSSTOP = new Set((
    'btn button buttons icon icons ico clickable click active disabled selected hidden visible show hide ' +
    'small large sm lg md xs xl left right top bottom center middle pull float flex grid col row ' +
    'text bg border rounded shadow inline block wrapper wrap container item items ui js is has el ' +
    'component cursor pointer hover focus nav link control controls action actions toolbar bar tool ' +
    'tools box inner outer main content label span primary secondary default light dark outline ' +
    'outlined filled round sharp material symbols fa bi the of and with mt mb ml mr mx my pt pb pl pr px py'
  ).split(' '));
  // classWords is the name a control's own class gives when nothing else
  // does (<span class="prev">‹</span> -> "prev"): up to three words, no
  // layout or state words, no generated names (css-1x2y3z, sc-bdVaJa).
  function classWords(el) {
    const cl = el.getAttribute('class');
    if (!cl) return '';
    const out = [];
    for (const tok of cl.trim().split(/\s+/)) {
      if (tok.length > 30 || /\d/.test(tok) || /^(?:sc|css|jsx|svelte|ng|v|emotion)-|^_/.test(tok)) continue;
      for (const w of words(tok).split(' ')) {
        if (w.length < 2 || CLASSSTOP.has(w) || out.includes(w)) continue;
        out.push(w);
        if (out.length === 3) return out.join(' ');
      }
    }
    return out.join(' ');
  }
  // iconName names a control without words from what draws it, in this
  // order: the class of an icon font (on it or a descendant), the ligature
  // of a Material icon, the file name of an <img>, of a CSS content: url()
  // or background image (on it, its ::before/::after or its first
  // descendants), the id of an SVG sprite (<use href="#icon-x">), and
  // last the words of its own class.
  function iconName(el) {
    const xs = [el];
    const all = el.getElementsByTagName('*');
    for (let k = 0; k < all.length && xs.length < 8; k++) xs.push(all[k]);
    for (const x of xs) {
      const n = classIcon(x);
      if (n) return n;
    }
    for (const x of xs) {
      if (LIGATURE.test(x.getAttribute('class') || '')) {
        const n = words(squash(x.textContent));
        if (n) return n;
      }
    }
    const W2 = el.ownerDocument.defaultView;
    for (let k = 0; k < xs.length && k < 4; k++) {
      const x = xs[k];
      if (x.localName === 'img') {
        const n = fileWords(x.currentSrc || x.getAttribute('src') || '');
        if (n) return n;
        continue;
      }
      if (!W2) continue;
      for (const ps of [null, '::before', '::after']) {
        const cs = W2.getComputedStyle(x, ps);
        const n = fileWords(cssURL(cs.content) || cssURL(cs.backgroundImage) || cssURL(cs.webkitMaskImage));
        if (n) return n;
      }
    }
    for (const x of xs) {
      if (x.localName !== 'use') continue;
      const h = x.getAttribute('href') || x.getAttribute('xlink:href') || '';
      const i = h.lastIndexOf('#');
      if (i >= 0) {
        const n = words(h.slice(i + 1).replace(/^(?:icon|icons|ico|i|svg|sprite)[-_]/, ''));
        if (n) return n;
      }
    }
    return classWords(el);
  }

  // rowText is the text of the row, list item or option a control without
  // a name of its own sits in (a todo's checkbox): what a person reads as
  // its label.
  function rowText(el) {
    for (let n = el.parentElement, g = 0; n && g < 6; n = n.parentElement, g++) {
      const t = n.localName;
      const r = n.getAttribute('role');
      if (t === 'li' || t === 'tr' || t === 'dt' || t === 'dd' || r === 'row' || r === 'listitem' || r === 'option' || r === 'treeitem') {
        return cap(flatText(n, 200), 80);
      }
    }
    return '';
  }
  function labelText(lab) {
    let out = '';
    const rec = (n, g) => {
      for (let c = n.firstChild; c && out.length < 300; c = c.nextSibling) {
        if (c.nodeType === 3) out += c.data + ' ';
        else if (c.nodeType === 1 && g < 8) {
          const t = c.localName;
          if (t === 'select' || t === 'textarea' || t === 'input' || t === 'button' || NOTTEXT[t] === 1) continue;
          rec(c, g + 1);
        }
      }
    };
    rec(lab, 0);
    return squash(out);
  }
  function byIdIn(el, id) {
    const root = el.getRootNode();
    return (root.getElementById && root.getElementById(id)) || el.ownerDocument.getElementById(id);
  }
  function nearbyText(el) {
    for (let n = el, g = 0; n && g < 2; g++) {
      const p = n.previousElementSibling;
      if (p) {
        const t = p.localName;
        if (t === 'input' || t === 'select' || t === 'textarea' || t === 'button') return '';
        const s = squash(p.textContent);
        return s.length <= 60 ? s : '';
      }
      n = n.parentElement;
      if (!n || n.childElementCount > 1) break;
    }
    return '';
  }
  function labelOf(el, field) {
    let s = '';
    const lb = el.getAttribute('aria-labelledby');
    if (lb) {
      s = squash(lb.split(/\s+/).map((id) => {
        const n = byIdIn(el, id);
        return n ? n.textContent : '';
      }).join(' '));
    }
    if (!s) s = squash(el.getAttribute('aria-label'));
    if (!s && field) {
      const labs = el.labels;
      if (labs && labs.length) s = labelText(labs[0]);
      if (!s) s = squash(el.getAttribute('title'));
      if (!s) s = nearbyText(el);
      if (!s && (el.type === 'checkbox' || el.type === 'radio')) s = rowText(el);
    }
    return cap(s, 120);
  }

  // ---- observation --------------------------------------------------------

  // Lists, tables and their items. A clickable list (a pointer cursor or a
  // click listener on a <ul>) whose items are listed one by one is not
  // listed itself: its name would only repeat theirs.
  const CONT = { ul: 1, ol: 1, menu: 1, dl: 1, table: 1, tbody: 1, thead: 1, tfoot: 1 };
  const CONTROLE = { list: 1, group: 1, tree: 1, menu: 1, menubar: 1, grid: 1, rowgroup: 1, treegrid: 1, table: 1 };
  const ITEMTAG = { li: 1, tr: 1, dt: 1 };
  const ITEMROLE = { listitem: 1, row: 1 };
  function isCont(el, tag) {
    if (CONT[tag] === 1) return true;
    const r = el.getAttribute('role');
    return r !== null && CONTROLE[r] === 1;
  }
  function isItem(el, tag) {
    if (ITEMTAG[tag] === 1) return true;
    const r = el.getAttribute('role');
    return r !== null && ITEMROLE[r] === 1;
  }
  // Kinds of listed elements inside which nothing but form controls and
  // widget roles are listed (a <span> in a button is part of the button):
  // native controls and the roles of single-action widgets. Inside any
  // other listed element (a clickable card, a tree item, an option), an
  // element with a click handler of its own, a pointer cursor of its own
  // or a clickable list item is listed too.
  const NATIVEKIND = { link: 1, button: 1, select: 1, textarea: 1, summary: 1, input: 1, label: 1 };
  const NATIVEROLE = {
    button: 1, link: 1, checkbox: 1, radio: 1, switch: 1, slider: 1, spinbutton: 1,
    textbox: 1, searchbox: 1, combobox: 1, menuitemcheckbox: 1, menuitemradio: 1,
  };
  // Flags visit passes to an element's children. PTRLIST: the pointer
  // cursor in effect was set on a list or list item (not on a card or a
  // link). PMARK: the list they are in has a click listener.
  const PTRLIST = 1;
  const PMARK = 2;
  // Elements that are controls for holdsControls.
  const CTLSEL = 'a[href],button,input:not([type=hidden]),select,textarea,[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=treeitem],[onclick]';

  // insideList reports whether x sits in a list nested in el.
  function insideList(x, el) {
    for (let a = x.parentElement; a && a !== el; a = a.parentElement) {
      if (nestedList(a)) return true;
    }
    return false;
  }
  // holdsControls reports whether el holds a control (CTLSEL, or an
  // element with a click listener) outside the lists nested in it: a
  // click listener on such an element delegates to them (React puts all
  // its listeners on the root), and it is no control of its own.
  function holdsControls(el, c) {
    let m;
    try {
      const first = el.querySelector(c.ctl);
      if (!first) return false;
      if (!insideList(first, el)) return true;
      m = el.querySelectorAll(c.ctl);
    } catch (e) {
      return false;
    }
    for (let k = 1; k < m.length && k < 50; k++) {
      if (!insideList(m[k], el)) return true;
    }
    return m.length > 50;
  }

  // classify decides whether an element is listed, and as what: a form
  // control or link (its tag), a widget role ('role'), an editable region
  // ('ce'), or a clickable element: 'click', 'weak' (a clickable list,
  // dropped when its items are listed) or 'item' (a clickable item of a
  // list). inClick is 0 outside listed elements, 1 inside one that may
  // hold controls of its own, 2 inside a native control (NATIVEKIND).
  //
  // Outside listed elements, an element is clickable when it has an
  // onclick attribute, a tabindex, a click listener (the page's
  // addEventListener, seen through the mark; not when the element holds
  // other controls: that is delegation), a pointer cursor that starts on
  // it or a pointer cursor on hover (a CSS :hover rule). Inside a listed
  // element of level 1 the same holds, and an item of a list (li, tr,
  // role row or listitem) with words of its own and no control in it is
  // listed when the pointer cursor comes from its list or its list has a
  // click listener: the entries of a tree, of an autocomplete's list,
  // of a menu. A pointer cursor inherited from a card or a link lists
  // nothing, so a card stays one element.
  function classify(el, tag, ptr, parentPtr, inClick, flags, c) {
    switch (tag) {
      case 'a':
        if (el.hasAttribute('href')) return 'link';
        break;
      case 'button':
      case 'select':
      case 'textarea':
      case 'summary':
        return tag;
      case 'input':
        return el.type === 'hidden' ? '' : 'input';
      case 'label': {
        const ct = el.control;
        if (ct && ct.localName === 'input' && (ct.type === 'file' || ct.type === 'checkbox' || ct.type === 'radio')) {
          const r = ct.getBoundingClientRect();
          if (r.width < 2 || r.height < 2 || ct.ownerDocument.defaultView.getComputedStyle(ct).opacity === '0') return 'label';
        }
        break;
      }
    }
    const attrs = el.hasAttributes();
    if (attrs) {
      const role = el.getAttribute('role');
      if (role && WIDGET[role]) return 'role';
      const ce = el.getAttribute('contenteditable');
      if (ce !== null && ce !== 'false' && el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return 'ce';
    }
    if (inClick === 2 || tag === 'body' || tag === 'html') return '';
    if (attrs) {
      if (el.hasAttribute('onclick')) return 'click';
      const ti = el.getAttribute('tabindex');
      if (ti !== null && +ti >= 0) return 'click';
      if (c.mark && el.hasAttribute(c.mark)) {
        if (isItem(el, tag)) return 'click';
        if (!holdsControls(el, c)) return isCont(el, tag) ? 'weak' : 'click';
      }
    }
    if ((ptr && !parentPtr) || (c.hov !== null && c.hov.has(el))) return isCont(el, tag) ? 'weak' : 'click';
    if (inClick === 1 && ((ptr && (flags & PTRLIST)) || (flags & PMARK)) && isItem(el, tag) &&
        flatText(el, 1, NAMETEXT) !== '' && !holdsControls(el, c)) {
      return 'item';
    }
    return '';
  }

  // splitSelectors splits a selector list at its top-level commas.
  function splitSelectors(s) {
    const out = [];
    let depth = 0;
    let from = 0;
    for (let k = 0; k < s.length; k++) {
      const ch = s[k];
      if (ch === '(' || ch === '[') depth++;
      else if (ch === ')' || ch === ']') depth--;
      else if (ch === ',' && depth === 0) {
        out.push(s.slice(from, k));
        from = k + 1;
      }
    }
    out.push(s.slice(from));
    return out;
  }
  // The selectors of hover-pointer rules per document, kept while its
  // style sheets keep their number of rules.
  const hoverCache = new WeakMap();
  // hoverPointers returns the elements of doc that a CSS rule gives a
  // pointer cursor on hover only (.icon:hover { cursor: pointer }), or
  // null when there are none: each such rule's selector without :hover.
  // Style sheets of another origin cannot be read and are left out.
  function hoverPointers(doc) {
    const sheets = doc.styleSheets;
    let key = sheets.length * 1000003;
    for (let k = 0; k < sheets.length; k++) {
      try {
        key += sheets[k].cssRules.length;
      } catch (e) {
        // another origin's style sheet
      }
    }
    let h = hoverCache.get(doc);
    if (!h || h.key !== key) {
      const sels = [];
      const scan = (rules, d) => {
        for (let k = 0; k < rules.length && sels.length < 60; k++) {
          const r = rules[k];
          const st = r.selectorText;
          if (typeof st === 'string') {
            if (st.indexOf(':hover') < 0 || !r.style || r.style.cursor !== 'pointer') continue;
            for (const part of splitSelectors(st)) {
              if (part.indexOf(':hover') < 0 || part.indexOf(':not(') >= 0) continue;
              const sel = part.replace(/(^|[\s>+~(]):hover/g, '$1*').replace(/:hover/g, '').trim();
              if (!sel || /[>+~]$/.test(sel) || sel === '*') continue;
              try {
                doc.querySelector(sel);
                sels.push(sel);
              } catch (e) {
                // a selector this browser cannot query
              }
            }
          } else if (r.cssRules && d < 4) {
            scan(r.cssRules, d + 1); // @media, @supports, @layer
          }
        }
      };
      for (let k = 0; k < sheets.length; k++) {
        try {
          scan(sheets[k].cssRules, 0);
        } catch (e) {
          // another origin's style sheet
        }
      }
      h = { key, sel: sels.join(',') };
      hoverCache.set(doc, h);
    }
    if (!h.sel) return null;
    try {
      return new Set(doc.querySelectorAll(h.sel));
    } catch (e) {
      return null;
    }
  }

  // Rows, list items, posts and options: the containers whose text tells
  // a repeated control apart.
  const ROWTAG = { tr: 1, li: 1, article: 1, dd: 1, dt: 1 };
  const ROWROLE = { row: 1, listitem: 1, option: 1, treeitem: 1, article: 1 };
  // contextOf is the text around a control whose line would read the same
  // as others' (button "Select" in every row), without the control's own
  // name, cut to 60 characters: the text of its nearest row, list item or
  // article, else of its nearest ancestor with words besides its name (a
  // card), else of its previous sibling; never of an ancestor that holds
  // one of the others (prev and next are the others next to it in document
  // order: an ancestor that holds any other holds one of these two).
  function contextOf(el, prev, next, name) {
    const text = (n) => {
      let t = flatText(n, 300, { values: true, noLig: true, skip: el, allEdges: true });
      if (name) {
        const i = t.indexOf(name);
        if (i >= 0) t = t.slice(0, i) + ' ' + t.slice(i + name.length);
      }
      return squash(dropPUA(t)).replace(/^[\s·|,;:/-]+|[\s·|,;:/-]+$/g, '');
    };
    let first = '';
    for (let n = el.parentElement, g = 0; n && g < 12; n = n.parentElement, g++) {
      if ((prev && n.contains(prev)) || (next && n.contains(next)) || n.localName === 'body') break;
      const r = n.getAttribute('role');
      if (ROWTAG[n.localName] === 1 || (r !== null && ROWROLE[r] === 1)) {
        const t = text(n);
        if (t) return cap(t, 60);
      }
      if (!first) first = text(n);
    }
    if (!first) {
      const p = el.previousElementSibling;
      if (p && !(prev && p.contains(prev))) first = text(p);
    }
    return cap(first, 60);
  }
  // addContexts gives the records of repeated controls (same frame, tag,
  // role, type, name, label, icon and placeholder: the frame markers of
  // the prompt tell frames apart) their context (rec.in), for at most 400
  // of them.
  function addContexts(out) {
    const groups = new Map();
    for (let k = 0; k < out.length; k++) {
      const r = out[k];
      const key = (r.f || 0) + '\u0001' + r.t + '\u0001' + (r.r || '') + '\u0001' + (r.y || '') + '\u0001' + (r.x || '') + '\u0001' +
        (r.l || '') + '\u0001' + (r.ic || '') + '\u0001' + (r.p || '') + '\u0001' + (r.a && r.a.title ? r.a.title : '');
      const g = groups.get(key);
      if (g) g.push(k);
      else groups.set(key, [k]);
    }
    let budget = 400;
    for (const g of groups.values()) {
      if (g.length < 2) continue;
      const els = g.map((k) => st.byId.get(out[k].i));
      for (let j = 0; j < g.length && budget > 0; j++, budget--) {
        const r = out[g[j]];
        const t = contextOf(els[j], els[j - 1], els[j + 1], r.x || r.l || '');
        if (t) r.in = t;
      }
    }
  }

  function implicitRole(el, tag, kind) {
    switch (tag) {
      case 'a': return 'link';
      case 'button': case 'summary': return 'button';
      case 'select': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'textarea': return 'textbox';
      case 'input': {
        const t = el.type;
        if (BUTTONTYPE[t]) return 'button';
        if (t === 'checkbox' || t === 'radio') return t;
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return 'searchbox';
        if (TEXTTYPE[t]) return 'textbox';
        return '';
      }
    }
    if (kind === 'ce') return 'textbox';
    return '';
  }

  function emit(el, tag, kind, cs, c, out) {
    const r = bestRect(el, cs);
    if (r.width < 1 || r.height < 1) return;
    if (cs.visibility === 'hidden' || cs.visibility === 'collapse') return;
    const rec = { i: idOf(el), t: tag };
    if (c.fi) rec.f = c.fi;
    const role = el.getAttribute('role') || implicitRole(el, tag, kind);
    if (role) rec.r = role;
    const box = [r1(r.left + c.ox), r1(r.top + c.oy), r1(r.width), r1(r.height)];
    rec.b = box;
    const vis = isect(box, c.clip);
    if (vis[2] > 0 && vis[3] > 0) rec.v = 1;

    let field = false;
    if (tag === 'input') {
      const t = el.type;
      rec.y = t;
      if (BUTTONTYPE[t]) {
        rec.x = cap(squash(el.value || el.getAttribute('alt') || (t === 'reset' ? 'Reset' : 'Submit')), 150);
      } else {
        field = true;
        if (t === 'checkbox' || t === 'radio') {
          if (el.checked) rec.c = 1;
        } else if (t === 'file') {
          const fs = el.files;
          if (fs && fs.length) rec.val = cap(Array.from(fs, (f) => f.name).join(', '), 200);
        } else if (t === 'password') {
          rec.pw = 1;
          if (el.value) rec.val = '********';
        } else if (el.value) {
          rec.val = cap(el.value, 200);
        }
        if (el.placeholder) rec.p = cap(squash(el.placeholder), 80);
      }
    } else if (tag === 'textarea') {
      field = true;
      if (el.value) rec.val = cap(el.value, 200);
      if (el.placeholder) rec.p = cap(squash(el.placeholder), 80);
    } else if (tag === 'select') {
      field = true;
      const opts = el.options;
      const o = [];
      const sel = [];
      for (let k = 0; k < opts.length; k++) {
        const op = opts[k];
        const t = cap(squash(op.label || op.textContent), 60);
        if (k < 60) o.push(t);
        if (op.selected) sel.push(t);
      }
      if (opts.length > 60) o.push('…+' + (opts.length - 60));
      rec.o = o;
      if (sel.length) rec.val = sel.join(', ');
    } else if (tag === 'button') {
      rec.y = el.type;
      const t = textOf(el);
      if (t) rec.x = t;
    } else if (kind === 'ce') {
      field = true;
      const t = cap(squash(el.innerText), 200);
      if (t) rec.val = t;
    } else if (kind === 'label') {
      rec.x = labelText(el);
      const ctl = el.control;
      rec.y = ctl.type;
      if (ctl.checked) rec.c = 1;
    } else {
      if (role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton' || role === 'slider') field = true;
      // A listbox is named by its label: its text is its options', which
      // are listed one by one.
      const t = role === 'listbox' ? '' : textOf(el);
      if (t) rec.x = t;
      if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
        if (el.getAttribute('aria-checked') === 'true') rec.c = 1;
        if (!t && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby')) {
          const row = rowText(el);
          if (row) rec.l = row;
        }
      }
    }
    if (kind === 'click' || kind === 'weak' || kind === 'item') rec.k = 1;
    const lab = labelOf(el, field);
    if (lab) rec.l = lab;
    if (!field && kind !== 'label') {
      // No words (an icon) or only symbols ("‹", "×"): add the name of
      // what draws it.
      const nm = rec.x || rec.l || el.getAttribute('title') || el.getAttribute('alt') || '';
      if (!nm || !/[\p{L}\p{N}]/u.test(nm)) {
        const ic = iconName(el);
        if (ic && ic !== nm) rec.ic = cap(ic, 40);
      }
    }
    const nm = el.getAttribute('name');
    if (nm) rec.n = cap(nm, 80);
    if (tag === 'a') {
      const h = el.href;
      if (h) rec.h = String(h).slice(0, 500);
    }
    if (isDisabled(el)) rec.d = 1;
    if (el.required || el.getAttribute('aria-required') === 'true') rec.q = 1;
    if (el.readOnly || el.getAttribute('aria-readonly') === 'true') rec.ro = 1;
    const at = el.attributes;
    if (at.length > 1) {
      let a = null;
      for (let k = 0; k < at.length; k++) {
        const nmk = at[k].name;
        if (ATTRS[nmk] === 1) {
          (a || (a = {}))[nmk] = cap(at[k].value, 80);
        }
      }
      if (a) rec.a = a;
    }
    out.push(rec);
  }

  function observe(a) {
    prune();
    const max = a.max || 5000;
    const out = [];
    const frames = [];
    let more = 0;
    const vw = W.innerWidth;
    const vh = W.innerHeight;
    const texts = [];
    const shadows = []; // the open shadow roots of the top document, whose text innerText leaves out
    const withText = !a.noText;
    const textMax = a.textMax || 20000;
    let textLen = 0;

    // promoted counts the elements listed inside other listed ones; removed
    // the clickable lists dropped for their items (nulls in out).
    let promoted = 0;
    let removed = 0;
    const visit = (el, c, inClick, parentPtr, depth, flags) => {
      const tag = el.localName;
      if (SKIP[tag] === 1) return;
      // Inside a link or button, a plain element (no attributes, not a
      // control nor a list item) cannot be reported, so its style is not
      // needed: that saves a getComputedStyle on the content of cards and
      // links.
      let cs = null;
      let ptr = parentPtr;
      if (!inClick || el.hasAttributes() || TAGCAND[tag] === 1 || ITEMTAG[tag] === 1) {
        cs = c.gcs(el);
        if (cs.display === 'none') return;
        ptr = cs.cursor === 'pointer';
      }
      if (tag === 'iframe' || tag === 'frame') {
        frame(el, c, cs || c.gcs(el), depth);
        return;
      }
      const kind = cs ? classify(el, tag, ptr, parentPtr, inClick, flags, c) : '';
      let at = -1;
      if (kind) {
        if (out.length < max) {
          const n0 = out.length;
          emit(el, tag, kind, cs, c, out);
          if (out.length > n0) {
            at = n0;
            if (inClick) promoted++;
          }
        } else {
          more++;
        }
      }
      let nextIn = inClick;
      if (kind && kind !== 'ce' && inClick !== 2) {
        nextIn = NATIVEKIND[kind] === 1 || (kind === 'role' && NATIVEROLE[el.getAttribute('role')] === 1) ? 2 : 1;
      }
      // The flags of the children (PTRLIST, PMARK).
      let fl = 0;
      if (ptr) {
        if (parentPtr) fl = flags & PTRLIST;
        else if (isCont(el, tag) || isItem(el, tag)) fl = PTRLIST;
      }
      if (((flags & PMARK) !== 0 && (isCont(el, tag) || isItem(el, tag))) ||
          (c.mark && el.hasAttribute(c.mark) && isCont(el, tag))) {
        fl |= PMARK;
      }
      const p0 = promoted;
      if (tag === 'svg') {
        // Drawings are not walked, but the widgets drawn in them are
        // (<g role="slider">).
        const ws = el.querySelectorAll('[role]');
        for (let k = 0; k < ws.length && k < 200; k++) {
          const w = ws[k];
          if (WIDGET[w.getAttribute('role')] !== 1) continue;
          // A widget inside another is reached through that one.
          let inner = false;
          for (let a = w.parentElement; a && a !== el; a = a.parentElement) {
            if (WIDGET[a.getAttribute('role')] === 1) {
              inner = true;
              break;
            }
          }
          if (!inner) visit(w, c, nextIn, ptr, depth + 1, fl);
        }
        return;
      }
      if (tag === 'select' || tag === 'textarea' || depth > 400) return;
      const sr = el.shadowRoot;
      if (sr) {
        if (withText && c.fi === 0 && shadows.length < 100) shadows.push(sr);
        for (let ch = sr.firstElementChild; ch; ch = ch.nextElementSibling) visit(ch, c, nextIn, ptr, depth + 1, fl);
      }
      for (let ch = el.firstElementChild; ch; ch = ch.nextElementSibling) visit(ch, c, nextIn, ptr, depth + 1, fl);
      if (kind === 'weak' && at >= 0 && promoted > p0) {
        // A clickable list whose items are listed.
        out[at] = null;
        removed++;
      }
    };

    // Where the reader is in the top document's text: textAt is the offset
    // in the text of the first text in the viewport; textCut and textLeft
    // count the characters left out above and below when the text is longer
    // than textMax (the part kept is then a window around the viewport).
    let textAt = 0;
    let textCut = 0;
    let textLeft = 0;

    // firstInView returns the first text node, in document order, shown in
    // the viewport outside fixed and sticky boxes (a header that stays on
    // screen says nothing about where the reader is), or null when the
    // viewport starts at the top of the document or shows no text. A grid
    // of points finds text in view (caretRangeFromPoint); from the first
    // found, the text nodes before it are walked back while they are in
    // view, pinned or not rendered.
    const firstInView = (doc) => {
      if (typeof doc.caretRangeFromPoint !== 'function') return null;
      const pinned = new Map();
      const pinOf = (el) => {
        if (!el || el === doc.documentElement || el === doc.body) return null;
        let v = pinned.get(el);
        if (v === undefined) {
          const pos = W.getComputedStyle(el).position;
          v = pos === 'fixed' || pos === 'sticky' ? el : pinOf(el.parentElement);
          pinned.set(el, v);
        }
        return v;
      };
      // A pinned bar at the top hides what scrolls under it.
      let inset = 0;
      const top = doc.elementFromPoint(vw >> 1, 2);
      const bar = top && pinOf(top);
      if (bar) inset = Math.max(0, Math.min(vh >> 1, bar.getBoundingClientRect().bottom));
      let best = null;
      for (const fy of [0.02, 0.06, 0.1, 0.15, 0.2, 0.3, 0.45, 0.6, 0.8]) {
        const y = inset + (vh - inset) * fy;
        for (const fx of [0.05, 0.3, 0.55]) {
          const r = doc.caretRangeFromPoint(vw * fx, y);
          const n = r && r.startContainer;
          if (!n || n.nodeType !== 3 || n === best || !/\S/.test(n.data)) continue;
          if (best && !(best.compareDocumentPosition(n) & 2)) continue; // not before best
          if (pinOf(n.parentElement)) continue;
          best = n;
        }
      }
      if (!best) return null;
      const rg = doc.createRange();
      const tw = doc.createTreeWalker(doc.body || doc.documentElement, 4 /* NodeFilter.SHOW_TEXT */);
      tw.currentNode = best;
      for (let k = 0; k < 400; k++) {
        const x = tw.previousNode();
        if (!x) return null; // everything before is in view: the top
        if (!/\S/.test(x.data) || NOTTEXT[x.parentElement ? x.parentElement.localName : ''] === 1) continue;
        rg.selectNodeContents(x);
        const b = rg.getBoundingClientRect();
        if (b.width === 0 && b.height === 0) continue; // not rendered
        if (pinOf(x.parentElement)) continue;
        if (b.bottom <= inset + 1) break; // above the viewport: best is the first
        if (b.top < vh && b.right > 0 && b.left < vw) best = x;
      }
      return best;
    };

    // offsetOf returns the offset in t (the top document's text, as addText
    // makes it) of the text of node n, -1 when it is not found. A text that
    // occurs more than once is told apart by counting its occurrences in the
    // rendered text nodes before n.
    const offsetOf = (t, n, doc) => {
      let snip = n.data.slice(0, 400).replace(/\s+/g, ' ').trim().slice(0, 40);
      if (!snip) return -1;
      let hay = t;
      let at = hay.indexOf(snip);
      if (at < 0) {
        // text-transform changes the case innerText gives.
        hay = t.toLowerCase();
        snip = snip.toLowerCase();
        at = hay.indexOf(snip);
        if (at < 0) return -1;
      }
      if (hay.indexOf(snip, at + 1) < 0) return at;
      const lower = hay !== t;
      let k = 0;
      const tw = doc.createTreeWalker(doc.body || doc.documentElement, 4 /* NodeFilter.SHOW_TEXT */);
      for (let x = tw.nextNode(); x && x !== n; x = tw.nextNode()) {
        if (x.data.length < snip.length) continue;
        let d = x.data.replace(/\s+/g, ' ');
        if (lower) d = d.toLowerCase();
        let i = d.indexOf(snip);
        if (i < 0) continue;
        const pe = x.parentElement;
        if (pe && pe.checkVisibility && !pe.checkVisibility({ visibilityProperty: true })) continue;
        for (; i >= 0; i = d.indexOf(snip, i + 1)) k++;
      }
      for (; k > 0; k--) {
        const next = hay.indexOf(snip, at + 1);
        if (next < 0) break;
        at = next;
      }
      return at;
    };

    const addText = (doc, label) => {
      if (!withText || textLen >= textMax) return;
      const b = doc.body || doc.documentElement;
      if (!b) return;
      let t = b.innerText || '';
      if (!label) {
        // The text inside shadow roots, which innerText does not reach.
        for (const sr of shadows) {
          let st = '';
          for (let ch = sr.firstElementChild; ch; ch = ch.nextElementSibling) {
            if (NOTTEXT[ch.localName] !== 1) st += (ch.innerText || '') + '\n';
          }
          if (st.trim()) t += '\n' + st;
        }
      }
      t = t.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
      if (!t) return;
      if (!label) {
        const n = firstInView(doc);
        if (n) textAt = Math.max(0, offsetOf(t, n, doc));
        if (t.length > textMax) {
          // Keep a window around the viewport: a quarter of it above, from
          // the start of a line when one starts near.
          let start = Math.max(0, Math.min(textAt - (textMax >> 2), t.length - textMax));
          if (start > 0) {
            const nl = t.indexOf('\n', start);
            if (nl >= 0 && nl < start + 200 && nl < textAt) start = nl + 1;
          }
          textCut = start;
          textLeft = Math.max(0, t.length - start - textMax);
          t = t.slice(start, start + textMax);
          textAt -= start;
        }
      }
      if (label) t = '--- ' + label + ' ---\n' + t;
      if (textLen + t.length > textMax) t = t.slice(0, textMax - textLen);
      textLen += t.length + 1;
      texts.push(t);
    };

    const frame = (el, c, cs, depth) => {
      if (cs.visibility === 'hidden' || frames.length >= 64) return;
      const b = contentBox(el);
      if (b.w < 2 || b.h < 2) return;
      const box = [r1(b.x + c.ox), r1(b.y + c.oy), r1(b.w), r1(b.h)];
      const clip = isect(c.clip, box);
      let d = null;
      try {
        d = el.contentDocument;
      } catch (e) {
        d = null;
      }
      const fi = frames.length + 1;
      const fr = { i: idOf(el), p: c.fi, b: box, c: clip.map(r1), at: out.length };
      const nm = el.getAttribute('name') || el.getAttribute('title');
      if (nm) fr.n = cap(nm, 80);
      frames.push(fr);
      if (d && d.documentElement && d.defaultView) {
        fr.u = d.URL;
        const w = d.defaultView;
        const c2 = { ox: box[0], oy: box[1], clip, fi, gcs: (x) => w.getComputedStyle(x), mark, ctl, hov: hoverPointers(d) };
        visit(d.documentElement, c2, 0, false, depth + 1, 0);
        addText(d, 'frame ' + d.URL);
      } else {
        fr.x = 1;
        fr.u = el.src || '';
      }
    };

    const gcs = W.getComputedStyle.bind(W);
    const root = W.document.documentElement;
    // The attribute the page's click listeners are marked with (hooks.go),
    // when Go installed the hook.
    const mark = typeof a.mark === 'string' && /^data-[a-z0-9-]+$/.test(a.mark) ? a.mark : '';
    const ctl = mark ? CTLSEL + ',[' + mark + ']' : CTLSEL;
    if (root) visit(root, { ox: 0, oy: 0, clip: [0, 0, vw, vh], fi: 0, gcs, mark, ctl, hov: hoverPointers(W.document) }, 0, false, 0, 0);
    if (removed) {
      // Drop the nulls, and move the frames' places in out with them.
      const to = new Array(out.length + 1);
      let j = 0;
      for (let k = 0; k < out.length; k++) {
        to[k] = j;
        if (out[k]) out[j++] = out[k];
      }
      to[out.length] = j;
      out.length = j;
      for (const f of frames) f.at = to[f.at];
    }
    addContexts(out);
    if (withText) {
      // The top document's text goes first.
      const frameTexts = texts.splice(0);
      textLen = 0;
      addText(W.document, '');
      for (const t of frameTexts) {
        if (textLen >= textMax) break;
        texts.push(t.slice(0, textMax - textLen));
        textLen += t.length + 1;
      }
    }
    const se = W.document.scrollingElement || W.document.documentElement;
    return {
      tok: st.tok,
      url: W.location.href,
      title: W.document.title,
      vw, vh,
      sx: W.scrollX, sy: W.scrollY,
      sw: se ? se.scrollWidth : vw, sh: se ? se.scrollHeight : vh,
      els: out,
      frames,
      more,
      text: texts.join('\n'),
      ta: textAt,
      tc: textCut,
      tl: textLeft,
    };
  }

  // ---- actions ------------------------------------------------------------

  function editKind(el) {
    const tag = el.localName;
    if (tag === 'input') {
      const t = el.type;
      if (TEXTTYPE[t]) return 'text';
      if (SETTERTYPE[t]) return 'setter';
      if (t === 'file') return 'no:a file input; use upload_file';
      if (t === 'checkbox' || t === 'radio') return 'no:a ' + t + '; use click';
      return 'no:an input of type ' + t;
    }
    if (tag === 'textarea') return 'text';
    if (tag === 'select') return 'no:a select; use select_option';
    if (el.isContentEditable) return 'ce';
    // A wrapper (label, custom field) holding exactly one text field.
    return 'no:not a text field';
  }
  function innerField(el) {
    if (el.localName === 'label' && el.control) return el.control;
    const root = el.shadowRoot || el;
    const f = root.querySelectorAll('input:not([type=hidden]),textarea,[contenteditable=""],[contenteditable=true]');
    return f.length === 1 ? f[0] : null;
  }

  // arm records the target of the next mousedown in the element's window,
  // so that Go can check where a click landed (clickSeen).
  function arm(el) {
    disarm();
    const w = el.ownerDocument.defaultView;
    const h = (e) => {
      if (!st.hit) st.hit = (e.composedPath && e.composedPath()[0]) || e.target;
    };
    w.addEventListener('mousedown', h, true);
    st.armed = { w, h, el };
    st.hit = null;
  }
  function disarm() {
    if (st.armed) {
      try {
        st.armed.w.removeEventListener('mousedown', st.armed.h, true);
      } catch (e) {
        // the window is gone
      }
      st.armed = null;
    }
  }
  function clickSeen() {
    const ar = st.armed;
    const hit = st.hit;
    st.hit = null;
    disarm();
    const res = { href: W.location.href };
    if (!ar) res.seen = -1;
    else if (!hit) res.seen = 0;
    else if (accepts(ar.el, hit)) res.seen = 1;
    else {
      res.seen = 2;
      res.other = coverDesc(hit);
    }
    return res;
  }

  // scrollerClip is the part of the window that the ancestors of el which
  // clip their content (overflow other than visible: scrolling containers,
  // overflow: hidden) leave for it, as [x, y, w, h] in el's window
  // coordinates; null when no ancestor clips it. An absolutely positioned
  // element escapes the static ancestors between it and its containing
  // block, a fixed one all of them, as in CSS.
  function scrollerClip(el) {
    const w = el.ownerDocument.defaultView;
    const root = el.ownerDocument.documentElement;
    let clip = null;
    let cs = w.getComputedStyle(el);
    if (cs.position === 'fixed') return null;
    let escaping = cs.position === 'absolute';
    for (let n = composedParent(el), g = 0; n && n.nodeType === 1 && g < 200; n = composedParent(n), g++) {
      if (n.ownerDocument !== el.ownerDocument || n === root || n === el.ownerDocument.body) break;
      cs = w.getComputedStyle(n);
      const block = cs.position !== 'static' || cs.transform !== 'none';
      const clips = cs.overflowX !== 'visible' || cs.overflowY !== 'visible';
      if (clips && (!escaping || block)) {
        const r = n.getBoundingClientRect();
        const box = [r.left + n.clientLeft, r.top + n.clientTop, n.clientWidth, n.clientHeight];
        clip = clip ? isect(clip, box) : box;
      }
      if (block) escaping = false;
      if (cs.position === 'fixed') break;
      if (cs.position === 'absolute') escaping = true;
    }
    return clip;
  }
  // inView is point(el) narrowed to what el's clipping ancestors show: the
  // press point is the centre of the part left visible, and ok says that
  // at least half of what the clip could show of the element shows (a
  // link wider than the list item that cuts it off is in view).
  function inView(el) {
    const p = point(el);
    const c = scrollerClip(el);
    if (!c || !p.sized) return p;
    const g = docGeom(el.ownerDocument);
    const cl = isect([c[0] + g.ox, c[1] + g.oy, c[2], c[3]], g.clip);
    const vis = isect(p.box, cl);
    const varea = vis[2] * vis[3];
    const full = Math.min(p.box[2], cl[2]) * Math.min(p.box[3], cl[3]);
    return { x: vis[0] + vis[2] / 2, y: vis[1] + vis[3] / 2, box: p.box, sized: true, ok: varea >= 1 && varea >= 0.5 * full };
  }
  // reveal scrolls el into view in every scrolling ancestor and the page,
  // unless enough of it is visible already, and returns inView(el).
  function reveal(el) {
    const p = inView(el);
    if (p.ok) return p;
    try {
      el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    } catch (e) {
      // detached or not scrollable
    }
    return inView(el);
  }

  // ctlDesc names a control as the observation's element lines do:
  // its role, then its name in quotes.
  function ctlDesc(c) {
    const role = c.getAttribute('role') || (c.localName === 'a' ? 'link' : c.localName === 'input' ? 'button' : c.localName);
    let name = c.getAttribute('aria-label') || c.getAttribute('title') || squash(c.textContent) || c.value || '';
    if (!name) {
      const img = c.querySelector('img[alt]');
      if (img) name = img.getAttribute('alt');
    }
    return name ? role + ' "' + cap(squash(name), 40) + '"' : role + ' (without a name)';
  }
  const PICKERWORDS = /(?<!up|candi|vali)date|picker|calendar|(^|[\W_])time|flatpickr|pikaday/i;
  // pickerOf tells what sets a field that cannot be typed into: '' for the
  // field itself when it looks like a picker's field (aria-haspopup, a
  // combobox, a class or name of a date or time picker), the description of
  // a button right beside it, or null when there is nothing of the kind.
  function pickerOf(el) {
    const hp = el.getAttribute('aria-haspopup');
    if ((hp && hp !== 'false') || el.getAttribute('role') === 'combobox') return { self: 1 };
    const words = (el.getAttribute('class') || '') + ' ' + el.id + ' ' + (el.getAttribute('name') || '');
    const isBtn = (n) =>
      n && n.nodeType === 1 && (n.localName === 'button' || (n.localName === 'input' && BUTTONTYPE[n.type]) ||
        n.getAttribute('role') === 'button' || (n.getAttribute('aria-haspopup') || 'false') !== 'false');
    // A button next to the field, or next to a wrapper that holds only it.
    for (let n = el, g = 0; n && g < 3; n = n.parentElement, g++) {
      for (const s of [n.nextElementSibling, n.previousElementSibling]) {
        if (isBtn(s)) return { btn: ctlDesc(s) };
        if (s && s.children.length === 1 && isBtn(s.firstElementChild)) return { btn: ctlDesc(s.firstElementChild) };
      }
      const par = n.parentElement;
      if (!par || par.querySelectorAll('input,textarea,select').length > 1) break;
    }
    if (PICKERWORDS.test(words) || SETTERTYPE[el.type]) return { self: 1 };
    return null;
  }
  // pickerHint is the advice for a field whose value the page sets: what to
  // click instead of typing.
  function pickerHint(el) {
    const pk = pickerOf(el);
    if (!pk) return '';
    if (pk.btn) return 'it is set by a picker: click the ' + pk.btn + ' beside it (or the field) and choose in the picker that opens';
    return 'it is set by a picker: click it and choose in the picker that opens';
  }
  function readOnlyWhy(el) {
    const h = pickerHint(el);
    if (h) return 'read-only; ' + h;
    return 'read-only: it cannot be typed into (nothing beside it looks like a control that sets it)';
  }
  function pickerAdvice(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    return { hint: pickerHint(el) };
  }

  function prep(a) {
    let [el, why] = lookup(a);
    if (!el) return { stale: why };
    if (a.mode === 'focus' && editKind(el).startsWith('no:')) {
      const f = innerField(el);
      if (f) el = f;
    }
    const info = { t: el.localName, y: el.type || '' };
    if (a.mode === 'focus') {
      const k = editKind(el);
      if (k.startsWith('no:')) return Object.assign(info, { fail: k.slice(3) });
      if (el.readOnly) return Object.assign(info, { fail: readOnlyWhy(el) });
      info.kind = k;
      info.i = idOf(el);
    }
    if (a.mode !== 'hover' && isDisabled(el)) return Object.assign(info, { fail: 'disabled' });
    if (a.mode === 'click' && animating(el)) return Object.assign(info, { fail: 'moving (an animation runs on it)' });
    const p = reveal(el);
    if (!p.sized) return Object.assign(info, { fail: 'not visible (it has no size)' });
    if (!p.ok) {
      const cs = el.ownerDocument.defaultView.getComputedStyle(el);
      if (cs.visibility === 'hidden') return Object.assign(info, { fail: 'not visible (visibility: hidden)' });
      return Object.assign(info, { fail: 'outside the visible area even after scrolling' });
    }
    info.x = p.x;
    info.y2 = p.y;
    if (a.mode === 'focus' && deepActive() === el) {
      info.focused = 1;
      return info;
    }
    const h = deepHit(p.x, p.y);
    if (!h) return Object.assign(info, { fail: 'nothing at its position (off-screen?)' });
    if (!accepts(el, h)) info.cover = coverDesc(h);
    else if (a.mode === 'click') arm(el);
    return info;
  }

  // animating reports whether a CSS animation or transition is running on
  // the element or one of its near ancestors (a panel sliding in): a click
  // now could land where it no longer is.
  function animating(el) {
    for (let n = el, g = 0; n && n.nodeType === 1 && g < 6; n = n.parentElement, g++) {
      if (!n.getAnimations) return false;
      const as = n.getAnimations();
      for (let k = 0; k < as.length; k++) {
        if (as[k].playState === 'running' && as[k].effect && as[k].effect.getComputedTiming().progress !== null) {
          const t = as[k].effect.getComputedTiming();
          if (t.iterations !== Infinity) return true;
        }
      }
    }
    return false;
  }

  // The content origin of a frame element (a local id) in realm coordinates,
  // optionally scrolled into view first, and whether the point (lx, ly) of
  // the frame's own viewport is visible and lands on the frame.
  function host(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    if (a.scroll) reveal(el);
    const g = docGeom(el.ownerDocument);
    const b = contentBox(el);
    const box = [b.x + g.ox, b.y + g.oy, b.w, b.h];
    const res = { x: box[0], y: box[1], clip: isect(box, g.clip) };
    const sc = scrollerClip(el);
    if (sc) res.clip = isect(res.clip, [sc[0] + g.ox, sc[1] + g.oy, sc[2], sc[3]]);
    if (a.lx !== undefined) {
      const px = box[0] + a.lx;
      const py = box[1] + a.ly;
      const c = res.clip;
      if (px < c[0] || py < c[1] || px > c[0] + c[2] || py > c[1] + c[3]) {
        res.out = 1;
      } else {
        const h = deepHit(px, py);
        if (h !== el) res.cover = h ? coverDesc(h) : 'nothing (the frame is off-screen)';
      }
    }
    return res;
  }

  // Fields whose suggestions may come from the server: an ARIA combobox or
  // autocomplete, a field tied to a list, or a field that turns the
  // browser's autocomplete off and is named like one. A plain search field
  // is not one: most suggest nothing, and the wait would slow each search.
  const SUGGESTWORDS = /auto-?complete|autosuggest|typeahead|type-ahead|suggest|combo|lookup/i;
  function suggests(el) {
    if (el.localName !== 'input' && !el.isContentEditable) return false;
    if (el.getAttribute('role') === 'combobox') return true;
    const ac = el.getAttribute('aria-autocomplete');
    if (ac && ac !== 'none') return true;
    const hp = el.getAttribute('aria-haspopup');
    if (hp === 'listbox' || el.hasAttribute('list') || el.hasAttribute('aria-controls') || el.hasAttribute('aria-owns')) return true;
    const words = (el.getAttribute('class') || '') + ' ' + el.id + ' ' + (el.getAttribute('name') || '');
    return el.getAttribute('autocomplete') === 'off' && SUGGESTWORDS.test(words);
  }
  // watchSuggestions starts counting the changes of the page outside the
  // field el (the suggestions' list appearing or filling, aria-expanded
  // turning true) while it is typed into; suggestWait reads the count.
  // The watch ends by itself after a while if nothing reads it.
  function watchSuggestions(el) {
    unwatchSuggestions();
    const sw = { el, n: 0, on: null, mo: null, timer: 0 };
    sw.mo = new MutationObserver((recs) => {
      for (const r of recs) {
        const t = r.target;
        if (r.type === 'attributes') {
          if (r.attributeName !== 'aria-expanded' && (t === el || (t.nodeType === 1 && within(t, el)))) continue;
        } else if (t === el || within(el, t)) {
          continue;
        }
        sw.n++;
        if (sw.on) sw.on();
        return;
      }
    });
    const opts = { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['aria-expanded', 'class', 'style', 'hidden'] };
    sw.mo.observe(el.ownerDocument, opts);
    const root = el.getRootNode();
    if (root && root.nodeType === 11) sw.mo.observe(root, opts);
    sw.timer = setTimeout(unwatchSuggestions, 15000);
    st.sw = sw;
  }
  function unwatchSuggestions() {
    if (st.sw) {
      st.sw.mo.disconnect();
      clearTimeout(st.sw.timer);
      st.sw = null;
    }
  }
  // listShowing reports whether a list of suggestions for el is visible:
  // the element its aria-controls or aria-owns names when it has content,
  // or any listbox with content, or any option.
  function listShowing(el) {
    const d = el.ownerDocument;
    const ids = ((el.getAttribute('aria-controls') || '') + ' ' + (el.getAttribute('aria-owns') || '')).split(/\s+/);
    const cands = ids.filter(Boolean).map((i) => d.getElementById(i));
    const more = d.querySelectorAll('[role=listbox],[role=option]');
    for (let k = 0; k < more.length && k < 200; k++) cands.push(more[k]);
    for (const l of cands) {
      if (!l || (l.getAttribute('role') !== 'option' && !l.firstElementChild)) continue;
      const r = l.getBoundingClientRect();
      if (r.width >= 1 && r.height >= 1) return true;
    }
    return false;
  }
  // suggestWait resolves when the page changes outside the field watched
  // since focusSelect (the suggestions arrived), or after a.max ms. A list
  // that changed while the keys were typed and shows now was filtered by
  // the page itself: no wait then. shown says whether a list shows.
  function suggestWait(a) {
    const sw = st.sw;
    if (!sw) return Promise.resolve(stringify({}));
    return new Promise((resolve) => {
      const t0 = Date.now();
      let timer = 0;
      const done = (changed) => {
        clearTimeout(timer);
        sw.on = null;
        unwatchSuggestions();
        resolve(stringify({ changed: changed ? 1 : 0, shown: listShowing(sw.el) ? 1 : 0, ms: Date.now() - t0 }));
      };
      if (sw.n > 0 && listShowing(sw.el)) {
        done(true);
        return;
      }
      sw.n = 0;
      sw.on = () => done(true);
      timer = setTimeout(() => done(false), Math.max(0, a.max || 0));
    });
  }

  function focusSelect(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    const k = editKind(el);
    const combo = suggests(el);
    if (combo) watchSuggestions(el);
    else unwatchSuggestions();
    if (deepActive() !== el) el.focus({ preventScroll: true });
    if (k === 'text') {
      try {
        el.select();
      } catch (e) {
        // some input types have no selection
      }
    } else if (k === 'ce') {
      const d = el.ownerDocument;
      const r = d.createRange();
      r.selectNodeContents(el);
      const s = d.getSelection();
      s.removeAllRanges();
      s.addRange(r);
    }
    return { kind: k, focused: deepActive() === el ? 1 : 0, len: k === 'ce' ? el.textContent.length : (el.value || '').length, combo: combo ? 1 : 0 };
  }
  function readValue(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    if (el.localName === 'input' || el.localName === 'textarea') return { v: el.value, t: el.type || el.localName };
    if (el.localName === 'select') return { v: Array.from(el.selectedOptions, (o) => squash(o.label || o.textContent)).join(', ') };
    if (el.isContentEditable) return { v: el.innerText.replace(/\n$/, ''), t: 'ce' };
    return { v: squash(el.textContent), t: el.localName };
  }
  function setValue(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    const w = el.ownerDocument.defaultView;
    const proto = el.localName === 'textarea' ? w.HTMLTextAreaElement.prototype : w.HTMLInputElement.prototype;
    const d = Object.getOwnPropertyDescriptor(proto, 'value');
    el.focus({ preventScroll: true });
    d.set.call(el, a.v);
    el.dispatchEvent(new w.Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new w.Event('change', { bubbles: true }));
    return { v: el.value };
  }
  function blurEl(a) {
    const [el] = lookup(a);
    if (el && deepActive() === el) {
      const w = el.ownerDocument.defaultView;
      el.dispatchEvent(new w.Event('change', { bubbles: true }));
    }
    return {};
  }

  function selectNative(a) {
    let [el, why] = lookup(a);
    if (!el) return { stale: why };
    if (el.localName === 'label' && el.control && el.control.localName === 'select') el = el.control;
    if (el.localName !== 'select') return { custom: 1, t: el.localName };
    if (isDisabled(el)) return { fail: 'the select is disabled' };
    const want = squash(a.opt);
    const low = want.toLowerCase();
    const opts = Array.from(el.options);
    const lab = (o) => squash(o.label || o.textContent);
    const found =
      opts.find((o) => lab(o) === want) ||
      opts.find((o) => o.value === a.opt) ||
      opts.find((o) => lab(o).toLowerCase() === low) ||
      opts.find((o) => o.value.toLowerCase() === low) ||
      (low ? opts.find((o) => lab(o).toLowerCase().includes(low)) : null);
    if (!found) return { fail: 'no option matches', options: opts.slice(0, 30).map(lab) };
    if (found.disabled) return { fail: 'the option "' + lab(found) + '" is disabled' };
    const w = el.ownerDocument.defaultView;
    el.focus({ preventScroll: true });
    if (el.multiple) found.selected = true;
    else el.selectedIndex = found.index;
    el.dispatchEvent(new w.Event('input', { bubbles: true, composed: true }));
    el.dispatchEvent(new w.Event('change', { bubbles: true }));
    return { ok: 1, chosen: lab(found), now: Array.from(el.selectedOptions, lab).join(', ') };
  }

  // Candidates for an option of a custom dropdown: visible elements whose
  // text is the wanted text.
  function optionCandidates(want) {
    const low = squash(want).toLowerCase();
    const res = [];
    if (!low) return res;
    const walk = (root, depth) => {
      for (let el = root.firstElementChild; el; el = el.nextElementSibling) {
        const tag = el.localName;
        if (SKIP[tag] === 1 || tag === 'svg') continue;
        // Whether the option's text is somewhere inside: the whole text,
        // as squash keeps only the start of a long one (a page whose
        // styles or text come before the option). A huge text is walked
        // into without the check.
        const raw = el.textContent;
        const has = raw.length > 200000 || raw.replace(/\s+/g, ' ').toLowerCase().includes(low);
        const t = has ? squash(raw).toLowerCase() : '';
        if (has || el.shadowRoot) {
          if (has && (t === low || t.length <= low.length + 3)) {
            const r = el.getBoundingClientRect();
            if (r.width >= 1 && r.height >= 1) res.push(el);
          }
          if (el.shadowRoot) walk(el.shadowRoot, depth + 1);
          if (depth < 200) walk(el, depth + 1);
        } else if (tag === 'iframe' || tag === 'frame') {
          let d = null;
          try {
            d = el.contentDocument;
          } catch (e) {
            d = null;
          }
          if (d && d.documentElement) walk(d, depth + 1);
        }
        if (res.length > 200) return;
      }
    };
    walk(W.document, 0);
    return res;
  }
  function optMark(a) {
    st.marks = new WeakSet(optionCandidates(a.text));
    return {};
  }
  function optFind(a) {
    const low = squash(a.text).toLowerCase();
    const [host] = lookup(a);
    let best = null;
    let score = -1;
    for (const el of optionCandidates(a.text)) {
      if (host && (el === host || within(el, host))) continue;
      const cs = el.ownerDocument.defaultView.getComputedStyle(el);
      if (cs.visibility === 'hidden') continue;
      let s = 0;
      const role = el.getAttribute('role');
      if (role === 'option' || role === 'menuitem' || role === 'treeitem' || role === 'menuitemradio') s += 8;
      if (el.localName === 'li' || el.localName === 'option') s += 4;
      if (!st.marks || !st.marks.has(el)) s += 2;
      if (squash(el.textContent).toLowerCase() === low) s += 1;
      if (s > score) {
        best = el;
        score = s;
      } else if (s === score && best.contains(el) && !best.hasAttribute('role')) {
        // The innermost of nested matches, unless the outer one has a role.
        best = el;
      }
    }
    if (!best) return { none: 1 };
    return {
      i: idOf(best),
      fresh: !st.marks || !st.marks.has(best) ? 1 : 0,
      inside: host && within(host, best) ? 1 : 0,
      text: cap(squash(best.textContent), 80),
    };
  }

  function fileTarget(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    const isFile = (n) => n && n.localName === 'input' && n.type === 'file';
    if (isFile(el)) return { i: idOf(el) };
    if (el.localName === 'label' && isFile(el.control)) return { i: idOf(el.control) };
    const inner = (el.shadowRoot && el.shadowRoot.querySelector('input[type=file]')) || el.querySelector('input[type=file]');
    if (inner) return { i: idOf(inner) };
    return { none: 1, t: el.localName };
  }
  function files(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    return { n: el.files ? el.files.length : 0, names: el.files ? Array.from(el.files, (f) => f.name) : [] };
  }

  function scrollInfo() {
    const se = W.document.scrollingElement || W.document.documentElement;
    return { sx: W.scrollX, sy: W.scrollY, sw: se.scrollWidth, sh: se.scrollHeight, vw: W.innerWidth, vh: W.innerHeight };
  }
  function pageScrollBy(a) {
    W.scrollBy({ left: a.dx, top: a.dy, behavior: 'instant' });
    return scrollInfo();
  }
  function scrollEl(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    for (let n = el, g = 0; n && n.nodeType === 1 && g < 200; g++) {
      const cs = n.ownerDocument.defaultView.getComputedStyle(n);
      const oy = cs.overflowY;
      const ox = cs.overflowX;
      const canY = a.dy && (oy === 'auto' || oy === 'scroll' || oy === 'overlay') && n.scrollHeight > n.clientHeight + 1;
      const canX = a.dx && (ox === 'auto' || ox === 'scroll' || ox === 'overlay') && n.scrollWidth > n.clientWidth + 1;
      if (canY || canX) {
        const bx = n.scrollLeft;
        const by = n.scrollTop;
        n.scrollBy({ left: a.dx, top: a.dy, behavior: 'instant' });
        return { what: desc(n).slice(0, 80), moved: n.scrollLeft !== bx || n.scrollTop !== by ? 1 : 0, x: n.scrollLeft, y: n.scrollTop, h: n.scrollHeight - n.clientHeight };
      }
      n = composedParent(n);
    }
    const w = el.ownerDocument.defaultView;
    const bx = w.scrollX;
    const by = w.scrollY;
    w.scrollBy({ left: a.dx, top: a.dy, behavior: 'instant' });
    const se = w.document.scrollingElement || w.document.documentElement;
    return { what: 'page', moved: w.scrollX !== bx || w.scrollY !== by ? 1 : 0, x: w.scrollX, y: w.scrollY, h: se.scrollHeight - w.innerHeight };
  }

  // query finds elements by CSS selector or XPath through open shadow roots
  // and same-origin frames; the first visible match wins.
  function query(a) {
    const roots = [];
    const docs = [];
    const collect = (root, depth) => {
      roots.push(root);
      if (root.nodeType === 9) docs.push(root);
      if (depth > 32) return;
      const all = root.querySelectorAll('*');
      for (let k = 0; k < all.length; k++) {
        const el = all[k];
        if (el.shadowRoot) collect(el.shadowRoot, depth + 1);
        else if (el.localName === 'iframe' || el.localName === 'frame') {
          let d = null;
          try {
            d = el.contentDocument;
          } catch (e) {
            d = null;
          }
          if (d && d.documentElement) collect(d, depth + 1);
        }
      }
    };
    const found = [];
    try {
      if (a.xpath) {
        collect(W.document, 0);
        for (const d of docs) {
          const r = d.evaluate(a.sel, d, null, 7, null);
          for (let k = 0; k < r.snapshotLength && found.length < 50; k++) {
            const n = r.snapshotItem(k);
            if (n && n.nodeType === 1) found.push(n);
          }
          if (found.length) break;
        }
      } else {
        const first = W.document.querySelectorAll(a.sel);
        for (let k = 0; k < first.length && k < 50; k++) found.push(first[k]);
        if (!found.length) {
          collect(W.document, 0);
          for (const r of roots) {
            if (r === W.document) continue;
            const m = r.querySelectorAll(a.sel);
            for (let k = 0; k < m.length && found.length < 50; k++) found.push(m[k]);
            if (found.length) break;
          }
        }
      }
    } catch (e) {
      return { err: String(e && e.message ? e.message : e) };
    }
    if (!found.length) return { n: 0, tok: st.tok };
    let pick = found[0];
    for (const el of found) {
      const r = el.getBoundingClientRect();
      if (r.width >= 1 && r.height >= 1) {
        pick = el;
        break;
      }
    }
    let fe = null;
    const w = pick.ownerDocument.defaultView;
    if (w && w !== W) {
      try {
        fe = w.frameElement;
      } catch (e) {
        fe = null;
      }
    }
    return { n: found.length, tok: st.tok, i: idOf(pick), t: pick.localName, y: pick.type || '', host: fe ? idOf(fe) : 0 };
  }

  function get(a) {
    const [el] = lookup(a);
    return el;
  }

  // stable resolves once the DOM saw no mutation for a.quiet ms, or after
  // a.max ms.
  function stable(a) {
    return new Promise((resolve) => {
      const t0 = Date.now();
      let last = t0;
      const mo = new MutationObserver(() => {
        last = Date.now();
      });
      mo.observe(W.document, { subtree: true, childList: true, attributes: true, characterData: true });
      const tick = () => {
        const now = Date.now();
        if (now - last >= a.quiet || now - t0 >= a.max) {
          mo.disconnect();
          resolve(stringify({ quiet: now - last >= a.quiet ? 1 : 0, ms: now - t0 }));
          return;
        }
        setTimeout(tick, Math.min(50, a.quiet));
      };
      setTimeout(tick, Math.min(50, a.quiet));
    });
  }

  // ---- anchors and text reads (scripts) -----------------------------------
  //
  // A script replays a recorded run without the model: it needs ways to find
  // an element again on a later visit (anchors), the element that shows a
  // value the model extracted (findTexts), and the text at a selector
  // (readTexts).

  const cssEscape = W.CSS.escape;
  // Test attributes, in the order they are preferred.
  const TESTATTRS = ['data-testid', 'data-test-id', 'data-test', 'data-qa', 'data-cy'];
  // An unanchored CSS path has at most this many steps.
  const MAXSTEPS = 6;
  // Elements whose text is not page text.
  const NOTPAGETEXT = { script: 1, style: 1, noscript: 1, template: 1 };
  // A number: digits with an optional sign (not after a letter or digit),
  // thousands separated by ",", a decimal part after ".".
  const NUMSRC = '(?:(?<![\\p{L}\\p{N}])[-+])?\\d+(?:,\\d{3})*(?:\\.\\d+)?';

  // generatedId reports ids that a framework or a counter made up: they
  // change from one visit to the next, so they are no anchor.
  function generatedId(id) {
    if (id.length > 40) return true;
    if (/[:«»\s]/.test(id)) return true; // React's useId (":r1:", "«r1»")
    if (/^[\d-]/.test(id)) return true;
    if (/\d{3,}/.test(id)) return true; // ember123, a counter, a hash
    if (/(^|[-_.])\d+([-_.]|$)/.test(id)) return true; // react-select-3-input, mui-7
    const digits = id.replace(/\D/g, '').length;
    return digits >= 2 && digits >= 0.4 * id.length; // x1y2z3
  }
  // uniqueId is the id of el when it is a usable anchor: not generated and
  // the only one in el's document or shadow root.
  function uniqueId(el, root) {
    const id = el.getAttribute('id');
    if (!id || generatedId(id)) return '';
    try {
      return root.querySelectorAll('#' + cssEscape(id)).length === 1 ? id : '';
    } catch (e) {
      return '';
    }
  }
  // cssStep is el's step in a CSS path: its tag, with :nth-of-type(k)
  // unless it is the only child of its parent with that tag.
  function cssStep(el) {
    const tag = el.localName;
    let k = 1;
    for (let s = el.previousElementSibling; s; s = s.previousElementSibling) {
      if (s.localName === tag) k++;
    }
    let alone = k === 1;
    for (let s = el.nextElementSibling; s && alone; s = s.nextElementSibling) {
      if (s.localName === tag) alone = false;
    }
    return alone ? cssEscape(tag) : cssEscape(tag) + ':nth-of-type(' + k + ')';
  }
  // cssPath is a selector that matches el and nothing else in its document
  // or shadow root: child steps from the nearest ancestor with a unique
  // id that is not generated (or from body), or, when there is none within
  // MAXSTEPS, the last MAXSTEPS steps if they are unique; '' otherwise.
  function cssPath(el) {
    const root = el.getRootNode();
    if (!root || !root.querySelectorAll) return '';
    const doc = root.nodeType === 9 ? root : null;
    const steps = [];
    let anchored = false;
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      const id = uniqueId(n, root);
      if (id) {
        steps.push('#' + cssEscape(id));
        anchored = true;
        break;
      }
      if (doc && (n === doc.body || n === doc.documentElement)) {
        steps.push(n.localName);
        anchored = true;
        break;
      }
      if (steps.length >= MAXSTEPS) break;
      steps.push(cssStep(n));
    }
    const sel = steps.reverse().join(' > ');
    if (!sel) return '';
    try {
      // Exact child steps from a unique anchor name one element: checking
      // that it is el costs only its ancestors, where a search of the
      // whole document costs a millisecond on a big page.
      if (anchored) return el.matches(sel) ? sel : '';
      const m = root.querySelectorAll(sel);
      return m.length === 1 && m[0] === el ? sel : '';
    } catch (e) {
      return '';
    }
  }

  function anchors(a) {
    const [el, why] = lookup(a);
    if (!el) return { stale: why };
    const root = el.getRootNode();
    const out = { id: uniqueId(el, root), css: cssPath(el) };
    for (const nm of TESTATTRS) {
      const v = el.getAttribute(nm);
      if (v) {
        out.ta = nm;
        out.tv = v;
        break;
      }
    }
    if (root.nodeType === 11) out.sh = 1;
    return out;
  }

  // indexText walks the light DOM under root once, in document order, and
  // returns its text with whitespace collapsed (not inside script, style,
  // noscript or template; not in shadow roots or frames) and, unless
  // textOnly, for every element its index in document order, the range
  // [start, end) of its text in that string and the index of its last
  // descendant. The squashed text of element k is
  // text.slice(start[k], end[k]).trim().
  function indexText(root, textOnly) {
    const parts = [];
    let len = 0;
    let space = true; // the text so far ends with a space (or is empty)
    const els = [];
    const starts = [];
    const ends = [];
    const last = [];
    const stack = [];
    let budget = 500000; // nodes
    let node = root;
    while (node && --budget > 0) {
      if (node.nodeType === 3) {
        let piece = node.data.replace(/\s+/g, ' ');
        if (space && piece[0] === ' ') piece = piece.slice(1);
        if (piece) {
          parts.push(piece);
          len += piece.length;
          space = piece[piece.length - 1] === ' ';
        }
      } else if (node.nodeType === 1 && NOTPAGETEXT[node.localName] !== 1) {
        if (!textOnly) {
          stack.push(els.length);
          els.push(node);
          starts.push(len);
          ends.push(len);
          last.push(els.length - 1);
        } else {
          stack.push(-1);
        }
        if (node.firstChild) {
          node = node.firstChild;
          continue;
        }
        const k = stack.pop();
        if (k >= 0) ends[k] = len;
      }
      while (node !== root && !node.nextSibling) {
        node = node.parentNode;
        const k = stack.pop();
        if (k >= 0) {
          ends[k] = len;
          last[k] = els.length - 1;
        }
      }
      node = node === root ? null : node.nextSibling;
    }
    return { text: parts.join(''), els, starts, ends, last };
  }
  // firstAtLeast is the first index of a sorted array whose value is >= v.
  function firstAtLeast(arr, v) {
    let lo = 0;
    let hi = arr.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (arr[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  function numValue(s) {
    return parseFloat(s.replace(/,/g, ''));
  }
  // numberIndex maps a number to the elements whose squashed text starts
  // (before any other digit) with that number, in document order.
  function numberIndex(ix) {
    const f = ix.text;
    const re = new RegExp(NUMSRC, 'gu');
    const one = new RegExp(NUMSRC, 'u');
    const ts = [];
    const te = [];
    for (let m = re.exec(f); m && ts.length < 500000; m = re.exec(f)) {
      ts.push(m.index);
      te.push(m.index + m[0].length);
    }
    const by = new Map();
    for (let k = 0; k < ix.els.length; k++) {
      const s = ix.starts[k];
      const e = ix.ends[k];
      if (e <= s) continue;
      // The first number token that ends inside the element. A token cut
      // by the element's edges (digits glued to a neighbour's) is read
      // again from the element's part of it.
      for (let j = firstAtLeast(te, s + 1); j < ts.length && ts[j] < e; j++) {
        let v;
        if (ts[j] >= s && te[j] <= e) {
          v = numValue(f.slice(ts[j], te[j]));
        } else {
          const m = one.exec(f.slice(Math.max(ts[j], s), Math.min(te[j], e)));
          if (!m) continue;
          v = numValue(m[0]);
        }
        const l = by.get(v);
        if (l) l.push(k);
        else by.set(v, [k]);
        break;
      }
    }
    return by;
  }
  // innermost keeps the elements of a list (indices in document order)
  // that hold no other element of the list.
  function innermost(ix, list) {
    const out = [];
    for (let j = 0; j < list.length; j++) {
      if (j + 1 < list.length && list[j + 1] <= ix.last[list[j]]) continue;
      out.push(list[j]);
    }
    return out;
  }
  // textMatches lists the innermost elements whose squashed text is want,
  // in document order.
  function textMatches(ix, want) {
    const out = [];
    const f = ix.text;
    const L = want.length;
    let tries = 100000;
    for (let i = f.indexOf(want); i >= 0 && out.length < 5000 && --tries > 0; i = f.indexOf(want, i + 1)) {
      let best = -1;
      const from = i > 0 && f[i - 1] === ' ' ? i - 1 : i;
      for (let k = firstAtLeast(ix.starts, from); k < ix.starts.length && ix.starts[k] <= i; k++) {
        const e = ix.ends[k];
        if ((e === i + L || (e === i + L + 1 && f[i + L] === ' ')) && k > best) best = k;
      }
      if (best >= 0) out.push(best);
    }
    return out;
  }

  // findTexts finds, for each wanted text or number, the innermost visible
  // element of the top document that shows it and returns a unique CSS
  // path to it ('' when none). Several matches: the first one not given
  // for an earlier want of the same call, else the first.
  function findTexts(a) {
    const doc = W.document;
    const body = doc.body || doc.documentElement;
    const wants = a.w || [];
    if (!body) return { s: wants.map(() => '') };
    const ix = indexText(body, false);
    let nums = null;
    const used = new Set();
    const seen = new Map(); // element index → its selector, '' when hidden or none
    const selectorOf = (k) => {
      let s = seen.get(k);
      if (s !== undefined) return s;
      s = '';
      const el = ix.els[k];
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) {
        const vis = W.getComputedStyle(el).visibility;
        if (vis !== 'hidden' && vis !== 'collapse') s = cssPath(el);
      }
      seen.set(k, s);
      return s;
    };
    const out = [];
    for (const w of wants) {
      let cands = [];
      if (typeof w.n === 'number') {
        if (!nums) nums = numberIndex(ix);
        cands = innermost(ix, nums.get(w.n) || []);
      } else {
        const t = (w.t || '').replace(/\s+/g, ' ').trim();
        if (t) cands = textMatches(ix, t);
      }
      let pick = '';
      let again = '';
      for (const k of cands) {
        const s = selectorOf(k);
        if (!s) continue;
        if (!used.has(k)) {
          pick = s;
          used.add(k);
          break;
        }
        if (!again) again = s;
      }
      out.push(pick || again);
    }
    return { s: out };
  }

  // readTexts reads, for each CSS selector, the first match in the top
  // document: the value of a field, the selected option labels of a
  // select, else the squashed text. An invalid selector matches nothing.
  function readTexts(a) {
    const doc = W.document;
    const out = [];
    for (const sel of a.s || []) {
      let el = null;
      try {
        el = sel ? doc.querySelector(sel) : null;
      } catch (e) {
        el = null;
      }
      if (!el) {
        out.push({});
        continue;
      }
      let t;
      if (el.localName === 'input' || el.localName === 'textarea') t = el.value;
      else if (el.localName === 'select') t = Array.from(el.selectedOptions, (o) => squash(o.label || o.textContent)).join(', ');
      else t = indexText(el, true).text.trim();
      out.push({ f: 1, t });
    }
    return { r: out };
  }

  const OPS = {
    observe, prep, host, focusSelect, readValue, setValue, blurEl, selectNative,
    optMark, optFind, fileTarget, files, scrollInfo, pageScrollBy, scrollEl, query,
    clickSeen, anchors, findTexts, readTexts, pickerAdvice,
  };
  function run(op, a) {
    if (op === 'get') return get(a);
    if (op === 'stable') return stable(a);
    if (op === 'suggestWait') return suggestWait(a || {});
    const f = OPS[op];
    if (!f) throw new Error('unknown op ' + op);
    return stringify(f(a || {}));
  }
  Object.defineProperty(globalThis, sym, { value: { run }, enumerable: false, configurable: true });
  return 'ok';
})
