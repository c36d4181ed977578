package pdf

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Part is a document split_pdf cuts out: pages From to Thru (from 1),
// named Name ("" for a name made from the pages).
type Part struct {
	Name       string
	From, Thru int // Thru 0: through the last page
}

var (
	pageRangeRe  = regexp.MustCompile(`^(?i:pages?\s+)?(\d+)(?:\s*(?:-|–|—|\bto\b|\bthrough\b)\s*(\d+|(?i:end|last)))?$`)
	namedRangeRe = regexp.MustCompile(`^([^:=]+?)\s*[:=]\s*(.+)$`)
)

// ParsePageRanges reads a prompt that lists page ranges: "1-2, 3, 4-end",
// separated by commas, semicolons or lines, each optionally named
// ("invoice: 1-2"). An error says the prompt is not such a list.
func ParsePageRanges(prompt string) ([]Part, error) {
	var parts []Part
	items := strings.FieldsFunc(prompt, func(r rune) bool { return r == ',' || r == ';' || r == '\n' })
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		var name string
		rng := item
		if !pageRangeRe.MatchString(item) {
			m := namedRangeRe.FindStringSubmatch(item)
			if m == nil {
				return nil, fmt.Errorf("%q is not a page range", item)
			}
			name, rng = strings.TrimSpace(m[1]), strings.TrimSpace(m[2])
		}
		m := pageRangeRe.FindStringSubmatch(rng)
		if m == nil {
			return nil, fmt.Errorf("%q is not a page range", item)
		}
		from, _ := strconv.Atoi(m[1])
		thru := from
		switch strings.ToLower(m[2]) {
		case "":
		case "end", "last":
			thru = 0
		default:
			thru, _ = strconv.Atoi(m[2])
		}
		parts = append(parts, Part{Name: name, From: from, Thru: thru})
	}
	if len(parts) == 0 {
		return nil, errors.New("no page range")
	}
	return parts, nil
}
