package llmtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Element is one element line of a page observation as package page
// renders it for the prompt (Observation.Rendered):
//
//	[bk] button "Sign in"
//	[bf] input:email "Email" placeholder="you@example.com" required
//	[bm] link "Docs" label="Documentation" -> /docs
type Element struct {
	// ID is the id to act on; Kind the word after it ("button",
	// "input:email", "link", "clickable(div)").
	ID, Kind string
	// Name is the quoted name after the kind: the text of a link or
	// button, the label of a field.
	Name string
	// Label, Placeholder and Value are the attributes of those names, when
	// the line has them.
	Label, Placeholder, Value string
	// Line is the whole line.
	Line string
}

var (
	elementLine = regexp.MustCompile(`^\[([^\]\s]+)\] (\S+)(.*)$`)
	quotedAttr  = regexp.MustCompile(` (label|placeholder|value|name)=("(?:[^"\\]|\\.)*")`)
)

// Elements parses the element lines of a rendered observation; other lines
// (the header, the frame and viewport markers) are skipped.
func Elements(rendered string) []Element {
	var out []Element
	for line := range strings.Lines(rendered) {
		line = strings.TrimRight(line, "\r\n")
		m := elementLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		e := Element{ID: m[1], Kind: m[2], Line: line}
		rest := m[3]
		if strings.HasPrefix(rest, ` "`) {
			if q, err := strconv.QuotedPrefix(rest[1:]); err == nil {
				e.Name, _ = strconv.Unquote(q)
				rest = rest[1+len(q):]
			}
		}
		for _, a := range quotedAttr.FindAllStringSubmatch(rest, -1) {
			v, err := strconv.Unquote(a[2])
			if err != nil {
				continue
			}
			switch a[1] {
			case "label":
				e.Label = v
			case "placeholder":
				e.Placeholder = v
			case "value":
				e.Value = v
			case "name":
				if e.Name == "" {
					e.Name = v
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// ElementID returns the id of the element of a rendered observation whose
// name is name (case and runs of spaces ignored), else whose label or
// placeholder is, else whose name, label or placeholder contains it. It is
// an error when no element, or more than one, fits at the first level that
// finds any: the message lists them, so the test can say which it means
// (FindElement takes a predicate).
func ElementID(rendered, name string) (string, error) {
	want := norm(name)
	if want == "" {
		return "", fmt.Errorf("ElementID: empty name")
	}
	levels := []func(Element) bool{
		func(e Element) bool { return norm(e.Name) == want },
		func(e Element) bool { return norm(e.Label) == want || norm(e.Placeholder) == want },
		func(e Element) bool {
			return strings.Contains(norm(e.Name), want) || strings.Contains(norm(e.Label), want) || strings.Contains(norm(e.Placeholder), want)
		},
	}
	all := Elements(rendered)
	if len(all) == 0 {
		return "", fmt.Errorf("no element lines ([id] kind \"name\") in the text, which begins %q", clip(rendered, 200))
	}
	for _, fits := range levels {
		found := matching(all, fits)
		switch {
		case len(found) == 1:
			return found[0].ID, nil
		case len(found) > 1:
			return "", fmt.Errorf("%d elements fit %q: %s", len(found), name, lines(found))
		}
	}
	return "", fmt.Errorf("no element named %q among %d: %s", name, len(all), lines(all))
}

// FindElement returns the one element of a rendered observation for which
// match is true; none or several is an error that lists them.
func FindElement(rendered string, match func(Element) bool) (Element, error) {
	found := matching(Elements(rendered), match)
	if len(found) != 1 {
		return Element{}, fmt.Errorf("%d elements fit, want 1: %s", len(found), lines(found))
	}
	return found[0], nil
}

func matching(all []Element, fits func(Element) bool) []Element {
	var out []Element
	for _, e := range all {
		if fits(e) {
			out = append(out, e)
		}
	}
	return out
}

func lines(es []Element) string {
	const show = 12
	var parts []string
	for i, e := range es {
		if i == show {
			parts = append(parts, fmt.Sprintf("… and %d more", len(es)-show))
			break
		}
		parts = append(parts, e.Line)
	}
	return strings.Join(parts, " | ")
}

func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
