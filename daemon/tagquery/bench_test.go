package tagquery

import (
	"fmt"
	"testing"
)

var benchOccurrences = []string{
	"urgent, needs review,team:*",
	"env:prod,env:staging,owner:ann,region:*",
	"url:http://example.com/a,priority:high,customer",
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchOccurrences); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch evaluates a 10-term query against an agent with 20 tags
// that satisfies it, the worst case since every term is checked.
func BenchmarkMatch(b *testing.B) {
	q, err := Parse(benchOccurrences)
	if err != nil {
		b.Fatal(err)
	}
	tags := make([]Tag, 0, 20)
	for i := range 11 {
		tags = append(tags, Tag{Key: fmt.Sprintf("k%d", i), Value: fmt.Sprintf("v%d", i)})
	}
	tags = append(tags,
		Tag{Value: "urgent"}, Tag{Value: "needs review"}, Tag{Value: "customer"},
		Tag{Key: "team", Value: "web"}, Tag{Key: "region", Value: "eu"},
		Tag{Key: "env", Value: "staging"}, Tag{Key: "owner", Value: "ann"},
		Tag{Key: "priority", Value: "high"}, Tag{Key: "url", Value: "http://example.com/a"},
	)
	if len(tags) != 20 || !q.Match(tags) {
		b.Fatalf("setup: %d tags, match %v", len(tags), q.Match(tags))
	}
	b.ReportAllocs()
	for b.Loop() {
		if !q.Match(tags) {
			b.Fatal("no match")
		}
	}
}
