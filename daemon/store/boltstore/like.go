package boltstore

import (
	"strings"
	"unicode/utf8"
)

// likeTerm is a search term read the way the hosted service's
// ILIKE '%term%' reads it: case-insensitive, matching anywhere in the text,
// with '%' in the term standing for any run of characters and '_' for any
// one character. The service does not escape them (except when it matches
// the wpid, where the term is literal), so a search for "first_name" also
// finds "firstXname"; the daemon answers the same.
type likeTerm struct {
	term     string   // lowercased
	wildcard bool     // term contains % or _
	literals []string // the runs of term between wildcards, for pre-filtering
}

func newLikeTerm(term string) likeTerm {
	t := likeTerm{term: strings.ToLower(term)}
	t.wildcard = strings.ContainsAny(t.term, "%_")
	for _, part := range strings.FieldsFunc(t.term, func(r rune) bool { return r == '%' || r == '_' }) {
		t.literals = append(t.literals, part)
	}
	return t
}

// match reports whether the lowercased text matches the term.
func (t likeTerm) match(text string) bool {
	if !t.wildcard {
		return strings.Contains(text, t.term)
	}
	return likeMatch(t.term, text)
}

// likeMatch reports whether pattern, with an implicit '%' at both ends,
// matches text, comparing runes. It is the classic greedy wildcard match:
// on a mismatch it retries from the last '%' one character further, which
// keeps it linear in practice and quadratic at worst.
func likeMatch(pattern, text string) bool {
	p := "%" + pattern + "%"
	pi, ti := 0, 0
	starP, starT := -1, 0
	for ti < len(text) {
		if pi < len(p) {
			pr, pn := utf8.DecodeRuneInString(p[pi:])
			tr, tn := utf8.DecodeRuneInString(text[ti:])
			switch {
			case pr == '%':
				starP, starT = pi, ti
				pi += pn
				continue
			case pr == '_' || pr == tr:
				pi += pn
				ti += tn
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '%' swallow one more character and try again.
		_, tn := utf8.DecodeRuneInString(text[starT:])
		starT += tn
		pi, ti = starP+1, starT
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
