package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// State is what a browser context keeps of the sites it was signed in to:
// every cookie of the context, and the local storage of the origins its
// tabs show when the state is taken. A browser profile is a saved State.
//
// Session storage, IndexedDB, the cache and service workers are not kept:
// sign-ins live in cookies, and in local storage for single-page apps; the
// rest is large, and rebuilt by the site on the next visit. Local storage
// is read from the open tabs only, since reading an origin's storage needs
// a document of that origin.
type State struct {
	Cookies []Cookie `json:"cookies"`
	Origins []Origin `json:"origins"`
}

// Cookie is a cookie of a State.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"` // unix seconds; -1 for a session cookie
	HTTPOnly bool    `json:"http_only"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"same_site,omitempty"`
}

// Origin is the local storage of one origin.
type Origin struct {
	Origin       string      `json:"origin"`
	LocalStorage [][2]string `json:"local_storage"`
}

// Empty reports whether the state holds nothing.
func (st *State) Empty() bool { return st == nil || len(st.Cookies) == 0 && len(st.Origins) == 0 }

// localStorageExpr reads the local storage of a tab's document.
const localStorageExpr = `(() => {
  try {
    const o = location.origin, ls = window.localStorage, items = [];
    if (!o || o === 'null' || !ls) return null;
    for (let i = 0; i < ls.length; i++) { const k = ls.key(i); items.push([k, ls.getItem(k)]); }
    return JSON.stringify({origin: o, local_storage: items});
  } catch (e) { return null; }
})()`

// ReadState returns the browser state of s: its cookies and the local
// storage of its tabs' origins.
func ReadState(ctx context.Context, s *Context) (*State, error) {
	res, err := cdp.Call(ctx, s.inst.b, storage.GetCookies, storage.GetCookiesParams{BrowserContextID: s.contextID})
	if err != nil {
		return nil, fmt.Errorf("reading the cookies: %w", err)
	}
	st := &State{Cookies: []Cookie{}, Origins: []Origin{}}
	for _, c := range res.Cookies {
		exp := c.Expires
		if c.Session {
			exp = -1
		}
		st.Cookies = append(st.Cookies, Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Expires: exp,
			HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: string(c.SameSite)})
	}
	seen := map[string]bool{}
	s.mu.Lock()
	tabs := s.tabs.attached()
	s.mu.Unlock()
	for _, tctx := range tabs {
		out, err := chromedp.Call(tctx, runtime.Evaluate, runtime.EvaluateParams{Expression: localStorageExpr, ReturnByValue: new(true)})
		if err != nil || out.ExceptionDetails != nil || out.Result == nil {
			continue // a tab that is closing or navigating: its storage is read from another, or lost
		}
		var text string
		if json.Unmarshal(out.Result.Value, &text) != nil || text == "" {
			continue
		}
		var o Origin
		if json.Unmarshal([]byte(text), &o) != nil || seen[o.Origin] || len(o.LocalStorage) == 0 {
			continue
		}
		seen[o.Origin] = true
		st.Origins = append(st.Origins, o)
	}
	sort.Slice(st.Origins, func(i, j int) bool { return st.Origins[i].Origin < st.Origins[j].Origin })
	return st, nil
}

// RestoreState loads a State into the browser context s before its first
// navigation: the cookies into the browser context, and the local storage
// into every document of its origins that its tabs open, once per origin
// and tab (a site that changes its storage afterwards keeps its changes).
func RestoreState(ctx context.Context, s *Context, st *State) error {
	if st.Empty() {
		return nil
	}
	if len(st.Cookies) > 0 {
		params := make([]*network.CookieParam, 0, len(st.Cookies))
		for _, c := range st.Cookies {
			p := &network.CookieParam{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
				HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: network.CookieSameSite(c.SameSite)}
			if c.Expires > 0 {
				p.Expires = cdp.TimeSinceEpoch(c.Expires)
			}
			params = append(params, p)
		}
		if _, err := cdp.Call(ctx, s.inst.b, storage.SetCookies, storage.SetCookiesParams{Cookies: params, BrowserContextID: s.contextID}); err != nil {
			return fmt.Errorf("restoring the cookies: %w", err)
		}
	}
	if len(st.Origins) == 0 {
		return nil
	}
	byOrigin := map[string][][2]string{}
	for _, o := range st.Origins {
		byOrigin[o.Origin] = o.LocalStorage
	}
	data, err := json.Marshal(byOrigin)
	if err != nil {
		return err
	}
	script := `(() => {
  const saved = ` + string(data) + `;
  try {
    const items = saved[location.origin];
    if (!items || sessionStorage.getItem('__abctl_restored')) return;
    for (const [k, v] of items) localStorage.setItem(k, v);
    sessionStorage.setItem('__abctl_restored', '1');
  } catch (e) {}
})()`
	s.mu.Lock()
	s.initScripts = append(s.initScripts, script)
	tabs := s.tabs.attached()
	s.mu.Unlock()
	for _, tctx := range tabs {
		if err := addInitScript(tctx, script); err != nil {
			return fmt.Errorf("restoring the local storage: %w", err)
		}
	}
	return nil
}

func addInitScript(tctx context.Context, script string) error {
	_, err := chromedp.Call(tctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
	return err
}
