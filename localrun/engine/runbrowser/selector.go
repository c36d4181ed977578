package runbrowser

// Selectors that find, without a model, an element the model located: the
// result of a located single action and of an action block's AI fallback,
// so that the caller can put it in the selector field next time.
//
// Candidates are built from what the observation knows of the element
// (name, placeholder, aria-label, title, its text, its label), most
// specific first, and each is checked in the page: it counts only when the
// page package resolves it to that very element.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/abctl/abctl/agentfile/script"
	"github.com/abctl/abctl/localrun/engine/page"
)

// selectorBudget bounds the checks of all the candidates together.
const selectorBudget = 2 * time.Second

// ReusableSelector returns a selector (CSS, or XPath with the "xpath="
// prefix) that resolves to el on the page, "" when none was found. Each
// candidate is checked once against the page as it is (the element is
// there: the model just located it), so that no check waits for a
// candidate that does not match, and the result does not depend on how
// fast the machine is.
func ReusableSelector(ctx context.Context, pg *page.Page, el *page.Element) string {
	ctx, cancel := context.WithTimeout(ctx, selectorBudget)
	defer cancel()
	for _, c := range selectorCandidates(el) {
		if ctx.Err() != nil {
			break
		}
		if id, err := pg.ResolveNow(ctx, c); err == nil && id == el.ID {
			return c
		}
	}
	return ""
}

// selectorCandidates lists selectors that may find el, most specific
// first.
func selectorCandidates(el *page.Element) []string {
	tag := el.Tag
	if tag == "" || strings.ContainsAny(tag, " []\"'") {
		tag = "*"
	}
	var out []string
	attr := func(name, value string) {
		if value != "" {
			out = append(out, fmt.Sprintf("%s[%s=%s]", tag, name, cssString(value)))
		}
	}
	attr("name", el.Name)
	attr("placeholder", el.Placeholder)
	attr("aria-label", el.Label)
	attr("title", el.Attrs["title"])
	attr("alt", el.Attrs["alt"])
	if tag == "input" && el.Value != "" && (el.Type == "submit" || el.Type == "button") {
		attr("value", el.Value)
	}
	if el.Text != "" && tag != "input" {
		out = append(out, fmt.Sprintf("xpath=//%s[normalize-space(.)=%s]", xpathTag(tag), xpathString(el.Text)))
	}
	if el.Label != "" {
		l := xpathString(el.Label)
		out = append(out,
			fmt.Sprintf("xpath=//%s[@id=//label[normalize-space(.)=%s]/@for]", xpathTag(tag), l),
			fmt.Sprintf("xpath=//label[normalize-space(.)=%s]//%s", l, xpathTag(tag)))
	}
	if el.Href != "" && tag == "a" {
		if i := strings.Index(el.Href, "://"); i > 0 {
			if j := strings.IndexByte(el.Href[i+3:], '/'); j >= 0 {
				out = append(out, fmt.Sprintf("a[href=%s]", cssString(el.Href[i+3+j:])))
			}
		}
		out = append(out, fmt.Sprintf("a[href=%s]", cssString(el.Href)))
	}
	return out
}

func xpathTag(tag string) string {
	if tag == "" {
		return "*"
	}
	return tag
}

// cssString and xpathString quote s for a selector (package script's
// quoting, which its locators use too).
func cssString(s string) string { return script.CSSString(s) }

func xpathString(s string) string { return script.XPathString(s) }
