package runner

import (
	"sync"
	"testing"
)

// TestBehindKeepsOrderAndWaits: writes queued from several goroutines are
// made one at a time, each goroutine's in its order, and wait returns only
// once all those queued before it are made.
func TestBehindKeepsOrderAndWaits(t *testing.T) {
	var b behind
	b.wait() // nothing queued: returns at once

	const writers, each = 4, 500
	var mu sync.Mutex
	inside := 0 // writes running at once: must stay at most 1
	got := make([][]int, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				b.do(func() {
					mu.Lock()
					inside++
					if inside > 1 {
						t.Error("two writes ran at once")
					}
					got[w] = append(got[w], i)
					inside--
					mu.Unlock()
				})
			}
		})
	}
	wg.Wait()
	b.wait()
	mu.Lock()
	defer mu.Unlock()
	for w, seq := range got {
		if len(seq) != each {
			t.Fatalf("writer %d: %d writes made after wait, want %d", w, len(seq), each)
		}
		for i, v := range seq {
			if v != i {
				t.Fatalf("writer %d: write %d made as number %d: out of order", w, v, i)
			}
		}
	}

	// A write queued after a wait returned is made too, and waited for.
	done := false
	b.do(func() { done = true })
	b.wait()
	if !done {
		t.Fatal("a write queued after the queue emptied was not made before wait returned")
	}
}
