package runner

import (
	"slices"
	"testing"
)

// The queue serves organizations in turn, each in submission order, and a
// removal keeps the turn where it was.
func TestRunQueueRoundRobin(t *testing.T) {
	var q runQueue
	for _, r := range [][2]string{{"o1", "a"}, {"o1", "b"}, {"o1", "c"}, {"o2", "x"}, {"o3", "p"}, {"o3", "q"}} {
		q.push(r[0], r[1])
	}
	pop := func() string {
		ref, ok := q.pop()
		if !ok {
			return ""
		}
		return ref.OrgID + "/" + ref.RunID
	}
	var got []string
	got = append(got, pop(), pop()) // o1/a, o2/x: o3 has the turn
	q.remove("o3", "p")
	q.remove("o3", "missing")
	q.remove("o9", "a")
	for q.len() > 0 {
		got = append(got, pop())
	}
	want := []string{"o1/a", "o2/x", "o3/q", "o1/b", "o1/c"}
	if !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	if _, ok := q.pop(); ok {
		t.Error("pop from an empty queue")
	}
}
