package engine

// Doing the actions the model chose, with the page package's trusted
// actions. Every action ends in an actionRecord that says what happened in
// words the model understands on its next step; none of them panics or
// ends the run: a browser that went away shows up when the page is read
// next.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/engine/page"
)

// actionTimeout bounds one action of the loop.
const actionTimeout = 30 * time.Second

// act does the actions of one step in order. It stops the batch when the
// page changes under it (a new document, another tab, another URL) and
// reports whether anything touched the page.
func (r *run) act(ctx context.Context, st *loopState, actions []planAction) (results []actionRecord, touched bool) {
	startTab := r.tab
	changed := ""
	for i, a := range actions {
		rec := actionRecord{Type: a.Type, ID: a.ID, Text: a.Text}
		if el := findElement(st.obs, a.ID); el != nil {
			rec.Element = elementLine(st.obs, el)
			if el.Type == "password" && a.Text != "" {
				rec.Text = "********"
			}
		}
		switch {
		case i >= maxActionsPerStep:
			rec.Skipped, rec.Result = true, fmt.Sprintf("at most %d actions are done per step", maxActionsPerStep)
		case changed != "":
			rec.Skipped, rec.Result = true, "the page changed ("+changed+"), so the ids of this step no longer apply"
		case a.Type == "complete" || a.Type == "terminate":
			rec.Skipped, rec.Result = true, a.Type+" only counts as the single action of a step"
		case ctx.Err() != nil:
			rec.Skipped, rec.Result = true, "the run was stopped"
		default:
			var res page.Result
			res, changed = r.do(ctx, st, a, &rec)
			touched = touched || rec.OK || res.Navigated
			if changed == "" && r.tabChanged(ctx, startTab) {
				changed = "another tab is now active"
			}
		}
		results = append(results, rec)
	}
	if !touched && r.tabChanged(ctx, startTab) {
		touched = true
	}
	return results, touched
}

// tabChanged reports whether the active tab is no longer tab, waiting
// briefly for a tab the page is opening to attach.
func (r *run) tabChanged(ctx context.Context, tab context.Context) bool {
	tctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	current, err := r.sess.ActiveTab(tctx)
	return err == nil && current != tab
}

// do runs one action and fills rec. changed is set when the page changed
// in a way that makes the rest of the batch stale.
func (r *run) do(ctx context.Context, st *loopState, a planAction, rec *actionRecord) (res page.Result, changed string) {
	actx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	pg := st.pg
	var err error
	needsElement := false
	switch a.Type {
	case "click", "input_text", "select_option", "upload_file", "hover":
		needsElement = true
	}
	if needsElement {
		if strings.TrimSpace(a.ID) == "" {
			rec.Result = a.Type + " needs the id of an element"
			return res, ""
		}
		if findElement(st.obs, a.ID) == nil {
			rec.Result = fmt.Sprintf("there is no element [%s] on this page; use an id from the current list", a.ID)
			return res, ""
		}
	}
	switch a.Type {
	case "click":
		res, err = pg.Click(actx, a.ID)
	case "input_text":
		res, err = pg.InputText(actx, a.ID, a.Text)
	case "select_option":
		if strings.TrimSpace(a.Text) == "" {
			rec.Result = "select_option needs the option's label in text"
			return res, ""
		}
		res, err = pg.SelectOption(actx, a.ID, a.Text)
	case "upload_file":
		var path string
		path, err = r.uploadSource(actx, st.g, a.Text)
		if err != nil {
			rec.Result = err.Error()
			return res, ""
		}
		res, err = pg.UploadFile(actx, a.ID, []string{path})
	case "hover":
		res, err = pg.Hover(actx, a.ID)
	case "press_key":
		if strings.TrimSpace(a.Text) == "" {
			rec.Result = "press_key needs a key name in text, such as Enter"
			return res, ""
		}
		res, err = pg.KeyPress(actx, strings.TrimSpace(a.Text))
		if errors.Is(err, page.ErrUnknownKey) {
			rec.Result = fmt.Sprintf("unknown key %q; use one of %s, or a single character", a.Text, strings.Join(page.KeyNames(), ", "))
			return res, ""
		}
	case "scroll":
		dy := st.obs.Viewport[1] * 0.8
		if dy <= 0 {
			dy = 600
		}
		if strings.EqualFold(strings.TrimSpace(a.Text), "up") {
			dy = -dy
		}
		id := a.ID
		if findElement(st.obs, id) == nil {
			id = ""
		}
		res, err = pg.Scroll(actx, id, 0, dy)
	case "wait":
		d := time.Second
		if s, perr := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(a.Text), "s"), 64); perr == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		}
		res, err = pg.Wait(actx, min(d, maxModelWait))
	case "goto_url":
		u, perr := r.checkGotoURL(a.Text, st.g)
		if perr != nil {
			rec.Result = perr.Error()
			return res, ""
		}
		res, err = pg.GoTo(actx, u)
		if err == nil {
			res.Navigated = true
		}
	case "go_back":
		res, err = pg.GoBack(actx)
	case "switch_tab", "close_tab":
		id, ok := r.tabIDs[strings.TrimSpace(a.Text)]
		if !ok {
			rec.Result = fmt.Sprintf("there is no tab %q; the tabs are listed in the page header when there are several", a.Text)
			return res, ""
		}
		if a.Type == "switch_tab" {
			err = r.sess.SwitchTab(actx, id)
		} else {
			err = r.sess.CloseTab(actx, id)
		}
		if err != nil {
			rec.Result = err.Error()
			return res, ""
		}
		rec.OK, rec.Result = true, "done"
		return res, "the tab changed"
	default:
		rec.Result = fmt.Sprintf("unknown action type %q", a.Type)
		return res, ""
	}
	switch {
	case errors.Is(err, page.ErrStaleID):
		rec.Result = "the element is no longer on the page (it changed); look at the new page"
		return res, "the element went away"
	case err != nil && ctx.Err() != nil:
		rec.Result = "the run was stopped"
		return res, "stopped"
	case err != nil:
		rec.Result = actionErr(res, err).Error()
	case !res.OK:
		rec.Result = res.Reason
		if rec.Result == "" {
			rec.Result = "the action had no effect"
		}
	default:
		rec.OK = true
		rec.Result = res.Detail
	}
	if res.Navigated {
		where := res.URL
		if where == "" {
			where = "a new page"
		}
		rec.Result = strings.TrimPrefix(strings.TrimSpace(rec.Result+"; loaded "+shortURL(where, st.obs.URL)), "; ")
		return res, "a new page loaded"
	}
	if res.URL != "" && st.obs != nil && res.URL != st.obs.URL && a.Type != "scroll" {
		rec.Result = strings.TrimPrefix(strings.TrimSpace(rec.Result+"; the URL is now "+shortURL(res.URL, st.obs.URL)), "; ")
		return res, "the URL changed"
	}
	return res, ""
}

// findElement returns the element with the id in obs, nil when there is
// none.
func findElement(obs *page.Observation, id string) *page.Element {
	if obs == nil || id == "" {
		return nil
	}
	for i := range obs.Elements {
		if obs.Elements[i].ID == id {
			return &obs.Elements[i]
		}
	}
	return nil
}

// elementLine is the element as the prompt showed it: its line of the
// rendering, else a short description.
func elementLine(obs *page.Observation, el *page.Element) string {
	prefix := "[" + el.ID + "] "
	for l := range strings.Lines(obs.Rendered) {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimRight(l, "\n")
		}
	}
	name := el.Text
	if name == "" {
		name = el.Label
	}
	kind := el.Tag
	if el.Type != "" {
		kind += ":" + el.Type
	}
	return fmt.Sprintf("[%s] %s %q", el.ID, kind, clip(oneLine(name), 80))
}

// shortURL shows u without the origin of base when they share it.
func shortURL(u, base string) string {
	pu, err1 := url.Parse(u)
	pb, err2 := url.Parse(base)
	if err1 == nil && err2 == nil && pu.Scheme == pb.Scheme && pu.Host == pb.Host && pu.Host != "" {
		s := pu.RequestURI()
		if pu.Fragment != "" {
			s += "#" + pu.Fragment
		}
		return s
	}
	return u
}

// uploadSource fetches the file of an upload_file action. The URL must
// appear in the goal or the user's details: a model does not get to pick
// files from anywhere.
func (r *run) uploadSource(ctx context.Context, g *goal, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", errors.New("upload_file needs a file URL in text")
	}
	if g != nil && !strings.Contains(g.navigation+"\n"+detailsJSON(g.details), raw) {
		return "", fmt.Errorf("the file URL %q is not in the goal or the user's details; only those files can be uploaded", raw)
	}
	path, err := r.fetchUpload(ctx, raw)
	if err != nil {
		var ae *ActionError
		if errors.As(err, &ae) {
			return "", errors.New(ae.Msg)
		}
		return "", err
	}
	return path, nil
}

// checkGotoURL accepts an absolute http(s) URL. A URL of a loopback,
// private or link-local address (or a localhost name) is refused unless
// the user named that host (in the goal or the details), the run started
// on such an address, or Config.AllowPrivateURLs is set: a page must not
// be able to talk the model into probing the machine's network.
func (r *run) checkGotoURL(raw string, g *goal) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("goto_url needs an absolute http or https URL, not %q", raw)
	}
	if isPrivateHost(u.Hostname()) && !r.e.cfg.AllowPrivateURLs && !r.privateStart &&
		(g == nil || !strings.Contains(g.navigation+"\n"+detailsJSON(g.details), u.Host)) {
		return "", fmt.Errorf("goto_url to %s is not allowed: it is a local or private address the user did not name", u.Host)
	}
	return u.String(), nil
}

// isPrivateHost reports whether host is a loopback, private, link-local or
// unspecified IP address, or a name of the local machine or network.
func isPrivateHost(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasSuffix(h, ".local") || strings.HasSuffix(h, ".internal") {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return false
	}
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified()
}

// notePrivateStart records that the run started on a private address, so
// that the model may navigate within such addresses.
func (r *run) notePrivateStart(raw string) {
	if u, err := url.Parse(raw); err == nil && isPrivateHost(u.Hostname()) {
		r.privateStart = true
	}
}
