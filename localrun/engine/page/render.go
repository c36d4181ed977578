package page

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// render writes obs.Rendered: a header (title, URL, tabs, dialogs, the
// scroll position of a page that scrolls) and one line per element, within
// the budget. When the elements
// do not all fit, those in the viewport are kept first, then the nearest
// ones; omitted runs are marked in place and counted at the end.
func render(obs *Observation, o ObserveOptions) {
	budget := o.Budget
	if budget <= 0 {
		budget = DefaultBudget
	}
	var hb strings.Builder
	fmt.Fprintf(&hb, "Page: %s\nURL: %s\n", oneLine(obs.Title, 200), oneLine(obs.URL, 300))
	if len(obs.Tabs) > 0 {
		hb.WriteString("Tabs:")
		for _, t := range obs.Tabs {
			mark := ""
			if t.Active {
				mark = " (active)"
			}
			fmt.Fprintf(&hb, " [%s] %s <%s>%s;", t.ID, strconv.Quote(oneLine(t.Title, 80)), oneLine(t.URL, 120), mark)
		}
		hb.WriteString("\n")
	}
	for _, d := range obs.Dialogs {
		fmt.Fprintf(&hb, "Dialog: %s\n", strconv.Quote(oneLine(d, 300)))
	}
	// The scroll position, when there is anywhere to scroll: a page that
	// fits in the viewport has nothing above or below to say.
	vh := obs.Viewport[1]
	if vh > 0 && (obs.Scroll[1] > 0 || obs.PageSize[1] > vh+1) {
		above := obs.Scroll[1] / vh
		below := max(0, obs.PageSize[1]-obs.Scroll[1]-vh) / vh
		fmt.Fprintf(&hb, "Viewport %.0fx%.0f, scrolled to y=%.0f of %.0f (%.1f pages above, %.1f below)\n",
			obs.Viewport[0], vh, obs.Scroll[1], obs.PageSize[1], above, below)
	}
	if len(obs.Elements) == 0 {
		hb.WriteString("No interactive elements.\n")
	} else {
		// The line format ([id] kind "name" details) is explained once, in
		// the system prompts, not in every observation.
		hb.WriteString("Interactive elements:\n")
	}
	header := hb.String()
	if len(header) > budget/2 {
		header = truncUTF8(header, budget/2)
	}

	origin := ""
	if u, err := url.Parse(obs.URL); err == nil && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
	}
	frameURL := map[string]string{}
	for _, f := range obs.Frames {
		frameURL[f.ID] = f.URL
	}
	lines := make([]string, len(obs.Elements))
	for i := range obs.Elements {
		lines[i] = elementLine(&obs.Elements[i], origin)
	}

	// Priority: in the viewport first, then by distance from it.
	order := make([]int, len(obs.Elements))
	dist := make([]float64, len(obs.Elements))
	for i := range obs.Elements {
		order[i] = i
		dist[i] = distance(&obs.Elements[i], obs.Viewport)
	}
	sort.SliceStable(order, func(a, b int) bool { return dist[order[a]] < dist[order[b]] })

	room := budget - len(header) - 160
	var text string
	var kept []bool
	for attempt := 0; attempt < 8; attempt++ {
		kept = make([]bool, len(lines))
		left := room
		for _, i := range order {
			cost := len(lines[i]) + 1
			if cost > left {
				if dist[i] == 0 {
					continue // try the other elements in the viewport
				}
				break
			}
			kept[i] = true
			left -= cost
		}
		text = assemble(header, obs, lines, kept, frameURL)
		if len(text) <= budget {
			break
		}
		room -= len(text) - budget + 200
	}
	if len(text) > budget {
		text = truncUTF8(text, budget)
		if i := strings.LastIndexByte(text, '\n'); i > 0 {
			text = text[:i+1]
		}
	}
	omitted := 0
	for _, k := range kept {
		if !k {
			omitted++
		}
	}
	obs.Rendered = text
	obs.Truncated += omitted
}

// assemble joins the kept lines in document order, with markers where the
// frame changes and where elements were left out.
func assemble(header string, obs *Observation, lines []string, kept []bool, frameURL map[string]string) string {
	var b strings.Builder
	b.Grow(len(header) + 64*len(lines))
	b.WriteString(header)
	frame := ""
	gap := 0
	above, below := 0, 0
	inVP := true
	flushGap := func() {
		if gap > 0 {
			fmt.Fprintf(&b, "  … %d more here (not shown)\n", gap)
			gap = 0
		}
	}
	for i, l := range lines {
		e := &obs.Elements[i]
		if !kept[i] {
			gap++
			if e.Rect[1]+e.Rect[3] <= 0 {
				above++
			} else {
				below++
			}
			continue
		}
		flushGap()
		if e.InViewport != inVP {
			if e.InViewport {
				b.WriteString("-- in the viewport --\n")
			} else {
				b.WriteString("-- outside the viewport (acting on it scrolls it into view) --\n")
			}
			inVP = e.InViewport
		}
		if e.Frame != frame {
			if e.Frame == "" {
				b.WriteString("-- top document --\n")
			} else {
				fmt.Fprintf(&b, "-- frame %s <%s> --\n", e.Frame, oneLine(frameURL[e.Frame], 100))
			}
			frame = e.Frame
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	flushGap()
	if above+below > 0 {
		fmt.Fprintf(&b, "(%d elements not shown: %d above and %d below the viewport; scroll and observe again to see them)\n", above+below, above, below)
	}
	return b.String()
}

// distance is 0 for an element in the viewport, else how far it is from the
// viewport in CSS pixels.
func distance(e *Element, vp [2]float64) float64 {
	if e.InViewport {
		return 0
	}
	r := e.Rect
	var dy, dx float64
	switch {
	case r[1]+r[3] <= 0:
		dy = -(r[1] + r[3])
	case r[1] >= vp[1]:
		dy = r[1] - vp[1]
	}
	switch {
	case r[0]+r[2] <= 0:
		dx = -(r[0] + r[2])
	case r[0] >= vp[0]:
		dx = r[0] - vp[0]
	}
	d := dy + dx
	if d <= 0 {
		d = 1 // inside the viewport's box but clipped (a frame's hidden part)
	}
	return d
}

// elementLine renders one element: [id] kind "name" details, where the
// details start with icon="..." (a name derived from an icon) and in="..."
// (the row or card of a repeated control) when the element has them.
func elementLine(e *Element, origin string) string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(e.ID)
	b.WriteString("] ")
	b.WriteString(kindOf(e))
	field := isField(e)
	name := e.Text
	if field || name == "" {
		name = e.Label
	}
	if name == "" && e.Text != "" {
		name = e.Text
	}
	if name == "" {
		if t := e.Attrs["title"]; t != "" {
			name = t
		} else if t := e.Attrs["alt"]; t != "" {
			name = t
		}
	}
	if name != "" {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(oneLine(name, 100)))
	}
	if e.Icon != "" {
		// A name derived from an icon, for a control without words.
		b.WriteString(" icon=")
		b.WriteString(strconv.Quote(oneLine(e.Icon, 40)))
	}
	if e.Context != "" {
		// Where a control stands whose line would read as another's.
		b.WriteString(" in=")
		b.WriteString(strconv.Quote(oneLine(e.Context, 60)))
	}
	if !field && e.Label != "" && e.Label != name {
		b.WriteString(" label=")
		b.WriteString(strconv.Quote(oneLine(e.Label, 60)))
	}
	if e.Placeholder != "" && e.Placeholder != name {
		b.WriteString(" placeholder=")
		b.WriteString(strconv.Quote(oneLine(e.Placeholder, 60)))
	}
	if field && e.Name != "" && name == "" {
		b.WriteString(" name=")
		b.WriteString(strconv.Quote(oneLine(e.Name, 40)))
	}
	if e.Value != "" {
		b.WriteString(" value=")
		b.WriteString(strconv.Quote(oneLine(e.Value, 80)))
	}
	if len(e.Options) > 0 {
		b.WriteString(" options=[")
		// A single choice shows its first options; a multi-select, where
		// the model may pick several anywhere in the list, all of those
		// the page script read (60).
		shown := maxOptionsShown
		if _, multi := e.Attrs["multiple"]; multi {
			shown = maxMultiOptionsShown
		}
		n := min(len(e.Options), shown)
		for k := 0; k < n; k++ {
			if k > 0 {
				b.WriteByte('|')
			}
			b.WriteString(oneLine(e.Options[k], 30))
		}
		if len(e.Options) > n {
			last := e.Options[len(e.Options)-1]
			more := len(e.Options) - n
			if strings.HasPrefix(last, "…+") {
				if x, err := strconv.Atoi(strings.TrimPrefix(last, "…+")); err == nil {
					more += x - 1
				}
			}
			fmt.Fprintf(&b, "|…+%d", more)
		}
		b.WriteByte(']')
	}
	if e.Href != "" {
		b.WriteString(" -> ")
		b.WriteString(shortHref(e.Href, origin))
	}
	if e.Checked {
		b.WriteString(" checked")
	}
	if e.Disabled {
		b.WriteString(" disabled")
	}
	if e.Required {
		b.WriteString(" required")
	}
	if e.ReadOnly {
		b.WriteString(" readonly")
	}
	for _, k := range renderAttrs {
		v, ok := e.Attrs[k]
		if !ok {
			continue
		}
		switch k {
		case "target":
			if v == "_blank" {
				b.WriteString(" opens-new-tab")
			}
		case "download", "multiple":
			b.WriteString(" " + k)
		default:
			b.WriteString(" " + strings.TrimPrefix(k, "aria-") + "=" + strconv.Quote(oneLine(v, 40)))
		}
	}
	return b.String()
}

// How many options a select's line lists.
const (
	maxOptionsShown      = 8
	maxMultiOptionsShown = 60
)

var renderAttrs = []string{"aria-expanded", "aria-selected", "aria-pressed", "aria-current", "aria-invalid", "aria-haspopup", "maxlength", "min", "max", "pattern", "accept", "multiple", "target", "download"}

func isField(e *Element) bool {
	switch e.Tag {
	case "select", "textarea":
		return true
	case "input":
		switch e.Type {
		case "submit", "button", "reset", "image":
			return false
		}
		return true
	}
	switch e.Role {
	case "textbox", "searchbox", "combobox", "spinbutton", "slider", "listbox":
		return true
	}
	return false
}

func kindOf(e *Element) string {
	switch e.Tag {
	case "a":
		if e.Role == "" || e.Role == "link" {
			return "link"
		}
	case "button", "summary":
		if e.Role == "" || e.Role == "button" {
			return "button"
		}
	case "input":
		switch e.Type {
		case "submit", "button", "reset", "image":
			return "button"
		case "checkbox", "radio":
			return e.Type
		case "text", "":
			return "input"
		}
		return "input:" + e.Type
	case "select", "textarea":
		return e.Tag
	case "label":
		return "label(" + e.Type + ")"
	}
	if e.Role != "" {
		return e.Role + "(" + e.Tag + ")"
	}
	return "clickable(" + e.Tag + ")"
}

func shortHref(h, origin string) string {
	switch {
	case strings.HasPrefix(h, "data:"):
		return "data:…"
	case strings.HasPrefix(h, "javascript:"):
		return "javascript:…"
	}
	if origin != "" && strings.HasPrefix(h, origin+"/") {
		h = h[len(origin):]
	}
	return oneLine(h, 100)
}

// oneLine squashes whitespace and cuts s to n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
