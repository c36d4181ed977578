package tagquery

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "a", "a,b", "a&b", "a&", "&", "a,,b", " , ", ":v", "k:", ":", "k:*", "*", "k:**",
		"env:prod,env:staging", "a:b:c", "url:http://x", " env : prod &team:*", "a\x00b", "bad\xff",
		"t0,t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11,t12,t13,t14,t15,t16,t17,t18,t19",
		"t0,t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11,t12,t13,t14,t15,t16,t17,t18,t19,t20",
		"a&a&a&a&a&a&a&a&a&a&a&a&a&a&a&a&a&a&a&a&a",
		"\u00a0a\u00a0,\u2003k\u2003:\u2003v", "k: * ", "k:* :x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		occ := strings.Split(s, "&")
		q, err := Parse(occ)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("Parse(%q): error %v is %T, want *SyntaxError", occ, err, err)
			}
			if q != nil {
				t.Fatalf("Parse(%q): query %v returned with error", occ, q)
			}
			if !strings.HasPrefix(err.Error(), "tags: ") || !utf8.ValidString(err.Error()) {
				t.Fatalf("Parse(%q): bad message %q", occ, err)
			}
			return
		}
		if q == nil {
			if !(len(occ) == 1 && occ[0] == "") {
				t.Fatalf("Parse(%q) = nil, nil for a non-empty filter", occ)
			}
			return
		}

		// Invariants of a parsed query.
		n := len(q.Labels) + len(q.Groups)
		checkPart := func(what, p string) {
			if p == "" || p != strings.TrimSpace(p) || !utf8.ValidString(p) || strings.ContainsAny(p, ",\x00") {
				t.Fatalf("Parse(%q): bad %s %q in %#v", occ, what, p, q)
			}
		}
		seenLabel := map[string]bool{}
		for _, l := range q.Labels {
			checkPart("label", l)
			if strings.Contains(l, ":") || seenLabel[l] {
				t.Fatalf("Parse(%q): label %q has a colon or repeats", occ, l)
			}
			seenLabel[l] = true
		}
		seenGroup := map[string]bool{}
		for _, g := range q.Groups {
			checkPart("group key", g)
			if strings.Contains(g, ":") || seenGroup[g] {
				t.Fatalf("Parse(%q): group key %q has a colon or repeats", occ, g)
			}
			seenGroup[g] = true
		}
		seenKey := map[string]bool{}
		for _, e := range q.Exact {
			checkPart("key", e.Key)
			if strings.Contains(e.Key, ":") || seenKey[e.Key] || len(e.Values) == 0 {
				t.Fatalf("Parse(%q): exact key %q has a colon, repeats or has no values", occ, e.Key)
			}
			seenKey[e.Key] = true
			seenValue := map[string]bool{}
			for _, v := range e.Values {
				checkPart("value", v)
				if v == GroupWildcard || seenValue[v] {
					t.Fatalf("Parse(%q): value %q of %q is * or repeats", occ, v, e.Key)
				}
				seenValue[v] = true
			}
			n += len(e.Values)
		}
		if n == 0 || n > MaxTerms {
			t.Fatalf("Parse(%q): %d terms, want 1..%d", occ, n, MaxTerms)
		}

		// Canonical form round trip.
		again, err := Parse([]string{q.String()})
		if err != nil || !reflect.DeepEqual(again, q) {
			t.Fatalf("Parse(%q): round trip via %q gave %#v, %v; want %#v", occ, q.String(), again, err, q)
		}

		// The matcher must not panic, and each term must be satisfiable by
		// tags built from the query itself.
		tags := []Tag{{Value: s}, {Key: s, Value: s}, {}}
		for _, l := range q.Labels {
			tags = append(tags, Tag{Value: l})
		}
		for _, g := range q.Groups {
			tags = append(tags, Tag{Key: g, Value: "x"})
		}
		for _, e := range q.Exact {
			tags = append(tags, Tag{Key: e.Key, Value: e.Values[len(e.Values)-1]})
		}
		if !q.Match(tags) {
			t.Fatalf("Parse(%q) does not match tags built from it: %v", occ, tags)
		}
		q.Match(nil)
		q.Match(tags[:3])
	})
}
