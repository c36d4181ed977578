package script

import (
	"fmt"
	"strings"
)

// Locator kinds, the value of Locator.By.
const (
	ByTestID = "testid" // a test attribute: Attr (data-testid by default) = Value
	ByID     = "id"     // the id attribute
	ByName   = "name"   // the name attribute (of Tag)
	ByRole   = "role"   // the ARIA Role with the accessible name Value
	ByLabel  = "label"  // a field labelled Value (label element or aria-label)
	ByText   = "text"   // an element (of Tag) whose text is Value
	ByCSS    = "css"    // a CSS selector
)

// LocatorKinds are the kinds of locators, in the order a recording lists
// them: the most stable first.
var LocatorKinds = []string{ByTestID, ByID, ByName, ByRole, ByLabel, ByText, ByCSS}

// Locator is one way to find an element.
type Locator struct {
	// By is one of LocatorKinds.
	By string `yaml:"by" json:"by"`
	// Value is the attribute's value, the accessible name, the label, the
	// text or the CSS selector.
	Value string `yaml:"value" json:"value"`
	// Tag narrows name, label, text and role to elements of that tag
	// ("" for any).
	Tag string `yaml:"tag,omitempty" json:"tag,omitempty"`
	// Role is the ARIA role of a role locator.
	Role string `yaml:"role,omitempty" json:"role,omitempty"`
	// Attr is the test attribute of a testid locator (data-testid when
	// empty).
	Attr string `yaml:"attr,omitempty" json:"attr,omitempty"`
}

// String describes the locator for people: role button "Search",
// name input "q", css "form > input".
func (l Locator) String() string {
	switch l.By {
	case ByRole:
		return fmt.Sprintf("role %s %q", l.Role, l.Value)
	case ByTestID:
		return fmt.Sprintf("%s %q", l.testAttr(), l.Value)
	}
	if l.Tag != "" {
		return fmt.Sprintf("%s %s %q", l.By, l.Tag, l.Value)
	}
	return fmt.Sprintf("%s %q", l.By, l.Value)
}

func (l Locator) testAttr() string {
	if l.Attr == "" {
		return "data-testid"
	}
	return l.Attr
}

// Selector is the locator as a selector of the page package (CSS, or
// XPath with the prefix "xpath="); ok is false for a role locator, which
// is matched against the page's observation instead.
func (l Locator) Selector() (sel string, ok bool) {
	tag := l.Tag
	if tag == "" || strings.ContainsAny(tag, " []\"'/()=*,>~+:#.") {
		tag = ""
	}
	xtag := tag
	if xtag == "" {
		xtag = "*"
	}
	switch l.By {
	case ByTestID:
		return fmt.Sprintf("[%s=%s]", l.testAttr(), CSSString(l.Value)), true
	case ByID:
		return fmt.Sprintf("%s[id=%s]", tag, CSSString(l.Value)), true
	case ByName:
		return fmt.Sprintf("%s[name=%s]", tag, CSSString(l.Value)), true
	case ByLabel:
		v := XPathString(l.Value)
		return fmt.Sprintf("xpath=(//%[1]s[@id=//label[normalize-space(.)=%[2]s]/@for] | //label[normalize-space(.)=%[2]s]//%[1]s | //%[1]s[@aria-label=%[2]s])", xtag, v), true
	case ByText:
		v := XPathString(l.Value)
		if tag == "input" {
			return fmt.Sprintf("xpath=//input[@value=%s]", v), true
		}
		return fmt.Sprintf("xpath=//%s[normalize-space(.)=%s]", xtag, v), true
	case ByCSS:
		return l.Value, true
	}
	return "", false
}

// CSSString quotes s as a CSS string.
func CSSString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\%x ", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// XPathString quotes s as an XPath 1.0 string literal (concat() when it
// holds both kinds of quotes).
func XPathString(s string) string {
	if !strings.Contains(s, `"`) {
		return `"` + s + `"`
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	parts := strings.Split(s, `"`)
	var b strings.Builder
	b.WriteString("concat(")
	for i, p := range parts {
		if i > 0 {
			b.WriteString(`, '"', `)
		}
		b.WriteString(`"` + p + `"`)
	}
	b.WriteString(")")
	return b.String()
}
