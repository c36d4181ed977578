package tagquery

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// terms returns n distinct label terms t0..t(n-1).
func terms(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("t%d", i)
	}
	return out
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want *Query
	}{
		{"no occurrence", nil, nil},
		{"no occurrence, empty slice", []string{}, nil},
		{"lone empty occurrence", []string{""}, nil},
		{"one label", []string{"urgent"}, &Query{Labels: []string{"urgent"}}},
		{"group", []string{"team:*"}, &Query{Groups: []string{"team"}}},
		{"exact", []string{"env:prod"}, &Query{Exact: []ExactTerm{{"env", []string{"prod"}}}}},
		{"same key is one entry", []string{"env:prod,env:staging"},
			&Query{Exact: []ExactTerm{{"env", []string{"prod", "staging"}}}}},
		{"mixed, first-seen order", []string{"b,env:prod,team:*,a,owner:x,env:dev,region:*"},
			&Query{
				Labels: []string{"b", "a"},
				Groups: []string{"team", "region"},
				Exact:  []ExactTerm{{"env", []string{"prod", "dev"}}, {"owner", []string{"x"}}},
			}},
		{"trimming around terms", []string{"  a  , b\t"}, &Query{Labels: []string{"a", "b"}}},
		{"trimming around key and value", []string{" env : prod ", "team :  * "},
			&Query{Groups: []string{"team"}, Exact: []ExactTerm{{"env", []string{"prod"}}}}},
		{"inner spaces kept", []string{"needs review,owner:Jane Doe"},
			&Query{Labels: []string{"needs review"}, Exact: []ExactTerm{{"owner", []string{"Jane Doe"}}}}},
		{"colon in value", []string{"url:http://x"}, &Query{Exact: []ExactTerm{{"url", []string{"http://x"}}}}},
		{"split on first colon", []string{"a:b:c"}, &Query{Exact: []ExactTerm{{"a", []string{"b:c"}}}}},
		{"value starting with colon", []string{"a::b"}, &Query{Exact: []ExactTerm{{"a", []string{":b"}}}}},
		{"value of only a colon", []string{"a::"}, &Query{Exact: []ExactTerm{{"a", []string{":"}}}}},
		{"lone star is a label", []string{"*"}, &Query{Labels: []string{"*"}}},
		{"double star is exact", []string{"k:**"}, &Query{Exact: []ExactTerm{{"k", []string{"**"}}}}},
		{"star with colon after is exact", []string{"k:*:x"}, &Query{Exact: []ExactTerm{{"k", []string{"*:x"}}}}},
		{"group and exact of same key", []string{"env:*,env:prod"},
			&Query{Groups: []string{"env"}, Exact: []ExactTerm{{"env", []string{"prod"}}}}},
		{"label equal to an exact value is distinct", []string{"prod,env:prod"},
			&Query{Labels: []string{"prod"}, Exact: []ExactTerm{{"env", []string{"prod"}}}}},
		{"dedupe within an occurrence", []string{"a,a,env:prod,env:prod,t:*,t:*"},
			&Query{Labels: []string{"a"}, Groups: []string{"t"}, Exact: []ExactTerm{{"env", []string{"prod"}}}}},
		{"dedupe across occurrences", []string{"a,env:prod", "a", "env:prod,env:dev", " a "},
			&Query{Labels: []string{"a"}, Exact: []ExactTerm{{"env", []string{"prod", "dev"}}}}},
		{"dedupe on the parsed form", []string{"env:prod", "env: prod", " env :prod"},
			&Query{Exact: []ExactTerm{{"env", []string{"prod"}}}}},
		{"case-sensitive, no folding", []string{"Prod,prod,ENV:x,env:x"},
			&Query{Labels: []string{"Prod", "prod"}, Exact: []ExactTerm{{"ENV", []string{"x"}}, {"env", []string{"x"}}}}},
		{"no tag-key validation", []string{"skyvern.x:y,-bad key!:v,émoji🙂"},
			&Query{Labels: []string{"émoji🙂"}, Exact: []ExactTerm{{"skyvern.x", []string{"y"}}, {"-bad key!", []string{"v"}}}}},
		{"20 distinct terms", []string{strings.Join(terms(20), ",")}, &Query{Labels: terms(20)}},
		{"20 distinct terms plus duplicates", []string{strings.Join(terms(20), ","), strings.Join(terms(20), ",")},
			&Query{Labels: terms(20)}},
		{"20 occurrences", terms(20), &Query{Labels: terms(20)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): unexpected error %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q)\n got  %#v\n want %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want string // exact message
	}{
		{"empty term in the middle", []string{"a,,b"},
			`tags: empty term in "a,,b"; every comma-separated term needs some text, so remove the extra comma`},
		{"trailing comma", []string{"a,"}, `tags: empty term in "a,"`},
		{"leading comma", []string{",a"}, `tags: empty term in ",a"`},
		{"blank terms", []string{" , "}, `tags: empty term in " , "`},
		{"blank lone occurrence", []string{" "}, `tags: empty term in " "`},
		{"lone comma", []string{","}, `tags: empty term in ","`},
		{"empty occurrence among others", []string{"a", ""},
			`tags: occurrence 2 of 2 of the tags parameter is empty; remove it or give it at least one term`},
		{"empty occurrence first", []string{"", "a"}, `tags: occurrence 1 of 2 of the tags parameter is empty`},
		{"two empty occurrences", []string{"", ""}, `tags: occurrence 1 of 2 of the tags parameter is empty`},
		{"empty key", []string{":prod"},
			`tags: term ":prod" has an empty key; write key:value, key:* or a label without a colon`},
		{"blank key", []string{" : prod"}, `tags: term ": prod" has an empty key`},
		{"lone colon", []string{":"}, `tags: term ":" has an empty key`},
		{"empty group key", []string{":*"}, `tags: term ":*" has an empty key`},
		{"empty value", []string{"env:"},
			`tags: term "env:" has an empty value; write key:value, or key:* for any value of the key`},
		{"blank value", []string{"a,env:  ,b"}, `tags: term "env:" has an empty value`},
		{"NUL in label", []string{"a\x00b"},
			`tags: term "a\x00b" contains a NUL byte, which no tag can contain; remove it`},
		{"NUL in value", []string{"k:v\x00"}, `tags: term "k:v\x00" contains a NUL byte`},
		{"invalid UTF-8", []string{"ok", "bad\xff"},
			`tags: term "bad\xff" is not valid UTF-8 text; percent-encode the term's UTF-8 bytes`},
		{"21 distinct terms", []string{strings.Join(terms(21), ",")},
			`tags: at most 20 distinct terms are allowed, got 21; narrow the filter`},
		{"21 distinct terms across occurrences", []string{strings.Join(terms(16), ","), "env:a,env:b,env:c,g:*,t0,t1,x"},
			`tags: at most 20 distinct terms are allowed, got 21`},
		{"count is the true total", []string{strings.Join(terms(30), ",")}, `got 30;`},
		{"21 occurrences", terms(21),
			`tags: at most 20 occurrences of the tags parameter are allowed, got 21; put several terms in one occurrence, separated by commas`},
		{"occurrences checked before terms", append(terms(20), ""), `at most 20 occurrences`},
		{"first error in input order wins", []string{"a,:x", "b,,c"}, `term ":x" has an empty key`},
		{"term error before term count", []string{strings.Join(terms(25), ",") + ",,"}, `empty term in`},
		{"long input is cut in the message", []string{strings.Repeat("x", 500) + ",,"},
			`tags: empty term in "` + strings.Repeat("x", 100) + `"…;`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error containing %q", tt.in, got, tt.want)
			}
			if got != nil {
				t.Errorf("Parse(%q) returned a query %v with its error", tt.in, got)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is %T, want *SyntaxError", err, err)
			}
			if !strings.HasPrefix(err.Error(), "tags: ") {
				t.Errorf("message %q does not start with \"tags: \"", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) error\n got  %q\n want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestQuoteCutsOnRuneBoundary(t *testing.T) {
	// "a" then 2-byte runes: runes start at odd offsets, so a cut at byte
	// maxQuoted (even) would land mid-rune.
	got := quote("a" + strings.Repeat("é", 100))
	if strings.Contains(got, `\x`) {
		t.Errorf("quote cut a rune in half: %s", got)
	}
	if !strings.HasSuffix(got, "…") {
		t.Errorf("quote of a long string = %s, want it to end in …", got)
	}
}

func TestMatch(t *testing.T) {
	standalone := func(v string) Tag { return Tag{Value: v} }
	grouped := func(k, v string) Tag { return Tag{Key: k, Value: v} }
	tests := []struct {
		name  string
		query string
		tags  []Tag
		want  bool
	}{
		// label terms
		{"label matches a standalone label", "urgent", []Tag{standalone("urgent")}, true},
		{"label matches a grouped tag's value", "urgent", []Tag{grouped("team", "urgent")}, true},
		{"label does not match a key", "team", []Tag{grouped("team", "urgent")}, false},
		{"label is case-sensitive", "urgent", []Tag{standalone("Urgent")}, false},
		{"labels are AND'ed, both present", "a,b", []Tag{standalone("a"), grouped("k", "b")}, true},
		{"labels are AND'ed, one missing", "a,b", []Tag{standalone("a")}, false},
		{"star label matches only a star value", "*", []Tag{standalone("x")}, false},
		{"star label matches a star label", "*", []Tag{standalone("*")}, true},
		// group terms
		{"group matches any value", "env:*", []Tag{grouped("env", "anything")}, true},
		{"group needs the key", "env:*", []Tag{grouped("region", "env"), standalone("env")}, false},
		{"groups are AND'ed", "env:*,team:*", []Tag{grouped("env", "prod")}, false},
		// exact terms
		{"exact matches", "env:prod", []Tag{grouped("env", "prod")}, true},
		{"exact wrong value", "env:prod", []Tag{grouped("env", "dev")}, false},
		{"exact does not match a standalone label", "env:prod", []Tag{standalone("prod")}, false},
		{"exact wrong key", "env:prod", []Tag{grouped("stage", "prod")}, false},
		{"exact case-sensitive", "env:prod", []Tag{grouped("Env", "prod")}, false},
		{"same key OR'ed, first", "env:prod,env:staging", []Tag{grouped("env", "prod")}, true},
		{"same key OR'ed, second", "env:prod,env:staging", []Tag{grouped("env", "staging")}, true},
		{"same key OR'ed, neither", "env:prod,env:staging", []Tag{grouped("env", "dev")}, false},
		{"different keys AND'ed, both", "env:prod,team:core", []Tag{grouped("env", "prod"), grouped("team", "core")}, true},
		{"different keys AND'ed, one", "env:prod,team:core", []Tag{grouped("env", "prod"), grouped("team", "web")}, false},
		{"colon in value", "url:http://x", []Tag{grouped("url", "http://x")}, true},
		{"colon in value, label does not see it split", "http://x", []Tag{grouped("url", "http://x")}, false},
		// combinations
		{"group AND exact of the same key", "env:*,env:prod", []Tag{grouped("env", "prod")}, true},
		{"group AND exact of the same key, wrong value", "env:*,env:prod", []Tag{grouped("env", "dev")}, false},
		{"everything at once", "urgent,team:*,env:prod,env:staging,owner:ann",
			[]Tag{standalone("x"), grouped("prio", "urgent"), grouped("team", "web"), grouped("env", "staging"), grouped("owner", "ann")}, true},
		{"everything at once, label missing", "urgent,team:*,env:prod,env:staging,owner:ann",
			[]Tag{grouped("team", "web"), grouped("env", "staging"), grouped("owner", "ann")}, false},
		// empty tag lists
		{"no tags, label", "a", nil, false},
		{"no tags, group", "k:*", []Tag{}, false},
		{"no tags, exact", "k:v", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse([]string{tt.query})
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.query, err)
			}
			if got := q.Match(tt.tags); got != tt.want {
				t.Errorf("Parse(%q).Match(%v) = %v, want %v", tt.query, tt.tags, got, tt.want)
			}
		})
	}
}

func TestMatchNoFilter(t *testing.T) {
	var q *Query
	if !q.Match(nil) || !q.Match([]Tag{{Key: "k", Value: "v"}}) {
		t.Error("a nil query must match everything")
	}
	if !(&Query{}).Match(nil) {
		t.Error("an empty query must match everything")
	}
	q, err := Parse([]string{""})
	if err != nil || q != nil {
		t.Fatalf(`Parse([""]) = %v, %v; want nil, nil`, q, err)
	}
	if !q.Match([]Tag{{Value: "x"}}) {
		t.Error("the lone empty occurrence must match everything")
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"a"}, "a"},
		{[]string{" env : prod ,b, t:* , env:dev", "a:b:c", "*"}, "b,*,t:*,env:prod,env:dev,a:b:c"},
		{[]string{"url:http://x,url:http://x"}, "url:http://x"},
	}
	for _, tt := range tests {
		q, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if got := q.String(); got != tt.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := (*Query)(nil).String(); got != "" {
		t.Errorf("nil Query String() = %q, want \"\"", got)
	}
	if got := (&Query{}).String(); got != "" {
		t.Errorf("empty Query String() = %q, want \"\"", got)
	}
}

func TestStringRoundTrip(t *testing.T) {
	inputs := [][]string{
		{"a"},
		{"a,b", "c"},
		{"env:prod,env:staging,team:*,urgent"},
		{" x : y:z ", "*", "k:**", "k:*"},
		{"a::", "b:: c", "needs review"},
		{strings.Join(terms(20), ",")},
		{"Prod,prod,émoji🙂,k:v w"},
	}
	for _, in := range inputs {
		q, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		s := q.String()
		// As one occurrence, and split back into one occurrence per term.
		for _, occ := range [][]string{{s}, strings.Split(s, ",")} {
			again, err := Parse(occ)
			if err != nil {
				t.Fatalf("Parse(%q) of String() %q: %v", occ, s, err)
			}
			if !reflect.DeepEqual(again, q) {
				t.Errorf("round trip of %q via %q\n got  %#v\n want %#v", in, occ, again, q)
			}
		}
	}
}
