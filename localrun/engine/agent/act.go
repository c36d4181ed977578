package agent

// Doing the actions the model chose. Each is checked against the page the
// model saw, then done by the Browser with trusted input. Every action ends
// in a steplog.Action that says what happened in words the model
// understands on its next step; none of them panics or ends the run: a
// browser that went away shows up when the page is read next.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
	"github.com/abctl/abctl/localrun/engine/secrets"
	"github.com/abctl/abctl/localrun/engine/steplog"
)

// doAll does the actions of one step in order. It stops the batch when the
// page changes under it (a new document, another tab, another URL) and
// reports whether anything touched the page.
func (l *loop) doAll(ctx context.Context, actions []planAction) (results []steplog.Action, touched bool) {
	b := l.a.browser
	changed := ""
	for i, a := range actions {
		// A secret typed (a placeholder, or any text typed into a password
		// field) is recorded as secrets.Mask.
		rec := steplog.Action{Type: a.Type, ID: a.ID, Text: secrets.Shown(a.Text, false)}
		if el := FindElement(l.obs, a.ID); el != nil {
			rec.Element = ElementLine(l.obs, el)
			rec.Text = secrets.Shown(a.Text, el.Type == "password")
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
			res, changed = l.do(ctx, a, &rec)
			touched = touched || rec.OK || res.Navigated
			if changed == "" && b.TabChanged(ctx) {
				changed = "another tab is now active"
			}
		}
		results = append(results, rec)
	}
	if !touched && b.TabChanged(ctx) {
		touched = true
	}
	return results, touched
}

// do runs one action and fills rec. changed is set when the page changed
// in a way that makes the rest of the batch stale.
func (l *loop) do(ctx context.Context, a planAction, rec *steplog.Action) (res page.Result, changed string) {
	in, refused := l.input(a)
	if refused != "" {
		rec.Result = refused
		return res, ""
	}
	var step *script.Step
	if l.rec != nil {
		el := FindElement(l.obs, in.ID)
		line := ""
		if el != nil {
			line = ElementLine(l.obs, el)
		}
		step = l.rec.before(ctx, l.a, l.obs, in, el, line)
	}
	actx, cancel := context.WithTimeout(ctx, ActionTimeout)
	defer cancel()
	// A control that is about to appear or stop moving is waited for
	// briefly; one that stays hidden or covered is for the model to deal
	// with (open the menu, close the banner), so it hears of it soon.
	actx = page.WithActionWait(actx, ActionWait)
	res, err := l.a.browser.Act(actx, in)
	switch a.Type {
	case "switch_tab", "close_tab":
		if err != nil {
			rec.Result = err.Error()
			return res, ""
		}
		rec.OK, rec.Result = true, "done"
		return res, "the tab changed"
	case "press_key":
		if errors.Is(err, page.ErrUnknownKey) {
			rec.Result = fmt.Sprintf("unknown key %q; use one of %s, or a single character", a.Text, strings.Join(page.KeyNames(), ", "))
			return res, ""
		}
	case "goto_url":
		if err == nil {
			res.Navigated = true
		}
	}
	switch {
	case errors.Is(err, page.ErrStaleID):
		rec.Result = "the element is no longer on the page (it changed); look at the new page"
		return res, "the element went away"
	case err != nil && ctx.Err() != nil:
		rec.Result = "the run was stopped"
		return res, "stopped"
	case err != nil:
		rec.Result = err.Error()
	case !res.OK:
		rec.Result = res.Reason
		if rec.Result == "" {
			rec.Result = "the action had no effect"
		}
	default:
		rec.OK = true
		rec.Result = res.Detail
		if l.rec != nil {
			l.rec.done(step, pageResultURL(res.URL))
		}
	}
	if res.Navigated {
		where := res.URL
		if where == "" {
			where = "a new page"
		}
		rec.Result = strings.TrimPrefix(strings.TrimSpace(rec.Result+"; loaded "+shortURL(where, l.obs.URL)), "; ")
		return res, "a new page loaded"
	}
	if res.URL != "" && l.obs != nil && res.URL != l.obs.URL && a.Type != "scroll" {
		rec.Result = strings.TrimPrefix(strings.TrimSpace(rec.Result+"; the URL is now "+shortURL(res.URL, l.obs.URL)), "; ")
		return res, "the URL changed"
	}
	return res, ""
}

// input checks an action of the model against the page it saw and turns
// it into the Browser's. refused says why it cannot be done.
func (l *loop) input(a planAction) (in Action, refused string) {
	in = Action{Type: a.Type, ID: a.ID, Text: a.Text}
	switch a.Type {
	case "click", "input_text", "select_option", "upload_file", "hover":
		if strings.TrimSpace(a.ID) == "" {
			return in, a.Type + " needs the id of an element"
		}
		if FindElement(l.obs, a.ID) == nil {
			return in, fmt.Sprintf("there is no element [%s] on this page; use an id from the current list", a.ID)
		}
	}
	switch a.Type {
	case "click", "input_text", "hover", "go_back":
	case "select_option":
		if strings.TrimSpace(a.Text) == "" {
			return in, "select_option needs the option's label in text"
		}
	case "upload_file":
		in.Text = strings.TrimSpace(a.Text)
		if err := l.uploadAllowed(in.Text); err != nil {
			return in, err.Error()
		}
	case "press_key":
		in.Text = strings.TrimSpace(a.Text)
		if in.Text == "" {
			return in, "press_key needs a key name in text, such as Enter"
		}
	case "scroll":
		in.DY = l.obs.Viewport[1] * 0.8
		if in.DY <= 0 {
			in.DY = 600
		}
		if strings.EqualFold(strings.TrimSpace(a.Text), "up") {
			in.DY = -in.DY
		}
		if FindElement(l.obs, a.ID) == nil {
			in.ID = ""
		}
	case "wait":
		d := time.Second
		if s, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(a.Text), "s"), 64); err == nil && s > 0 {
			d = time.Duration(s * float64(time.Second))
		}
		in.Wait = min(d, maxModelWait)
	case "goto_url":
		u, err := l.a.checkGotoURL(a.Text, l.g)
		if err != nil {
			return in, err.Error()
		}
		in.Text = u
	case "answer_dialog":
		if strings.Contains(a.Text, "<secret:") {
			return in, "answer_dialog cannot give a secret: a browser prompt is not a field the browser fills in for you"
		}
	case "switch_tab", "close_tab":
		in.Text = strings.TrimSpace(a.Text)
		if !hasTab(l.obs, in.Text) {
			return in, fmt.Sprintf("there is no tab %q; the tabs are listed in the page header when there are several", a.Text)
		}
	default:
		return in, fmt.Sprintf("unknown action type %q", a.Type)
	}
	return in, ""
}

// hasTab reports whether the observation lists the tab of the short id.
func hasTab(obs *page.Observation, id string) bool {
	for _, t := range obs.Tabs {
		if t.ID == id {
			return true
		}
	}
	return false
}

// FindElement returns the element with the id in obs, nil when there is
// none.
func FindElement(obs *page.Observation, id string) *page.Element {
	id = page.CleanID(id)
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

// ElementLine is the element as the prompt showed it: its line of the
// rendering, else a short description.
func ElementLine(obs *page.Observation, el *page.Element) string {
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
	return fmt.Sprintf("[%s] %s %q", el.ID, kind, text.Clip(text.OneLine(name), 80))
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

// uploadAllowed accepts the file URL of an upload_file action only when it
// appears in the goal or the user's details: a model does not get to pick
// files from anywhere.
func (l *loop) uploadAllowed(raw string) error {
	if raw == "" {
		return errors.New("upload_file needs a file URL in text")
	}
	if !strings.Contains(l.g.Navigation+"\n"+DetailsJSON(l.g.Details), raw) {
		return fmt.Errorf("the file URL %q is not in the goal or the user's details; only those files can be uploaded", raw)
	}
	return nil
}

// checkGotoURL accepts an absolute http(s) URL. A URL of a loopback,
// private or link-local address (or a localhost name) is refused unless
// the user named that host (in the goal or the details), the run started
// on such an address, or private URLs are allowed: a page must not be able
// to talk the model into probing the machine's network.
func (a *Agent) checkGotoURL(raw string, g *Goal) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("goto_url needs an absolute http or https URL, not %q", raw)
	}
	if IsPrivateHost(u.Hostname()) && !a.allowPrivate && !a.browser.StartedPrivate() &&
		(g == nil || !strings.Contains(g.Navigation+"\n"+DetailsJSON(g.Details), u.Host)) {
		return "", fmt.Errorf("goto_url to %s is not allowed: it is a local or private address the user did not name", u.Host)
	}
	return u.String(), nil
}

// IsPrivateHost reports whether host is a loopback, private, link-local or
// unspecified IP address, or a name of the local machine or network.
func IsPrivateHost(host string) bool {
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
