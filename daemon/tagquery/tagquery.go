// Package tagquery parses and evaluates the tags filter of GET /v1/agents
// (and of GET /v1/runs; docs/daemon.md shows it by example), so that the
// local daemon accepts, rejects and matches exactly the filters the hosted
// service does.
//
// # Grammar
//
// The tags query parameter may be given up to MaxOccurrences times, and each
// occurrence is a comma-separated list of terms. A term is trimmed and then
// split on its first colon:
//
//	urgent        label term: some tag, grouped or not, has the value "urgent"
//	team:*        group term: some tag has the key "team", whatever its value
//	env:prod      exact term: the tag with key "env" has the value "prod"
//	url:http://x  exact term with key "url" and value "http://x": only the
//	              first colon separates, later ones belong to the value
//
// Key and value are trimmed again after the split, so " env : prod " is the
// term env:prod. Trimming removes Unicode white space (strings.TrimSpace);
// if the service trims with Python's str.strip, the two differ only on a
// few control characters (\x1c-\x1f), which Python strips and Go keeps.
// A term is a group term only when its value is exactly "*" after
// trimming; "env:**" is an exact term and a lone "*" is a label term that
// matches a tag whose value is "*" (a standalone label may be "*"; a
// grouped value may not, so in practice only standalone labels).
//
// Terms are de-duplicated on their parsed form (key, value and kind), so
// "env:prod" and "env: prod" are one term, and at most MaxTerms distinct
// terms are allowed across all occurrences.
//
// # Logic
//
// A query is the AND of every label term, every group term and, for every key
// that has exact terms, "the key's value is one of these values": exact
// terms of the same key are OR'ed, everything else is AND'ed.
//
// # What is not checked
//
// Terms are not validated against the rules that tags themselves follow
// (the key's characters and length, the reserved "skyvern." prefix). The
// hosted service does not validate them either: a term no tag can carry
// simply matches nothing, so rejecting it here would turn a valid, empty
// result into a 400. The two exceptions
// are a NUL byte and invalid UTF-8, which no stored tag can contain and
// which the store could not handle (it uses NUL as a key separator).
//
// Matching is case-sensitive byte equality, as the service's SQL equality
// is: "Prod" does not match a tag "prod".
package tagquery

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the hosted service; a request beyond them is answered with 400.
const (
	// MaxOccurrences is the largest number of tags parameters in one request.
	MaxOccurrences = 20
	// MaxTerms is the largest number of distinct terms, counted after
	// splitting every occurrence on commas and removing duplicates.
	MaxTerms = 20
)

// GroupWildcard is the value that makes a key:value term a group term.
const GroupWildcard = "*"

// SyntaxError reports a tags parameter the service would refuse. Its
// message is meant to be shown to the API caller unchanged (the daemon
// answers 400 with it as the detail), so it names the offending term or
// occurrence and says what to change.
type SyntaxError struct {
	Msg string // the complete message, starting with "tags: "
}

// Error returns the message, so the error can be written to the caller as is.
func (e *SyntaxError) Error() string { return e.Msg }

func syntaxErrorf(format string, args ...any) error {
	return &SyntaxError{Msg: "tags: " + fmt.Sprintf(format, args...)}
}

// Query is a parsed tags filter. Each list is in the order its terms were
// first seen and free of duplicates, so that a query parsed from the same
// input always prints and compares the same way.
type Query struct {
	// Labels holds the label terms: each must equal the value of some tag,
	// grouped or standalone.
	Labels []string
	// Groups holds the keys of key:* terms: some tag must have each key.
	Groups []string
	// Exact holds the key:value terms, one entry per key: for each, some tag
	// with that key must have one of the values.
	Exact []ExactTerm
}

// ExactTerm is the OR of the exact terms of one key: a tag with Key and any
// of Values satisfies it.
type ExactTerm struct {
	Key    string
	Values []string // distinct, in first-seen order, never empty
}

// Tag is a current tag as the matcher sees it. Key is "" for a standalone
// label; the caller passes only current tags (not superseded, not deleted),
// since only those take part in filtering.
type Tag struct {
	Key, Value string
}

// termKind tells the three kinds of term apart for de-duplication.
type termKind uint8

const (
	kindLabel termKind = iota
	kindGroup
	kindExact
)

// termID identifies a parsed term, so that spellings differing only in
// spaces count once.
type termID struct {
	kind       termKind
	key, value string
}

// Parse reads the values of every tags occurrence of a query string, in
// order, as url.Values keeps them (r.URL.Query()["tags"]). It returns nil,
// nil when there is no filter: no occurrence at all, or a single occurrence
// that is exactly empty (a lone ?tags=). An empty occurrence next to others,
// a blank one ("tags= "), or any empty term is an error, as upstream.
//
// Checks run in this order, and the first failure is returned: the number
// of occurrences, then each term in input order, then the number of
// distinct terms (so the count in that message is the true total).
// Every error is a *SyntaxError.
func Parse(occurrences []string) (*Query, error) {
	if len(occurrences) == 0 || len(occurrences) == 1 && occurrences[0] == "" {
		return nil, nil
	}
	if n := len(occurrences); n > MaxOccurrences {
		return nil, syntaxErrorf("at most %d occurrences of the tags parameter are allowed, got %d; put several terms in one occurrence, separated by commas",
			MaxOccurrences, n)
	}
	q := &Query{}
	seen := make(map[termID]struct{})
	exactIdx := make(map[string]int) // key -> index in q.Exact
	for i, occ := range occurrences {
		if occ == "" {
			return nil, syntaxErrorf("occurrence %d of %d of the tags parameter is empty; remove it or give it at least one term",
				i+1, len(occurrences))
		}
		for raw := range strings.SplitSeq(occ, ",") {
			id, err := parseTerm(raw, occ)
			if err != nil {
				return nil, err
			}
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
			switch id.kind {
			case kindLabel:
				q.Labels = append(q.Labels, id.value)
			case kindGroup:
				q.Groups = append(q.Groups, id.key)
			case kindExact:
				if j, ok := exactIdx[id.key]; ok {
					q.Exact[j].Values = append(q.Exact[j].Values, id.value)
				} else {
					exactIdx[id.key] = len(q.Exact)
					q.Exact = append(q.Exact, ExactTerm{Key: id.key, Values: []string{id.value}})
				}
			}
		}
	}
	if n := len(seen); n > MaxTerms {
		return nil, syntaxErrorf("at most %d distinct terms are allowed, got %d; narrow the filter", MaxTerms, n)
	}
	return q, nil
}

// parseTerm parses one comma-separated piece of the occurrence occ.
func parseTerm(raw, occ string) (termID, error) {
	term := strings.TrimSpace(raw)
	if term == "" {
		return termID{}, syntaxErrorf("empty term in %s; every comma-separated term needs some text, so remove the extra comma", quote(occ))
	}
	if !utf8.ValidString(term) {
		return termID{}, syntaxErrorf("term %s is not valid UTF-8 text; percent-encode the term's UTF-8 bytes", quote(term))
	}
	if strings.IndexByte(term, 0) >= 0 {
		return termID{}, syntaxErrorf("term %s contains a NUL byte, which no tag can contain; remove it", quote(term))
	}
	key, value, grouped := strings.Cut(term, ":")
	if !grouped {
		return termID{kind: kindLabel, value: term}, nil
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if key == "" {
		return termID{}, syntaxErrorf("term %s has an empty key; write key:value, key:* or a label without a colon", quote(term))
	}
	if value == "" {
		return termID{}, syntaxErrorf("term %s has an empty value; write key:value, or key:* for any value of the key", quote(term))
	}
	if value == GroupWildcard {
		return termID{kind: kindGroup, key: key}, nil
	}
	return termID{kind: kindExact, key: key, value: value}, nil
}

// maxQuoted bounds how much of the input an error message repeats, so that
// a huge query string does not make a huge error body or log line.
const maxQuoted = 100

// quote renders s for an error message: double-quoted, with control
// characters and invalid bytes escaped, and cut to maxQuoted bytes.
func quote(s string) string {
	if len(s) <= maxQuoted {
		return fmt.Sprintf("%q", s)
	}
	cut := maxQuoted
	for cut > maxQuoted-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q", s[:cut]) + "…"
}

// Match reports whether tags, the current tags of one agent, satisfy the
// query. A nil query is no filter and matches everything, so callers can
// pass Parse's result straight through.
func (q *Query) Match(tags []Tag) bool {
	if q == nil {
		return true
	}
	for _, l := range q.Labels {
		if !hasTag(tags, func(t Tag) bool { return t.Value == l }) {
			return false
		}
	}
	for _, g := range q.Groups {
		if !hasTag(tags, func(t Tag) bool { return t.Key == g }) {
			return false
		}
	}
	for _, e := range q.Exact {
		if !hasTag(tags, func(t Tag) bool { return t.Key == e.Key && contains(e.Values, t.Value) }) {
			return false
		}
	}
	return true
}

func hasTag(tags []Tag, ok func(Tag) bool) bool {
	for _, t := range tags {
		if ok(t) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// String returns the canonical form of the query: labels, then key:* terms,
// then key:value terms, comma-joined, each list in first-seen order. It is
// a valid single tags occurrence that parses back to an equal query, which
// makes it suitable for logs, cache keys and tests. A nil or empty query
// prints as "".
func (q *Query) String() string {
	if q == nil {
		return ""
	}
	var b strings.Builder
	n := 0
	sep := func() {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
	}
	for _, l := range q.Labels {
		sep()
		b.WriteString(l)
	}
	for _, g := range q.Groups {
		sep()
		b.WriteString(g)
		b.WriteString(":" + GroupWildcard)
	}
	for _, e := range q.Exact {
		for _, v := range e.Values {
			sep()
			b.WriteString(e.Key)
			b.WriteByte(':')
			b.WriteString(v)
		}
	}
	return b.String()
}
