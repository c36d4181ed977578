package runbrowser

// The view's Locating (agent.Locating): the locators a recorded script
// keeps for an element, and finding an element again by them.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/internal/retry"
	"github.com/abctl/abctl/localrun/engine/agent"
	"github.com/abctl/abctl/localrun/engine/internal/text"
	"github.com/abctl/abctl/localrun/engine/page"
)

var _ agent.Locating = (*view)(nil)

// maxLocatorText caps the text of a text or role locator: a long text is
// more likely to change than to identify.
const maxLocatorText = 80

// Locators returns the locators that find el, most stable first, each
// checked on the page as it is: a locator counts only when it finds el
// itself (the first match, as replay takes it).
func (v *view) Locators(ctx context.Context, obs *page.Observation, el *page.Element) []script.Locator {
	pg := v.pg
	if pg == nil || el == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, selectorBudget)
	defer cancel()
	anchors, err := pg.Anchors(ctx, el.ID)
	if err != nil {
		anchors = page.Anchors{}
	}
	tag := el.Tag
	name := accessibleName(el)
	var cands []script.Locator
	add := func(l script.Locator) {
		if strings.TrimSpace(l.Value) != "" {
			cands = append(cands, l)
		}
	}
	add(script.Locator{By: script.ByTestID, Value: anchors.TestID, Attr: testAttr(anchors.TestAttr)})
	add(script.Locator{By: script.ByID, Value: anchors.DOMID})
	add(script.Locator{By: script.ByName, Value: el.Name, Tag: tag})
	if el.Role != "" && name != "" && len(name) <= maxLocatorText {
		add(script.Locator{By: script.ByRole, Role: el.Role, Value: name})
	}
	if el.Label != "" && len(el.Label) <= maxLocatorText {
		add(script.Locator{By: script.ByLabel, Value: el.Label, Tag: tag})
	}
	if el.Text != "" && len(el.Text) <= maxLocatorText {
		add(script.Locator{By: script.ByText, Value: el.Text, Tag: tag})
	}
	if !anchors.InShadow && anchors.Frame == "" {
		add(script.Locator{By: script.ByCSS, Value: anchors.CSSPath})
	}
	var out []script.Locator
	for _, l := range cands {
		if ctx.Err() != nil {
			break
		}
		if l.By == script.ByRole {
			if ids := roleMatches(obs, l); len(ids) == 1 && ids[0] == el.ID {
				out = append(out, l)
			}
			continue
		}
		sel, _ := l.Selector()
		if id, err := pg.ResolveNow(ctx, sel); err == nil && id == el.ID {
			out = append(out, l)
		}
	}
	return out
}

// testAttr is the attribute of a testid locator as a script writes it:
// "" for the default, data-testid.
func testAttr(a string) string {
	if a == "data-testid" {
		return ""
	}
	return a
}

// accessibleName is the name a person would read on el: its text, else
// its label.
func accessibleName(el *page.Element) string {
	if n := text.OneLine(el.Text); n != "" {
		return n
	}
	return text.OneLine(el.Label)
}

// roleMatches returns the ids of the elements of obs that a role locator
// finds.
func roleMatches(obs *page.Observation, l script.Locator) []string {
	if obs == nil {
		return nil
	}
	var ids []string
	for i := range obs.Elements {
		el := &obs.Elements[i]
		if el.Role == l.Role && accessibleName(el) == l.Value && (l.Tag == "" || el.Tag == l.Tag) {
			ids = append(ids, el.ID)
		}
	}
	return ids
}

// Find returns the element the first working locator finds, trying them
// all in order every round, until one does or wait runs out.
func (v *view) Find(ctx context.Context, obs *page.Observation, locs []script.Locator, wait time.Duration) (string, int, error) {
	pg := v.pg
	if pg == nil {
		return "", 0, errors.New("the page was not read yet")
	}
	if len(locs) == 0 {
		return "", 0, &agent.FindError{}
	}
	deadline := time.Now().Add(wait)
	tried := make([]string, len(locs))
	// observe reads the page for the role locators and the checks of CSS
	// paths, once per round.
	observe := func() {
		if obs == nil {
			if o, _, err := v.s.look(ctx, pg); err == nil {
				obs = o
			}
		}
	}
	for delay := 25 * time.Millisecond; ; delay = min(delay*2, 250*time.Millisecond) {
		for i, l := range locs {
			if l.By == script.ByRole {
				observe()
				switch ids := roleMatches(obs, l); len(ids) {
				case 1:
					return ids[0], i, nil
				case 0:
					tried[i] = l.String() + ": nothing"
				default:
					tried[i] = fmt.Sprintf("%s: %d elements", l, len(ids))
				}
				continue
			}
			sel, ok := l.Selector()
			if !ok {
				tried[i] = l.String() + ": not a locator this abctl knows"
				continue
			}
			id, err := pg.ResolveNow(ctx, sel)
			switch {
			case err == nil && l.By == script.ByCSS:
				// A path finds whatever now stands where the element
				// stood: it counts only when the element is still the
				// one the role locator names.
				if hasRole(locs) {
					observe()
				}
				if other := misplaced(obs, id, locs); other != "" {
					tried[i] = l.String() + ": found " + other + " instead"
					continue
				}
				return id, i, nil
			case err == nil:
				return id, i, nil
			case ctx.Err() != nil:
				return "", 0, ctx.Err()
			case errors.Is(err, page.ErrNoMatch):
				tried[i] = l.String() + ": nothing"
			default:
				tried[i] = l.String() + ": " + err.Error()
			}
		}
		if time.Now().After(deadline) {
			return "", 0, &agent.FindError{Tried: tried}
		}
		if err := retry.Sleep(ctx, delay); err != nil {
			return "", 0, err
		}
		obs = nil // the next round reads the page as it is then
	}
}

// hasRole reports whether locs hold a role locator.
func hasRole(locs []script.Locator) bool {
	for _, l := range locs {
		if l.By == script.ByRole {
			return true
		}
	}
	return false
}

// Settle lets the active tab settle (its DOM too when domQuiet) and
// returns its address.
func (v *view) Settle(ctx context.Context, domQuiet bool) (string, error) {
	pg, err := v.s.page(ctx)
	if err != nil {
		return "", v.s.browserErr(ctx, err)
	}
	if domQuiet {
		settle(ctx, pg, v.s.watches[v.s.tab])
	} else {
		settleLoad(ctx, v.s.watches[v.s.tab])
	}
	v.pg, v.tab = pg, v.s.tab
	u, err := pg.URL(ctx)
	if err != nil {
		return "", v.s.browserErr(ctx, err)
	}
	return u, nil
}

// Snapshot keeps a screenshot of the active tab.
func (v *view) Snapshot(ctx context.Context) { v.s.Screenshot(ctx) }

// misplaced describes the element id of obs when the steps' role locator
// names another element; "" when it is the one named, or nothing says.
func misplaced(obs *page.Observation, id string, locs []script.Locator) string {
	if obs == nil {
		return ""
	}
	var el *page.Element
	for i := range obs.Elements {
		if obs.Elements[i].ID == id {
			el = &obs.Elements[i]
		}
	}
	if el == nil {
		return ""
	}
	for _, l := range locs {
		if l.By == script.ByRole && (el.Role != l.Role || accessibleName(el) != l.Value) {
			return fmt.Sprintf("%s %q", el.Role, text.Clip(accessibleName(el), 60))
		}
	}
	return ""
}

// FindTexts is page.Page's FindTexts on the active tab.
func (v *view) FindTexts(ctx context.Context, wants []page.TextWant) ([]string, error) {
	pg, err := v.activePage(ctx)
	if err != nil {
		return nil, err
	}
	return pg.FindTexts(ctx, wants)
}

// ReadTexts is page.Page's ReadTexts on the active tab.
func (v *view) ReadTexts(ctx context.Context, selectors []string) ([]page.TextRead, error) {
	pg, err := v.activePage(ctx)
	if err != nil {
		return nil, err
	}
	return pg.ReadTexts(ctx, selectors)
}

// activePage is the page of the last observation when it is the active
// tab's, else the active tab's page: an extraction block that follows a
// goto_url block reads a page the agent loop never observed.
func (v *view) activePage(ctx context.Context) (*page.Page, error) {
	if v.pg != nil && v.tab == v.s.tab {
		return v.pg, nil
	}
	pg, err := v.s.page(ctx)
	if err != nil {
		return nil, v.s.browserErr(ctx, err)
	}
	return pg, nil
}
